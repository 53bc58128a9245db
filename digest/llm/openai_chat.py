"""The ``openai`` backend: any OpenAI-compatible chat-completions server.

OpenAI, Azure OpenAI, vLLM, Ollama, LM Studio and the llama.cpp servers all speak this
protocol, but differ in what they accept and in how fast they answer. ``quirks`` learns,
once per run, what the server refuses (structured-output levels, ``max_tokens``,
``temperature``); ``pacing`` gives each request a time limit that fits the server's speed.
Retries (tenacity) are ``retrying``'s, shared with the embeddings backend: one retry layer.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import openai
from tenacity import RetryCallState

from ..errors import ConfigError, LLMError
from ..redaction import mask_secret
from .base import (
    BackendSettings,
    ChatRequest,
    Completion,
    DeadlineReached,
    with_retries,
)
from .deadline import request_limit
from .endpoint import make_client
from .faults import as_digest_error, backoff_wait, describe
from .pacing import DEADLINE, Limit, Pacing, is_local, request_tokens
from .quirks import (
    JSON_OBJECT,
    JSON_SCHEMA,
    OBJECT_WITH_SCHEMA,
    PLAIN_TEXT,
    PROBE,
    WAITED,
    ServerQuirks,
    is_format_refusal,
)
from .response import BodyTooSlow, completion_from_body, read_body
from .retrying import retrying, unless_withdrawn

logger = logging.getLogger("digest.llm")


class OpenAIChat:
    """Chat completions through the official client, with one retry layer (tenacity)."""

    name = "openai"

    def __init__(self, settings: BackendSettings, *, sleep: Callable[[float], None] = time.sleep,
                 jitter: Callable[[float, float], float] | None = None):
        if not settings.api_key and not settings.base_url:
            raise ConfigError("the openai backend needs OPENAI_API_KEY (or OPENAI_BASE_URL / "
                              "base_url for a local server); use the offline backend to run "
                              "without one")
        self.model = settings.model
        self.temperature = settings.temperature  # as asked for; part of the cache key
        self._settings = settings
        self._sleep = sleep
        self._wait = backoff_wait(jitter) if jitter else backoff_wait()
        self.quirks = ServerQuirks(settings.temperature)
        self._client = make_client(settings)  # checks the base URL first
        self.pacing = Pacing(settings.timeout_s, local=is_local(settings.base_url))

    def close(self) -> None:
        self._client.close()

    def complete(self, request: ChatRequest) -> Completion:
        limits: list[Limit] = []  # each request's time limit: the last one names a timeout
        sent = 0  # attempts that sent a request: a retry withdrawn in its backoff sleep is none

        def log_retry(state: RetryCallState) -> None:
            error = state.outcome.exception() if state.outcome else None
            logger.info("llm call failed (%s); retry %d in %.1f s", describe(error),
                        state.attempt_number, state.upcoming_sleep)

        def attempt() -> Completion:
            nonlocal sent
            before = len(limits)
            try:
                return self._attempt(request, limits)
            finally:
                sent += len(limits) > before

        retry = retrying(self._settings, request, wait=self._wait, sleep=self._sleep,
                         before_sleep=log_retry)
        try:
            completion = retry(unless_withdrawn(attempt, request))
        except openai.APIError as error:
            cut = limits[-1] if limits and isinstance(error, openai.APITimeoutError) else None
            raise with_retries(self._as_error(error, sent, cut), max(sent - 1, 0)) from None
        except LLMError as error:
            raise with_retries(error, max(sent - 1, 0)) from None
        return Completion(completion.text, completion.prompt_tokens, completion.completion_tokens,
                          completion.cached_tokens, completion.finish_reason, max(sent - 1, 0))

    def _attempt(self, request: ChatRequest, limits: list[Limit]) -> Completion:
        self.quirks.await_verdict(request.deadline)  # another thread's probe first
        level = self._level_for(request)
        try:
            return self._send(request, level, limits)
        except openai.APIStatusError as error:
            if self.quirks.learn_from(error, level):
                return self._attempt(request, limits)
            if error.status_code != 500 or level == PLAIN_TEXT:
                raise
            verdict = self.quirks.claim_probe(level, request.deadline)
            if verdict == PROBE:
                return self._probe_plainer_formats(request, level, error, limits)
            if verdict == WAITED and self._level_for(request) > level:
                return self._attempt(request, limits)
            raise

    def _probe_plainer_formats(self, request: ChatRequest, level: int,
                               error: openai.APIStatusError, limits: list[Limit]) -> Completion:
        """A bare 500 to a structured request may mean 'unsupported': try each plainer format
        once. Its verdict holds for the run; a timeout or lost connection reaches none."""
        verdict: int | None = None
        try:
            for plainer in range(level + 1, PLAIN_TEXT + 1):
                try:
                    completion = self._send(request, plainer, limits)
                except openai.APIStatusError as again:
                    if again.status_code == 500 or is_format_refusal(again):
                        continue
                    raise
                verdict = plainer
                return completion
            verdict = level  # every plainer format failed too: the 500 was no refusal
            raise error
        finally:
            self.quirks.end_probe(verdict, f"HTTP {error.status_code}")

    def _send(self, request: ChatRequest, level: int, limits: list[Limit]) -> Completion:
        tokens = request_tokens(request.messages, request.max_tokens)
        left = _time_left(request.deadline)
        ticket, limit = self.pacing.begin(tokens)
        limit, answered = limit.bounded(left, DEADLINE), None
        limits.append(limit)
        started = time.monotonic()
        try:
            with request_limit(started + limit.seconds), \
                    self._client.chat.completions.with_streaming_response.create(
                        **self._arguments(request, level), timeout=limit.seconds) as response:
                raw = _read_body(response, deadline=started + limit.seconds)
            completion = completion_from_body(raw)
            answered = completion.prompt_tokens + completion.completion_tokens or tokens
        finally:
            self.pacing.end(ticket, answered)
        self.quirks.settle(level)
        logger.info("llm call model=%s prompt_tokens=%d completion_tokens=%d cached=%d ms=%d "
                    "limit_s=%.0f", self.model, completion.prompt_tokens,
                    completion.completion_tokens, completion.cached_tokens,
                    (time.monotonic() - started) * 1000, limit.seconds)
        return completion

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        """The body this backend would POST for ``request`` now: its model, the structured
        output level and token parameter this server has taught it, its temperature. A Batch
        API line carries exactly this (``digest.batchjobs``)."""
        return self._arguments(request, self._level_for(request))

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

    def _as_error(self, error: openai.APIError, attempts: int, cut: Limit | None) -> LLMError:
        mapped = as_digest_error(error, self._settings, attempts, cut)
        message = mask_secret(str(mapped), self._settings.api_key)
        return type(mapped)(message, setting=mapped.setting)


def _time_left(deadline: float | None) -> float | None:
    """Seconds until the run's deadline (None: no deadline); past it, no request is sent."""
    if deadline is None:
        return None
    left = deadline - time.monotonic()
    if left <= 0:
        raise DeadlineReached("the run's LLM deadline passed before this call; the rest is "
                              "summarised offline", setting="deadline")
    return left


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


def _response_format(request: ChatRequest, level: int) -> dict[str, Any] | None:
    if level == JSON_SCHEMA and request.schema is not None:
        return {"type": "json_schema", "json_schema": {
            "name": request.schema_name, "strict": True, "schema": dict(request.schema)}}
    if level == OBJECT_WITH_SCHEMA and request.schema is not None:
        return {"type": "json_object", "schema": dict(request.schema)}
    if level in (OBJECT_WITH_SCHEMA, JSON_OBJECT):
        return {"type": "json_object"}
    return None
