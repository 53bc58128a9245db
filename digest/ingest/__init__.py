"""Ingest: turn sources (files, directories, globs, stdin) into ``Record`` values.

One parser per format, registered in ``PARSERS``; the format is detected from the
extension and the content, or forced with ``fmt``. A source that fails is reported
in ``IngestResult.errors`` and the others are still read, unless ``strict``.
"""

from __future__ import annotations

import glob
import logging
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import SourceError
from ..models import Record
from .daily_papers import looks_like_daily_papers, parse_daily_papers
from .structured import parse_json, parse_jsonl

__all__ = ["PARSERS", "IngestResult", "load_sources", "parse_text", "detect_format"]

logger = logging.getLogger("digest.ingest")

Parser = Callable[[str, str], list[Record]]
PARSERS: dict[str, Parser] = {
    "daily-papers": parse_daily_papers,
    "json": parse_json,
    "jsonl": parse_jsonl,
}
_EXTENSIONS = {".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl"}
_LISTING_SUFFIXES = {".txt", ".md", ".json", ".jsonl", ".ndjson", ""}


@dataclass
class IngestResult:
    records: list[Record] = field(default_factory=list)
    errors: list[SourceError] = field(default_factory=list)
    sources_read: int = 0


def load_sources(sources: Sequence[str], *, fmt: str | None = None, strict: bool = False,
                 stdin: Callable[[], str] | None = None) -> IngestResult:
    """Read every source; collect records and, unless ``strict``, errors."""
    result = IngestResult()
    for name in _expand(sources):
        try:
            text = _read_stdin(stdin) if name == "-" else _read_file(Path(name))
            records = parse_text(text, name, fmt=fmt)
        except SourceError as error:
            if strict:
                raise
            logger.error("%s", error)
            result.errors.append(error)
            continue
        logger.info("%s: %d records", name, len(records))
        result.records.extend(records)
        result.sources_read += 1
    return result


def parse_text(text: str, source: str, *, fmt: str | None = None) -> list[Record]:
    """Parse already-read text with the forced or detected format."""
    if not text.strip():
        raise SourceError(source, "the source is empty", fix="check the path or the download")
    fmt = fmt or detect_format(text, source)
    if fmt not in PARSERS:
        raise SourceError(source, f"unknown format {fmt!r}",
                          fix=f"use one of: {', '.join(sorted(PARSERS))}")
    return PARSERS[fmt](text, source)


def detect_format(text: str, source: str) -> str:
    by_extension = _EXTENSIONS.get(Path(source).suffix.lower())
    if by_extension:
        return by_extension
    head = text.lstrip("\ufeff \t\r\n")[:1]
    if head == "[":
        return "json"
    if head == "{":
        first_line = text.lstrip("\ufeff \t\r\n").split("\n", 1)[0].rstrip()
        return "jsonl" if first_line.endswith("}") and "\n" in text.strip() else "json"
    if looks_like_daily_papers(text):
        return "daily-papers"
    raise SourceError(source, "cannot tell the format of this source",
                      fix=f"force one with --format ({', '.join(sorted(PARSERS))})")


def _expand(sources: Sequence[str]) -> Iterator[str]:
    """Files as given, directories walked recursively in sorted order, globs expanded."""
    for source in sources:
        path = Path(source)
        if source == "-" or path.is_file():
            yield source
        elif path.is_dir():
            yield from (str(p) for p in sorted(path.rglob("*"))
                        if p.is_file() and p.suffix.lower() in _LISTING_SUFFIXES
                        and not any(part.startswith(".") for part in p.relative_to(path).parts))
        elif glob.has_magic(source):
            yield from sorted(glob.glob(source, recursive=True))
        else:
            yield source  # reported as missing by _read_file


def _read_file(path: Path) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise SourceError(str(path), "no such file or directory", fix="check the path") from None
    except OSError as exc:
        raise SourceError(str(path), f"cannot read: {exc.strerror}") from None
    return decode(data, str(path))


def _read_stdin(stdin: Callable[[], str] | None) -> str:
    return stdin() if stdin else sys.stdin.read()


def decode(data: bytes, source: str) -> str:
    if b"\x00" in data[:8192]:
        raise SourceError(source, "this is a binary file, not a listing",
                          fix="pass a text, JSON or feed file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SourceError(source, "not valid UTF-8", line=line,
                          fix="convert it, e.g. iconv -f latin1 -t utf-8") from None
