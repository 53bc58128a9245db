"""Group papers into themes: the ``themes`` stage (dedup → **themes** → chunk).

The default backend, :class:`TfidfThemes`, works offline and deterministically:

1. Text → TF-IDF over words and bigrams of title (counted twice) + abstract, with
   sublinear tf. English stop words are dropped; *weak* domain words ("model",
   "method", "propose", "large", …) are never features on their own but may
   appear in a bigram with a strong word ("language models", "reward model").
2. LSA: a randomized SVD to min(50, papers / 6) dimensions (fewer papers, fewer
   dimensions: more stable), rows normalized to unit length (cosine geometry). Over
   5,000 papers the axes are fitted on a fixed sample of 5,000 and every paper is
   projected on them (on the arXiv 2,000, axes fitted on 500 or 1,000 of them cluster
   as well as axes fitted on all).
3. k-means: k is chosen among a window around a size-based target (3 × log10(n)
   themes: ~4 for 30 papers, 6-7 for 100-300, ~10 for 2,000, never over
   max_themes) as the k whose k-means restarts agree best, less a penalty for
   straying from the target. The themes are then a consensus (``_consensus``):
   20 k-means runs with k - 2 … k + 2 clusters vote on which papers go together,
   and average linkage on that vote cuts k themes (over 2,500 papers the vote runs
   on a fixed sample and the rest join the nearest theme). It beats the best of 10
   restarts on the benchmarks: arXiv ARI 0.40 → 0.46, subsample stability 0.67 →
   0.78 (bench_themes.py).
   The arithmetic (TF-IDF, SVD, k-means, the cut) is scikit-learn's, done in numpy and
   scipy (``_vectors``, ``_kmeans``) so a run does not pay scikit-learn's import.
   Clusters smaller than max(3, 2% of papers) are folded into their nearest
   neighbour; a theme over 35% of the papers is split while there is room.
4. Names: class-based TF-IDF (c-TF-IDF, as in BERTopic) over the clusters, title
   terms counted twice, phrases preferred, each term kept for the theme it
   names best; two terms as a heading ("Reward function & imitation learning").

Fixed sections from the config (``[[themes]]``, see ``_sections``) take their
papers first; the rest is clustered. Another backend implements
:class:`ThemeBackend`; :func:`themes_from_labels` turns any labelling into named,
ordered :class:`Theme` values, so backends only have to decide who goes with whom.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import ConfigError
from ..models import Paper, Theme
from ._sections import NO_SECTION, Section, assign_sections, parse_sections, section_themes

if TYPE_CHECKING:
    from ..state import Store
    from ._build import OTHER, OTHER_TITLE, themes_from_labels
    from ._cluster import TfidfThemes
    from ._embeddings import CachedEmbedder, Embedder, EmbeddingThemes, OpenAIEmbedder
    from ._text import tokenize

# numpy, scipy, sklearn and openai load when a name that needs them is first used, not when
# the package is imported: ``import digest.cli`` stays light (tests/test_imports.py).
_LAZY = {"OTHER": "_build", "OTHER_TITLE": "_build", "themes_from_labels": "_build",
         "TfidfThemes": "_cluster", "tokenize": "_text", "CachedEmbedder": "_embeddings",
         "Embedder": "_embeddings", "EmbeddingThemes": "_embeddings",
         "OpenAIEmbedder": "_embeddings"}

__all__ = [
    "OTHER", "OTHER_TITLE", "CachedEmbedder", "Embedder", "EmbeddingThemes", "OpenAIEmbedder",
    "Section", "ThemeBackend", "TfidfThemes", "group_papers", "make_theme_backend",
    "parse_sections", "themes_from_labels", "tokenize",
]

log = logging.getLogger("digest.themes")


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)


class ThemeBackend(Protocol):
    """Anything that can group papers into themes (same contract as :func:`group_papers`)."""

    def group(self, papers: Sequence[Paper], *, max_themes: int, seed: int) -> list[Theme]: ...


def make_theme_backend(name: str, store: Store, **options: Any) -> ThemeBackend | None:
    """The backend the ``theme_backend`` setting names; None is the default offline TF-IDF
    one (and loads no model client)."""
    if name == "tfidf":
        return None
    from ._embeddings import make_theme_backend as embeddings_backend
    return embeddings_backend(name, store, **options)


def group_papers(papers: Sequence[Paper], *, max_themes: int = 10, seed: int = 0,
                 sections: Sequence[Section] = (),
                 backend: ThemeBackend | None = None) -> list[Theme]:
    """Group papers into themes, in reading order.

    Sections named in the config come first (in config order) with the papers close enough
    to them; the other papers are clustered into at most ``max_themes`` themes in all, the
    largest and most cohesive first. Sections that leave no room take every paper, each to
    its nearest; more sections than ``max_themes`` are a ``ConfigError``. Every paper id
    appears in exactly one theme; papers in a theme are ordered by closeness to its centre,
    then sightings, then id. The same input gives the same themes. No papers, no themes.
    ``backend`` clusters (default: the offline TF-IDF one; :class:`EmbeddingThemes` for
    embeddings).
    """
    from ._cluster import TfidfThemes, unique_by_id

    backend = backend or TfidfThemes()
    if max_themes < 1:
        raise ConfigError(f"max_themes must be at least 1, not {max_themes}")
    if len(sections) > max_themes:  # each section is a theme: "at most max_themes" would break
        raise ConfigError(f"{len(sections)} fixed sections but max_themes = {max_themes}: raise "
                          "max_themes or remove sections")
    if sections:
        themes = _with_sections(unique_by_id(papers), sections, max_themes, seed, backend)
    else:
        themes = backend.group(papers, max_themes=max_themes, seed=seed)
    log.info("grouped %d papers into %d themes", sum(len(t.paper_ids) for t in themes), len(themes))
    return themes


def _with_sections(papers: list[Paper], sections: Sequence[Section], max_themes: int,
                   seed: int, backend: ThemeBackend) -> list[Theme]:
    """Named sections first; the rest clustered, or sent to their nearest section if no room."""
    placed, score = assign_sections(papers, sections)
    room = max_themes - len(set(placed.tolist()) - {NO_SECTION})
    if room < 1:
        placed, score = assign_sections(papers, sections, everyone=True)
    named = section_themes(papers, sections, placed, score)
    rest = [p for p, where in zip(papers, placed, strict=True) if where == NO_SECTION]
    clustered = backend.group(rest, max_themes=room, seed=seed) if rest else []
    titles = {t.title.lower() for t in named}
    return named + [replace(t, title=f"{t.title} (more)") if t.title.lower() in titles else t
                    for t in clustered]
