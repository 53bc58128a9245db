"""`digest dedup`: counts on stdout, merged groups with --explain, errors, the run report."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from digest.cli import app

FIXTURES = Path(__file__).parent / "fixtures" / "dedup"
NEAR = FIXTURES / "near_duplicates.jsonl"
WEEK1, WEEK2 = FIXTURES / "week1.jsonl", FIXTURES / "week2.jsonl"

runner = CliRunner()


def dedup(*args: str, **kwargs):
    return runner.invoke(app, ["dedup", *args], **kwargs)


def test_dedup_prints_the_counts():
    result = dedup(str(WEEK1), str(WEEK2))
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("records: 8\nunique papers: 6\nduplicates merged: 2\n")
    assert "[1]" not in result.stdout  # groups only with --explain


def test_explain_lists_each_merged_group_with_rule_and_score():
    result = dedup(str(NEAR), "--explain")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "records: 4\nunique papers: 2\nduplicates merged: 2\n" in out
    near, title = out.split("\n\n")[1:3]
    assert near.startswith("[1] Quillwork: Sparse Attention Kernels for Long-Document "
                           "Summarization\n")
    assert "paper 2611.10001: 2 records, rule near-duplicate" in near
    assert f"{NEAR}:3  Quillwork: Block-Sparse Attention Kernels for Summarizing Long" in near
    assert "near-duplicate 0.8" in near and "with #1 (title 0." in near
    assert title.startswith("[2] Fathom: Depth Estimation")
    assert "rule title, score 1.00" in title
    assert f"{NEAR}:4  FATHOM: depth estimation" in title


def test_dedup_reads_stdin_with_a_forced_format():
    result = dedup("-", "--format", "jsonl", input=WEEK1.read_text(encoding="utf-8"))
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("records: 4\nunique papers: 4\nduplicates merged: 0\n")


def test_dedup_writes_the_run_report_counts(tmp_path):
    report = tmp_path / "report.json"
    result = dedup(str(WEEK1), str(WEEK2), "--report", str(report))
    assert result.exit_code == 0, result.output
    counts = json.loads(report.read_text(encoding="utf-8"))["counts"]
    assert (counts["records_read"], counts["papers_unique"], counts["duplicates_merged"]) == (
        8, 6, 2)


def test_an_unreadable_source_is_reported_and_the_others_used(tmp_path):
    missing = tmp_path / "missing.jsonl"
    report = tmp_path / "report.json"
    result = dedup(str(WEEK1), str(missing), "--report", str(report))
    assert result.exit_code == 0
    assert result.stdout.startswith("records: 4\n")
    assert str(missing) in result.stderr
    assert any(str(missing) in error for error in json.loads(report.read_text())["errors"])


def test_strict_stops_at_an_unreadable_source(tmp_path):
    missing = tmp_path / "missing.jsonl"
    result = dedup(str(WEEK1), str(missing), "--strict")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert str(missing) in result.stderr


def test_dedup_of_nothing_read_is_an_error(tmp_path):
    """"records: 0" and exit 0 for a path that does not exist (a probe, stop 28)."""
    result = dedup(str(tmp_path / "missing.jsonl"))
    assert result.exit_code == 1, result.output
    assert "nothing read" in result.stderr and result.stdout == ""


def test_dedup_without_sources_is_a_usage_error():
    result = dedup()
    assert result.exit_code == 2
    assert "no SOURCE given" in result.stderr


def test_dedup_has_help_and_is_documented():
    help_text = runner.invoke(app, ["dedup", "--help"], terminal_width=200).output
    for flag in ("--explain", "--format", "--strict", "--report"):
        assert flag in help_text
    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    assert "digest dedup" in readme and "--explain" in readme


def test_six_papers_with_one_withdrawn_notice_stay_six():
    """Issue 12: on main these became one paper and five titles vanished."""
    result = dedup(str(FIXTURES / "withdrawn.jsonl"), "--explain")
    assert result.exit_code == 0, result.output
    assert result.stdout == "records: 6\nunique papers: 6\nduplicates merged: 0\n"


def test_explain_shows_the_other_titles_of_a_merged_paper():
    result = dedup(str(NEAR), "--explain")
    near = result.stdout.split("\n\n")[1]
    assert near.splitlines()[1] == ("    also listed as: Quillwork: Block-Sparse Attention Kernels "
                                    "for Summarizing Long Documents")
