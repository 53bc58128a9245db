"""What the templates see: an ``Issue`` turned into ready-to-show parts.

Values digest builds itself (links from ingested records, anchors, bars, the
cost) are ``Trusted``; everything else is untrusted text that the renderer
escapes for the target format when a template prints it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..models import Issue, IssueSection, Paper, Stats
from ..weeks import date_range
from .chart import Chart, bar_chart, shorten
from .escape import clean_text, github_slug, safe_url
from .rising import PastIssue, PastTheme, Rising, rising_themes

TLDR_MIN, TLDR_MAX = 3, 5
TLDR_GIST = 180  # characters of a gist in the TL;DR
AUTHORS_SHOWN = 3


class Trusted(str):
    """Text digest made (a URL from a record, an anchor, a bar): printed as is."""


@dataclass(frozen=True)
class PaperView:
    title: str
    url: Trusted | None
    authors: str
    seen: int
    gist: str
    also_listed_as: str = ""  # the other titles a merged paper was listed under, "; "-joined


@dataclass(frozen=True)
class SectionView:
    number: int
    title: str
    anchor: Trusted
    summary: str
    offline_note: bool
    papers: tuple[PaperView, ...]


@dataclass(frozen=True)
class Highlight:
    """One TL;DR bullet: a theme and the gist of one of its papers."""

    theme: str
    anchor: Trusted
    papers: int
    text: str


@dataclass(frozen=True)
class IssueView:
    week: str
    dates: str
    title: str
    intro: str
    empty_reason: str
    tldr: tuple[Highlight, ...]
    sections: tuple[SectionView, ...]
    chart: Chart
    chart_text: tuple[Trusted, ...]
    rising: Rising | None
    stats: Stats
    backend: str
    model: str | None
    cost: Trusted
    fallback_themes: tuple[str, ...]


def issue_view(issue: Issue, history: Sequence[PastIssue] = ()) -> IssueView:
    """Everything a template needs to show ``issue``, rising themes judged against ``history``."""
    dates = date_range(issue.start, issue.end)
    sections = section_views(issue)
    chart = bar_chart([(s.title, len(s.papers)) for s in sections])
    return IssueView(
        week=issue.week, dates=dates, title=f"Research digest, {issue.week} ({dates})",
        intro=issue.intro, empty_reason=empty_reason(issue.stats), tldr=tldr(sections),
        sections=sections, chart=chart, chart_text=tuple(map(Trusted, chart.text_lines())),
        rising=rising_themes(issue.week, past_themes(issue), history), stats=issue.stats,
        backend=issue.backend, model=issue.model, cost=Trusted(format_cost(issue.cost_usd)),
        fallback_themes=issue.fallback_themes)


def section_views(issue: Issue) -> tuple[SectionView, ...]:
    taken: set[str] = set()
    views = []
    for number, section in enumerate(issue.sections, start=1):
        title = section_title(section)
        anchor = github_slug(clean_text(title), taken, fallback=f"theme-{number}")
        views.append(SectionView(
            number=number, title=title, anchor=Trusted(anchor),
            summary=section.summary.summary,
            offline_note=section.summary.offline and issue.backend != "offline",
            papers=tuple(paper_view(p, section.summary.gists.get(p.id, ""))
                         for p in section.papers)))
    return tuple(views)


def section_title(section: IssueSection) -> str:
    return section.summary.title or section.theme.title


def paper_view(paper: Paper, gist: str) -> PaperView:
    url = safe_url(paper.url)
    return PaperView(title=paper.title, url=Trusted(url) if url else None,
                     authors=authors_line(paper.authors), seen=paper.times_seen, gist=gist,
                     also_listed_as="; ".join(paper.also_listed_as))


def authors_line(authors: Sequence[str]) -> str:
    """'A, B and C', or 'A, B, C et al.' when there are more than three."""
    names = [clean_text(name) for name in authors if clean_text(name)]
    if len(names) > AUTHORS_SHOWN:
        return ", ".join(names[:AUTHORS_SHOWN]) + " et al."
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def tldr(sections: Sequence[SectionView]) -> tuple[Highlight, ...]:
    """3–5 bullets across themes: each theme's first (most central) paper, largest themes first;
    with fewer than three themes, their next papers too."""
    picks: list[Highlight] = []
    rank = 0
    while len(picks) < TLDR_MIN:
        row = [section for section in sections if rank < len(section.papers)]
        if not row:
            break
        picks += [_highlight(section, section.papers[rank])
                  for section in row[:TLDR_MAX - len(picks)]]
        rank += 1
    return tuple(picks)


def _highlight(section: SectionView, paper: PaperView) -> Highlight:
    text = shorten(clean_text(paper.gist or paper.title), TLDR_GIST)
    return Highlight(section.title, section.anchor, len(section.papers), text)


def empty_reason(stats: Stats) -> str:
    """Why an issue has no papers, in one sentence."""
    if stats.records_read == 0:
        return ("No papers this week: the listings read held no records, so there is "
                "nothing to report.")
    if stats.already_published and stats.already_published >= stats.papers_unique:
        n = stats.already_published
        return (f"All {n} paper{'s' if n != 1 else ''} in this week's listings already "
                "appeared in earlier issues.")
    return "The listings read for this week held no papers to report."


def past_themes(issue: Issue) -> tuple[PastTheme, ...]:
    """This issue's themes as the history keeps them."""
    return tuple(PastTheme(section_title(s), s.theme.keywords, len(s.papers))
                 for s in issue.sections)


def format_cost(cost_usd: float) -> str:
    if cost_usd <= 0:
        return "$0.00"
    return f"${cost_usd:.4f}" if cost_usd < 0.01 else f"${cost_usd:.2f}"
