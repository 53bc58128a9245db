"""Hugging Face Daily Papers pages, as copied from the browser.

A page is paragraphs separated by blank lines: a few header lines ("new",
"Subscribe", ...), a date line such as ``Mar 14``, then title / abstract pairs.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections.abc import Iterator

from ..errors import SourceError
from ..models import Record, Sighting
from ..normalize import clean_text

logger = logging.getLogger("digest.ingest")

_DATE_LINE = re.compile(
    r"^(?:(?P<mon>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(?P<day>\d{1,2})"
    r"(?:,?\s+(?P<year>\d{4}))?|(?P<iso>\d{4}-\d{2}-\d{2}))$",
    re.IGNORECASE,
)
_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
# An abstract is prose: long, and made of sentences. A title is neither.
_ABSTRACT_MIN_CHARS = 200


def looks_like_daily_papers(text: str) -> bool:
    head = [p for p, _ in _paragraphs(text[:4000])][:12]
    return any(_DATE_LINE.match(p) for p in head)


def parse_daily_papers(text: str, source: str) -> list[Record]:
    """Parse one page into records, in page order."""
    paragraphs = list(_paragraphs(text))
    start = _first_entry_index(paragraphs)
    if start is None:
        raise SourceError(source, "no date line such as 'Mar 14' found, so this is not a Daily "
                          "Papers page", fix="use --format to say what the file is")
    published = _parse_date(paragraphs[start - 1][0])
    return list(_records(paragraphs[start:], source, published))


def _paragraphs(text: str) -> Iterator[tuple[str, int]]:
    """Yield (paragraph with inner whitespace collapsed, 1-based line where it starts)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff").split("\n")
    current: list[str] = []
    start = 0
    for number, line in enumerate(lines, start=1):
        if line.strip():
            if not current:
                start = number
            current.append(line.strip())
        elif current:
            yield " ".join(current), start
            current = []
    if current:
        yield " ".join(current), start


def _first_entry_index(paragraphs: list[tuple[str, int]]) -> int | None:
    for index, (paragraph, _) in enumerate(paragraphs[:20]):
        if _DATE_LINE.match(paragraph):
            return index + 1
    return None


def _parse_date(line: str) -> dt.date | None:
    match = _DATE_LINE.match(line)
    if not match:
        return None
    if match["iso"]:
        return dt.date.fromisoformat(match["iso"])
    year = int(match["year"]) if match["year"] else None
    try:
        return dt.date(year or dt.date.today().year, _MONTHS.index(match["mon"][:3].lower()) + 1,
                       int(match["day"]))
    except ValueError:
        return None


def _records(entries: list[tuple[str, int]], source: str,
             published: dt.date | None) -> Iterator[Record]:
    index = 0
    position = 0
    while index < len(entries):
        title, line = entries[index]
        has_abstract = index + 1 < len(entries) and _is_abstract(entries[index + 1][0])
        abstract = entries[index + 1][0] if has_abstract else ""
        if not has_abstract:
            logger.warning("%s:%d: title without an abstract: %r", source, line, title[:80])
        position += 1
        yield Record(title=clean_text(title), abstract=clean_text(abstract),
                     sighting=Sighting(source, position, line), published=published)
        index += 2 if has_abstract else 1


def _is_abstract(paragraph: str) -> bool:
    return len(paragraph) >= _ABSTRACT_MIN_CHARS or paragraph.count(". ") >= 1
