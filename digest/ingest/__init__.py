"""Ingest: turn sources (files, directories, globs, stdin, URLs) into ``Record`` values.

One parser per format family, registered in ``PARSERS``; the format is detected
from the content (and the name or Content-Type when the content is ambiguous), or
forced with ``fmt``. A source that fails is reported in ``IngestResult.errors``
and the others are still read, unless ``strict``; an unexpected exception in a
parser is reported the same way. Problems with single records (no abstract, an
abstract cut to size, a guessed encoding) are ``warnings``.

An RFC 5322 e-mail (``email``) is parsed from its bytes, since each part has its own
charset; the text part that holds the listing goes to the arXiv listing or the
Daily Papers parser (``mailmsg``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..errors import ConfigError, SourceError
from ..models import Record
from .arxiv_listing import parse_arxiv_listing
from .base import Parsed, capped
from .csvfmt import parse_csv
from .daily_papers import parse_daily_papers
from .decoding import decode
from .detect import detect_format
from .feeds import parse_feed
from .fetch import Fetcher, is_url, redact
from .mailmsg import looks_like_email, parse_email, parse_email_bytes
from .sources import StdinReader, expand, read
from .structured import parse_json, parse_jsonl

__all__ = ["FORMATS", "PARSERS", "Fetcher", "IngestResult", "detect_format", "load_sources",
           "parse_text"]

logger = logging.getLogger("digest.ingest")

Parser = Callable[[str, str], Parsed]


def _parse_snapshot(text: str, source: str) -> Parsed:
    """The arXiv metadata snapshot: JSON lines as published, or CSV in its columns."""
    return (parse_jsonl if text.lstrip("\ufeff \r\n").startswith("{") else parse_csv)(text, source)


PARSERS: dict[str, Parser] = {
    "daily-papers": parse_daily_papers,
    "json": parse_json,
    "jsonl": parse_jsonl,
    "csv": parse_csv,
    "feed": parse_feed,
    "arxiv-snapshot": _parse_snapshot,
    "arxiv-listing": parse_arxiv_listing,
    "email": parse_email,
}
ALIASES = {"hf-daily-papers": "json", "atom": "feed", "rss": "feed", "arxiv-atom": "feed",
           "ndjson": "jsonl", "tsv": "csv", "txt": "daily-papers", "eml": "email", "mail": "email",
           "rfc822": "email"}
FORMATS = sorted([*PARSERS, *ALIASES])


@dataclass
class IngestResult:
    records: list[Record] = field(default_factory=list)
    errors: list[SourceError] = field(default_factory=list)
    sources_read: int = 0
    warnings: list[str] = field(default_factory=list)


def load_sources(sources: Sequence[str], *, fmt: str | None = None, strict: bool = False,
                 stdin: StdinReader | None = None, fetcher: Fetcher | None = None
                 ) -> IngestResult:
    """Read every source; collect records, warnings and, unless ``strict``, errors."""
    fmt = _check_format(fmt)
    result = IngestResult()
    lazy = _LazyFetcher(fetcher)
    try:
        for name in expand(sources):
            error = _try_one(name, fmt, stdin, lazy, result)
            if error is not None and strict:
                raise error
            if error is not None:
                logger.error("%s", error)
                result.errors.append(error)
    finally:
        lazy.close()
    return result


def parse_text(text: str, source: str, *, fmt: str | None = None) -> list[Record]:
    """Parse already-read text with the forced or detected format; warnings are logged."""
    parsed = _parse(text, source, _check_format(fmt), None)
    for warning in parsed.warnings:
        logger.warning("%s", warning)
    return parsed.records


def _try_one(name: str, fmt: str | None, stdin: StdinReader | None, fetcher: _LazyFetcher,
             result: IngestResult) -> SourceError | None:
    """Load one source into ``result``; return what went wrong, if anything."""
    try:
        _load_one(name, fmt, stdin, fetcher, result)
    except SourceError as error:
        return error
    except Exception as exc:  # a parser bug must not cost the other sources
        logger.debug("%s: unexpected error", name, exc_info=True)
        unexpected = SourceError(redact(name) if is_url(name) else name,
                                 f"could not be read: unexpected {type(exc).__name__} "
                                 f"({str(exc)[:200]})",
                                 fix="please report this, with the file, as a digest bug")
        unexpected.__cause__ = exc
        return unexpected
    return None


def _load_one(name: str, fmt: str | None, stdin: StdinReader | None, fetcher: _LazyFetcher,
              result: IngestResult) -> None:
    raw = read(name, stdin=stdin, fetcher=fetcher.get)
    warnings = [raw.warning] if raw.warning else []
    if isinstance(raw.data, bytes) and _is_email(raw.data, fmt):
        parsed = _finish(parse_email_bytes(raw.data, raw.name))  # each part has its charset
    elif isinstance(raw.data, bytes):
        text, note = decode(raw.data, raw.name, _charset(raw.content_type))
        warnings += [note] if note else []
        parsed = _parse(text, raw.name, fmt, raw.content_type)
    else:
        parsed = _parse(raw.data, raw.name, fmt, raw.content_type)
    for warning in warnings + parsed.warnings:
        logger.warning("%s", warning)
    logger.info("%s: %d records (%s)", raw.name, len(parsed.records), parsed.fmt)
    result.records.extend(parsed.records)
    result.warnings.extend(warnings + parsed.warnings)
    result.sources_read += 1


def _parse(text: str, source: str, fmt: str | None, content_type: str | None) -> Parsed:
    if not text.strip():
        raise SourceError(source, "the source is empty",
                          fix="check the path, or the download or export that made it")
    if "\x00" in text[:8192]:
        raise SourceError(source, "this is binary data (it holds NUL characters), not a listing",
                          fix="pass a text, JSON, CSV or feed file")
    return _finish(PARSERS[fmt or detect_format(text, source, content_type)](text, source))


def _is_email(data: bytes, fmt: str | None) -> bool:
    """An e-mail is parsed from its bytes: its parts may each have their own charset."""
    return (fmt == "email" and bool(data.strip())) or (fmt is None and looks_like_email(data))


def _finish(parsed: Parsed) -> Parsed:
    """Overlong titles and abstracts cut, with a warning each."""
    records = []
    for record in parsed.records:
        record, notes = capped(record)
        records.append(record)
        parsed.warnings.extend(notes)
    parsed.records = records
    return parsed


def _check_format(fmt: str | None) -> str | None:
    if fmt is None:
        return None
    name = ALIASES.get(fmt.strip().lower(), fmt.strip().lower())
    if name not in PARSERS:
        raise ConfigError(f"--format {fmt}: unknown format; use one of: {', '.join(FORMATS)}")
    return name


def _charset(content_type: str | None) -> str | None:
    for part in (content_type or "").split(";")[1:]:
        key, _, value = part.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            return value.strip().strip('"')
    return None


class _LazyFetcher:
    """Makes the default Fetcher only when a URL is met, and closes only what it made."""

    def __init__(self, given: Fetcher | None) -> None:
        self.given = given
        self.made: Fetcher | None = None

    def get(self) -> Fetcher:
        if self.given is not None:
            return self.given
        if self.made is None:
            self.made = Fetcher()
        return self.made

    def close(self) -> None:
        if self.made is not None:
            self.made.close()
