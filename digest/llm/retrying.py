"""The one retry layer (tenacity) of every request to a server: chat and embeddings.

``retrying`` makes the ``Retrying`` object both backends use: retried errors are those
``faults.is_retryable`` names (a ``Retry-After`` past the cap is not), at most
``max_attempts`` attempts, never a retry whose backoff would end after the run's deadline
(``PastDeadline``) or once the caller withdrew permission (``Withdrawn``: the circuit
breaker opened). ``unless_withdrawn`` makes a retry withdrawn during the backoff sleep raise
the previous attempt's error instead of sending the request again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt
from tenacity.stop import stop_base

from .base import BackendSettings
from .faults import is_retryable

_T = TypeVar("_T")


class Stoppable(Protocol):
    """A request the run may stop retrying: a ``ChatRequest`` or an ``EmbeddingRequest``."""

    @property
    def deadline(self) -> float | None: ...

    @property
    def may_retry(self) -> Callable[[], bool] | None: ...


class PastDeadline(stop_base):
    """A tenacity stop: no retry whose wait would end after the deadline."""

    def __init__(self, deadline: float | None) -> None:
        self.deadline = deadline

    def __call__(self, state: RetryCallState) -> bool:
        return (self.deadline is not None
                and time.monotonic() + state.upcoming_sleep >= self.deadline)


class Withdrawn(stop_base):
    """A tenacity stop: no retry once the caller withdrew permission (breaker open)."""

    def __init__(self, request: Stoppable) -> None:
        self.request = request

    def __call__(self, state: RetryCallState) -> bool:
        return self.request.may_retry is not None and not self.request.may_retry()


def retrying(settings: BackendSettings, request: Stoppable, *, wait: Any,
             sleep: Callable[[float], None], before_sleep: Callable[[RetryCallState], None]
             ) -> Retrying:
    return Retrying(
        retry=retry_if_exception(lambda e: is_retryable(e, settings.max_retry_after_s)),
        stop=(stop_after_attempt(settings.max_attempts) | PastDeadline(request.deadline)
              | Withdrawn(request)),
        wait=wait, sleep=sleep, before_sleep=before_sleep, reraise=True)


def unless_withdrawn(attempt: Callable[[], _T], request: Stoppable) -> Callable[[], _T]:
    """``attempt()``; a retry the caller withdrew during the backoff sleep raises the error of
    the attempt before instead of sending the request again."""
    failures: list[Exception] = []

    def attempt_once() -> _T:
        if failures and request.may_retry is not None and not request.may_retry():
            raise failures[-1]
        try:
            return attempt()
        except Exception as error:
            failures.append(error)
            raise

    return attempt_once
