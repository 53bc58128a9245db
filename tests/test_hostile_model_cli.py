"""End to end: `digest newsletter` against a fake server answering every request in one broken
mode. The issue is written (md, html, txt), every paper appears exactly once, nothing the model
wrote that is an address, markup or a control character reaches a file (nor the feed, nor the
mail `digest email --eml` builds from the cached answers), and the run exits 0.
"""

from __future__ import annotations

import email
import email.policy
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from digest.cli import app

from .conftest import EXAMPLES
from .fake_openai import BROKEN_ANSWERS, FakeOpenAI

# Pieces of the hostile answers (none of them is in examples/).
MODEL_ONLY = ["evil", "bit.ly", "bit\\.ly", "example[.]com", "example(dot)com", "10.0.0.1",
              "JSON object", "Please log in", "I am sorry", "Lone", "surrogate", "gnp.exe",
              "\u202e", "\u202c", "\u2066", "\x1b", "\x00", "\ufffd", "word word word"]
PAPER_ITEM = {"md": re.compile(r"^- \*\*", re.MULTILINE),
              "html": re.compile(r'^<li id="paper-\d+-\d+" style="margin:0 0 12px;">',
                                 re.MULTILINE),
              "txt": re.compile(r"^  \* ", re.MULTILINE)}


# Modes whose answers are accepted once cleaned: their text reaches the outputs.
ACCEPTED = {"lone-surrogate", "controls-bidi", "ungrounded-title"}


@pytest.mark.parametrize("mode", sorted(BROKEN_ANSWERS))
def test_a_hostile_model_cannot_sink_or_taint_the_issue(tmp_path: Path, mode: str) -> None:
    common = ["--week", "2026-W47", "--backend", "openai", "--timeout", "5",
              "--out", str(tmp_path / "out"), "--state", str(tmp_path / "s.sqlite")]
    with FakeOpenAI(responder=BROKEN_ANSWERS[mode]) as server:
        result = CliRunner().invoke(app, [
            "newsletter", str(EXAMPLES), *common, "--base-url", server.url,
            "--formats", "md,html,txt", "--report", str(tmp_path / "report.json")])
        assert server.chat_requests  # the model was asked
        mail = _eml(common, server) if mode in ACCEPTED else ""
    assert result.exit_code == 0, result.output
    for piece in MODEL_ONLY:
        assert piece not in mail, ("eml", piece)
        assert piece not in (tmp_path / "out" / "feed.xml").read_text(encoding="utf-8")
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    papers = report["counts"]["papers_in_issue"]
    assert papers == report["counts"]["papers_unique"] == 30
    for suffix, item in PAPER_ITEM.items():
        text = (tmp_path / "out" / f"2026-W47.{suffix}").read_text(encoding="utf-8")
        sections = text.split("\n" + "-" * 72 + "\n", 1)[-1]  # txt: past the TL;DR bullets
        assert len(item.findall(sections)) == papers, suffix
        for piece in MODEL_ONLY:
            assert piece not in text, (suffix, piece)
    bullets = [line for line in (tmp_path / "out" / "2026-W47.md").read_text().splitlines()
               if line.startswith("- **")]
    assert len(set(bullets)) == len(bullets) == papers
    for theme in report["themes"]:
        assert not any(piece in theme["title"] for piece in MODEL_ONLY)


def _eml(common: list[str], server: FakeOpenAI) -> str:
    """The text and HTML parts of the mail of the same week, built from the cached answers."""
    sent = len(server.chat_requests)
    result = CliRunner().invoke(app, [
        "email", str(EXAMPLES), *common, "--base-url", server.url, "--eml",
        "--to", "team@lab.test", "--from", "digest@lab.test"])
    assert result.exit_code == 0, result.output
    assert len(server.chat_requests) == sent  # the same answers, from the cache
    message = email.message_from_bytes(result.stdout_bytes, policy=email.policy.default)
    parts = [message.get_body((kind,)) for kind in ("plain", "html")]
    texts = [part.get_content() for part in parts if part is not None]
    assert len(texts) == 2 and all("2026-W47" in text for text in texts)
    return "".join(texts)
