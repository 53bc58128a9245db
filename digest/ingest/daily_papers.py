"""Hugging Face Daily Papers pages, as copied from the browser.

A page is paragraphs separated by blank lines: a few header lines ("new",
"Subscribe", ...), a date line such as ``Mar 14``, then title / abstract pairs.
Tolerated: other or extra header lines, CRLF, a BOM, trailing spaces, upvote
counts and "Submitted by" lines between entries, a title without an abstract
(kept, with a warning), more date lines further down (a multi-day page), and
date lines in other forms ("March 14, 2025", "14 Mar", "2025-03-14", "Fri, Mar 14").

The page shows no year. The published date takes the year from the date line if it
has one, else from a date or year in the file name (``daily_papers_2026-11-16.txt``);
otherwise it is left empty rather than guessed.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePath

from ..errors import SourceError
from ..models import Record, Sighting
from ..normalize import clean_text
from .base import Parsed, describe
from .plausible import not_a_listing, title_problem

logger = logging.getLogger("digest.ingest")

_MONTH = r"(?P<mon{n}>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_DATE_LINE = re.compile(
    r"^(?:daily papers\s*[-–—:|·]?\s*)?(?:(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?,?\s+)?(?:"
    + _MONTH.format(n=1) + r"\s+(?P<day1>\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(?P<year1>\d{4}))?"
    r"|(?P<day2>\d{1,2})(?:st|nd|rd|th)?\s+" + _MONTH.format(n=2) + r"(?:,?\s+(?P<year2>\d{4}))?"
    r"|(?P<iso>\d{4}[-/]\d{1,2}[-/]\d{1,2}))$",
    re.IGNORECASE,
)
_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
# Lines only a Daily Papers page has: with a date line, they make a page's structure.
_PAGE_HEADERS = {"daily papers", "get trending papers in your email inbox!",
                 "byak and the research community"}
_HEADER_LINES = _PAGE_HEADERS | {"new", "subscribe", "hugging face", "papers", "trending",
                                 "search", "previous", "next", "load more", "show more",
                                 "see all"}
# Lines the page interleaves with entries: upvote counts, "Submitted by", author counts.
_NOISE = re.compile(r"^(?:[▲△⬆↑·•\-\s]*\d[\d,.]*k?|submitted by \S.{0,60}|·?\s*\d+ authors?"
                    r"|upvote\s*\d*|\d+\s*comments?)$", re.IGNORECASE)
_SENTENCE_BREAK = re.compile(r"[a-z)\]%\d]{2}[.!?] [A-Z(]")
# Where a listing mail's own footer begins, in the wording mail services use (Hugging Face,
# Mailchimp, Substack): the mail speaking to its reader, never a paper's words about mail.
_MAIL_FOOTER = re.compile(
    r"\byou(?:'re| are| were)? receiv(?:ing|ed) (?:this|these) (?:e-?mails?|messages?"
    r"|newsletters?|digests?)\b|\bto stop receiving (?:this|these) (?:e-?mails?|messages"
    r"|newsletters?)\b|\bunsubscribe (?:here|now|at any time|from this list)\b|^unsubscribe\.?$"
    r"|^(?:copyright )?© ?\d{4}\b|\ball rights reserved\b|\bour mailing address is\b"
    r"|^thanks for reading\b|\bupdate your preferences or unsubscribe\b", re.IGNORECASE)
FOOTER_PARAGRAPHS = 8  # the last paragraphs of a page where a footer may begin
_NAME_DATE = re.compile(r"(?<!\d)(?P<year>(?:19|20)\d{2})(?:[-_.]?(?P<month>\d{2})[-_.]?"
                        r"(?P<day>\d{2}))?(?!\d)")
_HEAD_PARAGRAPHS = 25


def looks_like_daily_papers(text: str) -> bool:
    """A date line or a known header line near the top, or a title followed by an abstract."""
    head = [p for p, _ in _paragraphs(text[:6000])][:_HEAD_PARAGRAPHS]
    if any(_DATE_LINE.match(p) or p.casefold() in _HEADER_LINES for p in head):
        return True
    return _first_pair(head) is not None


def parse_daily_papers(text: str, source: str, *, date_hint: dt.date | None = None) -> Parsed:
    """Parse one page into records, in page order; ``date_hint`` (such as a mail's date)
    stands in for a date in the file name when the date line has no year.

    A page with its structure (a date line or the page's own header lines) keeps what
    reads as entries; text without it must be nothing but title / abstract pairs, at
    least two, or it is not a listing (a README, meeting notes, a personal mail)."""
    paragraphs = list(_paragraphs(text))
    start = _first_entry_index(paragraphs)
    if start is None:
        raise SourceError(source, "no date line (such as 'Mar 14') and no title followed by an "
                          "abstract, so this is not a Daily Papers page",
                          fix="set the format to say what the file is")
    parsed = Parsed(fmt="daily-papers")
    date_hint = date_hint or _date_in_name(source)
    published = _parse_date(paragraphs[start - 1][0], date_hint) if start else None
    structured = _has_structure(paragraphs)
    junk = _Junk(titles_matter=not structured)
    for record in _records(paragraphs[start:], source, published, date_hint, parsed.warnings,
                           junk):
        parsed.records.append(record)
    if not structured and (junk.count or _pairs(parsed.records) < 2):
        raise not_a_listing(source, "file", reason="no date line, and the text is not only "
                            "title / abstract pairs")
    if published is None and start and not _has_year(paragraphs[start - 1][0]):
        logger.info("%s: the page's date has no year and the file name none; "
                    "published dates left empty", source)
    return parsed


@dataclass
class _Junk:
    """Paragraphs that are neither an entry nor page furniture. Only a page without its
    structure is judged by its junk: a page with it skips the title checks (the screen that
    follows judges every title anyway)."""

    titles_matter: bool
    count: int = 0


def _has_structure(paragraphs: list[tuple[str, int]]) -> bool:
    head = paragraphs[:_HEAD_PARAGRAPHS]
    return any(_DATE_LINE.match(p) or p.casefold() in _PAGE_HEADERS for p, _ in head)


def _pairs(records: list[Record]) -> int:
    return sum(1 for record in records if record.abstract and title_problem(record.title) is None)


def _paragraphs(text: str) -> Iterator[tuple[str, int]]:
    """Yield (paragraph with inner whitespace collapsed, 1-based line where it starts)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.lstrip("\ufeff").split("\n")
    current: list[str] = []
    start = 0
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if stripped:
            if not current:
                start = number
            current.append(stripped)
        elif current:
            yield " ".join(current), start
            current = []
    if current:
        yield " ".join(current), start


def _first_entry_index(paragraphs: list[tuple[str, int]]) -> int | None:
    """Index of the first title: after the date line, else after the header, else the first
    title that is followed by an abstract."""
    head = paragraphs[:_HEAD_PARAGRAPHS]
    for index, (paragraph, _) in enumerate(head):
        if _DATE_LINE.match(paragraph):
            return index + 1
    headers = [i for i, (p, _) in enumerate(head) if p.casefold() in _HEADER_LINES]
    if headers:
        return headers[-1] + 1
    return _first_pair([p for p, _ in head])


def _first_pair(paragraphs: list[str]) -> int | None:
    for index in range(len(paragraphs) - 1):
        if _is_title(paragraphs[index]) and _is_abstract(paragraphs[index + 1]):
            return index
    return None


def _records(entries: list[tuple[str, int]], source: str, published: dt.date | None,
             date_hint: dt.date | None, warnings: list[str], junk: _Junk) -> Iterator[Record]:
    index = 0
    position = 0
    entries = entries[:_footer_start(entries)]
    while index < len(entries):
        paragraph, line = entries[index]
        index += 1
        if _DATE_LINE.match(paragraph):  # a page that spans several days
            published = _parse_date(paragraph, published or date_hint)
            continue
        title = clean_text(paragraph)
        if not title or _NOISE.match(title) or title.casefold() in _HEADER_LINES:
            continue
        if not _is_title(paragraph):
            junk.count += 1
            warnings.append(describe(source, "a paragraph that reads like an abstract has no "
                                     "title before it; skipped", line=line,
                                     fix="check the page was copied whole"))
            continue
        abstract = _abstract_after(entries, index)
        index += 1 if abstract else 0
        position += 1
        if not abstract or (junk.titles_matter and title_problem(title)):
            junk.count += 1
        if not abstract:
            warnings.append(describe(source, f"entry {position} ({title[:60]!r}) has no "
                                     "abstract; kept with an empty one", line=line,
                                     fix="copy the abstract too, or ignore this"))
        yield Record(title=title, abstract=clean_text(abstract),
                     sighting=Sighting(source, position, line), published=published)


def _footer_start(entries: list[tuple[str, int]]) -> int:
    """Where a mail's footer begins among the page's last paragraphs (it runs to the end),
    or the page's end: a footer's paragraphs are no title and abstract."""
    first = max(len(entries) - FOOTER_PARAGRAPHS, 0)
    return next((n for n in range(first, len(entries)) if _mail_footer(entries[n][0])),
                len(entries))


def _mail_footer(text: str) -> bool:
    """Whether ``text`` opens a listing mail's footer. What each wording holds is looked for
    first, so the pattern runs on almost no paragraph."""
    lower = text.lower()
    return (("eceiv" in lower or "ubscri" in lower or "©" in lower or "reserved" in lower
             or "address" in lower or "thanks" in lower)
            and bool(_MAIL_FOOTER.search(" ".join(text.split()))))


def _abstract_after(entries: list[tuple[str, int]], index: int) -> str:
    if index < len(entries) and _is_abstract(entries[index][0]):
        return entries[index][0]
    return ""


def _is_abstract(paragraph: str) -> bool:
    """Prose: long, or a dozen words with a sentence break or a final full stop."""
    if len(paragraph) >= 200:
        return True
    words = len(paragraph.split())
    sentence = bool(_SENTENCE_BREAK.search(paragraph)) or paragraph.endswith(".")
    return words >= 12 and sentence


def _is_title(paragraph: str) -> bool:
    """Not prose: a title is short, or at least not several sentences."""
    return len(paragraph) < 300 or len(_SENTENCE_BREAK.findall(paragraph)) < 2


def _parse_date(line: str, hint: dt.date | None) -> dt.date | None:
    match = _DATE_LINE.match(line)
    if not match:
        return None
    if match["iso"]:
        return _date(*(int(part) for part in re.split(r"[-/]", match["iso"])))
    month = _MONTHS.index((match["mon1"] or match["mon2"])[:3].lower()) + 1
    day = int(match["day1"] or match["day2"])
    year = match["year1"] or match["year2"]
    if year:
        return _date(int(year), month, day)
    return _nearest(month, day, hint) if hint else None


def _has_year(line: str) -> bool:
    match = _DATE_LINE.match(line)
    return bool(match and (match["iso"] or match["year1"] or match["year2"]))


def _nearest(month: int, day: int, hint: dt.date) -> dt.date | None:
    """The month/day nearest the file name's date: a Dec 31 page saved Jan 2 is last year's."""
    candidates = [d for y in (hint.year - 1, hint.year, hint.year + 1)
                  if (d := _date(y, month, day)) is not None]
    return min(candidates, key=lambda d: abs(d - hint), default=None)


def _date_in_name(source: str) -> dt.date | None:
    """A date (or a year, taken as mid-year) in the file name."""
    match = _NAME_DATE.search(PurePath(source).name)
    if not match:
        return None
    if match["month"]:
        return _date(int(match["year"]), int(match["month"]), int(match["day"]))
    return dt.date(int(match["year"]), 7, 1)


def _date(year: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None
