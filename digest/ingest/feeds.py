"""RSS and Atom feeds, read with feedparser: arXiv API results and arXiv listing feeds.

arXiv's feeds put the id in odd places, all handled here: the entry id
(``http://arxiv.org/abs/2401.01234v2``, ``oai:arXiv.org:2411.00001v1``), the
description's prefix ("arXiv:2411.00001v1 Announce Type: new Abstract: ..."), and
the old RSS title suffix ("Title. (arXiv:2101.00001v1 [cs.AI])"). HTML in a
summary is reduced to its text. A feed with XML errors keeps the entries
feedparser could read, with a warning; one with no entries at all is an error. An arXiv API
answer is one page of its query's results (``max_results``, 10 by default): when the query
matched more (``opensearch:totalResults``), a warning says so; no other page is fetched.
"""

from __future__ import annotations

import datetime as dt
import html
import io
import re
import time
import xml.sax
from collections.abc import Mapping
from typing import Any

from ..errors import SourceError
from ..models import Record, Sighting
from ..normalize import arxiv_abs_url, clean_text, find_arxiv_id
from .base import Parsed, describe
from .plausible import NotAListing

_TAG = re.compile(r"<[^>]{0,2000}>")
_ANNOUNCE = re.compile(r"^\s*(?P<id>arXiv:\S+)\s+Announce Type:\s*[\w-]+\s*(?:Abstract:\s*)?",
                       re.IGNORECASE)
_TITLE_SUFFIX = re.compile(r"\s*\((?P<id>arXiv:[^\s)]+)(?:\s+\[[^\]]*\])?(?:\s+\w+)?\)\s*$",
                           re.IGNORECASE)


def parse_feed(text: str, source: str) -> Parsed:
    import feedparser  # loaded when a feed is read, not when digest starts

    feed = feedparser.parse(io.BytesIO(text.encode("utf-8")),
                            response_headers={"content-type": "application/xml; charset=utf-8"},
                            resolve_relative_uris=False, sanitize_html=True)
    parsed = Parsed(fmt=feed.get("version") or "feed")
    problem = _xml_problem(feed)
    if not feed.entries:
        if problem:
            raise SourceError(source, f"not a well-formed feed ({problem[0]})", line=problem[1],
                              fix="the file looks broken or truncated: download it again")
        if not feed.get("version"):
            raise NotAListing(source, "XML, but not an RSS or Atom feed",
                              fix="pass an arXiv API or listing feed, or set the format")
        parsed.warnings.append(describe(source, "the feed holds no entries"))
        return parsed
    for position, entry in enumerate(feed.entries, start=1):
        record = _record(entry, source, position)
        if record is None:
            parsed.warnings.append(describe(source, f"entry {position} has no title; skipped"))
        else:
            parsed.records.append(record)
    if problem and not parsed.records:
        raise SourceError(source, f"not a well-formed feed ({problem[0]})", line=problem[1],
                          fix="the file looks broken or truncated: download it again")
    if problem:
        parsed.warnings.append(describe(source, f"XML error ({problem[0]}); kept the "
                                        f"{len(parsed.records)} entries read before it",
                                        line=problem[1], fix="download the feed again"))
    parsed.warnings += _one_page_of_more(feed.feed, len(feed.entries), source)
    return parsed


def _one_page_of_more(head: Mapping[str, Any], held: int, source: str) -> list[str]:
    """A warning when an arXiv API answer holds fewer entries than its query matched."""
    total = _count(head.get("opensearch_totalresults"))
    if total is None or total <= held:
        return []
    start = _count(head.get("opensearch_startindex")) or 0
    page = f" (results {start + 1:,} to {start + held:,})" if start else ""
    return [describe(source, f"the query matched {total:,} papers and this answer holds "
                     f"{held:,}{page}", fix="raise max_results in the query URL, or read the "
                     "rest page by page with start=; arXiv's API gives at most 2,000 a request")]


def _count(value: object) -> int | None:
    text = str(value or "").strip()
    return int(text) if text.isascii() and text.isdigit() else None


def _xml_problem(feed: Mapping[str, Any]) -> tuple[str, int | None] | None:
    """A real XML error (not feedparser's notes about encodings or content types)."""
    error = feed.get("bozo_exception")
    if not feed.get("bozo") or not isinstance(error, xml.sax.SAXException):
        return None
    line = error.getLineNumber() if isinstance(error, xml.sax.SAXParseException) else None
    return str(error.getMessage()), line


def _record(entry: Mapping[str, Any], source: str, position: int) -> Record | None:
    title_text = _plain(entry.get("title", ""), entry.get("title_detail"))
    title_id = _TITLE_SUFFIX.search(title_text)
    title = clean_text(_TITLE_SUFFIX.sub("", title_text)).removesuffix(".") if title_id \
        else clean_text(title_text)
    if not title:
        return None
    summary = _plain(entry.get("summary", ""), entry.get("summary_detail"))
    announce = _ANNOUNCE.match(summary)
    arxiv = _arxiv_id(entry, announce["id"] if announce else None,
                      title_id["id"] if title_id else None)
    link = entry.get("link", "")
    return Record(
        title=title,
        abstract=clean_text(_ANNOUNCE.sub("", summary)),
        sighting=Sighting(source, position, None),
        arxiv_id=arxiv[0] if arxiv else None,
        url=arxiv_abs_url(*arxiv) if arxiv else (link if link.startswith(("https://",
                                                                         "http://")) else None),
        authors=_authors(entry),
        published=_date(entry.get("published_parsed") or entry.get("updated_parsed")),
    )


def _arxiv_id(entry: Mapping[str, Any], *hints: str | None) -> tuple[str, str] | None:
    candidates = [*hints, entry.get("id"), entry.get("link"), entry.get("arxiv_doi")]
    return next((found for c in candidates if (found := find_arxiv_id(c))), None)


def _authors(entry: Mapping[str, Any]) -> tuple[str, ...]:
    names = [_plain(a.get("name", ""), None) for a in entry.get("authors", []) if a.get("name")]
    if len(names) == 1 and "," in names[0]:  # arXiv RSS: dc:creator "A. One, B. Two"
        names = names[0].split(",")
    return tuple(name for name in (clean_text(n) for n in names) if name)


def _plain(value: str, detail: Mapping[str, Any] | None) -> str:
    """Text of a feed field: HTML tags dropped and entities decoded when it is HTML."""
    if detail is None or "html" in str(detail.get("type", "")):
        value = html.unescape(_TAG.sub(" ", value))
    return value


def _date(parsed: time.struct_time | None) -> dt.date | None:
    return dt.date(parsed.tm_year, parsed.tm_mon, parsed.tm_mday) if parsed else None
