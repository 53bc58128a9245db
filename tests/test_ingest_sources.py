"""Where sources come from: directories, globs, stdin; and the CLI's --format."""

from __future__ import annotations

import shutil
from pathlib import Path

from typer.testing import CliRunner

from digest.cli import app
from digest.ingest import load_sources
from digest.ingest.base import MAX_SOURCE_BYTES

FIXTURES = Path(__file__).parent / "fixtures" / "ingest"


def tree(root: Path) -> Path:
    (root / "b" / "deeper").mkdir(parents=True)
    (root / "a").mkdir()
    (root / ".hidden").mkdir()
    shutil.copy(FIXTURES / "papers.tsv", root / "b" / "deeper" / "z.tsv")
    shutil.copy(FIXTURES / "papers.csv", root / "a" / "y.csv")
    shutil.copy(FIXTURES / "arxiv_listing.atom", root / "x.atom")
    shutil.copy(FIXTURES / "papers.csv", root / ".hidden" / "secret.csv")
    (root / "notes.pdf").write_bytes(b"%PDF-1.7")  # not a listing's extension: skipped
    return root


def test_a_directory_is_walked_recursively_in_a_stable_order(tmp_path):
    root = tree(tmp_path / "listings")
    result = load_sources([str(root)])
    assert result.errors == []
    sources = [Path(r.sighting.source).relative_to(root).as_posix() for r in result.records]
    assert sources == ["a/y.csv", "a/y.csv", "b/deeper/z.tsv", "x.atom"]


def test_globs_are_expanded_sorted(tmp_path):
    root = tree(tmp_path / "listings")
    result = load_sources([str(root / "**" / "*.?sv")])
    assert [Path(r.sighting.source).name for r in result.records] == ["y.csv", "y.csv", "z.tsv"]


def test_stdin_as_bytes_is_decoded_and_named(tmp_path):
    data = (FIXTURES / "hf_daily_papers.json").read_bytes()
    result = load_sources(["-"], stdin=lambda: data)
    assert len(result.records) == 3
    assert {r.sighting.source for r in result.records} == {"<stdin>"}


def test_stdin_as_text_with_a_forced_format():
    text = (FIXTURES / "papers.csv").read_text(encoding="utf-8")
    assert len(load_sources(["-"], stdin=lambda: text, fmt="csv").records) == 2


def test_cli_reads_stdin_and_reports_bad_sources(tmp_path):
    report = tmp_path / "report.json"
    result = CliRunner().invoke(app, [
        "summarize", "-", str(FIXTURES / "truncated.json"), "--backend", "offline",
        "--week", "2026-W46", "--report", str(report)],
        input=(FIXTURES / "papers.jsonl").read_text(encoding="utf-8"))
    assert result.exit_code == 0, result.output
    assert "Ripple: Cheap Uncertainty for Diffusion Policies" in result.stdout
    assert "truncated.json:3: the JSON ends early" in report.read_text(encoding="utf-8")


def test_cli_strict_fails_on_a_bad_source(tmp_path):
    result = CliRunner().invoke(app, [
        "summarize", str(FIXTURES / "papers.tsv"), str(FIXTURES / "empty.txt"), "--strict",
        "--backend", "offline", "--week", "2026-W46"])
    assert result.exit_code == 1
    assert "empty.txt: the source is empty" in result.output


def test_cli_rejects_an_unknown_format_as_a_usage_error():
    result = CliRunner().invoke(app, ["summarize", str(FIXTURES / "papers.tsv"), "--format",
                                      "yaml", "--backend", "offline", "--week", "2026-W46"])
    assert result.exit_code == 2
    assert "unknown format" in result.output and "arxiv-snapshot" in result.output


def test_cli_help_lists_the_formats():
    result = CliRunner().invoke(app, ["newsletter", "--help"])
    for name in ("arxiv-snapshot", "csv", "arxiv-listing", "email"):
        assert name in result.output


def test_stdin_past_the_size_limit_is_refused():
    result = load_sources(["-"], stdin=lambda: b" " * (MAX_SOURCE_BYTES + 1))
    (error,) = result.errors
    assert error.source == "<stdin>" and "MiB" in error.problem


def test_a_folder_digest_publishes_into_is_left_out_of_a_walk(tmp_path):
    """`--out listings/digest`: the re-run read listings/digest/feed.xml as an Atom listing, and
    the issue got a paper "Research digest, 2026-W47 (…)" (a probe, stop 28)."""
    from tests.opsrun import cli, issue_papers, week_listing

    listings = tmp_path / "listings"
    week_listing(listings, "2026-W47", 5)
    out = listings / "digest"
    args = ["--week", "2026-W47", "--backend", "offline", "--state", str(tmp_path / "s.sqlite"),
            "--out", str(out), "--report", str(out / "report.json")]
    assert cli("newsletter", str(listings), *args).returncode == 0
    again = cli("newsletter", str(listings), *args)
    assert again.returncode == 0, again.stderr
    assert issue_papers((out / "2026-W47.md").read_text()) == 5
    assert "Research digest" not in "".join(r.title for r in load_sources([str(listings)]).records)


def test_a_json_csv_or_xml_file_that_holds_no_listing_is_skipped_in_a_walk(tmp_path):
    """A run report, a package.json, a CSV of other data or an XML file met in a folder walk
    was an error; the README says such a file is skipped with a warning (a probe, stop 28)."""
    from tests.opsrun import week_listing

    week_listing(tmp_path, "2026-W47", 3)
    (tmp_path / "report.json").write_text('{"week": "2026-W47", "counts": {}}')
    (tmp_path / "numbers.json").write_text("[1, 2, 3]")
    (tmp_path / "other.csv").write_text("a,b\n1,2\n")
    (tmp_path / "config.xml").write_text("<settings><x>1</x></settings>")
    result = load_sources([str(tmp_path)])
    assert result.errors == [] and len(result.records) == 3
    assert len([w for w in result.warnings if "skipped" in w]) == 4
    given = load_sources([str(tmp_path / "report.json")])  # named: still an error
    assert len(given.errors) == 1 and "expected a list of papers" in str(given.errors[0])


def test_a_glob_leaves_out_digest_s_output_folders_too(tmp_path):
    """"listings/*/*" with --out listings/out read its feed.xml back: a paper "Research digest,
    2026-W47" (a probe, stop 28)."""
    from tests.opsrun import cli, week_listing

    listings = tmp_path / "listings"
    week_listing(listings / "mail", "2026-W47", 4)
    args = ["--week", "2026-W47", "--backend", "offline", "--state", str(tmp_path / "s.sqlite"),
            "--out", str(listings / "out")]
    assert cli("newsletter", str(listings), *args).returncode == 0
    read = load_sources([str(listings / "*" / "*")])
    assert len(read.records) == 4 and not [r for r in read.records if "Research digest" in r.title]
