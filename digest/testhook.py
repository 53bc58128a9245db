"""A test hook: make a run stop at a named point so a test can kill -9 it there.

``DIGEST_TEST_PAUSE_AT=<point>`` makes the process create the file named by
``DIGEST_TEST_PAUSE_FILE`` (if set) when it reaches ``<point>`` and sleep there for
up to 60 s; the test polls for that file, then kills the process (or removes the file,
and the run goes on: a fault made while it waits meets the rest of the run). The points are
places no timing could hit reliably from outside: ``locked`` (the run lock was just
taken), ``pending`` (the issue is recorded pending, no file written yet), ``files``
(the issue's files are in place, the store does not record them yet), ``sending``
(the sending is recorded, the mail not handed over yet) and ``ingest`` (records
parsed, not yet stored). For tests only: unset in production, where it costs one
environment look-up per point and does nothing else.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

MAX_PAUSE_S = 60.0


def pause_at(point: str) -> None:
    if os.environ.get("DIGEST_TEST_PAUSE_AT") != point:
        return
    marker = os.environ.get("DIGEST_TEST_PAUSE_FILE")
    if marker:
        Path(marker).write_text(str(os.getpid()))
    deadline = time.monotonic() + MAX_PAUSE_S
    while time.monotonic() < deadline and (not marker or Path(marker).exists()):
        time.sleep(0.05)
