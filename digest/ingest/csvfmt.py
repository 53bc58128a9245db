"""CSV and TSV listings: a header row naming the columns, one paper per row.

The delimiter is the most common of comma, tab, semicolon and bar in the header
line. Column names are matched like JSON field names (see ``fields``); the arXiv
metadata snapshot's columns are recognised too.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import SourceError
from .base import MAX_SOURCE_BYTES, Parsed
from .fields import ABSTRACT_FIELDS, TITLE_FIELDS, normalized_key
from .plausible import NotAListing
from .structured import records_from

_DELIMITERS = (",", "\t", ";", "|")


def parse_csv(text: str, source: str) -> Parsed:
    text = text.lstrip("\ufeff")
    delimiter = _delimiter(text)
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    with _large_fields():
        columns = _columns(reader, source)
        rows = list(_rows(reader, source))
    fmt = "arxiv-snapshot" if "versions" in columns else "csv"
    return records_from(rows, source, fmt)


def looks_like_csv(text: str) -> bool:
    """A header line with a title column and a delimiter."""
    header = text.lstrip("\ufeff").split("\n", 1)[0]
    delimiter = _delimiter(header)
    names = {normalized_key(n.strip('" ')) for n in header.split(delimiter)}
    return delimiter in header and bool(names & set(TITLE_FIELDS)) and bool(
        names & set(ABSTRACT_FIELDS))


def _delimiter(text: str) -> str:
    header = text.split("\n", 1)[0]
    return max(_DELIMITERS, key=header.count)


def _columns(reader: csv.DictReader[str], source: str) -> set[str]:
    try:
        names = reader.fieldnames or []
    except csv.Error as exc:
        raise SourceError(source, f"the header row is not valid CSV ({exc})", line=1) from None
    columns = {normalized_key(name) for name in names}
    if not columns & set(TITLE_FIELDS):
        shown = ", ".join(names[:12]) or "none"
        raise NotAListing(source, f"no title column in the header row (columns: {shown})",
                          line=1, fix="the first row must name the columns, one of them "
                                      "'title' (accepted names: README, 'Input formats')")
    return columns


def _rows(reader: csv.DictReader[str], source: str) -> Iterator[tuple[int, int, Any]]:
    position = 0
    start = reader.line_num + 1
    try:
        for row in reader:
            position += 1
            if any(value and value.strip() for value in row.values() if isinstance(value, str)):
                yield position, start, {k: v for k, v in row.items() if k is not None}
            start = reader.line_num + 1
    except csv.Error as exc:
        raise SourceError(source, f"broken CSV ({exc})", line=start,
                          fix="check the quotes on that line: a quote inside a field "
                              "is written twice (\"\")") from None


@contextmanager
def _large_fields() -> Iterator[None]:
    """Allow fields past csv's 128 KiB default, so an oversized abstract is capped, not fatal."""
    previous = csv.field_size_limit(MAX_SOURCE_BYTES)
    try:
        yield
    finally:
        csv.field_size_limit(previous)
