"""The model's name in the issue (issue 18): ``model_label``, and no file path ever shown.

Before, a llama.cpp server's model id (the GGUF's file path) reached the footer and the feed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from digest.cli import app
from digest.llm.label import shown_model

from .conftest import EXAMPLES
from .fake_openai import FakeOpenAI

GGUF = "/home/me/models/SmolLM2-135M-Instruct.Q4_1.gguf"


@pytest.mark.parametrize(("model", "label", "shown"), [
    (GGUF, None, "SmolLM2-135M-Instruct.Q4_1"),
    ("models/gemma-3-270m.bin", None, "gemma-3-270m"),
    ("C:\\models\\phi.gguf", None, "phi"),
    ("/srv/weights/llama", None, "llama"),
    ("Qwen/Qwen2.5-7B-Instruct", None, "Qwen/Qwen2.5-7B-Instruct"),  # a repo id, no path
    ("llama3.1:8b", None, "llama3.1:8b"),
    ("gpt-4o-mini", None, "gpt-4o-mini"),
    (GGUF, "SmolLM2 135M", "SmolLM2 135M"),
    ("gpt-4o-mini", "  ", "gpt-4o-mini"),
    (None, None, None),
])
def test_the_shown_name_is_the_label_else_the_id_without_a_path(model, label, shown):
    assert shown_model(model, label) == shown


def _newsletter(tmp_path: Path, server: FakeOpenAI, *extra: str, env: dict | None = None):
    out = tmp_path / "out"
    result = CliRunner().invoke(app, [
        "newsletter", str(EXAMPLES), "--week", "2026-W47", "--backend", "openai",
        "--base-url", server.url, "--model", GGUF, "--out", str(out),
        "--state", str(tmp_path / "s.sqlite"), "--formats", "md,html,txt", *extra],
        env=env)
    assert result.exit_code == 0, result.output
    return {path.name: path.read_text(encoding="utf-8") for path in out.iterdir()
            if path.is_file()}


def test_a_model_file_path_never_reaches_the_issue_the_footer_or_the_feed(tmp_path):
    with FakeOpenAI() as server:
        files = _newsletter(tmp_path, server)
    assert server.chat_requests[0].body["model"] == GGUF  # the server is still asked by its id
    assert "feed.xml" in files and "2026-W47.md" in files
    for name, text in files.items():
        assert "/home/me" not in text and ".gguf" not in text, name
    assert "(SmolLM2-135M-Instruct.Q4_1)" in files["2026-W47.md"]


@pytest.mark.parametrize("how", ["flag", "env", "config"])
def test_model_label_names_the_model_in_every_output(tmp_path, how):
    label = "SmolLM2 135M (local)"
    extra: list[str] = []
    env = None
    if how == "flag":
        extra = ["--model-label", label]
    elif how == "env":
        env = {"DIGEST_MODEL_LABEL": label}
    else:
        config = tmp_path / "digest.toml"
        config.write_text(f'model_label = "{label}"\n', encoding="utf-8")
        extra = ["--config", str(config)]
    with FakeOpenAI() as server:
        files = _newsletter(tmp_path, server, *extra, env=env)
    assert f"({label})" in files["2026-W47.md"] and f"({label})" in files["2026-W47.txt"]
    assert "SmolLM2 135M (local)" in files["2026-W47.html"]
    assert not any("SmolLM2-135M-Instruct" in text for text in files.values())
