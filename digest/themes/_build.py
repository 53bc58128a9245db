"""Make themes from cluster labels: names, reading order, the "Other" section."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from ..models import Paper, Theme
from ._label import (
    KEYWORDS_PER_THEME,
    display_terms,
    distinctive_terms,
    joined_modifiers,
    pick_terms,
    theme_title,
    unique_titles,
)
from ._text import TermCounts

OTHER_TITLE = "Other"
OTHER = -1  # label of papers with no usable term
TOP_TITLES = 5  # titles of the most central papers kept on each theme, for a namer


def themes_from_labels(
    papers: Sequence[Paper],
    labels: np.ndarray,
    vectors: np.ndarray | None = None,
    counts: TermCounts | None = None,
) -> list[Theme]:
    """Named themes in reading order, from one cluster label per paper (``OTHER``: unplaceable).

    Backends that only decide which papers go together reuse this for names and ordering.
    """
    if len(papers) == 0:
        return []
    groups = [np.flatnonzero(labels == label) for label in sorted(set(labels.tolist()) - {OTHER})]
    unplaceable = [papers[int(i)] for i in np.flatnonzero(labels == OTHER)]
    if not groups:
        return [_other_theme(unplaceable)]
    ranked_terms = distinctive_terms(counts, groups) if counts is not None else [[] for _ in groups]
    drafts = [
        _draft_theme(papers, members, vectors, terms)
        for members, terms in zip(groups, ranked_terms, strict=True)
    ]
    drafts.sort(key=lambda draft: (-len(draft[2].paper_ids), -draft[0], draft[2].title))
    themes = unique_titles([(keywords, theme) for _, keywords, theme in drafts])
    if unplaceable:
        themes.append(_other_theme(unplaceable))
    return themes


def _draft_theme(
    papers: Sequence[Paper], members: np.ndarray, vectors: np.ndarray | None, terms: list[str]
) -> tuple[float, list[str], Theme]:
    """A theme plus what ordering and renaming need: its cohesion and all its ranked terms."""
    closeness = _closeness(vectors, members)
    ordered = _reading_order([papers[i] for i in members.tolist()], closeness.tolist())
    keywords = joined_modifiers(
        display_terms(pick_terms(terms, KEYWORDS_PER_THEME * 2), ordered), ordered)
    theme = Theme(
        title=theme_title(keywords) or OTHER_TITLE,
        keywords=tuple(keywords[:KEYWORDS_PER_THEME]),
        paper_ids=tuple(p.id for p in ordered),
        top_titles=tuple(p.title for p in ordered[:TOP_TITLES]),
    )
    return float(closeness.mean()), keywords, theme


def _closeness(vectors: np.ndarray | None, members: np.ndarray) -> np.ndarray:
    """Cosine of each member to the theme centre, rounded so float noise cannot reorder ties."""
    if vectors is None:
        return np.zeros(len(members))
    points = vectors[members]
    centre = points.mean(axis=0)
    norm = np.linalg.norm(centre)
    return (points @ (centre / norm)).round(6) if norm > 0 else np.zeros(len(members))


def _reading_key(paper: Paper, closeness: float) -> tuple[float, int, str]:
    return (-float(closeness), -paper.times_seen, paper.id)


def _reading_order(papers: list[Paper], closeness: list[float]) -> list[Paper]:
    """The papers sorted by ``_reading_key``. Sightings (a set of sources a paper) are
    counted only for papers whose closeness another shares: elsewhere closeness decides,
    and counting them all was most of the sort at 45,000 papers."""
    ties = {value for value, papers_at in Counter(closeness).items() if papers_at > 1}
    keys = [(-value, -paper.times_seen if value in ties else 0, paper.id)
            for paper, value in zip(papers, closeness, strict=True)]
    return [papers[i] for i in sorted(range(len(papers)), key=keys.__getitem__)]


def _other_theme(papers: Sequence[Paper]) -> Theme:
    ordered = sorted(papers, key=lambda p: _reading_key(p, 0.0))
    return Theme(title=OTHER_TITLE, keywords=(), paper_ids=tuple(p.id for p in ordered),
                 label=OTHER_TITLE, top_titles=tuple(p.title for p in ordered[:TOP_TITLES]))

