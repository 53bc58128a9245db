"""What the templates see: an ``Issue`` turned into ready-to-show parts.

Values digest builds itself (links from ingested records, anchors, bars, the
cost) are ``Trusted``; everything else is untrusted text that the renderer
escapes for the target format when a template prints it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from ..links import paper_link
from ..models import Issue, IssueSection, Paper, Stats
from ..weeks import date_range
from .chart import Chart, bar_chart, shorten
from .escape import github_slug, one_line, safe_url
from .rising import PastIssue, PastTheme, Rising, rising_themes, term_profiles

TLDR_MAX = 5  # themes in the TL;DR, largest first
TLDR_CHARS = 200  # characters of a theme's TL;DR line
CITE_CHARS = 40  # characters of a paper's name in a citation
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
    anchor: Trusted = Trusted("")  # the id of its entry, which citations link to
    ref: str = ""  # "2.3": its section and place, how plain text cites it
    also_listed_as: str = ""  # the other titles a merged paper was listed under, "; "-joined
    reasons: str = ""  # why the reader's profile chose it: "matches: world model · follows: …"


@dataclass(frozen=True)
class Cite:
    """A mention of a paper in a summary: its short name and where its entry is."""

    label: str
    anchor: Trusted
    ref: str

    @property
    def plain(self) -> str:
        """How plain text cites it: "EnvGen [1.3]"."""
        return f"{self.label} [{self.ref}]"


@dataclass(frozen=True)
class SummaryPart:
    """A piece of a theme summary and the papers it cites."""

    text: str
    cites: tuple[Cite, ...]


@dataclass(frozen=True)
class SectionView:
    number: int
    title: str
    anchor: Trusted
    summary: str
    offline_note: bool
    papers: tuple[PaperView, ...]
    summary_parts: tuple[SummaryPart, ...] = ()


@dataclass(frozen=True)
class Highlight:
    """One TL;DR bullet: a theme and what it is about."""

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
    counts: str
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
    also: tuple[PaperView, ...] = ()  # past --max-papers: title, link, other titles
    excluded: int = 0  # papers the reader's profile left out
    left_out: int = 0  # papers past --max-papers not listed


_T = TypeVar("_T")
# The last issue seen, per part of its view: an issue is rendered in up to three formats and
# then recorded in the history, each time with the same sections and term profiles (at 50,000
# papers the profiles alone took 11 s a time).
_LAST_ISSUE: dict[str, tuple[Issue, object]] = {}


def _once_per_issue(part: str, issue: Issue, compute: Callable[[Issue], _T]) -> _T:
    kept = _LAST_ISSUE.get(part)
    if kept is not None and kept[0] is issue:
        return kept[1]  # type: ignore[return-value]
    value = compute(issue)
    _LAST_ISSUE[part] = (issue, value)
    return value


def issue_view(issue: Issue, history: Sequence[PastIssue] = (),
               themes: Sequence[PastTheme] | None = None) -> IssueView:
    """Everything a template needs to show ``issue``, rising themes judged against ``history``
    (``themes``: the issue's own as published, when its papers no longer have every abstract)."""
    view = _once_per_issue("view", issue, _view_without_rising)
    if not history:
        return view
    own = past_themes(issue) if themes is None else themes
    rising = rising_themes(issue.week, own, history)
    if rising is None:
        return view
    return _below_rising(replace(view, rising=rising))


def _below_rising(view: IssueView) -> IssueView:
    """The view with its theme anchors made again below a "## Rising themes" heading, which
    GitHub gives #rising-themes first: a theme of that name gets the next one."""
    anchors = theme_anchors([section.title for section in view.sections],
                            (*_HEADINGS_ABOVE, _RISING))
    if anchors == [section.anchor for section in view.sections]:
        return view
    sections = tuple(replace(section, anchor=Trusted(anchor))
                     for section, anchor in zip(view.sections, anchors, strict=True))
    tldr = tuple(replace(item, anchor=section.anchor)  # one a theme, in the themes' order
                 for item, section in zip(view.tldr, sections, strict=False))
    return replace(view, sections=sections, tldr=tldr)


def _view_without_rising(issue: Issue) -> IssueView:
    dates = date_range(issue.start, issue.end)
    sections = section_views(issue)
    chart = bar_chart([(s.title, len(s.papers)) for s in sections])
    return IssueView(
        week=issue.week, dates=dates, title=f"Research digest, {issue.week} ({dates})",
        intro=own_intro(issue), counts=counts_line(issue),
        empty_reason=empty_reason(issue.stats, issue.excluded), tldr=tldr(issue, sections),
        sections=sections, chart=chart, chart_text=tuple(map(Trusted, chart.text_lines())),
        rising=None, stats=issue.stats,
        backend=issue.backend, model=issue.model, cost=Trusted(format_cost(issue.cost_usd)),
        fallback_themes=issue.fallback_themes,
        also=tuple(paper_view(paper, "") for paper in issue.also), excluded=issue.excluded,
        left_out=issue.left_out)


# The anchors GitHub gives the issue's own headings above the themes ("## TL;DR", "## Contents",
# and "## Rising themes" when it is shown): a theme of the same name gets the next one, as on
# GitHub.
_HEADINGS_ABOVE = ("tldr", "contents")
_RISING = "rising-themes"


def theme_anchors(titles: Sequence[str], above: Sequence[str]) -> list[str]:
    """The anchor of each theme's heading, below headings whose anchors are ``above``."""
    taken = set(above)
    return [github_slug(one_line(title), taken, fallback=f"theme-{number}")
            for number, title in enumerate(titles, start=1)]


def section_views(issue: Issue) -> tuple[SectionView, ...]:
    titles = [section_title(section) for section in issue.sections]
    views = []
    for number, (section, title, anchor) in enumerate(
            zip(issue.sections, titles, theme_anchors(titles, _HEADINGS_ABOVE), strict=True),
            start=1):
        papers = tuple(paper_view(p, section.summary.gists.get(p.id, ""), f"{number}.{place}",
                                  reasons=issue.reasons.get(p.id, ()))
                       for place, p in enumerate(section.papers, start=1))
        views.append(SectionView(
            number=number, title=title, anchor=Trusted(anchor),
            summary=section.summary.summary,
            offline_note=section.summary.fallback,
            papers=papers, summary_parts=summary_parts(section, papers)))
    return tuple(views)


def summary_parts(section: IssueSection, papers: Sequence[PaperView]) -> tuple[SummaryPart, ...]:
    """The theme summary in pieces, each with links to the entries of the papers it cites
    (ids outside the section are dropped: a citation always lands on an entry)."""
    entries = {paper.id: view for paper, view in zip(section.papers, papers, strict=True)}
    return tuple(SummaryPart(segment.text, tuple(
        _cite(paper, entries[paper.id]) for paper in section.papers
        if paper.id in segment.paper_ids and paper.id in entries))
        for segment in section.summary.segments)


def _cite(paper: Paper, entry: PaperView) -> Cite:
    return Cite(shorten(one_line(short_name(paper.title)), CITE_CHARS), entry.anchor, entry.ref)


def short_name(title: str) -> str:
    """What a reader calls a paper: the name before the colon ("EnvGen: Generating…"),
    else its title."""
    head, sep, _ = title.partition(":")
    return head.strip() if sep and head.strip() and len(head.split()) <= 4 else title


def section_title(section: IssueSection) -> str:
    return section.summary.title or section.theme.title


def paper_view(paper: Paper, gist: str, ref: str = "",
               reasons: Sequence[str] = ()) -> PaperView:
    url = safe_url(paper.url) or _link_url(paper)  # every paper has a link
    return PaperView(title=paper.title, url=Trusted(url) if url else None,
                     authors=authors_line(paper.authors), seen=paper.times_seen, gist=gist,
                     anchor=Trusted("paper-" + ref.replace(".", "-")), ref=ref,
                     also_listed_as="; ".join(paper.also_listed_as),
                     reasons=" · ".join(reasons))


def _link_url(paper: Paper) -> str | None:
    """The URL of ``paper_link``: one digest built (an arXiv page, a title search) is
    percent-encoded as built, and ``safe_url`` would give it back as it is (a URL parse and
    a quote a paper: 0.2 s of a 50k issue's listings without links)."""
    link = paper_link(paper)
    return link.url if link.kind != "source" else safe_url(link.url)


def authors_line(authors: Sequence[str]) -> str:
    """'A, B and C', or 'A, B, C et al.' when there are more than three."""
    names = [one_line(name) for name in authors if one_line(name)]
    if len(names) > AUTHORS_SHOWN:
        return ", ".join(names[:AUTHORS_SHOWN]) + " et al."
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def tldr(issue: Issue, sections: Sequence[SectionView]) -> tuple[Highlight, ...]:
    """One bullet per theme, largest first, at most ``TLDR_MAX``: what the theme is about, in
    the backend's words when it wrote a TL;DR line, else from the theme's terms and papers."""
    return tuple(
        Highlight(view.title, view.anchor, len(view.papers),
                  shorten(one_line(section.summary.tldr or theme_gloss(section, view.title)),
                          TLDR_CHARS))
        for section, view in zip(issue.sections[:TLDR_MAX], sections, strict=False))


def theme_gloss(section: IssueSection, title: str) -> str:
    """What an offline theme is about: its own phrases and the range of its leading papers
    (``offline.theme_tldr``)."""
    from ..offline import theme_tldr

    return theme_tldr(title, section.theme.keywords, section.papers)


def counts_line(issue: Issue) -> str:
    """The week in numbers, once: "179 papers in 8 themes from 226 records; 41 in more than
    one listing"."""
    papers = sum(len(s.papers) for s in issue.sections)
    repeated = sum(1 for s in issue.sections for p in s.papers if p.times_seen > 1)
    line = (f"{papers} paper{'s' if papers != 1 else ''} in {len(issue.sections)} "
            f"theme{'s' if len(issue.sections) != 1 else ''}")
    line += f"; {repeated} in more than one listing" if repeated else ""
    also = len(issue.also)
    return line + (f"; {also} more under Also this week." if also else ".")


def own_intro(issue: Issue) -> str:
    """The intro when a backend wrote one; nothing when it is the pipeline's own sentence of
    counts, which ``counts_line`` and the contents say already."""
    from ..pipeline import compose_intro  # the stage that writes it; imported late (a cycle)

    return "" if issue.intro == compose_intro(issue.sections) else issue.intro


def empty_reason(stats: Stats, excluded: int = 0) -> str:
    """Why an issue has no papers, in one sentence (``excluded``: papers the reader's profile
    left out)."""
    if stats.records_read == 0:
        return ("No papers this week: the listings read held no records of this week, so "
                "there is nothing to report.")
    published = stats.already_published
    if excluded and published:
        listed = plural(stats.papers_unique, "paper")
        return (f"Of the {listed} in this week's listings, {published} already appeared in "
                f"earlier issues and the reader's profile left out the other {excluded} (its "
                "exclude terms).")
    if excluded:
        return (f"The reader's profile left out all {plural(excluded, 'paper')} in this week's "
                "listings (its exclude terms).")
    if published and published >= stats.papers_unique:
        return (f"All {plural(published, 'paper')} in this week's listings already appeared in "
                "earlier issues.")
    return "The listings read for this week held no papers to report."


def plural(count: int, noun: str) -> str:
    """'1 paper', '2 papers'."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def past_themes(issue: Issue) -> tuple[PastTheme, ...]:
    """This issue's themes as the history keeps them, with what their papers are about."""
    return _once_per_issue("past themes", issue, _past_themes)


def _past_themes(issue: Issue) -> tuple[PastTheme, ...]:
    profiles = term_profiles([s.papers for s in issue.sections])
    return tuple(PastTheme(section_title(s), s.theme.keywords, len(s.papers), terms)
                 for s, terms in zip(issue.sections, profiles, strict=True))


def format_cost(cost_usd: float) -> str:
    if cost_usd <= 0:
        return "$0.00"
    return f"${cost_usd:.4f}" if cost_usd < 0.01 else f"${cost_usd:.2f}"
