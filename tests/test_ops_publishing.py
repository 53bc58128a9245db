"""Publishing is a recorded transaction (issue 11, point 2): kill -9 a real `digest
newsletter` at each stage, then check the next run recovers and no paper is lost or sent
twice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAI
from tests.opsrun import (
    cli,
    issue_papers,
    kill9,
    pending_weeks,
    published,
    spawn,
    start_paused,
    wait_for,
    week_listing,
)


def setup(tmp_path: Path) -> tuple[Path, Path, list[str]]:
    state, out = tmp_path / "state.sqlite", tmp_path / "out"
    week_listing(tmp_path / "in", "2026-W46", 8)
    week_listing(tmp_path / "in", "2026-W47", 6)
    return state, out, ["--state", str(state), "--out", str(out), "--backend", "offline"]


def test_killed_between_the_files_and_the_store_record_the_next_run_finishes_it(tmp_path):
    state, out, args = setup(tmp_path)
    source = str(tmp_path / "in" / "2026-W46.jsonl")
    run = start_paused(tmp_path, "files", "newsletter", source, "--week", "2026-W46", *args)
    kill9(run)
    assert (out / "2026-W46.md").exists() and pending_weeks(state) == ["2026-W46"]
    assert "2026-W46" not in published(state)

    later = cli("newsletter", str(tmp_path / "in"), "--week", "2026-W47", *args,
                "--include-published")
    assert later.returncode == 0, later.stderr
    assert pending_weeks(state) == []
    assert len(published(state)["2026-W46"]) == 8  # finished from the recorded issue
    assert issue_papers((out / "2026-W46.md").read_text()) == 8
    index = (out / "index.md").read_text()
    assert "2026-W46" in index and "2026-W47" in index
    assert "2026-W46" in (out / "feed.xml").read_text()
    weeks = [item["week"] for item in json.loads((out / ".history.json").read_text())["issues"]]
    assert weeks == ["2026-W46", "2026-W47"]


@pytest.mark.parametrize("point", ["archive", "published"])
def test_killed_around_the_store_record_of_the_issue_a_catch_up_rerun_has_the_archive(
        tmp_path, point):
    """Killed between the store's record of the issue and index.md, feed.xml and the history:
    a `--catch-up` rerun found nothing to catch up and wrote none of them (a probe, stop 28).
    They are written before the record now ("archive": still pending, finished by the rerun)."""
    state, out, args = setup(tmp_path)
    source = str(tmp_path / "in" / "2026-W46.jsonl")
    run = start_paused(tmp_path, point, "newsletter", source, "--week", "2026-W46", *args)
    kill9(run)
    assert (out / "2026-W46.md").exists()
    assert pending_weeks(state) == (["2026-W46"] if point == "archive" else [])

    again = cli("newsletter", source, "--catch-up", "--week", "2026-W46", *args)
    assert again.returncode == 0, again.stderr
    assert "2026-W46" in (out / "index.md").read_text()
    assert "2026-W46" in (out / "feed.xml").read_text()
    weeks = [item["week"] for item in json.loads((out / ".history.json").read_text())["issues"]]
    assert weeks == ["2026-W46"]
    assert len(published(state)["2026-W46"]) == 8 and pending_weeks(state) == []


def test_killed_after_recording_pending_the_issue_is_written_and_never_repeated(tmp_path):
    state, out, args = setup(tmp_path)
    run = start_paused(tmp_path, "pending", "newsletter", str(tmp_path / "in" / "2026-W46.jsonl"),
                       "--week", "2026-W46", *args)
    kill9(run)
    assert not (out / "2026-W46.md").exists()
    out.mkdir(exist_ok=True)
    (out / ".2026-W46.md.k3x_9abc").write_text("half an issue")  # a killed write's temp file
    dry = cli("newsletter", str(tmp_path / "in"), "--week", "2026-W47", *args, "--dry-run")
    assert dry.returncode == 0 and pending_weeks(state) == ["2026-W46"]  # a dry run writes nothing
    assert not (out / "2026-W46.md").exists() and (out / ".2026-W46.md.k3x_9abc").exists()

    nxt = cli("newsletter", str(tmp_path / "in"), "--week", "2026-W47", *args)
    assert nxt.returncode == 0, nxt.stderr
    assert issue_papers((out / "2026-W46.md").read_text()) == 8
    assert issue_papers((out / "2026-W47.md").read_text()) == 6  # not W46's 8 again
    assert set(published(state)["2026-W46"]).isdisjoint(published(state)["2026-W47"])
    assert not (out / ".2026-W46.md.k3x_9abc").exists()


def test_killed_during_llm_calls_nothing_is_published_and_the_next_run_works(tmp_path):
    state, out, args = setup(tmp_path)
    source = str(tmp_path / "in" / "2026-W46.jsonl")
    with FakeOpenAI(latency=30.0) as server:
        llm = ["--state", str(state), "--out", str(out), "--backend", "openai",
               "--base-url", server.url, "--timeout", "60"]
        run = spawn("newsletter", source, "--week", "2026-W46", *llm,
                    env={"OPENAI_API_KEY": "sk-test"})
        wait_for(lambda: bool(server.requests), "the first LLM request")
        kill9(run)
    assert not (out / "2026-W46.md").exists() and pending_weeks(state) == []
    again = cli("newsletter", source, "--week", "2026-W46", *args)
    assert again.returncode == 0, again.stderr
    assert len(published(state)["2026-W46"]) == 8


def test_a_mail_hook_killed_mid_ingest_stores_nothing_and_the_redelivery_stores_it(tmp_path):
    state = tmp_path / "state.sqlite"
    mail = week_listing(tmp_path, "2026-W47", 4).read_text()
    hook = start_paused(tmp_path, "ingest", "ingest", "-", "--state", str(state), stdin=mail)
    kill9(hook)  # the MTA saw no exit 0: it delivers again
    again = cli("ingest", "-", "--state", str(state), stdin=mail)
    assert again.returncode == 0 and again.stdout.startswith("4 new records"), again.stderr


def test_a_re_run_without_a_format_drops_that_format_s_old_file_and_its_links(tmp_path):
    """A re-run without --formats html left the first run's 2026-W47.html (the old issue) in
    place, and index.md and feed.xml kept linking it (a probe, stop 28)."""
    state, out, args = setup(tmp_path)
    source = str(tmp_path / "in" / "2026-W47.jsonl")
    first = cli("newsletter", source, "--week", "2026-W47", *args, "--formats", "md,html,txt")
    assert first.returncode == 0 and (out / "2026-W47.html").exists()
    again = cli("newsletter", source, "--week", "2026-W47", *args, "--max-themes", "1")
    assert again.returncode == 0, again.stderr
    assert not (out / "2026-W47.html").exists() and not (out / "2026-W47.txt").exists()
    assert "2026-W47.html" not in (out / "index.md").read_text()
    assert "2026-W47.html" not in (out / "feed.xml").read_text()


def test_a_pending_issue_whose_templates_are_gone_says_so_and_how_to_finish_it(tmp_path):
    """A run with --templates T killed at the files, then T deleted: every later newsletter
    or email exited 2 "templates folder T: no such folder (set by --templates ...)", though
    it had no --templates (a probe, this stop). The pending issue's index and feed are
    rendered with the templates it was made with: the error says which week, which folder,
    and to restore it."""
    import shutil

    from digest.render.renderer import TEMPLATES_DIR

    state, out, args = setup(tmp_path)
    templates = tmp_path / "templates"
    templates.mkdir()
    shutil.copy(TEMPLATES_DIR / "index.md.j2", templates / "index.md.j2")
    run = start_paused(tmp_path, "files", "newsletter", str(tmp_path / "in" / "2026-W46.jsonl"),
                       "--week", "2026-W46", "--templates", str(templates), *args)
    kill9(run)
    shutil.rmtree(templates)
    later = cli("newsletter", str(tmp_path / "in"), "--week", "2026-W47", *args)
    assert later.returncode == 1, later.stderr
    (line,) = later.stderr.strip().splitlines()
    assert "2026-W46" in line and str(templates) in line and "restore" in line, line
    assert "set by --templates" not in line
    status = cli("status", "--state", str(state))
    assert f"2026-W46 (made with the templates in {templates}, which are gone: restore them" in (
        status.stdout)  # it said "the next run finishes it"
    templates.mkdir()
    shutil.copy(TEMPLATES_DIR / "index.md.j2", templates / "index.md.j2")
    again = cli("newsletter", str(tmp_path / "in"), "--week", "2026-W47", *args)
    assert again.returncode == 0, again.stderr
    assert sorted(published(state)) == ["2026-W46", "2026-W47"]


def test_a_pending_issue_made_with_relative_templates_is_finished_from_another_folder(
        tmp_path, monkeypatch):
    """`--templates tpl`, given relative to the folder the run started in, was kept as "tpl":
    killed at `pending`, the issue was said to need restored templates (the folder was there)
    when status or the next run started elsewhere (a probe, this stop)."""
    import shutil

    from digest.render.renderer import TEMPLATES_DIR

    state, _out, args = setup(tmp_path)
    (tmp_path / "tpl").mkdir()
    shutil.copy(TEMPLATES_DIR / "index.md.j2", tmp_path / "tpl" / "index.md.j2")
    monkeypatch.chdir(tmp_path)
    run = start_paused(tmp_path, "pending", "newsletter", str(tmp_path / "in" / "2026-W46.jsonl"),
                       "--week", "2026-W46", "--templates", "tpl", *args)
    kill9(run)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    status = cli("status", "--state", str(state))
    assert "2026-W46 (the next run finishes it)" in status.stdout, status.stdout
    later = cli("newsletter", str(tmp_path / "in"), "--week", "2026-W47", *args)
    assert later.returncode == 0, later.stderr
    assert sorted(published(state)) == ["2026-W46", "2026-W47"]


def test_an_index_that_is_a_folder_is_named_and_the_fix_given_works(tmp_path):
    """index.md replaced by a folder: the error named a temp file ".index.md.h0qn63f4:
    cannot write (Is a directory)" and advised "choose another output folder (set by
    --out)", but a run with another --out failed the same way, as it first finishes the
    pending issue in its own folder (a probe, this stop)."""
    state, out, args = setup(tmp_path)
    assert cli("newsletter", str(tmp_path / "in"), "--week", "2026-W46", *args).returncode == 0
    (out / "index.md").unlink()
    (out / "index.md").mkdir()
    failed = cli("newsletter", str(tmp_path / "in"), "--week", "2026-W47", *args)
    assert failed.returncode == 1, failed.stderr
    (line,) = failed.stderr.strip().splitlines()
    assert f"{out / 'index.md'}: cannot write" in line and ".index.md." not in line, line
    assert "another output folder" not in line and "--out" not in line
    assert "remove" in line and pending_weeks(state) == ["2026-W47"]
    (out / "index.md").rmdir()  # the fix the line gives
    again = cli("newsletter", str(tmp_path / "in"), "--week", "2026-W47", *args)
    assert again.returncode == 0, again.stderr
    assert "2026-W47" in (out / "index.md").read_text()
