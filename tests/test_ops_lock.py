"""One run at a time per store (issue 11, point 1): real processes, a real flock.

A `digest newsletter` that holds the run lock is paused at a test hook; a second run
of the same week, or of the next week, exits 75 at once naming the holder; `--wait`
waits; `digest ingest` is not held up; kill -9 releases the lock."""

from __future__ import annotations

import sqlite3

from tests.conftest import EXAMPLES
from tests.opsrun import cli, kill9, published, start_paused, week_listing

MAIL = (EXAMPLES / "daily_papers_2026-11-18.txt").read_text(encoding="utf-8")


def test_a_second_run_exits_75_naming_the_holder_and_ingest_is_not_held_up(tmp_path):
    state, out = tmp_path / "state.sqlite", tmp_path / "out"
    args = ["--state", str(state), "--out", str(out), "--backend", "offline"]
    holder = start_paused(tmp_path, "locked", "newsletter", str(EXAMPLES), "--week",
                          "2026-W47", *args)
    try:
        same = cli("newsletter", str(EXAMPLES), "--week", "2026-W47", *args)
        nxt = cli("newsletter", str(EXAMPLES), "--week", "2026-W48", *args)
        waited = cli("newsletter", str(EXAMPLES), "--week", "2026-W48", *args, "--wait", "1")
        hook = cli("ingest", "-", "--state", str(state), stdin=MAIL)
    finally:
        kill9(holder)
    for result in (same, nxt, waited):
        assert result.returncode == 75, result.stderr
        assert f"pid {holder.pid} (newsletter, week 2026-W47, since " in result.stderr
        assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) == 1
    assert "after waiting 1 s" in waited.stderr
    assert hook.returncode == 0, hook.stderr
    assert not (out / "2026-W47.md").exists()  # the paused holder published nothing

    after = cli("newsletter", str(EXAMPLES), "--week", "2026-W47", *args)  # lock freed by kill
    assert after.returncode == 0, after.stderr
    assert len(published(state)["2026-W47"]) >= 30


def test_wait_takes_the_lock_once_the_holder_is_gone(tmp_path):
    state, out = tmp_path / "state.sqlite", tmp_path / "out"
    listing = week_listing(tmp_path / "in", "2026-W47", 6)
    args = [str(listing), "--week", "2026-W47", "--state", str(state), "--out", str(out),
            "--backend", "offline"]
    holder = start_paused(tmp_path, "locked", "newsletter", *args)
    kill9(holder)
    result = cli("newsletter", *args, "--wait", "5")
    assert result.returncode == 0, result.stderr


def test_ingest_behind_a_busy_store_exits_75_and_the_retry_stores_the_mail(tmp_path):
    state = tmp_path / "state.sqlite"
    assert cli("ingest", "-", "--state", str(state), stdin=MAIL).returncode == 0
    other = week_listing(tmp_path, "2026-W47", 3).read_text()
    with sqlite3.connect(state, isolation_level=None) as writer:
        writer.execute("BEGIN IMMEDIATE")  # another process's write transaction
        busy = cli("ingest", "-", "--state", str(state), stdin=other)
        writer.execute("ROLLBACK")
    assert busy.returncode == 75 and "locked by another digest run" in busy.stderr
    retry = cli("ingest", "-", "--state", str(state), stdin=other)
    assert retry.returncode == 0 and retry.stdout.startswith("3 new records")


def test_a_store_reached_through_a_symlink_has_the_same_run_lock(tmp_path):
    """The lock was the path as given plus ".lock", so `--state link.sqlite` and
    `--state data/s.sqlite` (one store) took two locks and both mailed the week (a probe,
    this stop). The lock is beside the store's real file, whatever path leads to it."""
    (tmp_path / "data").mkdir()
    state, link = tmp_path / "data" / "s.sqlite", tmp_path / "link.sqlite"
    args = [str(EXAMPLES), "--week", "2026-W47", "--out", str(tmp_path / "out"),
            "--backend", "offline"]
    assert cli("newsletter", *args, "--state", str(state)).returncode == 0
    link.symlink_to(state)
    holder = start_paused(tmp_path, "locked", "newsletter", *args, "--state", str(link))
    try:
        other = cli("newsletter", *args, "--state", str(state))
    finally:
        kill9(holder)
    assert other.returncode == 75, other.stderr
    assert f"pid {holder.pid} (newsletter" in other.stderr
