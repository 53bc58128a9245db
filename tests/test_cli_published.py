"""Across runs: a paper goes out once. `digest newsletter` leaves out what an earlier issue
published (``already_published`` in the report) unless --include-published; re-running a
week gives that week's issue again."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from digest.cli import app

FIXTURES = Path(__file__).parent / "fixtures" / "dedup"
WEEK1, WEEK2 = FIXTURES / "week1.jsonl", FIXTURES / "week2.jsonl"
W1, W2 = "2026-W46", "2026-W47"
# week2.jsonl carries Marrow again (its arXiv id, the title in capitals) and Thistle again
# (no arXiv id: its title with typographic punctuation and "(v2)"), plus two new papers.
ONLY_W1 = ("Quillwork", "Fathom")
BOTH = ("Marrow", "Thistle")
ONLY_W2 = ("Lantern", "Burrow")

runner = CliRunner()


def newsletter(tmp_path: Path, source: Path, week: str, *extra: str) -> tuple[str, dict]:
    report = tmp_path / f"report-{week}.json"
    result = runner.invoke(app, [
        "newsletter", str(source), "--week", week, "--backend", "offline",
        "--out", str(tmp_path / "out"), "--state", str(tmp_path / "state.sqlite"),
        "--report", str(report), *extra])
    assert result.exit_code == 0, result.output
    issue = Path(result.stdout.strip()).read_text(encoding="utf-8")
    return issue, json.loads(report.read_text(encoding="utf-8"))["counts"]


def paper_names(issue: str) -> set[str]:
    """The first word of each paper's title, read from the issue's paper lines."""
    names = {name for name in ONLY_W1 + BOTH + ONLY_W2
             for line in issue.splitlines() if line.startswith("- **")
             and name.casefold() in line.casefold()}
    return names


def test_next_week_leaves_out_what_this_week_published_and_a_re_run_is_the_same(tmp_path):
    first, counts = newsletter(tmp_path, WEEK1, W1)
    assert paper_names(first) == set(ONLY_W1 + BOTH)
    assert counts["already_published"] == 0

    second, counts = newsletter(tmp_path, WEEK2, W2)
    assert paper_names(second) == set(ONLY_W2)
    assert counts["records_read"] == 4
    assert counts["papers_unique"] == 4
    assert counts["already_published"] == 2
    assert counts["papers_in_issue"] == 2

    again, counts = newsletter(tmp_path, WEEK1, W1)  # W1's papers are still W1's
    assert counts["already_published"] == 0
    assert again == first


def test_include_published_keeps_them_and_the_earlier_week_still_owns_them(tmp_path):
    first, _ = newsletter(tmp_path, WEEK1, W1)
    second, counts = newsletter(tmp_path, WEEK2, W2, "--include-published")
    assert paper_names(second) == set(BOTH + ONLY_W2)
    assert counts["already_published"] == 0
    assert counts["papers_in_issue"] == 4

    again, counts = newsletter(tmp_path, WEEK1, W1)  # W2 repeated them; W1 keeps them
    assert counts["already_published"] == 0
    assert again == first
    later, counts = newsletter(tmp_path, WEEK2, W2)  # and W2 without the flag drops them
    assert paper_names(later) == set(ONLY_W2)
    assert counts["already_published"] == 2


def test_a_paper_is_known_across_runs_with_or_without_its_arxiv_id(tmp_path):
    """W1 listed Thistle without an arXiv id and Marrow with one; W2 lists Thistle with an id
    and Marrow without: both are still the papers W1 published."""
    lines = WEEK1.read_text(encoding="utf-8").splitlines()
    marrow, thistle = (json.loads(line) for line in lines[1:3])
    assert "id" in marrow and "id" not in thistle
    del marrow["id"]
    thistle["id"] = "2611.10003"
    week2 = tmp_path / "week2.jsonl"
    week2.write_text(json.dumps(marrow) + "\n" + json.dumps(thistle) + "\n", encoding="utf-8")

    newsletter(tmp_path, WEEK1, W1)
    second, counts = newsletter(tmp_path, week2, W2)
    assert counts["already_published"] == 2
    assert paper_names(second) == set()


def test_another_arxiv_id_under_a_published_title_is_another_paper(tmp_path):
    marrow = json.loads(WEEK1.read_text(encoding="utf-8").splitlines()[1])
    marrow["id"] = "2611.20002"  # the same title, a different paper
    marrow["abstract"] = "A different abstract about rearranging objects: " + marrow["abstract"]
    week2 = tmp_path / "week2.jsonl"
    week2.write_text(json.dumps(marrow) + "\n", encoding="utf-8")

    newsletter(tmp_path, WEEK1, W1)
    second, counts = newsletter(tmp_path, week2, W2)
    assert counts["already_published"] == 0
    assert paper_names(second) == {"Marrow"}
