"""JSON and JSON Lines listings: objects with a title and an abstract."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import SourceError
from ..models import Record, Sighting
from ..normalize import arxiv_abs_url, clean_text, find_arxiv_id

# Accepted field names, first match wins (documented in the README).
TITLE_FIELDS = ("title",)
ABSTRACT_FIELDS = ("abstract", "summary", "description")
ID_FIELDS = ("id", "arxiv_id", "arxiv")
URL_FIELDS = ("url", "link", "abs_url")
AUTHOR_FIELDS = ("authors",)
DATE_FIELDS = ("date", "published", "publishedAt", "published_at")


def parse_json(text: str, source: str) -> list[Record]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SourceError(source, f"invalid JSON: {exc.msg}", line=exc.lineno,
                          fix="check the file is complete; for one object per line use .jsonl") from exc
    if isinstance(data, Mapping):
        data = next((v for k, v in data.items() if k in ("papers", "items", "records")), [data])
    if not isinstance(data, list):
        raise SourceError(source, "expected a list of objects with 'title' and 'abstract'")
    return [record_from_mapping(item, source, position, None)
            for position, item in enumerate(data, start=1)]


def parse_jsonl(text: str, source: str) -> list[Record]:
    records = []
    for line_number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SourceError(source, f"invalid JSON: {exc.msg}", line=line_number,
                              fix="each line must be one complete JSON object") from exc
        records.append(record_from_mapping(item, source, len(records) + 1, line_number))
    return records


def record_from_mapping(item: Any, source: str, position: int, line: int | None) -> Record:
    if not isinstance(item, Mapping):
        raise SourceError(source, f"record {position} is not an object", line=line)
    if isinstance(item.get("paper"), Mapping):  # Hugging Face daily_papers API entries
        item = {**item, **item["paper"]}
    title = clean_text(str(_first(item, TITLE_FIELDS) or ""))
    if not title:
        raise SourceError(source, f"record {position} has no title", line=line,
                          fix="every record needs a 'title' field")
    arxiv = find_arxiv_id(_text(_first(item, ID_FIELDS))) or find_arxiv_id(
        _text(_first(item, URL_FIELDS)))
    url = _text(_first(item, URL_FIELDS)) or (arxiv_abs_url(*arxiv) if arxiv else None)
    return Record(
        title=title,
        abstract=clean_text(str(_first(item, ABSTRACT_FIELDS) or "")),
        sighting=Sighting(source, position, line),
        arxiv_id=arxiv[0] if arxiv else None,
        url=url if url and url.startswith(("https://", "http://")) else None,
        authors=_authors(_first(item, AUTHOR_FIELDS)),
        published=_date(_first(item, DATE_FIELDS)),
    )


def _first(item: Mapping[str, Any], names: Iterable[str]) -> Any:
    return next((item[name] for name in names if item.get(name) not in (None, "")), None)


def _text(value: Any) -> str | None:
    return str(value).strip() if value is not None else None


def _authors(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        names: list[Any] = value.replace(" and ", ",").split(",")
    elif isinstance(value, list):
        names = [a.get("name", "") if isinstance(a, Mapping) else a for a in value]
    else:
        return ()
    return tuple(clean_text(str(name)) for name in names if str(name).strip())


def _date(value: Any) -> dt.date | None:
    if not value:
        return None
    try:
        return dt.date.fromisoformat(str(value)[:10])
    except ValueError:
        return None
