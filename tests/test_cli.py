"""The command line: contracts of DESIGN.md §3, exit codes, the run report."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from digest.cli import app
from digest.weeks import is_week

from .conftest import EXAMPLES

runner = CliRunner()
REPORT_COUNTS = {"records_read", "papers_unique", "duplicates_merged", "already_published",
                 "papers_in_issue", "themes", "batches"}
REPORT_LLM = {"backend", "model", "calls", "cache_hits", "retries", "failed_calls", "fallbacks",
              "prompt_tokens", "completion_tokens", "abstract_tokens", "cost_usd"}
STAGES = ["ingest", "dedup", "select", "themes", "batches", "summaries", "render", "publish"]


def newsletter(tmp_path, *args: str):
    return runner.invoke(app, ["newsletter", *args, "--out", str(tmp_path / "out"),
                               "--state", str(tmp_path / "state.sqlite"),
                               "--report", str(tmp_path / "report.json")])


def read_report(tmp_path):
    return json.loads((tmp_path / "report.json").read_text())


@pytest.mark.parametrize("command", [[], ["newsletter"], ["summarize"]])
def test_every_command_has_help(command):
    result = runner.invoke(app, [*command, "--help"])
    assert result.exit_code == 0
    assert "Usage" in result.output


def test_newsletter_help_documents_the_contract_flags():
    text = runner.invoke(app, ["newsletter", "--help"], terminal_width=200).output
    for flag in ("--out", "--week", "--state", "--backend", "--model", "--config", "--report",
                 "--format"):
        assert flag in text


def test_newsletter_writes_the_issue_prints_its_path_and_reports(tmp_path):
    result = newsletter(tmp_path, str(EXAMPLES), "--week", "2026-W47", "--backend", "offline")
    assert result.exit_code == 0, result.output
    path = tmp_path / "out" / "2026-W47.md"
    assert result.stdout.strip() == str(path)
    assert path.read_text(encoding="utf-8").startswith("# Research digest, 2026-W47")
    report = read_report(tmp_path)
    assert report["week"] == "2026-W47"
    assert report["outputs"]["markdown"] == str(path)
    assert set(report["counts"]) >= REPORT_COUNTS
    assert set(report["llm"]) >= REPORT_LLM
    assert report["counts"]["records_read"] == 40
    assert report["counts"]["papers_in_issue"] == 30
    assert report["llm"]["backend"] == "offline"
    assert report["llm"]["calls"] == 0
    assert sum(len(t["paper_ids"]) for t in report["themes"]) == 30
    assert report["errors"] == []
    assert report["duration_s"] > 0
    assert list(report["stages"]) == STAGES
    assert all(set(spent) == {"wall_s", "cpu_s"} and min(spent.values()) >= 0
               for spent in report["stages"].values())
    assert sum(spent["wall_s"] for spent in report["stages"].values()) <= report["duration_s"]
    assert report["issues"][0]["stages"] == report["stages"]


def test_auto_backend_is_offline_without_key_or_url(tmp_path):
    result = newsletter(tmp_path, str(EXAMPLES), "--week", "2026-W47")
    assert result.exit_code == 0, result.output
    assert read_report(tmp_path)["llm"]["backend"] == "offline"


def test_summarize_prints_markdown_and_leaves_state_alone(tmp_path, isolated_environment):
    result = runner.invoke(app, ["summarize", str(EXAMPLES), "--week", "2026-W47"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("# Research digest, 2026-W47")
    assert not isolated_environment.exists()  # no default state store was created


@pytest.mark.parametrize("source", ["missing-listing.txt", "empty-folder"])
def test_summarize_of_nothing_read_is_an_error_not_an_empty_issue(tmp_path, source):
    """It printed "No papers this week" and exited 0: `digest summarize SOURCE | mail` would
    announce an empty week over a typo (the exit-code table says 1; a probe, stop 28)."""
    (tmp_path / "empty-folder").mkdir()
    result = runner.invoke(app, ["summarize", str(tmp_path / source), "--week", "2026-W47"])
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    assert "nothing read" in result.stderr and "Traceback" not in result.stderr


def test_summarize_reads_stdin(tmp_path):
    page = (EXAMPLES / "daily_papers_2026-11-16.txt").read_text(encoding="utf-8")
    result = runner.invoke(app, ["summarize", "-", "--week", "2026-W47"], input=page)
    assert result.exit_code == 0, result.output
    assert "13 records read" in result.stdout


def test_bad_week_is_a_usage_error_and_still_reported(tmp_path):
    result = newsletter(tmp_path, str(EXAMPLES), "--week", "2026-47")
    assert result.exit_code == 2
    assert "expected an ISO week" in result.stderr
    assert "expected an ISO week" in read_report(tmp_path)["errors"][0]


def test_no_source_is_a_usage_error(tmp_path):
    result = newsletter(tmp_path)
    assert result.exit_code == 2
    assert "no source given" in result.stderr


def test_a_missing_source_is_reported_and_the_others_still_read(tmp_path):
    missing = tmp_path / "nope.txt"
    result = newsletter(tmp_path, str(missing), str(EXAMPLES), "--week", "2026-W47")
    assert result.exit_code == 0, result.output
    report = read_report(tmp_path)
    assert report["counts"]["records_read"] == 40
    assert any(str(missing) in error for error in report["errors"])


def test_strict_stops_at_a_missing_source_and_names_it(tmp_path):
    missing = tmp_path / "nope.txt"
    result = newsletter(tmp_path, str(missing), str(EXAMPLES), "--strict", "--week", "2026-W47")
    assert result.exit_code == 1
    assert str(missing) in result.stderr
    assert not (tmp_path / "out" / "2026-W47.md").exists()
    assert str(missing) in read_report(tmp_path)["errors"][0]


def test_openai_backend_without_key_says_how_to_fix_it(tmp_path):
    result = newsletter(tmp_path, str(EXAMPLES), "--backend", "openai")
    assert result.exit_code == 2
    assert "OPENAI_API_KEY" in result.stderr


def test_unknown_backend_is_a_usage_error(tmp_path):
    result = newsletter(tmp_path, str(EXAMPLES), "--backend", "gpt")
    assert result.exit_code == 2
    assert "unknown backend" in result.stderr


def test_config_file_sets_defaults_and_flags_win(tmp_path):
    config = tmp_path / "digest.toml"
    config.write_text('[digest]\nbackend = "offline"\nmax_themes = 2\n', encoding="utf-8")
    result = newsletter(tmp_path, str(EXAMPLES), "--config", str(config), "--week", "2026-W47")
    assert result.exit_code == 0, result.output
    assert read_report(tmp_path)["counts"]["themes"] <= 2
    result = newsletter(tmp_path, str(EXAMPLES), "--config", str(config), "--max-themes", "4",
                        "--week", "2026-W47")
    assert read_report(tmp_path)["counts"]["themes"] > 2


def test_bad_config_names_the_file_and_key(tmp_path):
    config = tmp_path / "digest.toml"
    config.write_text('colour = "blue"\n', encoding="utf-8")
    result = newsletter(tmp_path, str(EXAMPLES), "--config", str(config))
    assert result.exit_code == 2
    assert str(config) in result.stderr and "colour" in result.stderr


def test_python_dash_m_runs_the_cli():
    result = subprocess.run([sys.executable, "-m", "digest", "--version"],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0
    assert result.stdout.startswith("digest ")


def test_the_digest_process_collects_cycles_less_often_but_still_does(monkeypatch):
    # issue 15: the collector's default pace was 9% of a 50k run (benchmarks/predictions.md).
    import gc

    import digest.cli

    seen = []
    monkeypatch.setattr(digest.cli, "app", lambda: seen.append(gc.get_threshold()))
    before = gc.get_threshold()
    try:
        digest.cli.main()
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()
    assert seen == [digest.cli.GC_THRESHOLDS]
    assert seen[0][0] > 700 and all(seen[0]) and gc.isenabled()


def test_the_digest_process_leaves_what_is_alive_out_of_its_last_collection(monkeypatch):
    """issue 15: the collection at interpreter exit walked a 50k run's millions of objects
    (a second of CPU) to free memory the process gives back anyway; main freezes them when
    the command is done, whether it ends well or not."""
    import gc

    import digest.cli

    def failing_command():
        raise SystemExit(1)

    before = gc.get_threshold()
    monkeypatch.setattr(digest.cli, "app", failing_command)
    try:
        with pytest.raises(SystemExit):
            digest.cli.main()
        assert gc.get_freeze_count() > 0
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()
    assert gc.get_freeze_count() == 0


@pytest.mark.parametrize("command", ["summarize", "newsletter", "email"])
def test_a_week_whose_sunday_is_past_year_9999_is_a_usage_error(tmp_path, command):
    """`--week 9999-W52` ended in "OverflowError: date value out of range" (its Sunday is past
    the last date Python has), exit 1 (a probe)."""
    state = ["--state", str(tmp_path / "state.sqlite")]
    mail = ["--eml", "--from", "a@example.org", "--to", "b@example.org"]
    extra = {"summarize": [], "email": [*mail, *state],
             "newsletter": ["--out", str(tmp_path / "out"), *state]}[command]
    result = runner.invoke(app, [command, str(EXAMPLES), "--week", "9999-W52", *extra])
    assert result.exit_code == 2, result.output
    assert "week '9999-W52': past the last date digest can handle" in result.stderr


def test_every_help_text_keeps_its_square_brackets():
    """Rich markup ate "[profile]" from the --max-papers help: "rank best for the reader's  go
    to themes" (a probe). Every bracketed word of every help text must reach the screen."""
    command = typer.main.get_command(app)
    for sub in command.commands.values():
        shown = runner.invoke(app, [sub.name, "--help"]).output
        for param in sub.params:
            for word in re.findall(r"\[[^\s\]]+", (param.help or "").replace("\\[", "[")):
                assert word in shown, (sub.name, param.name, word)
    assert "[profile]" in runner.invoke(app, ["newsletter", "--help"]).output


def test_an_issue_file_of_such_a_week_is_passed_over_like_one_of_no_week(tmp_path):
    """With parse_week refusing 9999-W52, a stray 9999-W52.md in the output folder stopped
    every run with exit 2 blaming --week (before, an OverflowError traceback): it is no week."""
    assert not is_week("9999-W52") and is_week("9999-W51") and not is_week("2026-W60")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "9999-W52.md").write_text("x\n", encoding="utf-8")
    result = newsletter(tmp_path, str(EXAMPLES), "--week", "2026-W47", "--new-store")
    assert result.exit_code == 0, result.output
    assert "9999-W52.md" in result.stderr


@pytest.mark.parametrize("under", ["", "sub"])
def test_an_out_that_is_a_file_is_a_usage_error_naming_it(tmp_path, under):
    """"afile/.history.json: cannot read the issue history: Not a directory ... (delete the
    file to start it afresh)": no such file; --out named a file, or a folder under one (a
    probe, stop 28)."""
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    result = runner.invoke(app, ["newsletter", str(EXAMPLES), "--week", "2026-W47", "--backend",
                                 "offline", "--out", str(afile / under), "--state",
                                 str(tmp_path / "s.sqlite")])
    assert result.exit_code == 2, result.output
    assert f"{afile} is a file, not a folder" in result.stderr and "--out" in result.stderr
    assert afile.read_text() == "not a folder"


def test_a_state_under_a_file_is_an_error_naming_the_state_setting(tmp_path):
    """"afile: cannot write (File exists) ... choose another output folder (set by --out)"
    for --state afile/s.sqlite (a probe, stop 28)."""
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    result = runner.invoke(app, ["newsletter", str(EXAMPLES), "--week", "2026-W47",
                                 "--backend", "offline", "--out", str(tmp_path / "out"),
                                 "--state", str(afile / "s.sqlite")])
    assert result.exit_code in (1, 2), result.output
    assert "--state" in result.stderr and "(set by --out" not in result.stderr


def test_a_bad_themes_value_names_its_flag():
    result = runner.invoke(app, ["summarize", str(EXAMPLES), "--themes", "foo"])
    assert result.exit_code == 2 and "--themes" in result.stderr, result.output


def test_quiet_keeps_the_warnings_in_the_run_report(tmp_path):
    """README: -q "only errors on stderr, no warnings (they stay in the run report)"; the
    report had no warnings at all (a probe, stop 28)."""
    listing = tmp_path / "week.json"
    listing.write_text(json.dumps([
        {"title": "A Study of Widgets", "abstract": "We study widgets. " * 600,
         "date": "2026-11-18"},
        {"title": "Another Study of Gadgets", "abstract": "We study gadgets in depth.",
         "date": "2026-11-18"}]), encoding="utf-8")
    report = tmp_path / "report.json"
    result = runner.invoke(app, ["summarize", str(listing), "--week", "2026-W47", "-q",
                                 "--report", str(report)])
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    warnings = json.loads(report.read_text())["warnings"]
    assert any("kept the first" in warning for warning in warnings), warnings


def test_an_issue_shows_authors_without_affiliations_and_in_first_last_order(tmp_path):
    """"Finn, Chelsea and Levine, Sergey" was shown as *(Finn, Chelsea, Levine et al.)* and an
    affiliation's comma split a name: *(Zinaida A. Lykova (Newcastle University and England))*
    (a probe, stop 29)."""
    abstract = ("We study how author strings are split into names when a listing gives them "
                "as one string, with affiliations, in either name order, for a weekly issue.")
    listing = tmp_path / "authors.json"
    listing.write_text(json.dumps([
        {"title": "Operator algebras on Banach spaces", "abstract": abstract,
         "date": "2026-11-17", "authors": "Zinaida A. Lykova (Newcastle University, England)"},
        {"title": "Meta-learning for robot manipulation", "abstract": abstract,
         "date": "2026-11-17", "authors": "Finn, Chelsea and Levine, Sergey"},
        {"title": "Affiliations on two authors", "abstract": abstract, "date": "2026-11-17",
         "authors": "A. Author (MIT, USA), B. Author (ETH, Switzerland)"}]))
    result = newsletter(tmp_path, str(listing), "--week", "2026-W47", "--backend", "offline")
    assert result.exit_code == 0, result.output
    issue = (tmp_path / "out" / "2026-W47.md").read_text(encoding="utf-8")
    assert "*(Zinaida A. Lykova)*" in issue
    assert "*(Chelsea Finn and Sergey Levine)*" in issue
    assert "*(A. Author and B. Author)*" in issue


def test_the_run_report_never_replaces_a_file_that_is_not_a_run_report(tmp_path):
    """``--report`` pointed at the state store or at an issue replaced it with the report,
    exit 0 and no word: all history, sendings and the LLM cache gone, or the published issue
    turned into JSON that index and feed still link to (a probe, stop 32)."""
    out, state = tmp_path / "out", tmp_path / "out" / "s.sqlite"
    base = ["newsletter", str(EXAMPLES), "--week", "2026-W47", "--backend", "offline",
            "--out", str(out), "--state", str(state)]
    first = runner.invoke(app, [*base, "--report", str(tmp_path / "r.json")])
    assert first.exit_code == 0, first.output
    kept = {path: path.read_bytes() for path in (state, out / "2026-W47.md")}
    for target in kept:
        result = runner.invoke(app, [*base, "--report", str(target)])
        assert result.exit_code == 2, result.output
        assert f"--report {target}: it holds something else than a run report" in result.output
        assert {path: path.read_bytes() for path in kept} == kept
    again = runner.invoke(app, [*base, "--report", str(tmp_path / "r.json")])  # a report: fine
    assert again.exit_code == 0, again.output
    assert json.loads((tmp_path / "r.json").read_text())["week"] == "2026-W47"


def test_status_prints_the_lines_the_readme_quotes(tmp_path):
    """The README quoted `run lock: free`, but the values are aligned (a probe, stop 32)."""
    readme = (EXAMPLES.parent / "README.md").read_text(encoding="utf-8")
    quoted = re.search(r"`digest status` prints one fact a line, the values aligned \((.*?)\.\.\.",
                       readme, re.DOTALL)
    assert quoted is not None
    state = tmp_path / "s.sqlite"
    assert runner.invoke(app, ["ingest", str(EXAMPLES / "daily_papers_2026-11-16.txt"),
                               "--state", str(state)]).exit_code == 0
    shown = runner.invoke(app, ["status", "--state", str(state)]).output
    for line in re.findall(r"`([^`]+)`", quoted[1]):
        if "record(s) waiting" in line:
            assert re.search(r"^inbox: +\d+ record\(s\) waiting$", shown, re.MULTILINE), shown
        else:
            assert line in shown.splitlines(), (line, shown)


def test_a_report_to_a_fifo_is_written_not_waited_on(tmp_path):
    """The check that the report replaces no other file read 64 bytes of the path first: a
    FIFO (or /dev/stdout on a pipe) made the run wait forever before it began (a re-probe,
    stop 32)."""
    import os
    import threading

    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    result = subprocess.run(
        [sys.executable, "-m", "digest", "dedup", str(EXAMPLES), "--report", str(fifo)],
        capture_output=True, text=True, timeout=60, check=False)
    reader.join(timeout=10)
    assert result.returncode == 0, result.stderr
    assert got and json.loads(got[0])["counts"]["records_read"] > 0


def test_a_report_to_dev_stdout_or_through_a_link_never_replaces_the_link(tmp_path):
    """With stdout redirected to a file, `--report /dev/stdout` replaced /dev/stdout itself
    with a regular file, as root (the new check saw a regular file behind the link), and a
    symlink x.json -> report.json was replaced by a file, its target never updated (a
    re-probe, stop 32). /dev/stdout is now `--report -`; a link's target is written."""
    out = tmp_path / "out.txt"
    with out.open("w") as stdout:
        result = subprocess.run(
            # /proc/self/fd/1 names stdout as /dev/stdout does, and a failed fix could not
            # replace it (nothing is renamed into /proc): this test must not harm the machine
            [sys.executable, "-m", "digest", "dedup", str(EXAMPLES), "--report",
             "/proc/self/fd/1"],
            stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert text.startswith("records: ") and '"records_read"' in text
    assert Path("/dev/stdout").is_symlink()
    target, link = tmp_path / "report.json", tmp_path / "x.json"
    target.write_text('{"week": null}\n')
    link.symlink_to(target)
    assert runner.invoke(app, ["dedup", str(EXAMPLES), "--report", str(link)]).exit_code == 0
    assert link.is_symlink() and '"records_read"' in target.read_text()
