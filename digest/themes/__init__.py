"""Group papers into themes: the ``themes`` stage (dedup → **themes** → chunk).

The default backend, :class:`TfidfThemes`, works offline and deterministically:

1. Text → TF-IDF over words and bigrams of title (counted twice) + abstract, with
   sublinear tf. English stop words are dropped; *weak* domain words ("model",
   "method", "propose", "large", …) are never features on their own but may
   appear in a bigram with a strong word ("language models", "reward model").
2. LSA: TruncatedSVD, then rows normalized to unit length (cosine geometry).
3. k-means for every k in 2..max_themes; k is the silhouette winner after a
   penalty for straying from a size-based target (about sqrt(n / 3) themes:
   ~3 for 30 papers, ~6-10 for 100-300). Clusters smaller than
   max(3, 2% of papers) are folded into their nearest neighbour.
4. Names: class-based TF-IDF (c-TF-IDF, as in BERTopic) over the clusters;
   the top distinct terms, title-cased, joined by " · ".

Another backend (embeddings, config-named sections) implements
:class:`ThemeBackend`; :func:`themes_from_labels` turns any labelling into named,
ordered :class:`Theme` values, so backends only have to decide who goes with whom.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Protocol

from ..models import Paper, Theme
from ._build import OTHER, OTHER_TITLE, themes_from_labels
from ._cluster import TfidfThemes
from ._text import tokenize

__all__ = ["OTHER", "OTHER_TITLE", "ThemeBackend", "TfidfThemes", "group_papers",
           "themes_from_labels", "tokenize"]

log = logging.getLogger("digest.themes")


class ThemeBackend(Protocol):
    """Anything that can group papers into themes (same contract as :func:`group_papers`)."""

    def group(self, papers: Sequence[Paper], *, max_themes: int, seed: int) -> list[Theme]: ...


DEFAULT_BACKEND: ThemeBackend = TfidfThemes()


def group_papers(papers: Sequence[Paper], *, max_themes: int = 10, seed: int = 0) -> list[Theme]:
    """Group papers into themes, in reading order (largest/most salient first).

    Each Theme: title (human-readable label from distinctive terms, e.g. "Reinforcement Learning ·
    Reward Models"), keywords (top ~5 distinctive terms), paper_ids (ordered by closeness to the
    theme centre, then Paper.times_seen desc, then id). Every input paper id appears in exactly one
    theme. Deterministic for the same input. Empty input -> [].
    """
    themes = DEFAULT_BACKEND.group(papers, max_themes=max_themes, seed=seed)
    log.info("grouped %d papers into %d themes", sum(len(t.paper_ids) for t in themes), len(themes))
    return themes
