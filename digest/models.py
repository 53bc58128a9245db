"""The data that flows between the stages.

``Record`` (one listing entry, as ingested) → ``Paper`` (one paper, after dedup)
→ ``Theme`` (papers grouped) → ``Batch`` (a theme's papers cut to a token budget)
→ ``ThemeSummary`` (prose + one gist per paper) → ``Issue`` (what is rendered).
All are immutable; stages build new values instead of editing old ones.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Sighting:
    """Where a record was read: the source (path or URL) and its position in it."""

    source: str
    position: int
    line: int | None = None


@dataclass(frozen=True)
class Record:
    """One entry of one listing, normalized but not yet deduplicated."""

    title: str
    abstract: str
    sighting: Sighting
    arxiv_id: str | None = None
    url: str | None = None
    authors: tuple[str, ...] = ()
    published: dt.date | None = None
    upvotes: int | None = None  # Hugging Face upvotes, when the source carries them


@dataclass(frozen=True)
class Paper:
    """One paper, however many listings carried it.

    ``id`` is the arXiv id when known, else ``t:`` + a hash of the normalized title.
    """

    id: str
    title: str
    abstract: str
    url: str | None = None
    authors: tuple[str, ...] = ()
    published: dt.date | None = None
    arxiv_id: str | None = None
    sightings: tuple[Sighting, ...] = ()
    upvotes: int | None = None  # Hugging Face upvotes (the highest a source reported)
    also_listed_as: tuple[str, ...] = ()  # other titles its merged listings gave it

    @property
    def times_seen(self) -> int:
        """How many distinct listings (sources) carried this paper."""
        return len({s.source for s in self.sightings}) or 1


@dataclass(frozen=True)
class Theme:
    """A group of papers with a title, its keywords, and papers in reading order.

    ``label`` is the offline term label (the title unless something renamed the theme) and
    ``top_titles`` the titles of its most central papers: what a namer needs to write a title.
    """

    title: str
    keywords: tuple[str, ...]
    paper_ids: tuple[str, ...]
    label: str = ""
    top_titles: tuple[str, ...] = ()


@dataclass(frozen=True)
class Batch:
    """Part of one theme's papers that fits the token budget of one LLM call."""

    theme_index: int
    index: int
    paper_ids: tuple[str, ...]
    tokens: int


@dataclass(frozen=True)
class SummarySegment:
    """A piece of a theme summary (one sentence, say) and the papers it comes from."""

    text: str
    paper_ids: tuple[str, ...] = ()


class CitedText(str):
    """Prose that knows which papers each of its pieces comes from.

    It is the pieces joined by spaces, so wherever a ``str`` goes it reads as before;
    ``segments`` keeps the pieces with their paper ids, for the renderer to cite.
    """

    segments: tuple[SummarySegment, ...]

    def __new__(cls, segments: tuple[SummarySegment, ...] | list[SummarySegment]) -> CitedText:
        text = super().__new__(cls, " ".join(s.text for s in segments))
        text.segments = tuple(segments)
        return text


@dataclass(frozen=True)
class ThemeSummary:
    """What the summarize stage says about one theme.

    ``offline`` is True when the text came from the offline summarizer, either
    because that is the backend or because the LLM's answer could not be used;
    ``fallback`` only in the second case (the issue says "summarised offline").
    ``summary`` may be a ``CitedText`` (the offline summarizer's is, and an LLM's whose
    sentences cite paper ids). ``tldr`` is one line on what the theme is about, when a backend
    wrote one; without it the renderer composes one from the theme's terms and papers.
    """

    summary: str
    gists: dict[str, str]
    offline: bool = False
    title: str | None = None
    tldr: str | None = None
    fallback: bool = False

    @property
    def segments(self) -> tuple[SummarySegment, ...]:
        """The summary in pieces with the papers each cites (one uncited piece for plain text)."""
        if isinstance(self.summary, CitedText):
            return self.summary.segments
        return (SummarySegment(self.summary),) if self.summary else ()


@dataclass(frozen=True)
class IssueSection:
    theme: Theme
    summary: ThemeSummary
    papers: tuple[Paper, ...]


@dataclass(frozen=True)
class Stats:
    records_read: int = 0
    papers_unique: int = 0
    duplicates_merged: int = 0
    already_published: int = 0
    papers_in_issue: int = 0
    themes: int = 0
    batches: int = 0


@dataclass(frozen=True)
class Issue:
    """One weekly issue, ready to render."""

    week: str
    start: dt.date
    end: dt.date
    intro: str
    sections: tuple[IssueSection, ...]
    stats: Stats
    backend: str
    model: str | None
    fallback_themes: tuple[str, ...] = field(default=())
    cost_usd: float = 0.0  # what its LLM answers cost when bought (LLMStats.answers_cost_usd)
    # Relevance (digest.relevance): why each paper was chosen, by paper id ("matches: world
    # model"), and the papers past --max-papers, listed by title, link and other titles.
    reasons: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    also: tuple[Paper, ...] = ()
    excluded: int = 0  # papers the reader's profile left out (its exclude terms)
    left_out: int = 0  # papers past --max-papers not listed (--no-rest)

    @property
    def carried(self) -> tuple[Paper, ...]:
        """Every paper the issue lists, its sections' and "Also this week"'s: each counts as
        published, so no later issue repeats it."""
        return (*(paper for section in self.sections for paper in section.papers), *self.also)
