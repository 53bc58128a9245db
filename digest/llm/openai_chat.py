"""The ``openai`` backend: any OpenAI-compatible chat-completions server.

OpenAI, Azure OpenAI, vLLM, Ollama and the llama.cpp server all speak this
protocol, but differ in what they accept. The backend asks for the strictest
structured output first (``json_schema``) and learns, once per run, what the
server refuses: a 400 naming ``response_format``, ``max_tokens`` or
``temperature`` drops or swaps that parameter; an HTTP 500 before any
structured request has worked makes it try the plainer formats once (some
servers crash on a schema instead of refusing it). What it learnt is kept for
the run. A one-off 500 on the very first request looks the same and costs the
run its structured output; the plain-text parser and the validation still hold.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import openai
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt
from tenacity.stop import stop_base

from ..errors import ConfigError, LLMError
from ..redaction import mask_secret
from .base import (
    BackendSettings,
    ChatRequest,
    Completion,
    DeadlineReached,
    with_retries,
)
from .endpoint import make_client
from .faults import as_digest_error, backoff_wait, describe, is_retryable
from .response import BodyTooSlow, completion_from_body, read_body

logger = logging.getLogger("digest.llm")


# Structured-output levels, strictest first.
JSON_SCHEMA, JSON_OBJECT, PLAIN_TEXT = 0, 1, 2
LEVEL_NAMES = ("json_schema", "json_object", "plain text")


class ServerQuirks:
    """What this server accepts, learnt from its refusals. Shared by all threads of a run."""

    def __init__(self, temperature: float | None) -> None:
        self.level = JSON_SCHEMA
        self.confirmed = False  # a structured request succeeded: a later 500 is just a 500
        self.probed = False  # the once-per-run probe after a 500 has been spent
        self.token_param = "max_tokens"
        self.temperature = temperature
        self._lock = threading.Lock()

    def learn_from(self, error: openai.APIStatusError, level: int) -> bool:
        """Drop what a 400/422 complains about; True when the request is worth resending."""
        text = f"{error.message} {error.param or ''}".lower()
        with self._lock:
            if level < PLAIN_TEXT and any(word in text for word in (
                    "response_format", "json_schema", "json_object", "response format")):
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

    def claim_probe(self) -> bool:
        with self._lock:
            if self.confirmed or self.probed or self.level == PLAIN_TEXT:
                return False
            self.probed = True
            return True

    def settle(self, level: int, *, after_error: str | None = None) -> None:
        with self._lock:
            if after_error is not None:
                self._step_down(level, after_error)
            if level < PLAIN_TEXT:
                self.confirmed = True

    def _step_down(self, level: int, because: str) -> None:
        if level > self.level:
            logger.warning("the server does not take %s output (%s); using %s from now on",
                           LEVEL_NAMES[self.level], because, LEVEL_NAMES[level])
            self.level = level


class OpenAIChat:
    """Chat completions through the official client, with one retry layer (tenacity)."""

    name = "openai"

    def __init__(self, settings: BackendSettings, *, sleep: Callable[[float], None] = time.sleep,
                 jitter: Callable[[float, float], float] | None = None):
        if not settings.api_key and not settings.base_url:
            raise ConfigError("the openai backend needs OPENAI_API_KEY (or OPENAI_BASE_URL / "
                              "--base-url for a local server); use --backend offline to run "
                              "without one")
        self.model = settings.model
        self.temperature = settings.temperature  # as asked for; part of the cache key
        self._settings = settings
        self._sleep = sleep
        self._wait = backoff_wait(jitter) if jitter else backoff_wait()
        self.quirks = ServerQuirks(settings.temperature)
        self._client = make_client(settings)

    def close(self) -> None:
        self._client.close()

    def complete(self, request: ChatRequest) -> Completion:
        retries = 0

        def count_retry(state: RetryCallState) -> None:
            nonlocal retries
            retries += 1
            error = state.outcome.exception() if state.outcome else None
            logger.info("llm call failed (%s); retry %d in %.1f s", describe(error), retries,
                        state.upcoming_sleep)

        retrying = Retrying(
            retry=retry_if_exception(
                lambda e: is_retryable(e, self._settings.max_retry_after_s)),
            stop=(stop_after_attempt(self._settings.max_attempts) | _past(request.deadline)
                  | _withdrawn(request)),
            wait=self._wait, sleep=self._sleep, before_sleep=count_retry, reraise=True)
        try:
            completion = retrying(_unless_withdrawn(self._attempt, request))
        except openai.APIError as error:
            raise with_retries(self._as_error(error, retries + 1), retries) from None
        except LLMError as error:
            raise with_retries(error, retries) from None
        return Completion(completion.text, completion.prompt_tokens, completion.completion_tokens,
                          completion.cached_tokens, completion.finish_reason, retries)

    def _attempt(self, request: ChatRequest) -> Completion:
        level = self._level_for(request)
        try:
            return self._send(request, level)
        except (openai.BadRequestError, openai.UnprocessableEntityError) as error:
            if self.quirks.learn_from(error, level):
                return self._attempt(request)
            raise
        except openai.InternalServerError as error:
            if error.status_code == 500 and level < PLAIN_TEXT and self.quirks.claim_probe():
                return self._probe_plainer_formats(request, level, error)
            raise

    def _probe_plainer_formats(self, request: ChatRequest, level: int,
                               error: openai.InternalServerError) -> Completion:
        """A 500 to a structured request may mean 'unsupported': try each plainer format once."""
        for plainer in range(level + 1, PLAIN_TEXT + 1):
            try:
                completion = self._send(request, plainer, settle=False)
            except openai.InternalServerError as again:
                if again.status_code != 500:
                    raise
                continue
            self.quirks.settle(plainer, after_error=f"HTTP {error.status_code}")
            return completion
        raise error

    def _send(self, request: ChatRequest, level: int, *, settle: bool = True) -> Completion:
        started = time.monotonic()
        timeout = self._timeout(request)
        with self._client.chat.completions.with_streaming_response.create(
                **self._arguments(request, level), timeout=timeout) as response:
            raw = _read_body(response, deadline=started + timeout)
        if settle:
            self.quirks.settle(level)
        completion = completion_from_body(raw)
        logger.info("llm call model=%s prompt_tokens=%d completion_tokens=%d cached=%d ms=%d",
                    self.model, completion.prompt_tokens, completion.completion_tokens,
                    completion.cached_tokens, (time.monotonic() - started) * 1000)
        return completion

    def _arguments(self, request: ChatRequest, level: int) -> dict[str, Any]:
        arguments: dict[str, Any] = {
            "model": self.model, "messages": [dict(m) for m in request.messages],
            self.quirks.token_param: request.max_tokens}
        if self.quirks.temperature is not None:
            arguments["temperature"] = self.quirks.temperature
        response_format = _response_format(request, level)
        if response_format is not None:
            arguments["response_format"] = response_format
        return arguments

    def _level_for(self, request: ChatRequest) -> int:
        if not request.json_output:
            return PLAIN_TEXT
        floor = JSON_SCHEMA if request.schema is not None else JSON_OBJECT
        return max(self.quirks.level, floor)

    def _timeout(self, request: ChatRequest) -> float:
        if request.deadline is None:
            return self._settings.timeout_s
        left = request.deadline - time.monotonic()
        if left <= 0:
            raise DeadlineReached("the run's LLM deadline passed (--deadline); the rest is "
                                  "summarised offline")
        return min(self._settings.timeout_s, left)

    def _as_error(self, error: openai.APIError, attempts: int) -> LLMError:
        mapped = as_digest_error(error, self._settings, attempts)
        message = mask_secret(str(mapped), self._settings.api_key)
        return type(mapped)(message)


def _read_body(response: Any, *, deadline: float) -> bytes:
    """The body, with a slow or broken transfer raised as the openai errors retries know.

    The client wraps transport errors only while it sends; reading a streamed body raises
    its HTTP library's own (httpx: ``RemoteProtocolError`` for a cut body, ``ReadTimeout``)."""
    request = response.http_response.request
    try:
        return read_body(response.iter_bytes(), deadline=deadline)
    except BodyTooSlow:
        raise openai.APITimeoutError(request) from None
    except Exception as error:
        if not type(error).__module__.startswith("httpx"):
            raise
        if "Timeout" in type(error).__name__:
            raise openai.APITimeoutError(request) from None
        raise openai.APIConnectionError(request=request) from None


class _past(stop_base):  # noqa: N801 - reads like tenacity's own stops
    """A tenacity stop: no retry whose wait would end after the deadline."""

    def __init__(self, deadline: float | None) -> None:
        self.deadline = deadline

    def __call__(self, state: RetryCallState) -> bool:
        return (self.deadline is not None
                and time.monotonic() + state.upcoming_sleep >= self.deadline)


class _withdrawn(stop_base):  # noqa: N801
    """A tenacity stop: no retry once the caller withdrew permission (breaker open)."""

    def __init__(self, request: ChatRequest) -> None:
        self.request = request

    def __call__(self, state: RetryCallState) -> bool:
        return self.request.may_retry is not None and not self.request.may_retry()


def _unless_withdrawn(attempt: Callable[[ChatRequest], Completion], request: ChatRequest
                      ) -> Callable[[], Completion]:
    """``attempt(request)``; a retry the caller withdrew during the backoff sleep raises the
    error of the attempt before instead of sending the request again."""
    failures: list[Exception] = []

    def attempt_once() -> Completion:
        if failures and request.may_retry is not None and not request.may_retry():
            raise failures[-1]
        try:
            return attempt(request)
        except Exception as error:
            failures.append(error)
            raise

    return attempt_once


def _response_format(request: ChatRequest, level: int) -> dict[str, Any] | None:
    if level == JSON_SCHEMA and request.schema is not None:
        return {"type": "json_schema", "json_schema": {
            "name": request.schema_name, "strict": True, "schema": dict(request.schema)}}
    if level == JSON_OBJECT:
        return {"type": "json_object"}
    return None
