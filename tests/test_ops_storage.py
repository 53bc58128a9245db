"""Storage faults are clean (issue 11, point 3): a real full disk (tmpfs of 256 KiB), a
real read-only one (remount,ro), truncated stores, a store lost beside an output folder
with history, and 20 first deliveries at once to a new store (forked processes)."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from digest.errors import StateError
from digest.state import CallRecord, Store
from tests.conftest import EXAMPLES, remount_read_only
from tests.opsrun import (
    DEADLINE_S,
    cli,
    kill9,
    pending_weeks,
    published,
    run_process,
    spawn,
    start_paused,
    wait_for,
    week_listing,
)

MAILS = sorted(EXAMPLES.glob("daily_papers_*.txt"))


def fill(disk: Path) -> Path:
    filler = disk / "filler"
    with filler.open("wb", buffering=0) as handle:
        for _ in range(1024):  # bounded: 256 KiB at most fit
            try:
                handle.write(b"\0" * 512)
            except OSError:
                break
    return filler


def one_line_error(result, code: int) -> str:  # type: ignore[no-untyped-def]
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def inbox_count(state: Path) -> int:
    with sqlite3.connect(state) as db:
        return int(db.execute("SELECT count(*) FROM inbox").fetchone()[0])


def test_ingest_on_a_full_disk_exits_75_and_the_retry_stores_the_mail(small_disk):
    state = small_disk / "state.sqlite"
    assert cli("ingest", "-", "--state", str(state), stdin=MAILS[0].read_text()).returncode == 0
    filler = fill(small_disk)
    line = one_line_error(cli("ingest", "-", "--state", str(state),
                              stdin=MAILS[1].read_text()), 75)
    assert str(state) in line and "full" in line
    filler.unlink()
    assert cli("ingest", "-", "--state", str(state),
               stdin=MAILS[1].read_text()).returncode == 0  # the MTA's retry
    assert inbox_count(state) == 26


def test_ingest_and_newsletter_on_a_read_only_disk_exit_75(small_disk, tmp_path):
    state = small_disk / "state.sqlite"
    assert cli("ingest", "-", "--state", str(state), stdin=MAILS[0].read_text()).returncode == 0
    remount_read_only(small_disk)
    line = one_line_error(cli("ingest", "-", "--state", str(state),
                              stdin=MAILS[1].read_text()), 75)
    assert str(state) in line
    result = cli("newsletter", str(EXAMPLES), "--week", "2026-W47", "--state", str(state),
                 "--out", str(tmp_path / "out"), "--backend", "offline")
    assert result.returncode == 75 and "Traceback" not in result.stderr, result.stderr


def test_an_output_folder_on_a_full_disk_keeps_the_issue_pending_and_the_old_ones_intact(
        small_disk, tmp_path):
    state, out = tmp_path / "state.sqlite", small_disk / "out"
    week_listing(tmp_path / "in", "2026-W46", 5)
    args = ["--state", str(state), "--out", str(out), "--backend", "offline"]
    assert cli("newsletter", str(tmp_path / "in"), "--week", "2026-W46", *args).returncode == 0
    before = {path.name: path.read_bytes() for path in out.iterdir()}
    week_listing(tmp_path / "in", "2026-W47", 40)
    filler = fill(small_disk)
    line = one_line_error(cli("newsletter", str(tmp_path / "in"), "--week", "2026-W47", *args),
                          75)
    assert "No space left" in line and "pending" in line
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before  # nothing damaged
    assert "2026-W47" not in published(state)
    filler.unlink()
    assert pending_weeks(state) == ["2026-W47"]
    again = cli("newsletter", str(tmp_path / "in"), "--week", "2026-W47", *args)
    assert again.returncode == 0, again.stderr
    assert len(published(state)["2026-W47"]) == 40


@pytest.mark.parametrize("size", [0, 4096])
def test_a_truncated_store_is_refused_not_recreated(tmp_path, size):
    state = tmp_path / "state.sqlite"
    args = ["--state", str(state), "--out", str(tmp_path / "out"), "--backend", "offline"]
    assert cli("newsletter", str(EXAMPLES), "--week", "2026-W47", *args).returncode == 0
    with sqlite3.connect(state) as db:  # move everything from the WAL into the file
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    with state.open("r+b") as handle:
        handle.truncate(size)
    line = one_line_error(cli("newsletter", str(EXAMPLES), "--week", "2026-W48", *args), 1)
    assert str(state) in line and "truncated" in line and "backup" in line
    assert state.stat().st_size == size  # not silently recreated
    hook = cli("ingest", "-", "--state", str(state), stdin=MAILS[0].read_text())
    assert "truncated" in one_line_error(hook, 75)  # the MTA keeps the mail meanwhile


def test_a_store_caught_mid_checkpoint_is_used_not_called_truncated(tmp_path):
    """A checkpoint writes page 1 (its header gives the new size) before the pages that grow
    the file. One of twenty first deliveries at once saw that moment and was refused as
    "truncated" (CI, stop 27): a store that looks truncated is looked at again."""
    state = tmp_path / "state.sqlite"
    Store(state).close()
    whole = state.read_bytes()
    assert len(whole) > 4096
    state.write_bytes(whole[:4096])  # page 1 written, the rest not yet

    def grow() -> None:
        with state.open("r+b") as handle:
            handle.seek(4096)
            handle.write(whole[4096:])

    growing = threading.Timer(0.1, grow)
    growing.start()
    try:
        Store(state).close()
    finally:
        growing.join()


def test_a_store_lost_beside_an_output_folder_with_history_is_refused(tmp_path):
    out = tmp_path / "out"
    args = ["--out", str(out), "--backend", "offline", "--week", "2026-W47", str(EXAMPLES)]
    assert cli("newsletter", *args, "--state", str(tmp_path / "a.sqlite")).returncode == 0
    line = one_line_error(cli("newsletter", *args, "--state", str(tmp_path / "b.sqlite")), 1)
    assert "b.sqlite holds no issue" in line and "--new-store" in line
    assert cli("newsletter", *args, "--state", str(tmp_path / "b.sqlite"),
               "--new-store").returncode == 0


def _deliver(state: str, mail: str, start, results) -> None:  # type: ignore[no-untyped-def]
    start.wait(30)
    result = cli("ingest", "-", "--state", state, stdin=mail)
    results.put((result.returncode, result.stderr.strip()[-400:]))


def test_twenty_first_deliveries_at_once_to_a_new_store_are_all_stored(tmp_path):
    state = tmp_path / "new" / "state.sqlite"
    mails = [path.read_text() for path in MAILS]
    context = multiprocessing.get_context("fork")  # digest is imported already: no start-up
    start, results = context.Event(), context.Queue()
    workers = [context.Process(target=_deliver, args=(str(state), mails[n % 3], start, results))
               for n in range(20)]
    for worker in workers:
        worker.start()
    start.set()
    outcomes = [results.get(timeout=60) for _ in workers]
    for worker in workers:
        worker.join(timeout=30)
    assert [why for code, why in outcomes if code != 0] == []  # the reason, if one failed
    assert [code for code, _ in outcomes] == [0] * 20
    assert inbox_count(state) == 38  # three distinct mails: 13 + 13 + 12 records
    leftovers = [p.name for p in state.parent.iterdir() if ".new-" in p.name]
    assert leftovers == []


def test_a_report_that_cannot_be_written_is_a_warning_once_the_issue_is_out(tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    result = cli("newsletter", str(EXAMPLES), "--week", "2026-W47", "--state",
                 str(tmp_path / "s.sqlite"), "--out", str(tmp_path / "out"), "--backend",
                 "offline", "--report", str(blocker / "report.json"))
    assert result.returncode == 0, result.stderr
    assert "Warning:" in result.stderr and "run report" in result.stderr
    assert shutil.os.path.exists(tmp_path / "out" / "2026-W47.md")


def test_a_store_of_the_previous_schema_is_upgraded_in_place_keeping_its_issues(tmp_path):
    from digest.state import MIGRATIONS, Store

    state = tmp_path / "state.sqlite"
    with sqlite3.connect(state, isolation_level=None) as db:
        for script in MIGRATIONS[:4]:
            db.executescript(script)
        db.execute("PRAGMA user_version=4")
        db.execute("INSERT INTO issues (week, papers) VALUES ('2026-W46', 3)")
        db.execute("INSERT INTO published (paper_id, week) VALUES ('p1', '2026-W46')")
    with Store(state) as store:
        assert [(row["week"], row["papers"]) for row in store.issues()] == [("2026-W46", 3)]
        assert store.published_elsewhere("2026-W47") == {"p1"}
    with sqlite3.connect(state) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)


def test_the_half_built_store_of_a_killed_first_use_is_removed_by_the_next_use(tmp_path):
    state = tmp_path / "state.sqlite"
    dead = subprocess.run(["sh", "-c", "echo $$"], capture_output=True, text=True, check=True)
    killed = tmp_path / f".state.sqlite.new-{int(dead.stdout)}-0a1b2c3d"  # its process is gone
    killed.write_bytes(b"SQLite format 3\0" + b"\0" * 84)
    building = tmp_path / f".state.sqlite.new-{os.getpid()}-feedbeef"  # a live first use
    building.write_bytes(b"")
    with Store(state):
        pass
    assert not killed.exists()
    assert building.exists()


def _damage_a_page(state: Path) -> None:
    """Overwrite the store's third page (a table's b-tree page) as a bad disk sector would."""
    with sqlite3.connect(state) as db:  # move everything from the WAL into the file
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page = state.read_bytes()[16:18]
    size = int.from_bytes(page, "big")
    with state.open("r+b") as handle:
        handle.seek(2 * size)
        handle.write(b"\xff" * size)


def test_a_damaged_store_takes_no_mail_and_every_command_names_it(tmp_path):
    """A store with a damaged page took a mail (exit 0, "3 new records kept") that no run
    could then use and that restoring the store from a backup lost; newsletter said "the
    state store: not a usable state store", naming no file (a probe, stop 28)."""
    state = tmp_path / "state.sqlite"
    args = ["--state", str(state), "--out", str(tmp_path / "out"), "--backend", "offline"]
    assert cli("newsletter", str(EXAMPLES), "--week", "2026-W47", *args).returncode == 0
    _damage_a_page(state)
    hook = cli("ingest", "-", "--state", str(state), stdin=MAILS[0].read_text())
    line = one_line_error(hook, 75)  # the MTA keeps the mail until the store is restored
    assert str(state) in line and "damaged" in line
    run = one_line_error(cli("newsletter", str(EXAMPLES), "--week", "2026-W48", *args), 1)
    assert str(state) in run


def _damage_a_table(state: Path, table: str) -> None:
    """Scribble over a table's root page past its header, as a bad sector would: SQLite still
    reads the page, and a query may find fewer rows than there are, without an error."""
    with sqlite3.connect(state) as db:
        root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)
                          ).fetchone()[0]
        size = db.execute("PRAGMA page_size").fetchone()[0]
    with state.open("r+b") as handle:
        handle.seek(size * (root - 1) + 8)
        handle.write(b"\x07" * 200)


@pytest.mark.parametrize("command", ["newsletter", "email"])
def test_a_store_whose_published_papers_are_damaged_publishes_and_mails_nothing(
        tmp_path, command, monkeypatch):
    """With the published table's page damaged, `digest newsletter` read no paper as
    published and put the last week's 13 papers out again (exit 0, already_published 0):
    only ingest checked the whole store (a probe, this stop)."""
    monkeypatch.setenv("DIGEST_MAIL_FROM", "digest@example.org")
    monkeypatch.setenv("DIGEST_MAIL_TO", "team@example.org")
    state, out = tmp_path / "state.sqlite", tmp_path / "out"
    args = ["--state", str(state), "--out", str(out), "--backend", "offline"]
    assert cli("newsletter", str(EXAMPLES), "--week", "2026-W47", *args).returncode == 0
    _damage_a_table(state, "published")
    later = tmp_path / "daily_papers_2026-11-24.txt"  # last week's first page, a week later
    later.write_text((EXAMPLES / "daily_papers_2026-11-16.txt").read_text(encoding="utf-8")
                     .replace("Nov 16", "Nov 24"), encoding="utf-8")
    extra = ["--eml"] if command == "email" else []
    line = one_line_error(cli(command, str(later), "--week", "2026-W48", *args, *extra), 1)
    assert str(state) in line and "damaged" in line
    if command == "email":  # it has no --new-store, and a new store would not know the sent
        assert "new-store" not in line and "restore it from a backup" in line
    assert not (out / "2026-W48.md").exists()


def test_a_full_disk_under_the_store_names_its_lock_file(small_disk, tmp_path):
    """"Error: .: cannot write (No space left on device)": the run lock's label was the write
    that failed (a probe, stop 28)."""
    fill(small_disk)
    state = small_disk / "state.sqlite"
    line = one_line_error(cli("newsletter", str(EXAMPLES), "--week", "2026-W47", "--state",
                              str(state), "--out", str(tmp_path / "out"), "--backend",
                              "offline"), 75)
    assert f"{state}.lock" in line or str(state) in line, line
    assert not line.startswith("Error: .:")


def test_a_store_killed_mid_checkpoint_is_recovered_from_its_wal_not_called_truncated(tmp_path):
    """kill -9 during a checkpoint (one of 11 timed kills of a 5k run): page 1, whose header
    gives the grown size, was written, the pages that grow the file were not, and the WAL still
    held every frame. SQLite recovers that on open; the header check refused it as "truncated"
    for good (stop 28)."""
    live, copy = tmp_path / "live.sqlite", tmp_path / "state.sqlite"
    Store(live).close()
    db = sqlite3.connect(live)
    db.execute("PRAGMA wal_autocheckpoint = 0")
    db.execute("CREATE TABLE filler (x BLOB)")
    db.executemany("INSERT INTO filler VALUES (?)", [(os.urandom(2000),) for _ in range(200)])
    db.commit()
    for suffix in ("", "-wal"):  # the files as a kill would leave them: nothing checkpointed
        shutil.copyfile(f"{live}{suffix}", f"{copy}{suffix}")
    db.close()
    grown = tmp_path / "grown.sqlite"
    for suffix in ("", "-wal"):
        shutil.copyfile(f"{copy}{suffix}", f"{grown}{suffix}")
    with sqlite3.connect(grown) as checkpointed:
        checkpointed.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page_size = int.from_bytes(grown.read_bytes()[16:18], "big")
    with copy.open("r+b") as handle:  # the checkpoint's first write: page 1, the new size
        handle.write(grown.read_bytes()[:page_size])
    assert copy.stat().st_size < grown.stat().st_size
    with Store(copy) as store:
        assert store._db.execute("SELECT count(*) FROM filler").fetchone()[0] == 200


def leave_free(disk: Path, size: int) -> None:
    """Fill ``disk`` but for ``size`` bytes."""
    space = os.statvfs(disk)
    (disk / "filler").write_bytes(b"\0" * (space.f_bavail * space.f_frsize - size))


@pytest.mark.parametrize("where", ["a full disk", "/dev/full"])
def test_a_message_written_out_as_eml_that_does_not_fit_exits_75_naming_standard_output(
        small_disk, monkeypatch, where):
    """`digest email --eml > file` on a full disk wrote a cut-off message and exited 0 (a short
    write was ignored); > /dev/full said "Error: .: cannot write ... nothing more was done"
    (a probe, this stop). The message is the product: written whole, or exit 75."""
    monkeypatch.setenv("DIGEST_MAIL_FROM", "digest@example.org")
    monkeypatch.setenv("DIGEST_MAIL_TO", "team@example.org")
    target = small_disk / "issue.eml" if where == "a full disk" else Path("/dev/full")
    if where == "a full disk":
        leave_free(small_disk, 16384)  # the message is ~47 KB
    result = run_process("email", str(EXAMPLES), "--week", "2026-W47", "--backend", "offline",
                         "--eml", stdout=str(target))
    line = one_line_error(result, 75)
    assert "standard output" in line and "not written whole" in line, line


def test_summarize_to_a_full_stdout_exits_75_naming_standard_output():
    """summarize's Markdown is its product: stdout that cannot take it is a retry (75),
    not "Error: .: cannot write"."""
    result = run_process("summarize", str(EXAMPLES), "--week", "2026-W47", "--backend",
                         "offline", stdout="/dev/full")
    line = one_line_error(result, 75)
    assert "standard output" in line and not line.startswith("Error: .:"), line


def _with_stdout_closed(*args: str):  # type: ignore[no-untyped-def]
    """`digest ARGS >&-`: a process started with no standard output at all."""
    import os
    import subprocess
    import sys

    from tests.opsrun import Result

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    done = subprocess.run([sys.executable, "-m", "digest", *args], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, env=env, check=False, timeout=120,
                          preexec_fn=lambda: os.close(1))  # noqa: PLW1509 - no threads here
    return Result(done.returncode, "", done.stderr.decode())


@pytest.mark.parametrize("args", [
    ("summarize", str(EXAMPLES), "--week", "2026-W47", "--backend", "offline"),
    ("config",),
])
def test_a_product_to_a_closed_standard_output_exits_75_naming_it(args):
    """`digest summarize ... >&-` (or status, history, config, email --eml) ended in an
    AttributeError traceback, exit 1 (a probe, this stop)."""
    line = one_line_error(_with_stdout_closed(*args), 75)
    assert "standard output" in line, line


@pytest.mark.parametrize("args", [("--version",), ("--help",)])
def test_version_and_help_to_a_full_standard_output_exit_75_without_a_traceback(args):
    """`digest --version > /dev/full` ended in an OSError traceback (a probe, this stop)."""
    result = run_process(*args, stdout="/dev/full")
    line = one_line_error(result, 75)
    assert "standard output" in line, line


def _into_a_pipe_nobody_reads(*args: str, stream: str = "stdout"):  # type: ignore[no-untyped-def]
    """`digest ARGS | head -0` (``stream`` "stderr": `digest ARGS 2>&1 >/dev/null | true`):
    that stream is a pipe whose reader has gone; the other is read."""
    import os
    import subprocess
    import sys

    from tests.opsrun import Result

    reader, writer = os.pipe()
    os.close(reader)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    streams = ({"stdout": writer, "stderr": subprocess.PIPE} if stream == "stdout"
               else {"stdout": subprocess.PIPE, "stderr": writer})
    try:
        done = subprocess.run([sys.executable, "-m", "digest", *args], env=env, check=False,
                              timeout=120, **streams)
    finally:
        os.close(writer)
    read = (done.stderr if stream == "stdout" else done.stdout).decode()
    return Result(done.returncode, *(("", read) if stream == "stdout" else (read, "")))


@pytest.mark.parametrize("args", [("--version",), ("--help",), ("newsletter", "--help"),
                                  ("summarize", str(EXAMPLES), "--week", "2026-W47")])
def test_help_and_version_into_a_closed_pipe_exit_75_like_any_product(args):
    """`digest --help | head -1` exited 1 without a word: rich caught the broken pipe, sent
    standard output to /dev/null and exited 1 (stop 29 left this open). It is 75 with the
    one line, as for `digest summarize ... | head -1`."""
    line = one_line_error(_into_a_pipe_nobody_reads(*args), 75)
    assert "standard output" in line, line


@pytest.mark.parametrize("args", [("--version",), ("--help",), ("summarize", "--help")])
def test_help_and_version_with_standard_output_closed_exit_75(args):
    """`digest --version >&-` printed nothing and exited 0, where every other product exits
    75 (a probe, this stop)."""
    line = one_line_error(_with_stdout_closed(*args), 75)
    assert "standard output" in line, line


@pytest.mark.parametrize("args", [("newsletter", "--concurrency", "abc"), ("nosuchcommand",)])
def test_a_usage_error_whose_stderr_is_a_closed_pipe_still_exits_2(args):
    """With stderr a pipe nobody reads, a usage error exited 75 ("try again later"): the
    broken pipe of its message was taken for standard output's (a probe, this stop)."""
    assert _into_a_pipe_nobody_reads(*args, stream="stderr").returncode == 2


@pytest.mark.parametrize("args", [("newsletter", "--bogus"), ("summarize", "--max-themes", "99"),
                                  ("no-such-command",)])
def test_a_usage_error_with_a_full_stderr_still_exits_2(args):
    """`digest newsletter --bogus 2>/dev/full` exited 75, "try again later" to cron, where it is
    2 with a normal stderr: click's message failed to print and the failure took over the exit
    code (a probe, this stop)."""
    result = run_process(*args, stderr="/dev/full")
    assert result.returncode == 2, result.returncode


def test_init_to_a_full_standard_output_writes_the_file_and_says_so(tmp_path):
    """`digest init x.toml > /dev/full` wrote the file, exited 0 and said nothing: init set up
    no logging, so the warning went nowhere (a probe, this stop)."""
    result = run_process("init", str(tmp_path / "x.toml"), stdout="/dev/full")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "x.toml").exists()
    assert "standard output" in result.stderr and "was written" in result.stderr


def test_a_newsletter_to_a_closed_standard_output_is_published_and_says_so(tmp_path):
    """`digest newsletter ... >&-` published the issue and exited 0 without a word: with no
    standard output at all, the line naming the issue was dropped unseen (a probe, this
    stop)."""
    state, out = tmp_path / "state.sqlite", tmp_path / "out"
    result = _with_stdout_closed("newsletter", str(EXAMPLES), "--week", "2026-W47",
                                 "--backend", "offline", "--state", str(state), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "standard output" in result.stderr and "published" in result.stderr
    assert "2026-W47" in published(state)


def test_a_newsletter_whose_path_cannot_be_printed_is_still_published_and_exits_0(tmp_path):
    """`digest newsletter > /dev/full` published the issue, then said "Error: .: cannot write
    (No space left on device); nothing more was done" and exited 75 (a probe, this stop).
    The issue is the product: it is out, so the run exits 0 and says, on stderr, that only
    its path could not be printed (and `&& digest email` still runs)."""
    state, out = tmp_path / "state.sqlite", tmp_path / "out"
    result = run_process("newsletter", str(EXAMPLES), "--week", "2026-W47", "--backend",
                         "offline", "--state", str(state), "--out", str(out),
                         stdout="/dev/full")
    assert result.returncode == 0, result.stderr
    assert "standard output" in result.stderr and "published" in result.stderr
    assert "nothing more was done" not in result.stderr and "Error" not in result.stderr
    assert (out / "2026-W47.md").exists() and "2026-W47" in published(state)


def test_ingest_whose_summary_cannot_be_printed_keeps_the_mail_and_exits_0(tmp_path):
    """`digest ingest - > /dev/full` kept the mail, then exited 75 "nothing more was done":
    the MTA delivered it again (a probe, this stop). The mail is stored: exit 0."""
    state = tmp_path / "state.sqlite"
    result = run_process("ingest", "-", "--state", str(state), stdin=MAILS[0].read_text(),
                         stdout="/dev/full")
    assert result.returncode == 0, result.stderr
    assert "standard output" in result.stderr and "kept" in result.stderr
    assert inbox_count(state) == 13



def test_an_unwritable_stderr_does_not_change_the_exit_code_of_a_locked_run(tmp_path):
    """With stderr on a full log disk (the README's cron line `2>> /var/log/digest.log`), a
    run finding the lock held exited 1, not 75: writing the error raised OSError inside the
    error handler (a probe, this stop)."""
    state, out = tmp_path / "state.sqlite", tmp_path / "out"
    args = ["newsletter", str(EXAMPLES), "--week", "2026-W47", "--backend", "offline",
            "--state", str(state), "--out", str(out)]
    holder = start_paused(tmp_path, "locked", *args)
    try:
        second = run_process(*args, stderr="/dev/full")
    finally:
        kill9(holder)
    assert second.returncode == 75


def test_ingest_into_a_read_only_store_exits_75_even_when_stderr_is_full(small_disk):
    """The mail hook exited 1 (the MTA bounced the mail) instead of 75 when its stderr could
    not be written (a probe, this stop)."""
    state = small_disk / "state.sqlite"
    assert cli("ingest", "-", "--state", str(state), stdin=MAILS[0].read_text()).returncode == 0
    remount_read_only(small_disk)
    result = run_process("ingest", "-", "--state", str(state), stdin=MAILS[1].read_text(),
                         stderr="/dev/full")
    assert result.returncode == 75


def test_a_newsletter_with_neither_stdout_nor_stderr_writable_still_exits_0(tmp_path):
    """The issue is out: a lost path line and a lost warning change nothing of that."""
    out = tmp_path / "out"
    result = run_process("newsletter", str(EXAMPLES), "--week", "2026-W47", "--backend",
                         "offline", "--state", str(tmp_path / "s.sqlite"), "--out", str(out),
                         stdout="/dev/full", stderr="/dev/full")
    assert result.returncode == 0
    assert (out / "2026-W47.md").exists()


def test_a_value_the_store_refuses_is_an_internal_error_not_a_damaged_store(tmp_path):
    """A NaN cost (from `input = inf` in [prices]) broke a NOT NULL constraint, and digest
    said "not a usable state store, damaged ...; restore it from a backup, or move it away"
    of a healthy store (a probe, stop 29): a user who follows that loses nothing but time."""
    path = tmp_path / "state.sqlite"
    record = CallRecord("m", "summary", "h", "k", 1, 1, 0, 1, 0, "ok", float("nan"))
    with pytest.raises(StateError) as caught, Store(path) as store:
        store.record_call(record)
    message = str(caught.value)
    assert caught.value.exit_code == 1 and str(path) in message and "report" in message
    assert not [advice for advice in ("damaged", "restore", "move it away") if advice in message]
    assert caught.value.setting is None
    with Store(path) as store:
        assert store.calls() == []


@pytest.mark.parametrize("state", ["folder", ""])
def test_a_state_path_that_is_a_folder_or_empty_is_a_usage_error_naming_it(tmp_path, state,
                                                                          monkeypatch):
    """`--state DIR` or `--state ""` said ".: not a usable state store, damaged ([Errno 21] Is a
    directory: '.'); restore it from a backup, or move it away", exit 1 (75 for ingest): advice
    to move the working folder away (a probe, this stop)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder").mkdir()
    result = cli("newsletter", str(EXAMPLES), "--week", "2026-W47", "--backend", "offline",
                 "--out", str(tmp_path / "out"), "--state", state)
    line = one_line_error(result, 2)
    assert "a folder, not a file" in line and "--state" in line and "move it away" not in line


@pytest.mark.parametrize("command", ["newsletter", "dry-run", "ingest"])
def test_a_state_path_that_is_a_symlink_loop_is_named_as_a_setting_to_fix(tmp_path, command):
    """`--state a.sqlite` where a.sqlite → b.sqlite → a.sqlite said "the store cannot be used
    now (unable to open database file) ... run again", exit 75: a cron job retried a path that
    can never open (stop 30's note), and a dry run read it as an empty store. It is a setting
    to fix: exit 2, but 75 for `digest ingest`, whose mail waits in the queue for the fix."""
    (tmp_path / "a.sqlite").symlink_to(tmp_path / "b.sqlite")
    (tmp_path / "b.sqlite").symlink_to(tmp_path / "a.sqlite")
    state = str(tmp_path / "a.sqlite")
    if command == "ingest":  # a mail hook: 75 keeps the mail queued until the path is fixed
        result = cli("ingest", str(EXAMPLES), "--state", state)
        line = one_line_error(result, 75)
        assert state in line and "symlink loop" in line and "retries it later" in line
        return
    dry = ["--dry-run"] if command == "dry-run" else []
    result = cli("newsletter", str(EXAMPLES), "--week", "2026-W47", "--backend", "offline",
                 "--out", str(tmp_path / "out"), "--state", state, *dry)
    line = one_line_error(result, 2)
    assert state in line and "symlink loop" in line and "--state" in line
    assert not (tmp_path / "out").exists()


def test_ingest_into_a_state_path_that_is_a_folder_exits_75_so_the_mail_stays_queued(tmp_path):
    """`digest ingest - --state DIR` exited 2, so the mail system bounced the listing for good;
    the README promises 75 for every state-store fault of `digest ingest` (a probe, stop 31)."""
    (tmp_path / "state.sqlite").mkdir()
    result = cli("ingest", "-", "--state", str(tmp_path / "state.sqlite"),
                 stdin=MAILS[0].read_text(encoding="utf-8"))
    line = one_line_error(result, 75)
    assert "a folder, not a file" in line and "retries it later" in line


@pytest.mark.parametrize("schema", [
    "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT);",
    "CREATE TABLE issues (id INTEGER PRIMARY KEY, title TEXT); PRAGMA user_version = 3;",
])
@pytest.mark.parametrize("command", ["status", "newsletter", "dry-run", "ingest"])
def test_another_programs_sqlite_file_is_refused_and_left_unchanged(tmp_path, schema, command):
    """Any command given another program's SQLite file as its store added digest's tables to
    it and switched it to WAL; one with an `issues` table and user_version 3 was "upgraded"
    (its table altered) and then called damaged (a probe, stop 31). It is refused, unchanged."""
    other = tmp_path / "app.db"
    with sqlite3.connect(other) as db:
        db.executescript(schema)
    before = other.read_bytes()
    args = {"status": ["status"], "ingest": ["ingest", str(EXAMPLES)],
            "newsletter": ["newsletter", str(EXAMPLES), "--week", "2026-W47", "--backend",
                           "offline", "--out", str(tmp_path / "out")]}
    args["dry-run"] = [*args["newsletter"], "--dry-run"]
    result = cli(*args[command], "--state", str(other))
    line = one_line_error(result, 75 if command == "ingest" else 1)
    assert f"{other}: not a digest state store" in line
    assert ("tables users" if "users" in schema else "tables issues") in line
    assert other.read_bytes() == before and not (tmp_path / "out").exists()
    assert not other.with_name("app.db-wal").exists()


def test_a_store_that_cannot_record_the_issue_published_says_it_is_written_and_pending(
        small_disk, tmp_path):
    """The store's disk failing between the issue's files and its record said "the disk is
    full ...; nothing was stored: free some space and run again", though the issue, index and
    feed were out (a probe, stop 31). It says what is out and that the next run finishes it."""
    state, out, report = small_disk / "state.sqlite", tmp_path / "out", tmp_path / "r.json"
    week_listing(tmp_path / "in", "2026-W47", 5)
    args = [str(tmp_path / "in"), "--week", "2026-W47", "--state", str(state), "--out", str(out),
            "--backend", "offline"]
    marker = tmp_path / "marker"
    run = spawn("newsletter", *args, "--report", str(report),
                env={"DIGEST_TEST_PAUSE_AT": "archive", "DIGEST_TEST_PAUSE_FILE": str(marker)})
    wait_for(marker.exists, "archive reached")
    filler = fill(small_disk)
    marker.unlink()  # the run goes on, and meets the full disk
    run.join(DEADLINE_S)
    assert run.exitcode == 75
    error = json.loads(report.read_text())["errors"][-1]
    assert "the issue of 2026-W47 is written in" in error and "stays pending" in error
    assert "nothing was stored" not in error
    assert (out / "2026-W47.md").exists() and "2026-W47" in (out / "index.md").read_text()
    filler.unlink()
    assert pending_weeks(state) == ["2026-W47"]
    assert cli("newsletter", *args).returncode == 0
    assert len(published(state)["2026-W47"]) == 5 and pending_weeks(state) == []
    assert (out / "index.md").read_text().count("- [2026-W47]") == 1


@pytest.mark.parametrize("args", [
    ("ingest", "-"), ("summarize", "-", "--backend", "offline"), ("dedup", "-"),
])
def test_a_listing_read_from_a_closed_standard_input_is_one_clear_error(tmp_path, args):
    """`digest ingest - <&-` ended in a traceback (sys.stdin is None), and `summarize -` said
    "unexpected AttributeError ... please report this as a digest bug" (a probe, stop 31)."""
    root = Path(__file__).resolve().parent.parent
    result = subprocess.run(
        [sys.executable, "-m", "digest", *args, "--state", str(tmp_path / "s.sqlite")]
        if args[0] == "ingest" else [sys.executable, "-m", "digest", *args],
        stdin=None, capture_output=True, text=True, timeout=120, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(root)}, preexec_fn=lambda: os.close(0))
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr and "bug" not in result.stderr
    assert "standard input is closed" in result.stderr and "digest ingest - <" in result.stderr


def test_a_run_report_for_a_closed_standard_output_is_said_to_be_lost(tmp_path):
    """`--report -` with standard output closed lost the report without a word (a probe,
    stop 31): the warning says so, and the issue is out (exit 0)."""
    root = Path(__file__).resolve().parent.parent
    result = subprocess.run(
        [sys.executable, "-m", "digest", "newsletter", str(EXAMPLES), "--week", "2026-W47",
         "--backend", "offline", "--out", "out", "--state", "s.sqlite", "--report", "-"],
        capture_output=False, stderr=subprocess.PIPE, text=True, timeout=120, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(root)}, preexec_fn=lambda: os.close(1))
    assert result.returncode == 0, result.stderr
    assert "standard output: cannot write the run report (it is closed)" in result.stderr
    assert (tmp_path / "out" / "2026-W47.md").exists()


@pytest.mark.parametrize("config", ["[limits\n", None, "[limits]\nmax_source_mb = -1\n"])
def test_a_mail_hook_with_a_broken_config_exits_75_so_the_mail_stays_queued(tmp_path, config):
    """A config file not valid TOML, missing, or with a value out of range made `digest ingest -`
    exit 2, and the mail system bounced every listing delivered while it was being edited (a
    probe, stop 31): 75 keeps each one queued until the setting is fixed; then it is stored."""
    path = tmp_path / "digest.toml"
    if config is not None:
        path.write_text(config, encoding="utf-8")
    mail = MAILS[0].read_text(encoding="utf-8")
    state = str(tmp_path / "s.sqlite")
    result = cli("ingest", "-", "--state", state, "--config", str(path), stdin=mail)
    line = one_line_error(result, 75)
    assert str(path) in line and "retries it once the setting is fixed" in line
    path.write_text("", encoding="utf-8")
    retry = cli("ingest", "-", "--state", state, "--config", str(path), stdin=mail)
    assert retry.returncode == 0 and "new record" in retry.stdout


def test_what_ingest_left_out_of_a_mail_reaches_status_and_the_next_issues_report(tmp_path):
    """A mail whose JSON lines attachment had a broken line kept the other papers, exit 0, and
    said so only on stderr, which a mail system drops (a probe, stop 31): the lost line is
    now in `digest status` and in the next newsletter's report; publishing clears it."""
    state, report = str(tmp_path / "s.sqlite"), tmp_path / "r.json"
    week_listing(tmp_path, "2026-W47", 3)
    lines = (tmp_path / "2026-W47.jsonl").read_text(encoding="utf-8").splitlines()
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join([lines[0], '{"title": "cut off', *lines[1:]]) + "\n",
                      encoding="utf-8")
    kept = cli("ingest", str(broken), "--state", state)
    assert kept.returncode == 0 and "3 new records" in kept.stdout
    status = json.loads(cli("status", "--state", state, "--json").stdout)
    assert len(status["inbox_problems"]) == 1 and "broken.jsonl:2" in status["inbox_problems"][0]
    assert "ingest:       1 problem(s) since the last issue" in cli("status", "--state",
                                                                    state).stdout
    run = cli("newsletter", "--week", "2026-W47", "--state", state, "--out",
              str(tmp_path / "out"), "--backend", "offline", "--report", str(report))
    assert run.returncode == 0, run.stderr
    assert any(error.startswith("digest ingest: ") and "broken.jsonl:2" in error
               for error in json.loads(report.read_text())["errors"])
    assert json.loads(cli("status", "--state", state, "--json").stdout)["inbox_problems"] == []


@pytest.mark.parametrize("command", ["status", "history"])
def test_status_and_history_on_a_full_disk_say_the_disk_is_full(small_disk, command):
    """On a full disk the store cannot make the side file its journal needs even to be read:
    ``digest status`` said "the store cannot be used now (disk I/O error) … check the disk
    and its permissions", which names neither the cause nor the fix (a probe, stop 32)."""
    state = small_disk / "state.sqlite"
    assert cli("ingest", "-", "--state", str(state), stdin=MAILS[0].read_text()).returncode == 0
    fill(small_disk)
    line = one_line_error(cli(command, "--state", str(state)), 75)
    assert str(state) in line and "the disk is full" in line and "free some space" in line
