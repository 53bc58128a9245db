"""A published issue kept in the state store, so that ``digest email`` mails the issue the
newsletter published (its papers, grouping and summaries) instead of building it again.

``Kept`` is the issue with what its rendering and its mail need besides: the earlier issues its
rising themes were judged against (a week published later, or an earlier one re-run, must not
change them) and whether its LLM stage was degraded (the intro's fallback is not in the issue).
``pack`` turns it into compressed JSON and ``unpack`` gives it back equal, field for field, down
to the paper ids each summary sentence cites, but for the abstracts no rendering reads: a
paper's abstract is kept only among the first ``ABSTRACTS_KEPT`` of its section (an offline
TL;DR line reads the leading ones), and the themes' term profiles, which the rising themes
compare and which were made of every abstract, are kept instead (``Kept.themes``, which the
mail's renderings are given). The abstracts were three quarters of the JSON (48 of 64 MB at
50,000 papers, 1.2 s to write); format 1, which kept them all, is still read. ``unpack`` returns
None for what it cannot read (an issue kept by a later version of digest, a damaged row): the
caller then builds the issue again, as for an issue published before issues were kept.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .models import (
    CitedText,
    Issue,
    IssueSection,
    Paper,
    Sighting,
    Stats,
    SummarySegment,
    Theme,
    ThemeSummary,
)
from .render.rising import PastIssue, PastTheme
from .render.view import past_themes

logger = logging.getLogger("digest.issue_codec")

VERSION = 2
_READ = (1, 2)  # 1: every abstract, no term profiles
# A section's leading papers whose abstracts are kept: ``offline.theme_tldr`` reads the first
# 2 * TLDR_PAPERS (4) for a theme's TL;DR line (tests/test_issue_codec.py holds it to that).
ABSTRACTS_KEPT = 8


@dataclass(frozen=True)
class Kept:
    """A published issue as the store keeps it."""

    issue: Issue
    compared: tuple[PastIssue, ...] = ()  # what its rising themes were judged against
    degraded: bool = False  # part of it (a theme, the intro) was summarised offline
    stopped: str | None = None  # why its LLM calls stopped early, if they did
    # Its themes' term profiles as published (None: made from its papers' abstracts, which
    # an issue kept in format 2 no longer has but for each theme's leading papers).
    themes: tuple[PastTheme, ...] | None = None


def pack(kept: Kept) -> bytes:
    """``kept`` as zlib-compressed JSON, written a section at a time: a 50k issue is 16 MB
    of JSON, and only its compressed part is ever held whole."""
    squeeze = zlib.compressobj(1)  # level 1: fast, and still about 3:1
    packed = [squeeze.compress(piece.encode("ascii")) for piece in _json_pieces(kept)]
    return b"".join([*packed, squeeze.flush()])


def _json_pieces(kept: Kept) -> Iterator[str]:
    """The JSON of the kept issue, in pieces of at most a section."""
    issue = kept.issue
    head = _dumps({"version": VERSION, **_issue(issue),
                   "compared": [_past(past) for past in kept.compared],
                   "themes": _past_themes(kept.themes if kept.themes is not None
                                          else past_themes(issue)),
                   "degraded": kept.degraded, "stopped": kept.stopped})
    yield head[:-1] + ',"sections":['
    for number, section in enumerate(issue.sections):
        yield ("," if number else "") + _dumps(_section(section))
    yield '],"also":['
    for start in range(0, len(issue.also), _PAPERS_A_PIECE):
        papers = issue.also[start:start + _PAPERS_A_PIECE]
        yield ("," if start else "") + _dumps([_paper(paper, abstract=False)
                                               for paper in papers])[1:-1]
    yield "]}"


_PAPERS_A_PIECE = 1000


def _dumps(data: Any) -> str:
    """Compact JSON in ASCII: any text, even a lone surrogate, is kept as a ``\\u`` escape."""
    return json.dumps(data, separators=(",", ":"))


def unpack(blob: bytes) -> Kept | None:
    """The issue ``pack`` kept, or None when it cannot be read."""
    try:
        data = json.loads(zlib.decompress(blob).decode("utf-8"))
        if data.get("version") not in _READ:
            logger.warning("the issue of %s was kept by another version of digest (format %s)",
                           data.get("week"), data.get("version"))
            return None
        themes = _past_themes_from(data["themes"]) if data["version"] > 1 else None
        return Kept(_issue_from(data), tuple(_past_from(item) for item in data["compared"]),
                    degraded=data["degraded"], stopped=data["stopped"], themes=themes)
    except (zlib.error, UnicodeDecodeError, ValueError, KeyError, TypeError,
            AttributeError) as error:
        logger.warning("a published issue kept in the store could not be read (%s)", error)
        return None


def _issue(issue: Issue) -> dict[str, Any]:
    """Everything but the sections and "also this week", which ``_json_pieces`` adds."""
    return {"week": issue.week, "start": issue.start.isoformat(), "end": issue.end.isoformat(),
            "intro": _text(issue.intro),
            "stats": [getattr(issue.stats, name) for name in _STATS],
            "backend": issue.backend, "model": issue.model,
            "fallback_themes": list(issue.fallback_themes), "cost_usd": issue.cost_usd,
            "reasons": {paper: list(why) for paper, why in issue.reasons.items()},
            "excluded": issue.excluded, "left_out": issue.left_out}


def _issue_from(data: dict[str, Any]) -> Issue:
    return Issue(week=data["week"], start=dt.date.fromisoformat(data["start"]),
                 end=dt.date.fromisoformat(data["end"]), intro=_text_from(data["intro"]),
                 sections=tuple(_section_from(item) for item in data["sections"]),
                 stats=Stats(**dict(zip(_STATS, data["stats"], strict=True))),
                 backend=data["backend"], model=data["model"],
                 fallback_themes=tuple(data["fallback_themes"]), cost_usd=data["cost_usd"],
                 reasons={paper: tuple(why) for paper, why in data["reasons"].items()},
                 also=tuple(_paper_from(item) for item in data["also"]),
                 excluded=data["excluded"], left_out=data["left_out"])


_STATS = ("records_read", "papers_unique", "duplicates_merged", "already_published",
          "papers_in_issue", "themes", "batches")


def _section(section: IssueSection) -> dict[str, Any]:
    theme, summary = section.theme, section.summary
    return {"theme": {"title": theme.title, "keywords": list(theme.keywords),
                      "paper_ids": list(theme.paper_ids), "label": theme.label,
                      "top_titles": list(theme.top_titles)},
            "summary": {"summary": _text(summary.summary), "gists": summary.gists,
                        "offline": summary.offline, "title": summary.title,
                        "tldr": summary.tldr, "fallback": summary.fallback},
            "papers": [_paper(paper, abstract=place < ABSTRACTS_KEPT)
                       for place, paper in enumerate(section.papers)]}


def _section_from(data: dict[str, Any]) -> IssueSection:
    theme, summary = data["theme"], data["summary"]
    return IssueSection(
        theme=Theme(title=theme["title"], keywords=tuple(theme["keywords"]),
                    paper_ids=tuple(theme["paper_ids"]), label=theme["label"],
                    top_titles=tuple(theme["top_titles"])),
        summary=ThemeSummary(summary=_text_from(summary["summary"]), gists=summary["gists"],
                             offline=summary["offline"], title=summary["title"],
                             tldr=summary["tldr"], fallback=summary["fallback"]),
        papers=tuple(_paper_from(item) for item in data["papers"]))


def _text(text: str) -> str | list[list[Any]]:
    """Plain text as it is; cited text as its pieces, each with the papers it cites."""
    if isinstance(text, CitedText):
        return [[segment.text, list(segment.paper_ids)] for segment in text.segments]
    return str(text)


def _text_from(data: str | list[list[Any]]) -> str:
    if isinstance(data, str):
        return data
    return CitedText([SummarySegment(text, tuple(ids)) for text, ids in data])


def _past(past: PastIssue) -> list[Any]:
    return [past.week, past.papers, _past_themes(past.themes)]


def _past_from(data: list[Any]) -> PastIssue:
    week, papers, themes = data
    return PastIssue(week, papers, _past_themes_from(themes))


def _past_themes(themes: tuple[PastTheme, ...]) -> list[Any]:
    return [[theme.title, list(theme.keywords), theme.papers, [list(term) for term in theme.terms]]
            for theme in themes]


def _past_themes_from(data: list[Any]) -> tuple[PastTheme, ...]:
    return tuple(
        PastTheme(title, tuple(keywords), count, tuple((term, weight) for term, weight in terms))
        for title, keywords, count, terms in data)


def _paper(paper: Paper, *, abstract: bool) -> list[Any]:
    """A paper as a list in field order: 45,000 of them, so no repeated key names. Its
    abstract is "" unless ``abstract`` (see ``ABSTRACTS_KEPT``)."""
    return [paper.id, paper.title, paper.abstract if abstract else "", paper.url,
            list(paper.authors),
            paper.published.isoformat() if paper.published else None, paper.arxiv_id,
            [[s.source, s.position, s.line] for s in paper.sightings], paper.upvotes,
            list(paper.also_listed_as)]


def _paper_from(data: list[Any]) -> Paper:
    (paper_id, title, abstract, url, authors, published, arxiv_id, sightings, upvotes,
     also_listed_as) = data
    return Paper(id=paper_id, title=title, abstract=abstract, url=url, authors=tuple(authors),
                 published=dt.date.fromisoformat(published) if published else None,
                 arxiv_id=arxiv_id,
                 sightings=tuple(Sighting(source, position, line)
                                 for source, position, line in sightings),
                 upvotes=upvotes, also_listed_as=tuple(also_listed_as))
