"""Themes from embeddings: the OpenAI-compatible ``/v1/embeddings`` endpoint, cached in the store.

``EmbeddingThemes`` clusters the papers' embedding vectors with the same k-means, k choice
and tidying as the TF-IDF backend, and names the themes with the same c-TF-IDF terms.
``OpenAIEmbedder`` asks any OpenAI-compatible server through the LLM layer
(``digest.llm.openai_embed`` and ``digest.llm.embed_runner``: the chat backend's one retry
layer, the run's timeout and deadline, ledger rows, the breaker, the key redacted);
``CachedEmbedder`` keeps every vector in the state store (the ``llm_cache`` table, keyed by
model and text), so a re-run of the same week asks nothing.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import ConfigError
from ..llm.base import AnswerUnreadable
from ..llm.embed_runner import RunEmbedder
from ..llm.openai_embed import vectors_problem
from ..models import Paper, Theme
from ..state import Store
from ._build import themes_from_labels
from ._cluster import TfidfThemes, unique_by_id
from ._text import count_terms

if TYPE_CHECKING:
    from ..llm.base import BackendSettings

log = logging.getLogger("digest.themes")


class Embedder(Protocol):
    """Turns texts into vectors, one per text, in order."""

    model: str

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


class OpenAIEmbedder(RunEmbedder):
    """``POST /v1/embeddings`` on any OpenAI-compatible server, ``batch`` texts per call."""

    def __init__(self, settings: BackendSettings, *, store: Store | None = None,
                 deadline_s: float | None = None, batch: int = 128) -> None:
        from ..llm.openai_embed import OpenAIEmbeddings

        super().__init__(OpenAIEmbeddings(settings), store=store, deadline_s=deadline_s,
                         batch=batch)

    def close(self) -> None:
        self.backend.close()


@dataclass
class CachedEmbedder:
    """An embedder whose vectors are kept in the state store; only new texts are sent."""

    inner: Embedder
    store: Store
    model: str = field(init=False)

    cache_hits: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self.model = self.inner.model

    def stats(self) -> dict[str, Any]:
        """What the run report's ``llm.embeddings`` block says: the calls the inner
        embedder made (``LLMStats``: calls, retries, failures, tokens, errors) and the texts
        the store already held."""
        inner = getattr(self.inner, "stats", None)
        done = ({key: value for key, value in inner.as_dict().items() if key in EMBEDDING_STATS}
                if inner is not None else {"model": self.model})
        return {**done, "cache_hits": self.cache_hits}

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        keys = [self._key(text) for text in texts]
        found = {key: _usable(self.store.cached_response(key)) for key in dict.fromkeys(keys)}
        missing = [i for i, key in enumerate(keys) if found[key] is None]
        self.cache_hits += len(keys) - len(missing)
        step = int(getattr(self.inner, "batch", 0)) or len(missing) or 1
        for start in range(0, len(missing), step):  # each batch kept once it is paid for
            chunk = missing[start:start + step]
            fresh = self.inner.embed([texts[i] for i in chunk])
            if len(fresh) != len(chunk):
                raise AnswerUnreadable(f"embeddings: {self.model} gave {len(fresh)} vectors "
                                       f"for {len(chunk)} texts")
            if problem := vectors_problem(fresh):  # never kept, so never given again
                raise AnswerUnreadable(f"embeddings: a vector from {self.model} {problem}")
            for i, vector in zip(chunk, fresh, strict=True):
                found[keys[i]] = {"embedding": vector}
                self.store.cache_response(keys[i], self.model, {"embedding": vector})
        return [list((found[key] or {})["embedding"]) for key in keys]

    def close(self) -> None:
        _close(self.inner)

    def _key(self, text: str) -> str:
        return "embedding:" + hashlib.sha256(f"{self.model}\0{text}".encode()).hexdigest()


def _close(embedder: object) -> None:
    close = getattr(embedder, "close", None)
    if callable(close):
        close()


def _usable(cached: dict[str, Any] | None) -> dict[str, Any] | None:
    """A cached vector, or None (asked again) when it is none: a store written before vectors
    were checked may hold a NaN one."""
    if cached is None or vectors_problem([cached.get("embedding")]):
        return None
    return cached


@dataclass(frozen=True)
class EmbeddingThemes:
    """Cluster the papers' embeddings; name the themes by their distinctive terms."""

    embedder: Embedder
    clusterer: TfidfThemes = field(default_factory=TfidfThemes)
    # Why the last grouping fell back to TF-IDF, if it did (the report's ``fallback``).
    # A list, so that a frozen backend can say it.
    fell_back: list[str] = field(default_factory=list, compare=False)

    def stats(self) -> dict[str, Any] | None:
        """The embeddings' share of the run report (``llm.embeddings``)."""
        stats = getattr(self.embedder, "stats", None)
        done = stats() if callable(stats) else None
        if self.fell_back:
            done = {**(done or {}), "fallback": self.fell_back[-1]}
        return done

    def close(self) -> None:
        """Close the embedder's connections, if it has any."""
        _close(self.embedder)

    def group(self, papers: Sequence[Paper], *, max_themes: int, seed: int) -> list[Theme]:
        if max_themes < 1:
            raise ConfigError(f"max_themes must be at least 1, not {max_themes}")
        papers = unique_by_id(papers)
        if not papers:
            return []
        import numpy as np
        from threadpoolctl import threadpool_limits

        from ._vectors import unit_rows

        self.fell_back.clear()
        try:
            given = self.embedder.embed([embedding_text(p) for p in papers])
            if len(given) != len(papers):
                raise AnswerUnreadable(f"embeddings: {len(given)} vectors given for "
                                       f"{len(papers)} papers")
            if problem := vectors_problem(given):
                raise AnswerUnreadable(f"embeddings: a vector given for the papers {problem}")
        except AnswerUnreadable as error:
            # An answer no retry mends: like a chat answer that cannot be read, it costs
            # what it was for (here the grouping), not the issue.
            log.warning("%s; the themes are TF-IDF ones this time (check the embeddings "
                        "model %s)", error, self.embedder.model)
            self.fell_back.append(f"tfidf: {error}")
            return self.clusterer.group(papers, max_themes=max_themes, seed=seed)
        vectors = unit_rows(np.array(given, dtype=np.float64))
        with threadpool_limits(limits=1):
            labels = self.clusterer.cluster_vectors(vectors, max_themes, seed)
        return themes_from_labels(papers, labels, vectors, count_terms(papers))


def embedding_text(paper: Paper) -> str:
    return f"{paper.title}\n\n{paper.abstract}".strip()


THEME_BACKENDS = ("tfidf", "embeddings")
EMBEDDING_STATS = ("backend", "model", "calls", "retries", "failed_calls", "prompt_tokens",
                   "stopped", "errors")
EMBEDDING_TIMEOUT_S = 60.0


def make_theme_backend(name: str, store: Store, *, endpoint: BackendSettings | None = None,
                       deadline_s: float | None = None) -> EmbeddingThemes | None:
    """The theme backend setting ``theme_backend`` names; None is the default offline TF-IDF.

    ``endpoint`` is the embeddings server as the run's resolved settings name it
    (``digest.llm.wiring.backend_settings`` with the ``embedding_model``; with no ``timeout``
    set a request may take ``EMBEDDING_TIMEOUT_S``: a batch of titles and abstracts, no
    generated text to wait for); ``deadline_s`` is the run's."""
    if name == "tfidf":
        return None
    if name != "embeddings":
        raise ConfigError(f"theme backend {name!r} is unknown; choose one of "
                          f"{', '.join(THEME_BACKENDS)}", setting="theme_backend")
    if endpoint is None or (not endpoint.api_key and not endpoint.base_url):
        raise ConfigError("theme backend embeddings needs an endpoint: set OPENAI_API_KEY "
                          "(OpenAI) or OPENAI_BASE_URL / the base_url setting (a local server)",
                          setting="theme_backend")
    embedder = OpenAIEmbedder(endpoint, store=store, deadline_s=deadline_s)
    return EmbeddingThemes(CachedEmbedder(embedder, store))
