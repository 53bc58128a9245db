"""``POST /v1/embeddings`` on any OpenAI-compatible server, through the chat backend's layer.

The same client (``endpoint.make_client``: the run's ``timeout``, the client's own retries
off), the same single retry layer as chat (tenacity with ``faults.is_retryable`` and
``faults.backoff_wait``: 408/409/429/5xx and connection errors, ``Retry-After`` honoured
up to a cap), the same stops (the run's deadline, the circuit breaker withdrawing
permission) and the same errors (``faults.as_digest_error``, the key redacted). The
scheduling around it (ledger rows, deadline, breaker, batches) is ``llm.embed_runner``.
"""

from __future__ import annotations

import array
import base64
import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError, LLMError
from .base import AnswerUnreadable, BackendSettings, DeadlineReached, with_retries

logger = logging.getLogger("digest.llm")

DEFAULT_EMBEDDING_MODEL = "text-embedding-3-small"


@dataclass(frozen=True)
class EmbeddingRequest:
    """Texts to embed, in order; the same stops as a ``ChatRequest``."""

    texts: tuple[str, ...]
    deadline: float | None = None  # time.monotonic() after which no attempt may start
    may_retry: Callable[[], bool] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Embeddings:
    vectors: list[list[float]]
    prompt_tokens: int = 0
    retries: int = 0


class OpenAIEmbeddings:
    """Embeddings through the official client, with chat's one retry layer."""

    name = "openai"

    def __init__(self, settings: BackendSettings, *, sleep: Callable[[float], None] = time.sleep,
                 jitter: Callable[[float, float], float] | None = None):
        from .endpoint import make_client
        from .faults import backoff_wait

        if not settings.api_key and not settings.base_url:
            raise ConfigError("embeddings need an endpoint: set OPENAI_API_KEY (OpenAI) or "
                              "OPENAI_BASE_URL (a local server)", setting="base_url")
        self.model = settings.model
        self._settings = settings
        self._sleep = sleep
        self._wait = backoff_wait(jitter) if jitter else backoff_wait()
        self._client = make_client(settings)

    def close(self) -> None:
        self._client.close()

    def embed(self, request: EmbeddingRequest) -> Embeddings:
        import openai

        retries = 0

        def count_retry(state: Any) -> None:
            nonlocal retries
            retries += 1
            logger.info("embeddings call failed; retry %d in %.1f s", retries,
                        state.upcoming_sleep)

        try:
            result = self._retrying(request, count_retry)(self._attempt_for(request))
        except openai.APIError as error:
            raise with_retries(self._as_error(error, retries + 1), retries) from None
        except LLMError as error:
            raise with_retries(error, retries) from None
        return Embeddings(result.vectors, result.prompt_tokens, retries)

    def _retrying(self, request: EmbeddingRequest, count_retry: Callable[[Any], None]) -> Any:
        from .retrying import retrying  # chat's own: one retry layer, one meaning of deadline

        return retrying(self._settings, request, wait=self._wait, sleep=self._sleep,
                        before_sleep=count_retry)

    def _attempt_for(self, request: EmbeddingRequest) -> Callable[[], Embeddings]:
        from .retrying import unless_withdrawn

        return unless_withdrawn(lambda: self._send(request), request)

    def _send(self, request: EmbeddingRequest) -> Embeddings:
        started = time.monotonic()
        # base64 asked for explicitly: the client then hands the answer over as the server
        # sent it, for ``_vectors`` to read (its own decoding raised on a malformed answer).
        response = self._client.embeddings.create(model=self.model, input=list(request.texts),
                                                  encoding_format="base64",
                                                  timeout=self._timeout(request))
        vectors = _vectors(response, len(request.texts))
        usage = getattr(response, "usage", None)
        tokens = getattr(usage, "prompt_tokens", 0) if usage is not None else 0
        logger.info("embeddings model=%s texts=%d ms=%d", self.model, len(request.texts),
                    (time.monotonic() - started) * 1000)
        return Embeddings(vectors, tokens if isinstance(tokens, int) else 0)

    def _timeout(self, request: EmbeddingRequest) -> float:
        limit = self._settings.timeout_s if self._settings.timeout_s is not None else 60.0
        if request.deadline is None:
            return limit
        left = request.deadline - time.monotonic()
        if left <= 0:
            raise DeadlineReached("the run's deadline (setting deadline) passed before the "
                                  "embeddings were asked for")
        return min(limit, left)

    def _as_error(self, error: Any, attempts: int) -> LLMError:
        from ..redaction import mask_secret
        from .faults import as_digest_error

        mapped = as_digest_error(error, self._settings, attempts)
        return type(mapped)("embeddings: " + mask_secret(str(mapped), self._settings.api_key))


def _vectors(response: Any, count: int) -> list[list[float]]:
    """One vector per text, in the texts' order, or ``AnswerUnreadable``."""
    items = _items(response)
    if len(items) != count:
        raise AnswerUnreadable(f"embeddings: the endpoint returned {len(items)} vectors for "
                               f"{count} texts")
    vectors = [_decoded(getattr(item, "embedding", None)) for item in items]
    problem = vectors_problem(vectors)
    if problem:
        raise AnswerUnreadable(f"embeddings: the endpoint returned a vector that {problem}")
    return [list(vector) for vector in vectors]  # type: ignore[arg-type]


def _items(response: Any) -> list[Any]:
    """The answer's embeddings in index order; any other shape (no ``data`` list, an item
    without a whole-number index) is ``AnswerUnreadable``."""
    data = getattr(response, "data", None)
    items = data if isinstance(data, list) else []
    if not all(type(getattr(item, "index", None)) is int for item in items):
        raise AnswerUnreadable("embeddings: the endpoint returned an answer that is not a list "
                               "of embeddings")
    return sorted(items, key=lambda item: item.index)


def _decoded(vector: Any) -> Any:
    """A base64 vector (float32 numbers, as the client asks for) as a list; any other value
    as it is, for ``vectors_problem`` to judge."""
    if not isinstance(vector, str):
        return vector
    try:
        return array.array("f", base64.b64decode(vector, validate=True)).tolist()
    except ValueError:  # binascii.Error too: not base64, or not whole float32 numbers
        raise AnswerUnreadable("embeddings: the endpoint returned a vector that is not "
                               "base64 float32 numbers") from None


def vectors_problem(vectors: Sequence[object]) -> str | None:
    """What makes ``vectors`` no set of embeddings (each a non-empty list of finite numbers,
    all of one length), or None. A lying server's NaN, text or ragged rows stop here: past
    this they would make nonsense themes or a crash."""
    lengths = set()
    for vector in vectors:
        if not isinstance(vector, list | tuple) or not vector:
            return "is not a list of numbers"
        if not _all_numbers(vector) or not all(map(math.isfinite, vector)):
            return _first_bad_value(vector)
        lengths.add(len(vector))
    if len(lengths) > 1:
        return f"differs in length from another ({', '.join(map(str, sorted(lengths)))} numbers)"
    return None


def _all_numbers(vector: Sequence[object]) -> bool:
    """Every value an int or a float, not a bool: asked of each distinct type, not each value
    (a vector is a thousand or more floats, and each layer that keeps or uses one checks it)."""
    return all(kind is not bool and issubclass(kind, int | float)
               for kind in set(map(type, vector)))


def _first_bad_value(vector: Sequence[object]) -> str:
    """What is wrong with the first value of ``vector`` that is not a finite number."""
    for value in vector:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return "holds something other than numbers"
        if not math.isfinite(value):
            return "holds NaN or an infinity"
    raise AssertionError("every value is a finite number")


def texts_in_batches(texts: Sequence[str], size: int) -> list[tuple[str, ...]]:
    return [tuple(texts[start:start + size]) for start in range(0, len(texts), size)]
