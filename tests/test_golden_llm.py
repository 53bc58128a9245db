"""An LLM-made issue, end to end through the HTTP layer, compared byte for byte with a golden
file (issue 16): the examples, `digest summarize --backend openai` against the fake
OpenAI-compatible server (its smart mode writes valid, deterministic answers). What the
golden file pins: the prompts' answers flowing into titles, summaries, gists and the footer,
with no offline fallback. Regenerate deliberately with DIGEST_UPDATE_GOLDEN=1."""

from __future__ import annotations

from typer.testing import CliRunner

from digest.cli import app

from .conftest import EXAMPLES
from .fake_openai import FakeOpenAI
from .test_golden import assert_golden


def _summarize(server: FakeOpenAI, monkeypatch) -> str:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    result = CliRunner().invoke(app, [
        "summarize", str(EXAMPLES), "--week", "2026-W47", "--backend", "openai",
        "--model", "gpt-4o-mini", "--base-url", server.url, "--concurrency", "1"])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_an_llm_made_issue_matches_the_golden_file(monkeypatch):
    with FakeOpenAI() as server:
        markdown = _summarize(server, monkeypatch)
        assert server.requests, "the issue was made without asking the model"
    assert "summarised offline" not in markdown
    assert "sk-test" not in markdown
    assert_golden(markdown, "examples-llm-2026-W47.md")
