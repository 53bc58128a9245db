"""Rising themes: which of this week's themes grew compared with the last few issues.

Theme titles are made fresh each week (from TF-IDF keywords or by the LLM), so a
theme is matched to an earlier one by what its papers say, not by its label: each
theme keeps a *term profile* (``term_profile``: the words of its papers' titles and
abstracts, weighted by how many of its papers use them and how few of the issue's
other papers do; the top ``PROFILE_TERMS``, unit length), and two themes of
different weeks are "the same" when their profiles' cosine is at least ``MATCH``.
An earlier issue's share of a theme is the share of all its themes that match.

A theme *rises* when its share of the issue's papers grew by at least
``MIN_GAIN`` (absolute) and by half (relative) against the larger of its share in
the last issue and its average share over the last ``WINDOW`` issues, so a theme
that had a third of last week's papers is never "up from 10%". It is *new* only
when no theme of any compared issue matches it.
History comes from ``outputs/.history.json`` (see ``digest.outputs``), which keeps
each theme's profile: without an earlier issue with profiles there is nothing to
compare with, and the section is left out (issues recorded before profiles were
kept are not compared: their labels are no evidence).
"""

from __future__ import annotations

import heapq
import logging
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain

from ..models import Paper
from ..normalize import singular
from ..offline import content_term_set

WINDOW = 4
MIN_GAIN = 0.05
MIN_RATIO = 1.5
MIN_PAPERS = 2
MATCH = 0.15  # profile cosine; see tests/test_rising.py for its calibration
TOP = 3
PROFILE_TERMS = 60

Profile = tuple[tuple[str, float], ...]  # (term, weight), heaviest first, unit length

# Words that say nothing about a topic on their own: a theme made only of them ("Other")
# is never judged.
_GENERIC = frozenset([
    "a", "an", "and", "the", "of", "for", "in", "on", "with", "via", "to", "from", "by",
    "other", "model", "models", "modeling", "method", "methods", "learning", "large",
    "language", "data", "approach", "framework", "benchmark", "benchmarks", "task", "tasks",
    "system", "systems", "network", "networks", "training", "based", "using", "new",
])
_WORD = re.compile(r"[a-z0-9]+")
log = logging.getLogger("digest.render")


@dataclass(frozen=True)
class PastTheme:
    title: str
    keywords: tuple[str, ...]
    papers: int
    terms: Profile = ()  # what its papers are about (``term_profile``)


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
    percent_before: int  # the share it is compared with (see the module); 0 = new
    new: bool  # no theme of a compared issue is about the same


@dataclass(frozen=True)
class Rising:
    compared: tuple[str, ...]  # the earlier weeks compared with, oldest first
    themes: tuple[RisingTheme, ...]


def term_profiles(groups: Sequence[Sequence[Paper]]) -> list[Profile]:
    """One profile per group of papers (an issue's themes): a term weighs the share of the
    group's papers that use it times its rarity in the whole issue (log IDF; a term every
    paper uses weighs nothing). Each paper's terms are counted and dropped: only the groups'
    counts are kept (the term sets of 45,000 papers were ~100 MB)."""
    counts = _group_counts(groups)
    df: Counter[str] = Counter()
    for group_counts in counts:
        df.update(group_counts)
    total = sum(len(group) for group in groups)
    return [_profile(group_counts, len(group), df, total)
            for group_counts, group in zip(counts, groups, strict=True)]


# (group, term) counts held at most, give or take a slice: the 50k benchmark in 12 themes holds
# ~240,000, while made-up words would hold one a word (~100 bytes each).
PROFILED = 2_000_000
_SLICE = 256  # papers counted between looks at the bound
_FOOTHOLD = 10_000  # counts any group may still start once the bound is reached


def _group_counts(groups: Sequence[Sequence[Paper]]) -> list[Counter[str]]:
    """Each group's count of papers per term. Past ``PROFILED`` counts held, a paper adds
    only terms its group already counts (once it has ``_FOOTHOLD``): made-up text cannot
    grow them without end, and the real listings we measure stay far below the bound."""
    counts: list[Counter[str]] = []
    held, bounded = 0, False
    for group in groups:
        counted: Counter[str] = Counter()
        for start in range(0, len(group), _SLICE):
            papers = group[start:start + _SLICE]
            if not bounded and held + len(counted) > PROFILED:
                bounded = True
                log.warning("rising themes: the themes hold more than %s term counts (generated "
                            "or garbled text?); later papers add only terms their theme counts "
                            "already", f"{PROFILED:,}")
            if not bounded:
                counted.update(chain.from_iterable(map(_paper_terms, papers)))
                continue
            for terms in map(_paper_terms, papers):
                counted.update(terms if len(counted) < _FOOTHOLD else terms & counted.keys())
        counts.append(counted)
        held += len(counted)
    return counts


def _paper_terms(paper: Paper) -> set[str]:
    return content_term_set(f"{paper.title} {paper.abstract}")


def _profile(counts: Counter[str], size: int, df: Counter[str], total: int) -> Profile:
    weights = {term: count / size * math.log((1 + total) / (1 + df[term]))
               for term, count in counts.items()}
    top = heaviest(weights, PROFILE_TERMS)
    norm = math.sqrt(sum(w * w for _, w in top)) or 1.0
    return tuple((term, round(weight / norm, 4)) for term, weight in top)


def heaviest(weights: dict[str, float], n: int) -> list[tuple[str, float]]:
    """The ``n`` heaviest positive (term, weight) pairs, heaviest first, a tie by term. Only
    the terms at least as heavy as the n-th heaviest weight are sorted: a theme of 45,000
    papers has ~60,000 terms."""
    floor = min(heapq.nlargest(n, weights.values()), default=0.0)
    candidates = [(t, w) for t, w in weights.items() if w >= floor and w > 0]
    return sorted(candidates, key=lambda tw: (-tw[1], tw[0]))[:n]


def similarity(a: Profile, b: Profile) -> float:
    """Cosine of two profiles (each of unit length)."""
    weights = dict(a)
    return sum(weight * weights.get(term, 0.0) for term, weight in b)


def rising_themes(week: str, current: Sequence[PastTheme], history: Iterable[PastIssue],
                  ) -> Rising | None:
    """The up to ``TOP`` themes of ``current`` that grew most; None without earlier issues."""
    earlier = compared_issues(week, history)
    if not earlier:
        return None
    total = sum(theme.papers for theme in current) or 1
    found = []
    for theme in current:
        if not topic_words(theme) or not theme.terms:  # "Other": nothing to recognise it by
            continue
        now = theme.papers / total
        shares = [matched_share(theme, past) for past in earlier]
        before = max(shares[-1], sum(shares) / len(shares))
        if theme.papers >= MIN_PAPERS and now - before >= MIN_GAIN and now >= MIN_RATIO * before:
            new = not any(_matches(theme, past) for past in earlier)
            found.append((now - before, RisingTheme(
                theme.title, theme.papers, round(100 * now), round(100 * before), new)))
    found.sort(key=lambda item: -item[0])  # stable: ties keep the issue's order
    return Rising(tuple(past.week for past in earlier), tuple(item for _, item in found[:TOP]))


def compared_issues(week: str, history: Iterable[PastIssue]) -> list[PastIssue]:
    """The earlier issues ``week``'s rising themes are judged against, oldest first: the last
    ``WINDOW`` before it that kept term profiles."""
    return sorted((past for past in history if past.week < week and past.papers
                   and any(theme.terms for theme in past.themes)),
                  key=lambda past: past.week)[-WINDOW:]


def matched_share(theme: PastTheme, past: PastIssue) -> float:
    """The share of ``past``'s papers in the themes about the same as ``theme``."""
    return min(1.0, sum(other.papers for other in _matches(theme, past)) / past.papers)


def _matches(theme: PastTheme, past: PastIssue) -> list[PastTheme]:
    return [other for other in past.themes if similarity(theme.terms, other.terms) >= MATCH]


def topic_words(theme: PastTheme) -> frozenset[str]:
    """Lower-case title and keyword words, generic ones dropped, a plural 's' trimmed."""
    words = _WORD.findall(" ".join((theme.title, *theme.keywords)).lower())
    return frozenset(singular(w) for w in words if w not in _GENERIC and len(w) > 1)
