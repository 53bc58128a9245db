"""Embedding requests through the LLM layer: batches, ledger rows, deadline and breaker.

``RunEmbedder`` is what the themes stage's ``Embedder`` protocol asks for
(``embed(texts) -> vectors``). It sends the texts in batches to an embeddings backend
(``openai_embed.OpenAIEmbeddings``), one batch at a time, and for each batch: refuses to
start once the run's deadline has passed or the breaker is open, writes a ledger row
(task ``embed``; numbers and hashes only), counts the failure towards the breaker and
names the limit that cut it. Themes need every vector, so a failed batch raises (the
run stops with that error; vectors already received are cached by the caller).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from typing import Protocol

from ..errors import LLMError, LLMUnavailable
from ..state import CallRecord, Store
from ._breaker import Breaker
from ._limits import deadline_start, named_cut
from ._stats import LLMStats
from .base import DeadlineReached, retries_of
from .openai_embed import EmbeddingRequest, Embeddings, texts_in_batches

BATCH_TEXTS = 128


class EmbeddingBackend(Protocol):
    name: str
    model: str

    def embed(self, request: EmbeddingRequest) -> Embeddings: ...

    def close(self) -> None: ...


class RunEmbedder:
    """``embed(texts)`` for the themes stage, within the run's limits."""

    def __init__(self, backend: EmbeddingBackend, *, store: Store | None = None,
                 deadline_s: float | None = None, breaker_after: int = 3,
                 batch: int = BATCH_TEXTS) -> None:
        self.backend = backend
        self.model = backend.model
        self.stats = LLMStats(backend=backend.name, model=backend.model)
        self._store = store
        self._deadline = deadline_start(deadline_s)
        self._breaker = Breaker(breaker_after)
        self.batch = batch

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for batch in texts_in_batches(texts, self.batch):
            vectors += self._embed_batch(batch)
        return vectors

    def _embed_batch(self, texts: tuple[str, ...]) -> list[list[float]]:
        self._check_may_start()
        started = time.monotonic()
        request = EmbeddingRequest(texts, deadline=self._deadline,
                                   may_retry=self._breaker.may_retry)
        try:
            result = self.backend.embed(request)
        except LLMError as error:
            cut = named_cut(error, self._deadline)
            self._record(texts, started, None, retries_of(error), f"error: {type(cut).__name__}")
            self._failed(cut)
            raise cut from None
        self._breaker.succeeded()
        self._record(texts, started, result, result.retries, "ok")
        return result.vectors

    def _check_may_start(self) -> None:
        if self._breaker.halted.is_set():
            raise LLMUnavailable(f"embeddings: no more calls this run ({self.stats.stopped})")
        if self._deadline is not None and time.monotonic() >= self._deadline:
            raise DeadlineReached("the run's deadline (setting deadline) passed before the "
                                  "embeddings were asked for")

    def _failed(self, error: LLMError) -> None:
        self.stats.failed_calls += 1
        self.stats.note_error(str(error))
        why = self._breaker.failed() if isinstance(error, LLMUnavailable) else None
        if why is not None:
            self._breaker.open()
            self.stats.stop(f"circuit breaker: {why}")

    def _record(self, texts: tuple[str, ...], started: float, result: Embeddings | None,
                retries: int, outcome: str) -> None:
        self.stats.calls += 1
        self.stats.retries += retries
        tokens = result.prompt_tokens if result is not None else 0
        self.stats.prompt_tokens += tokens
        if self._store is None:
            return
        hashed = hashlib.sha256("\0".join(texts).encode()).hexdigest()
        self._store.record_call(CallRecord(
            self.model, "embed", hashed, "embedding-batch:" + hashed, tokens, 0, 0,
            round((time.monotonic() - started) * 1000), retries, outcome, 0.0))
