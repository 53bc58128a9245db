"""The issue rendered from examples/ with the offline backend, compared byte for byte.

Regenerate deliberately with DIGEST_UPDATE_GOLDEN=1 and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

from typer.testing import CliRunner

from digest.cli import app

from .conftest import EXAMPLES

GOLDEN = Path(__file__).parent / "golden" / "examples-2026-W47.md"


def render_examples(tmp_path: Path) -> str:
    out = tmp_path / "out"
    result = CliRunner().invoke(app, [
        "newsletter", str(EXAMPLES), "--out", str(out), "--week", "2026-W47",
        "--backend", "offline", "--state", str(tmp_path / "state.sqlite")])
    assert result.exit_code == 0, result.output
    return (out / "2026-W47.md").read_text(encoding="utf-8")


def test_examples_issue_matches_the_golden_file(tmp_path):
    markdown = render_examples(tmp_path)
    if os.environ.get("DIGEST_UPDATE_GOLDEN"):
        GOLDEN.write_text(markdown, encoding="utf-8")
    assert markdown == GOLDEN.read_text(encoding="utf-8")


def test_a_second_run_writes_identical_bytes(tmp_path):
    first = render_examples(tmp_path)
    assert render_examples(tmp_path) == first
