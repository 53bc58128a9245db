"""Themes from embeddings: the OpenAI-compatible ``/v1/embeddings`` endpoint, cached in the store.

``EmbeddingThemes`` clusters the papers' embedding vectors with the same k-means, k choice
and tidying as the TF-IDF backend, and names the themes with the same c-TF-IDF terms.
``OpenAIEmbedder`` asks any OpenAI-compatible server; ``CachedEmbedder`` keeps every vector
in the state store (the ``llm_cache`` table, keyed by model and text), so a re-run of the
same week asks nothing.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import openai
from sklearn.preprocessing import normalize
from threadpoolctl import threadpool_limits

from ..errors import ConfigError, LLMError, LLMUnavailable
from ..models import Paper, Theme
from ..state import Store
from ._build import themes_from_labels
from ._cluster import TfidfThemes, unique_by_id
from ._text import count_terms

log = logging.getLogger("digest.themes")

DEFAULT_EMBEDDING_MODEL = "text-embedding-3-small"


class Embedder(Protocol):
    """Turns texts into vectors, one per text, in order."""

    model: str

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


@dataclass
class OpenAIEmbedder:
    """``POST /v1/embeddings`` on any OpenAI-compatible server, ``batch`` texts per call."""

    client: openai.OpenAI
    model: str = DEFAULT_EMBEDDING_MODEL
    batch: int = 128

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch):
            vectors += self._call(list(texts[start:start + self.batch]))
        return vectors

    def _call(self, texts: list[str]) -> list[list[float]]:
        started = time.monotonic()
        try:
            response = self.client.embeddings.create(model=self.model, input=texts)
        except (openai.APIConnectionError, openai.RateLimitError,
                openai.InternalServerError) as exc:
            raise LLMUnavailable(f"embeddings endpoint unavailable: {exc}") from exc
        except openai.APIStatusError as exc:
            raise LLMError(f"embeddings endpoint refused the request ({exc.status_code}); "
                           f"check --themes-model '{self.model}'") from exc
        items = sorted(response.data, key=lambda item: item.index)
        if len(items) != len(texts):
            raise LLMError(f"embeddings endpoint returned {len(items)} vectors for "
                           f"{len(texts)} texts")
        log.info("embeddings model=%s texts=%d ms=%d", self.model, len(texts),
                 (time.monotonic() - started) * 1000)
        return [list(item.embedding) for item in items]


@dataclass
class CachedEmbedder:
    """An embedder whose vectors are kept in the state store; only new texts are sent."""

    inner: Embedder
    store: Store
    model: str = field(init=False)

    def __post_init__(self) -> None:
        self.model = self.inner.model

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        keys = [self._key(text) for text in texts]
        found = {key: self.store.cached_response(key) for key in dict.fromkeys(keys)}
        missing = [i for i, key in enumerate(keys) if found[key] is None]
        if missing:
            fresh = self.inner.embed([texts[i] for i in missing])
            for i, vector in zip(missing, fresh, strict=True):
                found[keys[i]] = {"embedding": vector}
                self.store.cache_response(keys[i], self.model, {"embedding": vector})
        return [list((found[key] or {})["embedding"]) for key in keys]

    def _key(self, text: str) -> str:
        return "embedding:" + hashlib.sha256(f"{self.model}\0{text}".encode()).hexdigest()


@dataclass(frozen=True)
class EmbeddingThemes:
    """Cluster the papers' embeddings; name the themes by their distinctive terms."""

    embedder: Embedder
    clusterer: TfidfThemes = field(default_factory=TfidfThemes)

    def group(self, papers: Sequence[Paper], *, max_themes: int, seed: int) -> list[Theme]:
        if max_themes < 1:
            raise ConfigError(f"max_themes must be at least 1, not {max_themes}")
        papers = unique_by_id(papers)
        if not papers:
            return []
        vectors = normalize(np.asarray(self.embedder.embed([embedding_text(p) for p in papers]),
                                       dtype=np.float64))
        with threadpool_limits(limits=1):
            labels = self.clusterer.cluster_vectors(vectors, max_themes, seed)
        return themes_from_labels(papers, labels, vectors, count_terms(papers))


def embedding_text(paper: Paper) -> str:
    return f"{paper.title}\n\n{paper.abstract}".strip()


THEME_BACKENDS = ("tfidf", "embeddings")


def make_theme_backend(name: str, store: Store, *, model: str | None = None,
                       base_url: str | None = None, timeout_s: float = 60.0
                       ) -> EmbeddingThemes | None:
    """The backend ``--themes NAME`` asks for; None is the default offline TF-IDF one."""
    if name == "tfidf":
        return None
    if name != "embeddings":
        raise ConfigError(f"--themes {name}: unknown; choose one of {', '.join(THEME_BACKENDS)}")
    api_key = os.environ.get("OPENAI_API_KEY")
    base_url = base_url or os.environ.get("OPENAI_BASE_URL")
    if not api_key and not base_url:
        raise ConfigError("--themes embeddings needs an endpoint: set OPENAI_API_KEY "
                          "(OpenAI) or OPENAI_BASE_URL / --base-url (a local server)")
    client = openai.OpenAI(api_key=api_key or "not-needed", base_url=base_url,
                           timeout=timeout_s, max_retries=2)
    embedder = OpenAIEmbedder(client, model=model or DEFAULT_EMBEDDING_MODEL)
    return EmbeddingThemes(CachedEmbedder(embedder, store))
