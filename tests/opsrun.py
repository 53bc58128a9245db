"""Helpers for the operational tests: real `digest` subprocesses, killed at named points,
and small dated listings, one file per ISO week."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

DEADLINE_S = 30.0


def digest(*args: str, stdin: str | None = None, env: dict[str, str] | None = None,
           timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "digest", *args], input=stdin, text=True,
                          capture_output=True, env={**os.environ, **(env or {})},
                          timeout=timeout, check=False)


def spawn(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "digest", *args], text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, **(env or {})})


def start_paused(tmp: Path, point: str, *args: str, stdin: str | None = None,
                 env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """Start `digest ARGS` and return once it sleeps at the test hook ``point``."""
    marker = tmp / f"paused-{point}-{time.monotonic_ns()}"
    process = spawn(*args, env={**(env or {}), "DIGEST_TEST_PAUSE_AT": point,
                                "DIGEST_TEST_PAUSE_FILE": str(marker)})
    if stdin is not None:
        assert process.stdin is not None
        process.stdin.write(stdin)
        process.stdin.close()
    wait_for(lambda: marker.exists() or process.poll() is not None, f"{point} reached")
    if process.poll() is not None:
        raise AssertionError(f"digest exited {process.returncode} before {point}: "
                             f"{process.stderr.read() if process.stderr else ''}")
    return process


def kill9(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=DEADLINE_S)
    for stream in (process.stdout, process.stderr, process.stdin):
        if stream is not None:
            stream.close()


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
