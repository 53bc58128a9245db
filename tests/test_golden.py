"""Rendered outputs compared byte for byte with the files in tests/golden/.

The examples issue (examples/, offline backend) in Markdown, HTML and plain text, and the
archive pages (index.md, feed.xml) of an output folder holding two made-up weeks.
Regenerate deliberately with DIGEST_UPDATE_GOLDEN=1 and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from digest.cli import app
from digest.outputs import publish

from .conftest import EXAMPLES
from .render_samples import earlier_issue, plain_issue

GOLDEN = Path(__file__).parent / "golden"


def render_examples(tmp_path: Path, formats: str = "md,html,txt") -> Path:
    """The examples issue written to ``tmp_path/out``; returns that folder."""
    out = tmp_path / "out"
    result = CliRunner().invoke(app, [
        "newsletter", str(EXAMPLES), "--out", str(out), "--week", "2026-W47",
        "--backend", "offline", "--state", str(tmp_path / "state.sqlite"),
        "--formats", formats])
    assert result.exit_code == 0, result.output
    return out


def assert_golden(text: str, name: str) -> None:
    path = GOLDEN / name
    if os.environ.get("DIGEST_UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"{name} changed (DIGEST_UPDATE_GOLDEN=1)"


@pytest.fixture(scope="module")
def examples_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return render_examples(tmp_path_factory.mktemp("examples"))


@pytest.mark.parametrize("suffix", ["md", "html", "txt"])
def test_examples_issue_matches_the_golden_file(examples_out, suffix):
    text = (examples_out / f"2026-W47.{suffix}").read_text(encoding="utf-8")
    assert_golden(text, f"examples-2026-W47.{suffix}")


def test_a_second_run_writes_identical_bytes(tmp_path):
    first = {p.name: p.read_bytes() for p in render_examples(tmp_path).iterdir()}
    second = {p.name: p.read_bytes() for p in render_examples(tmp_path).iterdir()}
    assert second == first


@pytest.fixture(scope="module")
def two_weeks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An output folder after two made-up issues; nothing in it depends on the clock."""
    out = tmp_path_factory.mktemp("archive")
    publish(earlier_issue("2026-W46"), out, formats=["md", "html"])
    publish(plain_issue("2026-W47"), out, formats=["md", "txt"])
    return out


@pytest.mark.parametrize("name", ["index.md", "feed.xml", "2026-W47.md"])
def test_archive_pages_of_two_weeks_match_the_golden_files(two_weeks, name):
    assert_golden((two_weeks / name).read_text(encoding="utf-8"), f"two-weeks-{name}")
