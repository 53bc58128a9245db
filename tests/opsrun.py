"""Helpers for the operational tests: `digest` runs in child processes killed with SIGKILL
at named points (the test hook in digest/testhook.py), runs in this process for the ones
nobody kills, and small dated listings, one file per ISO week."""

from __future__ import annotations

import datetime as dt
import json
import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

DEADLINE_S = 30.0


def spawn(*args: str, stdin: str | None = None,
          env: dict[str, str] | None = None) -> multiprocessing.process.BaseProcess:
    """`digest ARGS` in a forked child process: a real process to kill -9, started from
    this one where digest is imported already (no interpreter start-up: seconds saved
    per test on a busy machine). Its stdout and stderr go to /dev/null."""
    context = multiprocessing.get_context("fork")
    process = context.Process(target=_run_digest, args=(list(args), stdin, env or {}))
    process.start()
    return process


def _run_digest(args: list[str], stdin: str | None, env: dict[str, str]) -> None:
    os.environ.update(env)
    null = os.open(os.devnull, os.O_RDWR)
    if stdin is not None:
        reader, writer = os.pipe()
        os.write(writer, stdin.encode())
        os.close(writer)
        os.dup2(reader, 0)
    for fd in (1, 2):
        os.dup2(null, fd)
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - the child's stdin
    from digest.cli import app

    try:
        app(args, prog_name="digest")
    except SystemExit as exit_:
        os._exit(exit_.code if isinstance(exit_.code, int) else 1)
    os._exit(0)


def start_paused(tmp: Path, point: str, *args: str, stdin: str | None = None,
                 env: dict[str, str] | None = None) -> multiprocessing.process.BaseProcess:
    """Start `digest ARGS` and return once it sleeps at the test hook ``point``."""
    marker = tmp / f"paused-{point}-{time.monotonic_ns()}"
    process = spawn(*args, stdin=stdin, env={**(env or {}), "DIGEST_TEST_PAUSE_AT": point,
                                             "DIGEST_TEST_PAUSE_FILE": str(marker)})
    wait_for(lambda: marker.exists() or not process.is_alive(), f"{point} reached")
    if not process.is_alive():
        raise AssertionError(f"digest exited {process.exitcode} before {point}")
    return process


def kill9(process: multiprocessing.process.BaseProcess) -> None:
    process.kill()  # SIGKILL
    process.join(timeout=DEADLINE_S)
    assert process.exitcode == -signal.SIGKILL


def wait_for(condition, what: str, timeout: float = DEADLINE_S) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout} s for: {what}")
        time.sleep(0.05)


def week_listing(folder: Path, week: str, count: int, tag: str = "") -> Path:
    """A JSONL listing of ``count`` distinct papers dated within ISO ``week``."""
    monday = dt.date.fromisocalendar(int(week[:4]), int(week[6:]), 1)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{week}{tag}.jsonl"
    lines = []
    for n in range(count):
        name = f"{tag}{week.replace('-', '')}n{n}"
        lines.append(json.dumps({
            "title": f"Paper {name}: a study of topic {n % 4} in week {week}",
            "abstract": f"We study topic {n % 4} with method {name}. Results on benchmark {n} "
                        f"improve the state of the art. The code of {name} is released.",
            "authors": f"Author {n}", "date": (monday + dt.timedelta(days=n % 7)).isoformat()}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def published(state: Path) -> dict[str, list[str]]:
    """week -> paper ids the store marks published (read directly with sqlite3)."""
    with sqlite3.connect(state) as db:
        rows = db.execute("SELECT p.week, p.paper_id FROM published p JOIN issues i "
                          "ON i.week = p.week ORDER BY p.week, p.paper_id").fetchall()
    result: dict[str, list[str]] = {}
    for week, paper in rows:
        result.setdefault(week, []).append(paper)
    return result


def pending_weeks(state: Path) -> list[str]:
    with sqlite3.connect(state) as db:
        return [row[0] for row in db.execute("SELECT week FROM pending")]


def issue_papers(markdown: str) -> int:
    return sum(1 for line in markdown.splitlines() if line.startswith("- **"))


class Result:
    """What an in-process run gave: exit code, stdout, stderr (as CompletedProcess names them)."""

    def __init__(self, returncode: int, stdout: str, stderr: str):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def cli(*args: str, stdin: str | None = None) -> Result:
    """`digest ARGS` in this process (no interpreter start-up): for the runs nobody kills.
    The run lock is a flock on a fresh open file, so it conflicts with other processes
    and with other runs in this one alike."""
    from typer.testing import CliRunner

    from digest.cli import app

    result = CliRunner().invoke(app, list(args), input=stdin)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Result(result.exit_code, result.stdout, result.stderr)


def run_process(*args: str, stdout: str | None = None, stderr: str | None = None,
                stdin: str | None = None) -> Result:
    """`python -m digest ARGS` with its stdout and stderr going to the named files (such as
    /dev/full, or a file on a full disk) instead of pipes: what a shell redirect does."""
    root = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": root}
    with open(stdout or os.devnull, "wb") as out, open(stderr or os.devnull, "wb") as err:
        done = subprocess.run([sys.executable, "-m", "digest", *args], input=(stdin or "").encode(),
                              stdout=out if stdout else subprocess.PIPE,
                              stderr=err if stderr else subprocess.PIPE, env=env, check=False,
                              timeout=120)
    return Result(done.returncode, (done.stdout or b"").decode(), (done.stderr or b"").decode())
