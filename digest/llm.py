"""LLM backends: one small interface, ``ChatBackend.complete``, and a registry.

``openai`` talks to any OpenAI-compatible server through the official client.
``offline`` is no chat backend at all: the summarize stage then uses the
extractive summarizer in ``digest.offline``. Retries live here and only here
(tenacity; the client's own retries are switched off so they do not stack).
"""

from __future__ import annotations

import email.utils
import logging
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import openai
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt

from .errors import ConfigError, LLMError, LLMUnavailable

logger = logging.getLogger("digest.llm")

RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504}
MAX_RETRY_AFTER_S = 60.0


@dataclass(frozen=True)
class ChatRequest:
    messages: tuple[dict[str, str], ...]
    max_tokens: int
    json_output: bool = True


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int = 0
    finish_reason: str = "stop"


class ChatBackend(Protocol):
    """Anything that can answer a chat request. ``name`` and ``model`` go into the issue footer."""

    name: str
    model: str
    retries: int

    def complete(self, request: ChatRequest) -> Completion: ...


@dataclass
class BackendSettings:
    model: str
    api_key: str | None = None
    base_url: str | None = None
    timeout_s: float = 60.0
    max_attempts: int = 4
    extra: dict[str, Any] = field(default_factory=dict)


class OpenAIChat:
    """Any OpenAI-compatible chat-completions server (OpenAI, Azure, vLLM, Ollama, llama.cpp)."""

    name = "openai"

    def __init__(self, settings: BackendSettings, *, sleep: Callable[[float], None] = time.sleep):
        if not settings.api_key and not settings.base_url:
            raise ConfigError("the openai backend needs OPENAI_API_KEY (or OPENAI_BASE_URL for a "
                              "local server); use --backend offline to run without one")
        self.model = settings.model
        self.retries = 0
        self._settings = settings
        self._sleep = sleep
        self._json_mode = True  # stepped down once if the server rejects response_format
        self._client = openai.OpenAI(
            api_key=settings.api_key or "not-needed",  # local servers accept any key
            base_url=settings.base_url,
            timeout=settings.timeout_s,
            max_retries=0,
        )

    def complete(self, request: ChatRequest) -> Completion:
        retrying = Retrying(
            retry=retry_if_exception(_is_retryable),
            stop=stop_after_attempt(self._settings.max_attempts),
            wait=_wait_honouring_retry_after,
            sleep=self._sleep,
            before_sleep=self._count_retry,
            reraise=True,
        )
        try:
            return retrying(self._complete_once, request)
        except openai.APIStatusError as exc:
            raise _as_digest_error(exc, self._settings) from None
        except (openai.APIConnectionError, openai.APITimeoutError) as exc:
            raise LLMUnavailable(f"cannot reach the LLM endpoint "
                                 f"({self._settings.base_url or 'api.openai.com'}): "
                                 f"{type(exc).__name__}") from None

    def _complete_once(self, request: ChatRequest) -> Completion:
        started = time.monotonic()
        kwargs: dict[str, Any] = {}
        if request.json_output and self._json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        try:
            response = self._client.chat.completions.create(
                model=self.model, messages=list(request.messages),  # type: ignore[arg-type]
                max_tokens=request.max_tokens, temperature=0.2, **kwargs)
        except openai.BadRequestError as exc:
            if "response_format" not in kwargs or "response_format" not in str(exc):
                raise
            logger.warning("the server rejects response_format; asking for plain JSON text")
            self._json_mode = False
            return self._complete_once(request)
        return self._to_completion(response, started)

    def _to_completion(self, response: Any, started: float) -> Completion:
        choice = response.choices[0]
        usage = response.usage
        details = getattr(usage, "prompt_tokens_details", None) if usage else None
        completion = Completion(
            text=choice.message.content or "",
            prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
            completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
            cached_tokens=getattr(details, "cached_tokens", 0) or 0,
            finish_reason=choice.finish_reason or "stop",
        )
        logger.info("llm call model=%s prompt_tokens=%d completion_tokens=%d ms=%d",
                    self.model, completion.prompt_tokens, completion.completion_tokens,
                    (time.monotonic() - started) * 1000)
        return completion

    def _count_retry(self, state: RetryCallState) -> None:
        self.retries += 1
        error = state.outcome.exception() if state.outcome else None
        logger.warning("llm call failed (%s); retry %d", _describe(error), state.attempt_number)


def _is_retryable(error: BaseException) -> bool:
    if isinstance(error, (openai.APIConnectionError, openai.APITimeoutError)):
        return True
    if isinstance(error, openai.APIStatusError) and error.status_code in RETRYABLE_STATUS:
        return not _is_quota_error(error) and _retry_after(error) <= MAX_RETRY_AFTER_S
    return False


def _is_quota_error(error: openai.APIStatusError) -> bool:
    body = error.body if isinstance(error.body, dict) else {}
    nested = body.get("error") if isinstance(body.get("error"), dict) else {}
    code = str(body.get("code") or nested.get("code") or "")
    return "insufficient_quota" in code or "insufficient_quota" in str(error.message)


def _retry_after(error: BaseException) -> float:
    response = getattr(error, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    if not value:
        return 0.0
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value)
        return max(0.0, parsed.timestamp() - time.time()) if parsed else 0.0


def _wait_honouring_retry_after(state: RetryCallState) -> float:
    error = state.outcome.exception() if state.outcome else None
    backoff = min(30.0, 0.5 * 2 ** (state.attempt_number - 1)) * random.uniform(0.5, 1.0)
    return max(backoff, _retry_after(error) if error else 0.0)


def _describe(error: BaseException | None) -> str:
    if isinstance(error, openai.APIStatusError):
        return f"HTTP {error.status_code}"
    return type(error).__name__ if error else "unknown"


def _as_digest_error(error: openai.APIStatusError, settings: BackendSettings) -> LLMError:
    status = error.status_code
    where = settings.base_url or "the OpenAI API"
    if status == 401:
        return LLMError(f"{where} rejected the API key (HTTP 401): check OPENAI_API_KEY")
    if status == 403:
        return LLMError(f"{where} refused access (HTTP 403): check the key's permissions")
    if status == 404:
        return LLMError(f"{where} has no model {settings.model!r} (HTTP 404): check --model "
                        "and OPENAI_BASE_URL (it usually ends in /v1)")
    if status == 400:
        return LLMError(f"{where} rejected the request (HTTP 400): {error.message[:200]}")
    if _is_quota_error(error):
        return LLMError(f"{where}: the account is out of quota; add credit or use "
                        "--backend offline")
    return LLMUnavailable(f"{where} is unavailable (HTTP {status}) after "
                          f"{settings.max_attempts} attempts")


BackendFactory = Callable[[BackendSettings], ChatBackend]
BACKENDS: dict[str, BackendFactory | None] = {"openai": OpenAIChat, "offline": None}


def register_backend(name: str, factory: BackendFactory) -> None:
    BACKENDS[name] = factory


def make_backend(name: str, settings: BackendSettings) -> ChatBackend | None:
    """The chat backend for ``name`` ("auto" picks openai when a key or URL is set)."""
    if name == "auto":
        name = "openai" if (settings.api_key or settings.base_url) else "offline"
    if name not in BACKENDS:
        raise ConfigError(f"unknown backend {name!r}; choose one of: auto, "
                          + ", ".join(sorted(BACKENDS)))
    factory = BACKENDS[name]
    return factory(settings) if factory else None


def settings_from_env(model: str | None, **overrides: Any) -> BackendSettings:
    return BackendSettings(
        model=model or os.environ.get("DIGEST_MODEL") or "gpt-4o-mini",
        api_key=os.environ.get("OPENAI_API_KEY") or None,
        base_url=os.environ.get("OPENAI_BASE_URL") or None,
        **overrides,
    )
