"""Ingest: turn sources (files, directories, globs, stdin, URLs) into ``Record`` values.

One parser per format family, registered in ``PARSERS``; the format is detected
from the content (and the name or Content-Type when the content is ambiguous), or
forced with ``fmt``. A source that fails is reported in ``IngestResult.errors``
and the others are still read, unless ``strict``; an unexpected exception in a
parser is reported the same way. Problems with single records (no abstract, an
abstract cut to size, a guessed encoding) are ``warnings``.

An RFC 5322 e-mail (``email``) is parsed from its bytes, since each part has its own
charset; the text part that holds the listing goes to the arXiv listing or the
Daily Papers parser (``mailmsg``), and attachments to the parser of their format.

Only listings give papers (``plausible``): records that do not read as papers are
dropped with a warning, and a source with none is an error ("no paper listing in this
file"). The work is bounded by ``IngestLimits``: bytes per source and per run, records
per source and per run, and a deadline per URL; every cut is an error in ``errors``
that says how many records were left out and which setting raises the cap.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ConfigError, RecordsCut, SourceError
from ..models import Record
from ..redaction import source_for_logs
from .arxiv_listing import parse_arxiv_listing
from .base import Parsed, capped
from .csvfmt import parse_csv
from .daily_papers import parse_daily_papers
from .decoding import decode
from .detect import detect_format
from .feeds import parse_feed
from .fetch import Fetcher, amount, is_url
from .limits import SETTING, IngestLimits, ingest_limits, record_cap, within_caps
from .mailmsg import looks_like_email, parse_email, parse_email_bytes
from .plausible import NotAListing, screen
from .sources import Raw, StdinReader, expand_marked, read
from .structured import parse_json, parse_jsonl

__all__ = ["FORMATS", "PARSERS", "Fetcher", "IngestLimits", "IngestResult", "detect_format",
           "ingest_limits", "load_sources", "parse_text"]

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
                 stdin: StdinReader | None = None, fetcher: Fetcher | None = None,
                 limits: IngestLimits | None = None, outputs: Collection[Path] = (),
                 cuts: list[SourceError] | None = None) -> IngestResult:
    """Read every source; collect records, warnings and, unless ``strict``, errors.

    ``limits`` (default ``IngestLimits()``; from a config: ``ingest_limits(config)``)
    bound the work; a source past a cap is cut or refused with an error that counts
    what was left out; given ``cuts``, those go there instead, and are no error even when
    ``strict`` (the reader's library counts its own). A folder walked leaves out ``outputs``
    (resolved paths: the run's output folder) as it does any folder digest publishes into."""
    fmt = _check_format(fmt)
    run = _Run(limits or IngestLimits(), IngestResult())
    lazy = _LazyFetcher(fetcher, run.limits)
    try:
        for name, walked in expand_marked(sources, outputs=outputs):
            for error in _try_one(name, fmt, stdin, lazy, run):
                if cuts is not None and isinstance(error, RecordsCut):
                    cuts.append(error)
                    continue
                if walked and isinstance(error, NotAListing):
                    _skip_walked(error, run.result)
                    continue
                if strict:
                    raise error
                logger.error("%s", error)
                run.result.errors.append(error)
    finally:
        lazy.close()
    return run.result


def parse_text(text: str, source: str, *, fmt: str | None = None) -> list[Record]:
    """Parse already-read text with the forced or detected format; warnings are logged."""
    parsed = _parse(text, source, _check_format(fmt), None)
    for warning in parsed.warnings:
        logger.warning("%s", warning)
    return parsed.records


def _skip_walked(error: NotAListing, result: IngestResult) -> None:
    """A README or notes file met in a folder walk is no error: a warning, and no records."""
    warning = f"{error.source}: skipped, {error.problem}"
    logger.warning("%s", warning)
    result.warnings.append(warning)


@dataclass
class _Run:
    """One load_sources call: its limits, what it kept, and the bytes it read."""

    limits: IngestLimits
    result: IngestResult
    bytes_read: int = 0


def _try_one(name: str, fmt: str | None, stdin: StdinReader | None, fetcher: _LazyFetcher,
             run: _Run) -> list[SourceError]:
    """Load one source into ``run``; return what went wrong, if anything (cuts included)."""
    try:
        return _load_one(name, fmt, stdin, fetcher, run)
    except SourceError as error:
        return [error]
    except Exception as exc:  # a parser bug must not cost the other sources
        logger.debug("%s: unexpected error", source_for_logs(name), exc_info=True)
        unexpected = SourceError(source_for_logs(name),
                                 f"could not be read: unexpected {type(exc).__name__} "
                                 f"({str(exc)[:200]})",
                                 fix="please report this, with the file, as a digest bug")
        unexpected.__cause__ = exc
        return [unexpected]


def _load_one(name: str, fmt: str | None, stdin: StdinReader | None, fetcher: _LazyFetcher,
              run: _Run) -> list[SourceError]:
    raw = read(name, stdin=stdin, fetcher=fetcher.get, max_bytes=_bytes_left(name, run))
    run.bytes_read += len(raw.data)
    with record_cap(run.limits.max_records_per_source):
        raw, parsed, note = _read_listing(raw, name, fmt, fetcher)
    warnings = [w for w in (raw.warning, note) if w]
    for warning in warnings + parsed.warnings:
        logger.warning("%s", warning)
    cuts = _cut(parsed, raw.name, run)
    logger.info("%s: %d records (%s)", raw.name, len(parsed.records), parsed.fmt)
    run.result.records.extend(parsed.records)
    run.result.warnings.extend(warnings + parsed.warnings)
    run.result.sources_read += 1
    return cuts


def _read_listing(raw: Raw, name: str, fmt: str | None, fetcher: _LazyFetcher
                  ) -> tuple[Raw, Parsed, str | None]:
    """``raw`` parsed. A URL's new answer replaces its cached copy only once read as a
    listing; one that is none gives way to the copy cached before it, if any."""
    try:
        parsed, note = _parse_raw(raw, fmt)
    except SourceError as error:
        earlier = fetcher.get().fallback(name, error.problem) if is_url(name) else None
        if earlier is None:
            raise
        raw = Raw(raw.name, earlier.data, earlier.content_type, earlier.warning)
        return (raw, *_parse_raw(raw, fmt))
    kept = fetcher.get().confirm(name) if is_url(name) else None
    return Raw(raw.name, raw.data, raw.content_type, raw.warning or kept), parsed, note


def _parse_raw(raw: Raw, fmt: str | None) -> tuple[Parsed, str | None]:
    if isinstance(raw.data, bytes) and _is_email(raw.data, fmt):
        return _finish(parse_email_bytes(raw.data, raw.name), raw.name, "message"), None
    if isinstance(raw.data, bytes):
        text, note = decode(raw.data, raw.name, _charset(raw.content_type))
        return _parse(text, raw.name, fmt, raw.content_type), note
    return _parse(raw.data, raw.name, fmt, raw.content_type), None


def _bytes_left(name: str, run: _Run) -> int:
    """The most this source may be: the per-source cap, or what the run has left."""
    left = run.limits.max_input_bytes - run.bytes_read
    if left <= 0:
        raise SourceError(source_for_logs(name), "not read: the sources before it used up the "
                          f"run's {amount(run.limits.max_input_bytes)} of input",
                          fix=f"raise {SETTING['max_input_bytes']} in the config, or read "
                              "fewer sources per run")
    return min(run.limits.max_source_bytes, left)


def _cut(parsed: Parsed, source: str, run: _Run) -> list[SourceError]:
    """Keep the records within the caps; one error per cut, saying how many were left out."""
    parsed.records, cuts = within_caps(parsed.records, source, run.limits,
                                       len(run.result.records), left_out=parsed.left_out)
    return cuts


def _parse(text: str, source: str, fmt: str | None, content_type: str | None) -> Parsed:
    if not text.strip():
        raise SourceError(source, "the source is empty",
                          fix="check the path, or the download or export that made it")
    if "\x00" in text[:8192]:
        raise SourceError(source, "this is binary data (it holds NUL characters), not a listing",
                          fix="pass a text, JSON, CSV or feed file")
    name = fmt or detect_format(text, source, content_type)
    return _finish(PARSERS[name](text, source), source, "message" if name == "email" else "file")


def parse_attachment(data: bytes, label: str, content_type: str | None,
                     filename: str = "") -> Parsed:
    """A listing file attached to a mail: decoded, then read in its detected format."""
    text, note = decode(data, label, _charset(content_type))
    fmt = detect_format(text, filename or label, content_type) if text.strip() else None
    parsed = _parse(text, label, fmt, content_type)
    parsed.warnings[:0] = [note] if note else []
    return parsed


def _is_email(data: bytes, fmt: str | None) -> bool:
    """An e-mail is parsed from its bytes: its parts may each have their own charset."""
    return (fmt == "email" and bool(data.strip())) or (fmt is None and looks_like_email(data))


def _finish(parsed: Parsed, source: str, kind: str) -> Parsed:
    """Only papers kept (else a 'no paper listing' error); overlong titles and abstracts cut,
    with a warning each."""
    if parsed.records:  # an empty listing stays a warning of its parser
        try:
            screen(parsed, source, kind=kind)
        except NotAListing as error:
            if not parsed.left_out:
                raise
            raise _refused_at_cap(error, parsed) from None
    records = []
    for record in parsed.records:
        record, notes = capped(record)
        records.append(record)
        parsed.warnings.extend(notes)
    parsed.records = records
    return parsed


def _refused_at_cap(error: NotAListing, parsed: Parsed) -> SourceError:
    """Past the per-source cap, the records read were no papers: say both."""
    read_ = len(parsed.records)
    return SourceError(error.source, f"{error.problem}, in the first {read_:,} of its "
                       f"{read_ + parsed.left_out:,} records (a source may give at most "
                       f"{read_:,} records; the others were counted, not read)",
                       fix=f"if it is a listing, raise {SETTING['max_records_per_source']} in "
                           "the config, or split the source")


def _check_format(fmt: str | None) -> str | None:
    if fmt is None:
        return None
    name = ALIASES.get(fmt.strip().lower(), fmt.strip().lower())
    if name not in PARSERS:
        raise ConfigError(f"format {fmt}: unknown format; use one of: {', '.join(FORMATS)}",
                          setting="format")
    return name


def _charset(content_type: str | None) -> str | None:
    for part in (content_type or "").split(";")[1:]:
        key, _, value = part.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            return value.strip().strip('"')
    return None


class _LazyFetcher:
    """Makes the default Fetcher only when a URL is met, and closes only what it made; the
    fetcher in use holds its new answers until they are read (``Fetcher.holding_answers``)."""

    def __init__(self, given: Fetcher | None, limits: IngestLimits) -> None:
        self.given = given
        self.limits = limits
        self.made: Fetcher | None = None
        self.held: Fetcher | None = None  # the one in use, holding its new answers
        self.holding = ExitStack()

    def get(self) -> Fetcher:
        if self.held is None:
            self.held = self.given or Fetcher(deadline_s=self.limits.fetch_deadline_s,
                                              max_bytes=self.limits.max_source_bytes)
            self.made = self.held if self.given is None else None
            self.holding.enter_context(self.held.holding_answers())
        return self.held

    def close(self) -> None:
        self.holding.close()
        if self.made is not None:
            self.made.close()
