"""One call for a run: which of the week's papers go to themes and the LLM, which are only
listed ("Also this week"), why each was chosen, and the counts that account for all of them."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..ingest.limits import IngestLimits
from ..models import Paper
from ._profile import Profile
from ._rank import rank, ranking_report, select

logger = logging.getLogger("digest.relevance")


@dataclass(frozen=True)
class Choice:
    papers: tuple[Paper, ...]  # to themes and the LLM, best first (input order without a profile)
    also: tuple[Paper, ...] = ()  # past max_papers, shown by title and link (empty with no_rest)
    reasons: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # by paper id
    report: Mapping[str, object] = field(default_factory=dict)  # the run report's "relevance"
    errors: tuple[str, ...] = ()  # for the run report's errors: the library's [limits] cuts


def choose(papers: Sequence[Paper], profile: Profile | None, max_papers: int | None = None,
           *, show_rest: bool = True, limits: IngestLimits | None = None) -> Choice:
    """Rank ``papers`` for ``profile`` and cut at ``max_papers``; nothing is lost silently:
    what exclude dropped and what the cut left out are counted in ``report`` and logged,
    what ``limits`` cut from the library is in ``errors``."""
    ranking = rank(papers, profile, limits=limits)
    top, rest = select(ranking, max_papers)
    for excluded in ranking.excluded:
        logger.info("left out %r: its title matches exclude term %r", excluded.paper.title,
                    excluded.term)
    if rest and not show_rest:
        logger.info("%d papers past max_papers %s left out of the issue", len(rest), max_papers)
    return Choice(papers=tuple(r.paper for r in top),
                  also=tuple(r.paper for r in rest) if show_rest else (),
                  reasons={r.paper.id: r.reasons for r in top if r.reasons},
                  report=ranking_report(ranking, top, rest, rest_shown=show_rest),
                  errors=tuple(str(cut) for cut in ranking.cuts))
