"""What a failed request means: retry it, give up on it, or stop the run.

One retry layer only (tenacity, in ``openai_chat``); the official client's own
retries are switched off. Retried: 408, 409, 429, 5xx and connection errors,
with exponential backoff and jitter, honouring ``Retry-After`` up to a cap.
Not retried: a quota error, a ``Retry-After`` beyond the cap, and 4xx errors,
which become messages that say what to fix.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import openai
from tenacity import RetryCallState

from ..errors import LLMError, LLMUnavailable
from ..redaction import url_for_logs
from ..retry_after import parse_retry_after
from ..textsafety import untrusted_preview
from .base import BackendSettings, DeadlineReached, QuotaExhausted, RequestRejected
from .pacing import DEADLINE, FIRST_CALL, FITTED, USER_TIMEOUT, Limit

RETRYABLE_STATUS = frozenset({408, 409, 429})
BACKOFF_BASE_S = 0.5
BACKOFF_MAX_S = 30.0


def is_retryable(error: BaseException, max_retry_after_s: float) -> bool:
    if isinstance(error, openai.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(error, openai.APIStatusError):
        status = error.status_code
        if status in RETRYABLE_STATUS or status >= 500:
            return not is_quota_error(error) and retry_after(error) <= max_retry_after_s
    return False


def is_quota_error(error: openai.APIStatusError) -> bool:
    words = f"{error.code or ''} {error.type or ''}"
    return "insufficient_quota" in words or "insufficient_quota" in str(error.message)


def retry_after(error: BaseException) -> float:
    """Seconds the server asked us to wait (``Retry-After``, or ``retry-after-ms``), else 0."""
    response = getattr(error, "response", None)
    if response is None:
        return 0.0
    millis = response.headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    return parse_retry_after(response.headers.get("retry-after")) or 0.0


def backoff_wait(jitter: Callable[[float, float], float] = random.uniform
                 ) -> Callable[[RetryCallState], float]:
    """Exponential backoff with jitter, never shorter than the server's ``Retry-After``."""

    def wait(state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        ceiling = min(BACKOFF_MAX_S, BACKOFF_BASE_S * 2 ** (state.attempt_number - 1))
        return max(ceiling * jitter(0.5, 1.0), retry_after(error) if error else 0.0)

    return wait


def describe(error: BaseException | None) -> str:
    if isinstance(error, openai.APIStatusError):
        return f"HTTP {error.status_code}"
    if isinstance(error, openai.APITimeoutError):
        return "timeout"
    return type(error).__name__ if error else "unknown"


def as_digest_error(error: openai.APIError, settings: BackendSettings, attempts: int,
                    cut: Limit | None = None) -> LLMError:
    """The error a user reads: what happened and what to do about it. No secrets inside.

    ``cut``: the time limit of the attempt that timed out, so that the message names the
    limit that actually cut the call."""
    where = url_for_logs(settings.base_url) if settings.base_url else "the OpenAI API"
    if isinstance(error, openai.APITimeoutError):
        return timed_out(where, cut or Limit(settings.timeout_s or 0.0, USER_TIMEOUT), attempts)
    if isinstance(error, openai.APIConnectionError):
        return LLMUnavailable(f"cannot reach {where} ({attempts} attempts): check the base URL "
                              "and that the server is running", setting="base_url")
    assert isinstance(error, openai.APIStatusError)
    return _status_error(error, where, settings, attempts)


def timed_out(where: str, cut: Limit, attempts: int) -> LLMUnavailable:
    """A call that ran out of time, naming the limit that cut it and the setting to change."""
    tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
    if cut.source == DEADLINE:
        return DeadlineReached(f"{where}: the run's LLM deadline cut this call after "
                               f"{_secs(cut.seconds)} ({tries}); the rest is summarised offline",
                               setting="deadline")
    if cut.source == FITTED:
        return LLMUnavailable(f"{where} did not answer within {_secs(cut.seconds)}, the limit "
                              f"fitted to its speed so far ({cut.tokens_per_s:.0f} tokens/s) "
                              f"({tries}); set timeout to allow longer", setting="timeout")
    if cut.source == FIRST_CALL:
        return LLMUnavailable(f"{where} did not answer within {_secs(cut.seconds)}, the limit "
                              f"of a first request before its speed is known ({tries}); set "
                              "timeout to allow longer", setting="timeout")
    return LLMUnavailable(f"{where} did not answer within {cut.seconds:g} s, the timeout "
                          f"setting ({tries}); raise it for slow local models", setting="timeout")


def _secs(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.1f} s"


def _status_error(error: openai.APIStatusError, where: str, settings: BackendSettings,
                  attempts: int) -> LLMError:
    status = error.status_code
    if status == 401:
        return LLMError(f"{where} rejected the API key (HTTP 401): check OPENAI_API_KEY")
    if status == 403:
        return LLMError(f"{where} refused access (HTTP 403): check that the key may use "
                        f"model {settings.model!r}")
    if status == 404:
        return LLMError(f"{where} has no model {settings.model!r} (HTTP 404): check the model "
                        "(the deployment name on Azure) and the base URL (it usually ends in "
                        "/v1)", setting="model")
    if is_quota_error(error):
        return QuotaExhausted(f"{where}: the account is out of quota (HTTP {status}); add "
                              "credit, or use the offline backend", setting="backend")
    if status in (400, 413, 422):
        return RequestRejected(f"{where} rejected the request (HTTP {status}): "
                               f"{_short(error.message)}; if the prompt is too long, lower "
                               "context_window", setting="context_window")
    wait = retry_after(error)
    if wait > settings.max_retry_after_s:
        return LLMUnavailable(f"{where} asks us to wait {wait:.0f} s (HTTP {status}), longer "
                              f"than the {settings.max_retry_after_s:g} s we wait; try later")
    return LLMUnavailable(f"{where} is unavailable (HTTP {status}) after {attempts} attempts")


def _short(message: str, limit: int = 200) -> str:
    """The server's own words, cleaned (they reach logs and the run report) and cut short."""
    return untrusted_preview(message, limit)
