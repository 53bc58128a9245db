"""One run at a time per state store: the run lock.

``newsletter`` and ``email`` hold it from start to end; ``digest ingest`` never
takes it (it only appends to the inbox in a short SQLite transaction, so a mail
hook never waits behind a newsletter run that spends minutes on LLM calls).

Why a lock file and not an SQLite transaction held for the whole run: a write
transaction would block ``digest ingest`` for as long as the run lasts. The lock
is ``fcntl.flock`` on ``<store>.lock`` beside the store: the kernel releases it
when the holder exits, also on ``kill -9``, so a crashed run never leaves a
stale lock behind. The file holds a small JSON (pid, command, week, since) so
that the second run, and ``digest status``, can name the holder. The JSON is
only a label: whether the store is locked is decided by ``flock`` alone.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .errors import ConfigError, StateBusy

POLL_S = 0.2


def lock_path(store_path: str | Path) -> Path:
    """``<store>.lock`` beside the store's real file: two paths to one store (a symlink, a
    relative and an absolute path) are one lock."""
    try:
        real = Path(store_path).resolve()
    except (OSError, RuntimeError):  # a symlink loop: opening the store refuses it
        real = Path(store_path)
    return Path(f"{real}.lock")


@contextmanager
def run_lock(store_path: str | Path, *, command: str, week: str | None,
             wait_s: float = 0.0) -> Iterator[None]:
    """Hold the store's run lock for the block; raise StateBusy (exit 75) naming the
    holder when another run has it for longer than ``wait_s`` seconds."""
    if str(store_path) == ":memory:":
        yield
        return
    path = lock_path(store_path)
    if path.parent.exists() and not path.parent.is_dir():
        raise ConfigError(f"{store_path}: {path.parent} is a file, not a folder: give the state "
                          "store a path in a folder", setting="state")
    with _naming(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        _acquire(fd, path, wait_s)
        with _naming(path):
            _label(fd, {"pid": os.getpid(), "command": command, "week": week,
                        "since": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")})
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
    finally:
        os.close(fd)  # closing the descriptor releases the flock


@contextmanager
def _naming(path: Path) -> Iterator[None]:
    """A disk error on the lock file names it ("No space left" on a write has no name)."""
    try:
        yield
    except OSError as error:
        if error.filename is None:
            error.filename = str(path)
        raise


def holder(store_path: str | Path) -> dict[str, Any] | None:
    """Who holds the run lock of the store now, or None when nobody does."""
    path = lock_path(store_path)
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_label(fd)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _acquire(fd: int, path: Path, wait_s: float) -> None:
    deadline = time.monotonic() + wait_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise StateBusy(_busy_message(path, _read_label(fd), wait_s),
                                setting="wait") from None
            time.sleep(min(POLL_S, max(0.0, deadline - time.monotonic())))


def _label(fd: int, data: dict[str, Any]) -> None:
    text = json.dumps(data, sort_keys=True).encode()
    os.ftruncate(fd, 0)
    os.pwrite(fd, text, 0)


def _read_label(fd: int) -> dict[str, Any]:
    try:
        data = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def describe(label: dict[str, Any]) -> str:
    """'pid 123 (newsletter, week 2026-W47, since 2026-11-23T07:00:00+00:00)'."""
    if not label:
        return "another digest run"
    return (f"pid {label.get('pid', '?')} ({label.get('command', '?')}, week "
            f"{label.get('week') or '?'}, since {label.get('since', '?')})")


def _busy_message(path: Path, label: dict[str, Any], wait_s: float) -> str:
    waited = f" after waiting {wait_s:g} s" if wait_s else ""
    return (f"{path.with_suffix('')} is locked by {describe(label)}{waited}; try again later, "
            "or let the run wait for it")
