"""What one OpenAI-compatible server accepts, learnt from its refusals, for the whole run.

Structured output is asked for strictest first: ``json_schema``, then ``json_object``
carrying the schema (llama.cpp servers turn it into a grammar), then plain ``json_object``,
then plain text. A *clear refusal* (HTTP 400, 422 or 500 whose body names
``response_format`` or the schema) steps down one level at once, for every thread: no
retry, no probe. A bare 500 before any structured request worked may mean "unsupported"
too (some servers crash on a schema): one thread probes the plainer formats while the
others wait for its verdict instead of sending requests that would fail. A probe that
fails for another reason (timeout, connection) reached no verdict and is not spent.
"""

from __future__ import annotations

import logging
import threading
import time

import openai

logger = logging.getLogger("digest.llm")

# Structured-output levels, strictest first.
JSON_SCHEMA, OBJECT_WITH_SCHEMA, JSON_OBJECT, PLAIN_TEXT = 0, 1, 2, 3
LEVEL_NAMES = ("json_schema", "json_object with the schema", "json_object", "plain text")
REFUSING_STATUS = frozenset({400, 422, 500})
FORMAT_WORDS = ("response_format", "response format", "json_schema", "json_object", "schema")
MAX_WAIT_S = 3600.0  # waiting for a probe's verdict with no deadline: bounded all the same

# What ``claim_probe`` tells a thread whose structured request got a bare 500.
PROBE, WAITED, GIVE_UP = "probe", "waited", "give up"


def is_format_refusal(error: openai.APIStatusError) -> bool:
    """A 400/422/500 whose body names response_format or the schema."""
    return error.status_code in REFUSING_STATUS and any(
        word in _words(error) for word in FORMAT_WORDS)


def _words(error: openai.APIStatusError) -> str:
    return f"{error.message} {getattr(error, 'param', None) or ''}".lower()


class ServerQuirks:
    """Shared by all threads of a run; every change is made under one lock."""

    def __init__(self, temperature: float | None) -> None:
        self.level = JSON_SCHEMA
        self.confirmed = False  # a structured request succeeded: a later bare 500 is a 500
        self.probed = False  # the probe after a bare 500 reached its verdict
        self.token_param = "max_tokens"
        self.temperature = temperature
        self._prober: int | None = None  # the thread probing now
        self._changed = threading.Condition()

    def learn_from(self, error: openai.APIStatusError, level: int) -> bool:
        """Drop or swap what a refusal complains about; True when worth resending at once."""
        if error.status_code not in REFUSING_STATUS:
            return False
        text = _words(error)
        with self._changed:
            if level < PLAIN_TEXT and is_format_refusal(error):
                self._step_down(level + 1, f"HTTP {error.status_code}")
                return True
            if self.token_param == "max_tokens" and "max_completion_tokens" in text:
                self.token_param = "max_completion_tokens"
                return True
            if self.temperature is not None and "temperature" in text:
                logger.warning("the server refuses temperature; using its default")
                self.temperature = None
                return True
        return False

    def await_verdict(self, deadline: float | None) -> None:
        """Before sending: while another thread probes, wait for its verdict."""
        me = threading.get_ident()
        with self._changed:
            self._changed.wait_for(lambda: self._prober in (None, me), _wait_bound(deadline))

    def claim_probe(self, level: int, deadline: float | None) -> str:
        """After a bare 500 to ``level``: PROBE (this thread probes), WAITED (another thread
        probed; resend if ``level`` changed) or GIVE_UP (nothing to learn: a plain 500)."""
        with self._changed:
            if self._prober is not None:
                self._changed.wait_for(lambda: self._prober is None, _wait_bound(deadline))
                return WAITED
            if self.level > level:
                return WAITED  # a verdict came while this request was out
            if self.confirmed or self.probed or level == PLAIN_TEXT:
                return GIVE_UP
            self._prober = threading.get_ident()
            return PROBE

    def end_probe(self, verdict: int | None, because: str) -> None:
        """The probe's verdict: the level that answered, the same level when every plainer
        one failed too (an outage), or None when it reached none (timeout, connection)."""
        with self._changed:
            if verdict is not None:
                self.probed = True
                self._step_down(verdict, because)
            self._prober = None
            self._changed.notify_all()

    def settle(self, level: int) -> None:
        """A request at ``level`` was answered."""
        with self._changed:
            if level < PLAIN_TEXT:
                self.confirmed = True

    def _step_down(self, level: int, because: str) -> None:
        if level > self.level:
            logger.warning("the server does not take %s output (%s); using %s from now on",
                           LEVEL_NAMES[self.level], because, LEVEL_NAMES[level])
            self.level = level


def _wait_bound(deadline: float | None) -> float:
    if deadline is None:
        return MAX_WAIT_S
    return max(0.0, deadline - time.monotonic())
