"""Rank the week's papers for one reader, and cut the ranking at ``max_papers``.

A paper's score is the sum of
- its similarity to the library: its percentile in the week (0 … 1), learned or centroid;
- ``KEYWORD_WEIGHT`` for each profile keyword its title or abstract matches;
- ``AUTHOR_WEIGHT`` when an author the reader follows wrote it;
- the source signals, at most ``SIGNAL_WEIGHT`` each: how many listings carried it, and its
  Hugging Face upvotes, both relative to the week's highest.
So a keyword or a followed author lifts a paper above the papers the library alone favours,
and the signals mostly order papers the profile says nothing about. Papers whose title
matches an ``exclude`` term are dropped and returned in ``Ranking.excluded``. Equal scores
keep the input order; without a profile the ranking is the input order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import ConfigError, SourceError
from ..ingest.limits import IngestLimits
from ..models import Paper, Record
from ..normalize import title_key
from ._library import load_library
from ._match import NameKey, Phrase, fold, name_key, phrases
from ._profile import Profile
from ._similarity import METHODS, Method, Similarity, library_similarity

__all__ = ["Excluded", "Ranked", "Ranking", "rank", "ranking_report", "select"]

KEYWORD_WEIGHT = 1.0
AUTHOR_WEIGHT = 1.0
SIGNAL_WEIGHT = 0.1
LIKE_PERCENTILE = 0.75  # "like: …" is said of the top quarter of the week by similarity
# … and only when a library paper shares terms with it: on the seed pages the nearest library
# paper's cosine is 0.02 / 0.03 / 0.05 at the 10th / 50th / 90th percentile of the week.
LIKE_MIN_COSINE = 0.02
MAX_REASON_TITLE = 80


@dataclass(frozen=True)
class Ranked:
    """One paper, its score and why (e.g. "matches: world model", "like: <library title>")."""

    paper: Paper
    score: float = 0.0
    reasons: tuple[str, ...] = ()
    similarity: float | None = None  # percentile in the week, when there is a library


@dataclass(frozen=True)
class Excluded:
    paper: Paper
    term: str  # the profile's exclude term its title matched


@dataclass(frozen=True)
class Ranking:
    ranked: tuple[Ranked, ...]
    excluded: tuple[Excluded, ...] = ()
    method: str = "none"  # "none" (no profile), "profile" (no library), "learned", "centroid"
    cuts: tuple[SourceError, ...] = ()  # library files past a [limits] record cap


def rank(papers: Sequence[Paper], profile: Profile | None, *,
         library: Sequence[Record | Paper] | None = None,
         method: Method = "learned", limits: IngestLimits | None = None) -> Ranking:
    """Rank ``papers`` for ``profile``; the library is read from the profile's files unless
    given (a library file that cannot be read raises ``SourceError``), within the record
    caps of ``limits``. Deterministic: the same input gives the same order."""
    if method not in METHODS:
        raise ConfigError(f"ranking method {method!r}: use one of {', '.join(METHODS)}")
    cuts: tuple[SourceError, ...] = ()
    if library is None:
        read = load_library(profile.library, limits) if profile and profile.library else None
        library, cuts = (read.records, read.cuts) if read else ((), ())
    if not profile and not library:
        return Ranking(tuple(Ranked(p) for p in papers))
    profile = profile or Profile()
    kept, excluded = _drop_excluded(papers, profile)
    similarity = library_similarity(kept, library, method) if library and kept else None
    context = _Context.of(kept, profile)
    scored = [_score(i, paper, context, library, similarity) for i, paper in enumerate(kept)]
    order = sorted(range(len(kept)), key=lambda i: (-scored[i].score, i))
    return Ranking(tuple(scored[i] for i in order), tuple(excluded),
                   similarity.method if similarity else "profile", cuts)


def select(ranking: Ranking | Sequence[Ranked], max_papers: int | None
           ) -> tuple[list[Ranked], list[Ranked]]:
    """The top ``max_papers`` (all when None) and the rest, both in ranked order."""
    ranked = list(ranking.ranked if isinstance(ranking, Ranking) else ranking)
    if max_papers is None:
        return ranked, []
    if isinstance(max_papers, bool) or not isinstance(max_papers, int) or max_papers < 1:
        raise ConfigError(f"max_papers must be a whole number of at least 1, not {max_papers!r}")
    return ranked[:max_papers], ranked[max_papers:]


def ranking_report(ranking: Ranking, top: Sequence[Ranked], rest: Sequence[Ranked],
                   *, rest_shown: bool = True) -> dict[str, object]:
    """The run report's "relevance" block: every paper of the week accounted for."""
    return {
        "method": ranking.method,
        "papers_ranked": len(ranking.ranked),
        "papers_selected": len(top),
        "papers_also": len(rest) if rest_shown else 0,
        "papers_left_out": 0 if rest_shown else len(rest),
        "papers_excluded": len(ranking.excluded),
        "excluded": [{"id": e.paper.id, "title": e.paper.title, "term": e.term}
                     for e in ranking.excluded],
    }


def _drop_excluded(papers: Sequence[Paper], profile: Profile
                   ) -> tuple[list[Paper], list[Excluded]]:
    patterns = phrases(profile.exclude)
    kept, excluded = [], []
    for paper in papers:
        title = fold(paper.title)
        hit = next((p.term for p in patterns if p.found_in(title)), None)
        if hit is None:
            kept.append(paper)
        else:
            excluded.append(Excluded(paper, hit))
    return kept, excluded


@dataclass(frozen=True)
class _Context:
    """What scoring one paper needs to know about the week and the profile, made once."""

    keywords: tuple[Phrase, ...]
    follows: tuple[tuple[str, NameKey], ...]
    most_seen: int
    most_upvotes: int

    @classmethod
    def of(cls, week: Sequence[Paper], profile: Profile) -> _Context:
        return cls(tuple(phrases(profile.keywords)),
                   tuple((name, name_key(name)) for name in profile.authors),
                   max((p.times_seen for p in week), default=1),
                   max((max(p.upvotes or 0, 0) for p in week), default=0))

    def signals(self, paper: Paper) -> float:
        """How many listings carried it and its upvotes, each 0 … 1 against the week's most."""
        seen = (paper.times_seen - 1) / (self.most_seen - 1) if self.most_seen > 1 else 0.0
        votes = max(paper.upvotes or 0, 0)
        upvoted = math.log1p(votes) / math.log1p(self.most_upvotes) if self.most_upvotes else 0.0
        return seen + upvoted

    def followed(self, authors: Sequence[str]) -> list[str]:
        keys = [name_key(a) for a in authors]
        return [name for name, key in self.follows if any(key.same_person(k) for k in keys)]


def _score(i: int, paper: Paper, context: _Context, library: Sequence[Record | Paper],
           similarity: Similarity | None) -> Ranked:
    text = fold(f"{paper.title} {paper.abstract}")
    keywords = [p.term for p in context.keywords if p.found_in(text)]
    followed = context.followed(paper.authors)
    score = KEYWORD_WEIGHT * len(keywords) + AUTHOR_WEIGHT * bool(followed)
    score += SIGNAL_WEIGHT * context.signals(paper)
    reasons = [f"matches: {', '.join(keywords)}"] if keywords else []
    reasons += [f"follows: {', '.join(followed)}"] if followed else []
    if similarity is None:
        return Ranked(paper, score, tuple(reasons))
    score += similarity.percentile[i]
    reasons += _like_reason(i, paper, library, similarity)
    return Ranked(paper, score, tuple(reasons), similarity.percentile[i])


def _like_reason(i: int, paper: Paper, library: Sequence[Record | Paper],
                 similarity: Similarity) -> list[str]:
    nearest = library[similarity.nearest[i]]
    if title_key(nearest.title) == title_key(paper.title):
        return ["in your library"]
    if similarity.percentile[i] < LIKE_PERCENTILE or \
            similarity.nearest_cosine[i] < LIKE_MIN_COSINE:
        return []
    title = nearest.title
    if len(title) > MAX_REASON_TITLE:
        title = title[: MAX_REASON_TITLE - 1].rstrip() + "…"
    return [f"like: {title}"]
