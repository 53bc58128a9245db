"""Nothing read, nothing published (issue 11, point 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import EXAMPLES
from tests.opsrun import cli, issue_papers


@pytest.mark.parametrize("source", ["typo/folder", "empty"])
def test_a_missing_or_empty_source_writes_no_issue_and_exits_1(tmp_path, source):
    (tmp_path / "empty").mkdir()
    out = tmp_path / "out"
    args = ["--state", str(tmp_path / "s.sqlite"), "--out", str(out), "--backend", "offline",
            "--week", "2026-W47"]
    assert cli("newsletter", str(EXAMPLES), *args[:-1], "2026-W46").returncode == 0
    index = (out / "index.md").read_bytes()
    result = cli("newsletter", str(tmp_path / source), *args)
    assert result.returncode == 1, result.stderr
    assert "nothing read" in result.stderr and "Traceback" not in result.stderr
    assert not (out / "2026-W47.md").exists()
    assert (out / "index.md").read_bytes() == index


def test_a_week_whose_papers_all_went_out_is_a_short_issue_and_exit_0(tmp_path: Path):
    args = ["--state", str(tmp_path / "s.sqlite"), "--out", str(tmp_path / "out"),
            "--backend", "offline"]
    assert cli("newsletter", str(EXAMPLES), "--week", "2026-W47", *args).returncode == 0
    again = cli("newsletter", str(EXAMPLES), "--week", "2026-W48", *args)
    assert again.returncode == 0, again.stderr
    assert issue_papers((tmp_path / "out" / "2026-W48.md").read_text()) == 0
