"""The one interface every chat backend implements, and the errors it raises.

A backend answers one ``ChatRequest`` with one ``Completion`` or raises one of::

    LLMError                    the endpoint refuses us for good (401, 403, 404): stop the run
    ├── RequestRejected         this request was refused (400, 422): that batch falls back
    ├── QuotaExhausted          the account is out of credit: stop calling, finish offline
    ├── AnswerUnreadable        a 200 whose body is no usable completion: treated like an
    │                           invalid answer (one repair request, then offline)
    └── LLMUnavailable          down, overloaded or too slow after retries: counts
        └── DeadlineReached     towards the circuit breaker; the run's deadline has passed

Every error carries ``retries`` (how many times the call was retried before it gave up).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import LLMError, LLMUnavailable

Message = Mapping[str, str]


@dataclass(frozen=True)
class ChatRequest:
    """One question. ``schema`` is a JSON schema for servers that accept ``json_schema``."""

    messages: tuple[Message, ...]
    max_tokens: int
    json_output: bool = True
    schema: Mapping[str, Any] | None = None
    schema_name: str = "answer"
    deadline: float | None = None  # time.monotonic() after which no attempt may start
    # Asked before every retry; False (say, the circuit breaker opened) ends the call with
    # the last error instead of sending the request again.
    may_retry: Callable[[], bool] | None = field(default=None, compare=False)
    # Digest's own answer to this question, made from the papers without a model (the
    # extractive summarizer): what the offline backend answers. None: digest has none.
    extractive: Callable[[], Any] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int = 0
    finish_reason: str = "stop"
    retries: int = 0
    # An answer already in digest's own terms (an in-process backend's): used as it is,
    # neither parsed nor checked, never cached nor billed.
    answer: Any = field(default=None, compare=False)


class ChatBackend(Protocol):
    """Anything that can answer a chat request. ``name`` and ``model`` go into the issue footer.

    ``complete`` is called from several threads at once; ``close`` frees connections.
    A backend may also say (as plain attributes, read with ``getattr``): ``price``, a
    ``Price`` that wins over the model card's (a local server is free), and
    ``in_process = True`` when it answers at once from digest's own material, with no
    server behind it (offline): the runner then asks it in the calling thread, and
    there is nothing to cache, bill, budget, plan or break.
    """

    name: str
    model: str

    def complete(self, request: ChatRequest) -> Completion: ...

    def close(self) -> None: ...


@dataclass
class BackendSettings:
    model: str
    api_key: str | None = None
    base_url: str | None = None
    api_version: str | None = None  # Azure OpenAI's dated (pre-v1) API, with an Azure provider
    provider: str | None = None  # "openai" or "azure"; None: Azure when the host is Azure's
    # The user's bound on one request (the ``timeout`` setting); None: no bound but the run's
    # deadline. Each request's own limit is fitted to the server's speed (``pacing``).
    timeout_s: float | None = None
    max_attempts: int = 4
    max_retry_after_s: float = 60.0  # a server asking us to wait longer is not retried
    temperature: float | None = 0.2
    extra: dict[str, Any] = field(default_factory=dict)


class RequestRejected(LLMError):
    """The server refused this one request (HTTP 400/422); other requests may still work."""


class QuotaExhausted(LLMError):
    """The account has no credit left: no later call can succeed either."""


class AnswerUnreadable(LLMError):
    """HTTP 200, but the body is not a readable completion (not UTF-8, not JSON, too deep,
    too long, wrong shape). Like an invalid answer, it costs its own batch only."""


class DeadlineReached(LLMUnavailable):
    """The run's deadline passed before this call could finish."""


def with_retries(error: LLMError, retries: int) -> LLMError:
    error.retries = retries  # type: ignore[attr-defined]
    return error


def retries_of(error: BaseException) -> int:
    return int(getattr(error, "retries", 0))
