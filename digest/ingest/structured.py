"""JSON and JSON Lines listings: objects with a title and an abstract.

Covers plain lists of objects, the Hugging Face Daily Papers API (a list of
``{"paper": {...}}``), and the arXiv metadata snapshot (JSON lines). Objects
without a title are skipped with a warning; a source in which no object has a
title is an error that lists the field names it did find.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..errors import SourceError
from .base import Parsed, describe, where
from .fields import TITLE_FIELDS, field_names, record_from_mapping, unreadable_date
from .limits import SETTING, current_record_cap
from .plausible import NotAListing

CONTAINER_KEYS = ("papers", "items", "records", "entries", "data", "results")
_LISTED = 5  # positions named in a grouped warning


# A paper is an object with a few lists and objects inside (authors, versions, links).
_CONTAINERS_PER_RECORD = 100
_DECODER = json.JSONDecoder(parse_int=lambda digits: _int(digits))
_SPACE = re.compile(r"[ \t\r\n]*")
_NEWLINE = re.compile(r"\r\n|\r|\n")


def loads(text: str) -> Any:
    """``json.loads`` for untrusted text: huge integers become floats (Python refuses to read
    more than 4,300 digits), and nesting too deep for Python's stack is a JSONDecodeError."""
    try:
        return json.loads(text, parse_int=_int)
    except RecursionError:
        raise json.JSONDecodeError("the JSON is nested too deeply", text, 0) from None


def _int(digits: str) -> int | float:
    return int(digits) if len(digits) <= 1000 else float(digits)


def parse_json(text: str, source: str) -> Parsed:
    _check_containers(text, source)
    start = len(text) - len(text.lstrip("\ufeff \t\r\n"))
    if text.startswith("[", start):  # streamed: a million tiny records never sit in memory
        rows = _array_items(text, start, source)
        first = list(itertools.islice(rows, 20))
        return records_from(itertools.chain(first, rows), source,
                            _flavour([item for _, _, item in first], "json"))
    try:
        data = loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data" and text.lstrip().startswith("{"):
            return parse_jsonl(text, source)  # JSON lines in a .json file
        raise _json_error(text, source, exc) from None
    items = _items(data, source)
    return records_from(((i, None, item) for i, item in enumerate(items, start=1)),
                        source, _flavour(items, "json"))


def _check_containers(text: str, source: str) -> None:
    """Refuse JSON with far more objects and lists than the record cap could use, before
    Python builds them all (64 MiB of ``{},{},…`` is 21 million dicts, over 1.5 GB). Braces
    are counted outside strings only when the plain count is over: LaTeX in abstracts
    ("\\mathcal{O}(n^{2})") is braces inside strings."""
    cap = current_record_cap()
    if cap is None:
        return
    most = _CONTAINERS_PER_RECORD * cap
    if text.count("{") + text.count("[") <= most:
        return
    bare = _JSON_STRING.sub("", text)
    found = bare.count("{") + bare.count("[")
    if found > most:
        raise SourceError(source, f"holds {found:,} JSON objects and lists, more than "
                          f"{cap:,} records (the most a source may give) could use",
                          fix=f"split the file, or raise {SETTING['max_records_per_source']} in "
                              "the config")


# A JSON string: no raw line break can be in one, so a broken line of JSON lines cannot hide
# the lines after it.
_JSON_STRING = re.compile(r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"')


def _array_items(text: str, start: int, source: str) -> Iterator[tuple[int, int | None, Any]]:
    """The elements of the top-level JSON array at ``text[start]``, decoded one at a time."""
    end = _skip_space(text, start + 1)
    if text.startswith("]", end):
        return _check_tail(text, end + 1, source)
    position = 0
    while True:
        position += 1
        try:
            item, end = _DECODER.raw_decode(text, end)
        except json.JSONDecodeError as exc:
            raise _json_error(text, source, exc) from None
        except RecursionError:
            raise _json_error(text, source, json.JSONDecodeError(
                "the JSON is nested too deeply", text, end)) from None
        yield position, None, item
        end = _skip_space(text, end)
        if text.startswith("]", end):
            return _check_tail(text, end + 1, source)
        if not text.startswith(",", end):
            raise _json_error(text, source, json.JSONDecodeError(
                "Expecting ',' delimiter", text, end))
        end = _skip_space(text, end + 1)


def _skip_space(text: str, index: int) -> int:
    return _SPACE.match(text, index).end()  # type: ignore[union-attr]


def _check_tail(text: str, index: int, source: str) -> None:
    if text[index:].strip():
        raise _json_error(text, source, json.JSONDecodeError("Extra data", text,
                                                             _skip_space(text, index)))


def parse_jsonl(text: str, source: str) -> Parsed:
    _check_containers(text, source)
    bad: list[tuple[int, str]] = []
    lines = [0]  # how many lines were read, once the rows are consumed
    rows = _json_lines(text, bad, lines)
    head = list(itertools.islice(rows, 20))
    if bad and not head:
        raise SourceError(source, f"no line is a JSON object ({bad[0][1]})", line=bad[0][0],
                          fix="each line must be one complete JSON object; "
                              "for a single document set the format to json")
    parsed = records_from(itertools.chain(head, rows), source,
                          _flavour([r[2] for r in head], "jsonl"))
    parsed.warnings += [_bad_line(source, number, msg, number == lines[0])
                        for number, msg in bad]
    return parsed


def _json_lines(text: str, bad: list[tuple[int, str]], lines: list[int]
                ) -> Iterator[tuple[int, int | None, Any]]:
    """(position, line, object) of each line that parses; the others go to ``bad``. Lines are
    read one at a time (a list of 21 million short lines would take a gigabyte)."""
    position = 0
    for number, line in enumerate(_lines(text), start=1):
        lines[0] = number
        if not line.strip():
            continue
        position += 1
        try:
            yield position, number, loads(line)
        except json.JSONDecodeError as exc:
            bad.append((number, exc.msg))


def _lines(text: str) -> Iterator[str]:
    """``text.splitlines()`` (at \\n, \\r\\n or \\r), one line at a time."""
    start = 0
    for match in _NEWLINE.finditer(text):
        yield text[start:match.start()]
        start = match.end()
    if start < len(text):
        yield text[start:]


def records_from(rows: Iterable[tuple[int, int | None, Any]], source: str, fmt: str) -> Parsed:
    """Records from (position, line, object) rows; shared by JSON, JSON lines and CSV."""
    parsed = Parsed(fmt=fmt)
    not_objects, untitled, no_abstract, undated = [], [], [], []
    seen_fields: set[str] = set()
    cap, examined = current_record_cap(), 0
    for position, line, item in rows:
        if cap is not None and examined >= cap:
            parsed.left_out += 1  # counted, not made: the rest of the file is only scanned
            continue
        examined += 1
        if not isinstance(item, Mapping):
            not_objects.append(where(position, line))
            continue
        record = record_from_mapping(item, source, position, line)
        if record is None:
            untitled.append(where(position, line))
            seen_fields.update(field_names(item))
            continue
        if not record.abstract:
            no_abstract.append(where(position, line))
        if record.published is None and (unread := unreadable_date(item)) is not None:
            undated.append(f"{where(position, line)} ({unread!r})")
        parsed.records.append(record)
    if not parsed.records and (untitled or not_objects):
        raise _no_titles(source, seen_fields, bool(not_objects))
    _group(parsed, source, not_objects, "not an object, skipped")
    _group(parsed, source, untitled, "no title, skipped",
           fix=f"name the field {TITLE_FIELDS[0]!r}")
    _group(parsed, source, no_abstract, "no abstract, kept with an empty one")
    _group(parsed, source, undated, "a date digest cannot read, so dated by the week the record "
           "is first read", fix="write dates as 2026-11-17")
    if not parsed.records:
        parsed.warnings.append(describe(source, "holds no records"))
    return parsed


def _items(data: Any, source: str) -> list[Any]:
    if isinstance(data, list):
        return data
    if isinstance(data, Mapping):
        for key in CONTAINER_KEYS:
            if isinstance(data.get(key), list):
                return list(data[key])
        if any(str(k).casefold() in TITLE_FIELDS for k in data) or "paper" in data:
            return [data]
        keys = ", ".join(field_names(data)[:12])
        raise NotAListing(source, f"expected a list of papers, found an object with keys {keys}",
                          fix=f"put the papers in a list, or under one of: "
                              f"{', '.join(CONTAINER_KEYS)}")
    raise NotAListing(source, f"expected a list of papers, found a JSON {type(data).__name__}",
                      fix="see 'Input formats' in the README")


def _flavour(items: list[Any], default: str) -> str:
    """Name the shape for the log: the HF Daily Papers API, the arXiv snapshot, or plain."""
    objects = [item for item in items[:20] if isinstance(item, Mapping)]
    if objects and all(isinstance(item.get("paper"), Mapping) for item in objects):
        return "hf-daily-papers"
    if objects and all("versions" in item for item in objects):
        return "arxiv-snapshot"
    return default


def _json_error(text: str, source: str, exc: json.JSONDecodeError) -> SourceError:
    at_end = exc.pos >= len(text.rstrip()) - 1
    if at_end or exc.msg.startswith("Unterminated string"):
        return SourceError(source, f"the JSON ends early, at column {exc.colno}: the file "
                           "looks truncated", line=exc.lineno,
                           fix="download or export it again")
    return SourceError(source, f"invalid JSON: {exc.msg} at column {exc.colno}", line=exc.lineno,
                       fix="fix the JSON there; for one object per line use .jsonl")


def _bad_line(source: str, number: int, msg: str, last: bool) -> str:
    if last:
        return describe(source, f"the last line is not complete JSON ({msg}); skipped",
                        line=number, fix="the file looks truncated: download it again")
    return describe(source, f"not a JSON object ({msg}); skipped", line=number,
                    fix="each line must be one complete JSON object")


def _no_titles(source: str, fields: set[str], not_objects: bool) -> SourceError:
    if not_objects and not fields:
        return NotAListing(source, "the entries are not objects",
                           fix="each paper must be an object with 'title' and 'abstract'")
    seen = ", ".join(sorted(fields)[:12]) or "none"
    return NotAListing(source, f"no record has a title (fields found: {seen})",
                       fix="name the title field 'title' and the abstract 'abstract' "
                           "(accepted names: README, 'Input formats')")


def _group(parsed: Parsed, source: str, places: list[str], problem: str, fix: str = "") -> None:
    """One warning for many records with the same problem, naming the first few."""
    if not places:
        return
    named = ", ".join(places[:_LISTED]) + (f" and {len(places) - _LISTED} more"
                                            if len(places) > _LISTED else "")
    count = f"{len(places)} record{'s' if len(places) != 1 else ''}"
    parsed.warnings.append(describe(source, f"{problem} ({count}): {named}", fix=fix))
