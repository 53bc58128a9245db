"""Time limits that fit the server: each request's limit from its size and the speed seen so far.

A CPU running a local model may need minutes for one answer, a hosted API seconds; one fixed
timeout is wrong for one of them. ``Pacing`` measures the server's throughput in this run
(tokens answered per second of wall time during which a request was out: on a server that
answers one request at a time, queueing is part of what a request waits) and gives each
request ``FLOOR_S + MARGIN × tokens / throughput`` seconds, where ``tokens`` is its prompt and
output limit plus those of the requests already out before it. The first requests, before
any speed is known, get ``FIRST_LOCAL_S`` on a local server and ``FIRST_REMOTE_S`` on a hosted
one. The ``timeout`` setting, when the user gives it, bounds every limit.
"""

from __future__ import annotations

import ipaddress
import itertools
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

FIRST_LOCAL_S = 600.0  # a 5k-token prompt at 50 tokens/s on a 2-core CPU, and a margin
FIRST_REMOTE_S = 60.0
FLOOR_S = 30.0
MARGIN = 3.0
CHARS_PER_TOKEN = 4  # a prompt's size before the server counts it; the margin covers the error
LOCAL_SUFFIXES = (".local", ".lan", ".internal", ".localhost", ".home.arpa")

# Where a limit came from: it is what a timeout message names.
USER_TIMEOUT, FIRST_CALL, FITTED, DEADLINE = "timeout", "first", "fitted", "deadline"


@dataclass(frozen=True)
class Limit:
    seconds: float
    source: str  # USER_TIMEOUT, FIRST_CALL, FITTED or DEADLINE
    tokens_per_s: float | None = None

    def bounded(self, seconds: float | None, source: str) -> Limit:
        """This limit, or ``seconds`` from ``source`` when that is shorter."""
        if seconds is None or seconds >= self.seconds:
            return self
        return Limit(seconds, source, self.tokens_per_s)


def is_local(base_url: str | None) -> bool:
    """A server on this machine or this network (loopback, private address, a bare or
    .local host name): one that may be a CPU running a model."""
    host = (urlsplit(base_url or "").hostname or "").rstrip(".").lower()
    if not host:
        return False
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host == "localhost" or "." not in host or host.endswith(LOCAL_SUFFIXES)
    return address.is_loopback or address.is_private or address.is_link_local


def request_tokens(messages: Sequence[Mapping[str, str]], max_tokens: int) -> int:
    """A request's size: its prompt (estimated from characters) and its output limit."""
    chars = sum(len(message.get("content") or "") for message in messages)
    return chars // CHARS_PER_TOKEN + max_tokens


class Pacing:
    """The time limits of one run's requests to one server. Thread-safe."""

    def __init__(self, user_timeout_s: float | None, *, local: bool,
                 first_s: float | None = None, floor_s: float = FLOOR_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.user_timeout_s = user_timeout_s
        self.first_s = first_s or (FIRST_LOCAL_S if local else FIRST_REMOTE_S)
        self.floor_s = floor_s
        self._clock = clock
        self._lock = threading.Lock()
        self._ids = itertools.count()
        self._out: dict[int, int] = {}  # requests out now: their estimated tokens
        self._tokens_done = 0
        self._busy_s = 0.0
        self._busy_since: float | None = None

    def begin(self, tokens: int) -> tuple[int, Limit]:
        """A request of ``tokens`` is about to be sent: its ticket and its time limit."""
        with self._lock:
            ahead = sum(self._out.values())
            ticket = next(self._ids)
            if not self._out:
                self._busy_since = self._clock()
            self._out[ticket] = tokens
            return ticket, self._limit(ahead + tokens)

    def end(self, ticket: int, tokens_answered: int | None) -> None:
        """The request is over; ``tokens_answered`` (prompt + output) when it was answered."""
        with self._lock:
            self._out.pop(ticket, None)
            self._tokens_done += tokens_answered or 0
            if not self._out and self._busy_since is not None:
                self._busy_s += self._clock() - self._busy_since
                self._busy_since = None

    def tokens_per_s(self) -> float | None:
        with self._lock:
            return self._rate()

    def _rate(self) -> float | None:
        busy = self._busy_s + (self._clock() - self._busy_since if self._busy_since else 0.0)
        if not self._tokens_done or busy <= 0:
            return None
        return self._tokens_done / busy

    def _limit(self, tokens: int) -> Limit:
        rate = self._rate()
        if rate is None:
            limit = Limit(self.first_s, FIRST_CALL)
        else:
            limit = Limit(self.floor_s + MARGIN * tokens / rate, FITTED, rate)
        return limit.bounded(self.user_timeout_s, USER_TIMEOUT)
