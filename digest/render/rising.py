"""Rising themes: which of this week's themes grew compared with the last few issues.

Theme titles are made fresh each week (from TF-IDF keywords or by the LLM), so a
theme is matched to an earlier one by the words of its title and keywords: two
themes are "the same" when they share two fifths of the smaller word set (two words
of five).
A theme *rises* when its share of the issue's papers grew by at least
``MIN_GAIN`` (absolute) and by half (relative) against its average share over
the last ``WINDOW`` issues (0 when no earlier theme matches: it is new).
History comes from ``outputs/.history.json`` (see ``digest.outputs``): without
an earlier issue there is nothing to compare with, and the section is left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

WINDOW = 4
MIN_GAIN = 0.05
MIN_RATIO = 1.5
MIN_PAPERS = 2
MATCH = 0.4
TOP = 3

# Words that say nothing about a topic on their own; they never make two themes match.
_GENERIC = frozenset([
    "a", "an", "and", "the", "of", "for", "in", "on", "with", "via", "to", "from", "by",
    "other", "model", "models", "modeling", "method", "methods", "learning", "large",
    "language", "data", "approach", "framework", "benchmark", "benchmarks", "task", "tasks",
    "system", "systems", "network", "networks", "training", "based", "using", "new",
])
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class PastTheme:
    title: str
    keywords: tuple[str, ...]
    papers: int


@dataclass(frozen=True)
class PastIssue:
    """What the history keeps of an earlier issue."""

    week: str
    papers: int
    themes: tuple[PastTheme, ...]


@dataclass(frozen=True)
class RisingTheme:
    title: str
    papers: int
    percent: int
    percent_before: int  # average share over the compared issues; 0 = new
    new: bool  # no earlier theme shares enough words with it


@dataclass(frozen=True)
class Rising:
    compared: tuple[str, ...]  # the earlier weeks compared with, oldest first
    themes: tuple[RisingTheme, ...]


def rising_themes(week: str, current: Sequence[PastTheme], history: Iterable[PastIssue],
                  ) -> Rising | None:
    """The up to ``TOP`` themes of ``current`` that grew most; None without earlier issues."""
    earlier = sorted((past for past in history if past.week < week and past.papers),
                     key=lambda past: past.week)[-WINDOW:]
    if not earlier:
        return None
    total = sum(theme.papers for theme in current) or 1
    found = []
    for theme in current:
        if not topic_words(theme):  # e.g. "Other": nothing to recognise it by
            continue
        now = theme.papers / total
        before = sum(_matched_share(theme, past) for past in earlier) / len(earlier)
        if theme.papers >= MIN_PAPERS and now - before >= MIN_GAIN and now >= MIN_RATIO * before:
            found.append((now - before, RisingTheme(
                theme.title, theme.papers, round(100 * now), round(100 * before), before == 0)))
    found.sort(key=lambda item: -item[0])  # stable: ties keep the issue's order
    return Rising(tuple(past.week for past in earlier), tuple(item for _, item in found[:TOP]))


def _matched_share(theme: PastTheme, past: PastIssue) -> float:
    """The share of ``past``'s papers in its theme that matches ``theme`` best, or 0."""
    words = topic_words(theme)
    best, share = 0.0, 0.0
    for candidate in past.themes:
        other = topic_words(candidate)
        if not words or not other:
            continue
        overlap = len(words & other) / min(len(words), len(other))
        if overlap >= MATCH and overlap > best:
            best, share = overlap, candidate.papers / past.papers
    return share


def topic_words(theme: PastTheme) -> frozenset[str]:
    """Lower-case title and keyword words, generic ones dropped, a plural 's' trimmed."""
    words = _WORD.findall(" ".join((theme.title, *theme.keywords)).lower())
    return frozenset(_singular(w) for w in words if w not in _GENERIC and len(w) > 1)


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word
