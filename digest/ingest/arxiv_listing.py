"""arXiv's daily listing e-mail, as plain text (the body of the mail arXiv sends subscribers).

Each paper is a block between ``\\\\`` lines::

    \\\\
    arXiv:2611.04217
    Date: Thu, 12 Nov 2026 17:58:01 GMT   (812kb)

    Title: LanternKV: Streaming Key-Value Cache Eviction
      for Million-Token Contexts
    Authors: Mira Okonkwo, Tomás Lindqvist and Ada Comma
    Categories: cs.CL cs.LG
    \\\\
      Long-context language models keep ...
    \\\\ ( https://arxiv.org/abs/2611.04217 ,  812kb)

Header fields may wrap onto indented lines. New submissions and cross-lists are
kept; "replaced with revised version" entries are left out (they carry no abstract
and are not new papers), and counted in the log. A new entry without an abstract is
kept with a warning. The link is built from the arXiv id, never taken from the text.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from ..errors import SourceError
from ..models import Record, Sighting
from ..normalize import arxiv_abs_url, clean_text, find_arxiv_id
from .base import Parsed, describe

logger = logging.getLogger("digest.ingest")

_ID_LINE = re.compile(r"^arXiv:(?P<id>\S+)(?P<rest>.*)$", re.IGNORECASE)
_FIELD = re.compile(r"^(?P<name>[A-Za-z][A-Za-z-]{0,30}):\s?(?P<value>.*)$")
_SEPARATOR = re.compile(r"^(?:-{10,}|%%--%%.*|={10,})\s*$")
_PAREN = re.compile(r"\([^()]*\)")
_AFFILIATION = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")
_AND = re.compile(r"\s*,\s*and\s+|\s*,\s*|\s+and\s+")


def looks_like_arxiv_listing(text: str) -> bool:
    """A ``\\\\`` line followed by an ``arXiv:`` id line, and a ``Title:`` line, near the top."""
    head = text[:20000].replace("\r\n", "\n").split("\n")
    starts = any(_starts_entry(head, i) for i in range(len(head) - 1))
    return starts and any(line.startswith("Title:") for line in head)


def parse_arxiv_listing(text: str, source: str) -> Parsed:
    """Parse the listing into records, in listing order."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff").split("\n")
    entries = list(_entries(lines))
    if not entries:
        raise SourceError(source, "no arXiv listing entries ('\\\\' then 'arXiv:<id>' lines)",
                          fix="pass the whole listing e-mail, or set the format")
    parsed = Parsed(fmt="arxiv-listing")
    replaced = 0
    for entry in entries:
        if entry.replaced:
            replaced += 1
            continue
        record = _record(entry, source, len(parsed.records) + 1, parsed.warnings)
        if record is not None:
            parsed.records.append(record)
    if replaced:
        logger.info("%s: left out %d replaced (revised) papers", source, replaced)
    return parsed


@dataclass
class _Entry:
    line: int
    id_line: str
    fields: dict[str, str] = field(default_factory=dict)
    abstract: list[str] = field(default_factory=list)

    @property
    def replaced(self) -> bool:
        return "replaced with revised" in self.id_line.lower() or "replaced with revised" in (
            self.fields.get("_status", "").lower())


def _starts_entry(lines: list[str], index: int) -> bool:
    return lines[index].strip() == "\\\\" and index + 1 < len(lines) and bool(
        _ID_LINE.match(lines[index + 1].strip()))


def _entries(lines: list[str]) -> Iterator[_Entry]:
    index = 0
    while index < len(lines):
        if not _starts_entry(lines, index):
            index += 1
            continue
        entry = _Entry(line=index + 2, id_line=lines[index + 1].strip())
        index = _read_header(lines, index + 2, entry)
        index = _read_abstract(lines, index, entry)
        yield entry


# A line of an entry's header that is no field: "replaced with revised version <date>".
_STATUS = re.compile(r"replaced with revised version\b", re.IGNORECASE)


def _read_header(lines: list[str], index: int, entry: _Entry) -> int:
    """Fields until the ``\\\\`` that opens the abstract; returns the index after it."""
    name = None
    while index < len(lines):
        line = lines[index]
        if _starts_entry(lines, index) or _SEPARATOR.match(line):
            return index
        if line.strip() == "\\\\":
            return index + 1
        if line.startswith("\\\\"):  # the closing "\\ ( url , size)": no abstract
            return index
        match = _FIELD.match(line)
        if match:
            name = match["name"].casefold()
            entry.fields[name] = match["value"].strip()
        elif _STATUS.match(line.strip()) or (line.strip() and not name):
            entry.fields["_status"] = entry.fields.get("_status", "") + " " + line.strip()
        elif line.strip() and name:  # a wrapped field, indented or not (HTML lost the indent)
            entry.fields[name] += " " + line.strip()
        index += 1
    return index


def _read_abstract(lines: list[str], index: int, entry: _Entry) -> int:
    """Lines until the closing ``\\\\ ( url , size)``, a separator or the next entry."""
    while index < len(lines):
        line = lines[index]
        if _starts_entry(lines, index) or _SEPARATOR.match(line):
            return index
        if line.startswith("\\\\"):
            return index + 1
        entry.abstract.append(line)
        index += 1
    return index


def _record(entry: _Entry, source: str, position: int, warnings: list[str]) -> Record | None:
    title = clean_text(entry.fields.get("title", ""))
    if not title:
        warnings.append(describe(source, f"entry {entry.id_line!r} has no Title: line; skipped",
                                 line=entry.line, fix="check the listing was copied whole"))
        return None
    abstract = clean_text(" ".join(entry.abstract))
    if not abstract:
        warnings.append(describe(source, f"entry {position} ({title[:60]!r}) has no abstract; "
                                 "kept with an empty one", line=entry.line))
    arxiv = find_arxiv_id(_ID_LINE.match(entry.id_line)["id"])  # type: ignore[index]
    return Record(title=title, abstract=abstract, sighting=Sighting(source, position, entry.line),
                  arxiv_id=arxiv[0] if arxiv else None,
                  url=arxiv_abs_url(*arxiv) if arxiv else None,
                  authors=_authors(entry.fields.get("authors", "")),
                  published=_date(entry.fields.get("date", "")))


def _authors(value: str) -> tuple[str, ...]:
    """"A. One (MIT), B. Two and C. Three" → ("A. One", "B. Two", "C. Three")."""
    names = (clean_text(name) for name in _AND.split(without_affiliations(value)))
    return tuple(name for name in names if name)


def without_affiliations(value: str) -> str:
    """"A. One (MIT, USA), B. Two [1]" → "A. One , B. Two ": what is in parentheses or
    brackets (affiliations, footnote marks) dropped, nested ones innermost first."""
    previous = None
    while previous != value:
        previous, value = value, _AFFILIATION.sub("", value)
    return value


def _date(value: str) -> dt.date | None:
    """"Thu, 12 Nov 2026 17:58:01 GMT   (812kb)" → 2026-11-12."""
    try:
        return email.utils.parsedate_to_datetime(_PAREN.sub("", value).strip()).date()
    except (TypeError, ValueError, IndexError):
        return None
