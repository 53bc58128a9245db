"""The reader's library: the papers they liked, from any format digest reads, BibTeX
(``.bib``) and Zotero's CSV export.

A library file that cannot be read, or holds no paper, is a ``SourceError`` naming the
file (and the line where one is known): a profile that silently lost its library would
rank the week by keywords alone without saying so.

The ``[limits]`` record caps hold for a library as for the week's sources: each file gives
at most ``max_records_per_source`` papers, all of them at most ``max_records_per_run``; each
cut is an error in ``Library.cuts`` (the run report's errors) counting what was left out.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import SourceError
from ..ingest import PARSERS, IngestLimits, detect_format, load_sources
from ..ingest.decoding import decode
from ..ingest.fetch import Fetcher
from ..ingest.limits import within_caps
from ..ingest.plausible import NotAListing, title_problem
from ..ingest.sources import LISTING_SUFFIXES, expand_marked, read
from ..models import Record
from ._bibtex import parse_bibtex
from ._zotero import looks_like_zotero_csv, parse_zotero_csv

__all__ = ["Library", "load_library"]

logger = logging.getLogger("digest")


@dataclass(frozen=True)
class Library:
    records: tuple[Record, ...] = ()
    warnings: tuple[str, ...] = field(default=())
    cuts: tuple[SourceError, ...] = ()  # one per file past a [limits] record cap


_LIBRARY_SUFFIXES = LISTING_SUFFIXES | {".bib"}  # what a library folder or glob gives


def load_library(paths: Sequence[Path | str], limits: IngestLimits | None = None) -> Library:
    """Every paper of every library file (a folder's or a glob's files too), in order, within
    the record caps of ``limits``; warnings about entries and files skipped, and the cuts."""
    limits = limits or IngestLimits()
    records: list[Record] = []
    warnings: list[str] = []
    cuts: list[SourceError] = []
    for path in paths:
        found = 0
        for name, walked in expand_marked([str(path)], _LIBRARY_SUFFIXES):
            cut: list[SourceError] = []  # at the file's own cap, while it was read
            try:
                read_, notes = _read_one(name, limits, cut)
            except SourceError as error:
                if not walked:
                    raise
                read_, notes = [], [f"{name}: skipped, {error.problem}"]
                logger.warning("%s", notes[0])
            found += len(read_)
            records.extend(_within_caps(read_, name, limits, len(records), cuts, cut))
            warnings.extend(notes)
        if not found:
            raise SourceError(str(path), "this library holds no paper",
                              fix="export the papers you liked again, or remove it from "
                                  "[profile] library")
    return Library(tuple(records), tuple(warnings), tuple(cuts))


def _within_caps(read_: list[Record], name: str, limits: IngestLimits, kept_before: int,
                 cuts: list[SourceError], cut_already: list[SourceError]) -> list[Record]:
    """The file's records that the caps leave, as ingest keeps a source's; a cut each
    (``cut_already``: the cuts ingest made while reading it)."""
    kept, cut = within_caps(read_, name, limits, kept_before, unit="a library file",
                            whole="the library", fix="keep fewer papers in the library")
    for error in [*cut_already, *cut]:
        logger.error("%s", error)
    cuts += [*cut_already, *cut]
    return kept


def _read_one(name: str, limits: IngestLimits, cuts: list[SourceError]
              ) -> tuple[list[Record], list[str]]:
    """BibTeX and Zotero CSV here; everything else by digest's ingest (which logs)."""
    suffix = Path(name).suffix.lower()
    text = _text(name, limits) if suffix in (".bib", ".csv") else ""
    if suffix == ".bib" or (suffix == ".csv" and looks_like_zotero_csv(text[:4096])):
        records, warnings = (parse_bibtex if suffix == ".bib" else parse_zotero_csv)(text, name)
        for warning in warnings:
            logger.warning("%s", warning)
        return records, warnings
    try:
        result = load_sources([name], strict=True, limits=limits, cuts=cuts)
    except NotAListing:
        return _reading_list(name, limits)
    return result.records, result.warnings


def _reading_list(name: str, limits: IngestLimits) -> tuple[list[Record], list[str]]:
    """A JSON, JSON lines or CSV list of liked titles with short or no abstracts: no listing
    (ingest refuses it as one), but a fine library. Entries whose title is no paper title
    (a heading, a link, a greeting) are still skipped."""
    text = _text(name, limits)
    fmt = detect_format(text, name, None)
    if fmt not in ("json", "jsonl", "csv"):
        raise NotAListing(name, "this library file holds no paper", fix="export the papers you "
                          "liked as BibTeX, Zotero CSV, JSON or CSV with a title per paper")
    parsed = PARSERS[fmt](text, name)
    records = [record for record in parsed.records if title_problem(record.title) is None]
    skipped = len(parsed.records) - len(records)
    warnings = [*parsed.warnings,
                *([f"{name}: {skipped} entries without a paper title skipped"] if skipped else [])]
    for warning in warnings:
        logger.warning("%s", warning)
    return records, warnings


def _text(name: str, limits: IngestLimits) -> str:
    raw = read(name, stdin=None, fetcher=Fetcher, max_bytes=limits.max_source_bytes)
    if isinstance(raw.data, str):
        return raw.data
    text, note = decode(raw.data, name, None)
    if note:
        logger.warning("%s", note)
    return text

