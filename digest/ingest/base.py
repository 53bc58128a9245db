"""What every parser shares: its result type, warnings, and the size caps."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from ..models import Record
from ..normalize import MAX_CLEAN_CHARS
from ..textsafety import cut_at_word

# arXiv caps abstracts at 1,920 characters; journals rarely pass 4,000. Anything
# far longer is a whole paper or a broken field, and would eat the token budget.
MAX_ABSTRACT_CHARS = 6000
MAX_TITLE_CHARS = 500
MAX_SOURCE_BYTES = 64 * 1024 * 1024
_HUGE = MAX_CLEAN_CHARS * 9 // 10


@dataclass
class Parsed:
    """What a parser returns: the records, and warnings about records it kept or skipped."""

    records: list[Record] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    fmt: str = ""
    left_out: int = 0  # records past the per-source cap, counted but not made


def describe(source: str, problem: str, *, line: int | None = None, fix: str = "") -> str:
    """One warning line, in the same shape as a ``SourceError`` message."""
    where = f"{source}:{line}" if line is not None else source
    return f"{where}: {problem}" + (f" ({fix})" if fix else "")


def where(position: int, line: int | None) -> str:
    """'record 3' or 'record 3 (line 12)', for messages about one record."""
    return f"record {position}" + (f" (line {line})" if line is not None else "")


def capped(record: Record) -> tuple[Record, list[str]]:
    """The record with an overlong title or abstract cut, and what was cut."""
    notes = []
    title, abstract = record.title, record.abstract
    if len(title) > MAX_TITLE_CHARS:
        notes.append(_cap_note("title", title, MAX_TITLE_CHARS, record))
        title = cut_at_word(title, MAX_TITLE_CHARS, near=0.8)
    if len(abstract) > MAX_ABSTRACT_CHARS:
        notes.append(_cap_note("abstract", abstract, MAX_ABSTRACT_CHARS, record))
        abstract = cut_at_word(abstract, MAX_ABSTRACT_CHARS, near=0.8)
    if not notes:
        return record, []
    return dataclasses.replace(record, title=title, abstract=abstract), notes


def _cap_note(what: str, text: str, limit: int, record: Record) -> str:
    sighting = record.sighting
    # clean_text keeps at most MAX_CLEAN_CHARS, so past ~90% of that the real size is unknown
    size = f"{len(text):,}" if len(text) < _HUGE else f"more than {_HUGE:,}"
    return describe(sighting.source,
                    f"{where(sighting.position, None)}: the {what} is {size} characters; "
                    f"kept the first {limit:,}",
                    line=sighting.line,
                    fix=f"check that this field really holds the {what}")
