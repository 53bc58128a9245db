"""The circuit breaker: after one failed call the endpoint is suspect (one call at a time);
after ``after`` failed calls in a row it opens (no call starts, calls in flight make no
further attempt); a success in between closes it again."""

from __future__ import annotations

import logging
import threading

logger = logging.getLogger("digest.llm")


class Breaker:
    def __init__(self, after: int) -> None:
        self.after = after
        self.failures_in_a_row = 0
        self.halted = threading.Event()  # set when it opens: in-flight calls stop retrying

    @property
    def suspect(self) -> bool:
        """The last call failed: probe with one call at a time."""
        return self.failures_in_a_row > 0 and not self.halted.is_set()

    def may_retry(self) -> bool:
        """Asked by a backend before each retry (from a worker thread)."""
        return not self.halted.is_set()

    def succeeded(self) -> None:
        self.failures_in_a_row = 0

    def failed(self) -> str | None:
        """Count a failed call; why the breaker must open, if it must now."""
        self.failures_in_a_row += 1
        if self.failures_in_a_row >= self.after:
            return f"{self.failures_in_a_row} calls failed in a row"
        return None

    def open(self) -> None:
        self.halted.set()
