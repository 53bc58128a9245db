"""Zotero's CSV export (File → Export Library… → CSV) as records.

The columns used: "Title", "Abstract Note", "Author" ("Finn, Chelsea; Levine, Sergey"),
"Url", "DOI", and "Extra" / "Archive ID" / "Number", where Zotero keeps arXiv ids
("arXiv: 1703.03400"). Every other column is ignored.
"""

from __future__ import annotations

import csv
import io

from ..errors import SourceError
from ..ingest.csvfmt import _large_fields
from ..models import Record, Sighting
from ..normalize import arxiv_abs_url, clean_text, find_arxiv_id

__all__ = ["looks_like_zotero_csv", "parse_zotero_csv"]

_MARKS = ("Abstract Note", "Item Type", "Publication Title")
_ID_COLUMNS = ("Extra", "Archive ID", "Number", "Url", "DOI", "Report Number")


def looks_like_zotero_csv(head: str) -> bool:
    """True when the first line is a Zotero header: a "Title" column and Zotero's names."""
    first = head.lstrip("\ufeff").split("\n", 1)[0]
    return '"Title"' in first and any(f'"{mark}"' in first for mark in _MARKS)


def parse_zotero_csv(text: str, source: str) -> tuple[list[Record], list[str]]:
    """Records of every row with a title, and warnings about the rows skipped."""
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff"), newline=""), strict=True)
    records: list[Record] = []
    warnings: list[str] = []
    line = 2
    try:
        with _large_fields():
            if "Title" not in (reader.fieldnames or []):
                raise SourceError(source, 'no "Title" column in the header', line=1,
                                  fix="export the library from Zotero as CSV, unchanged")
            for row in reader:
                _keep(row, source, line, records, warnings)
                line = reader.line_num + 1
    except csv.Error as exc:
        raise SourceError(source, f"broken CSV ({exc})", line=line,
                          fix="export the library from Zotero again, as CSV") from None
    return records, warnings


def _keep(row: dict[str | None, str | None], source: str, line: int,
          records: list[Record], warnings: list[str]) -> None:
    title = clean_text(row.get("Title") or "")
    if not title:
        warnings.append(f"{source}:{line}: a row has no title; skipped")
        return
    found = next(filter(None, (find_arxiv_id(_arxiv_text(row.get(c))) for c in _ID_COLUMNS)),
                 None)
    url = (row.get("Url") or "").strip()
    records.append(Record(
        title=title, abstract=clean_text(row.get("Abstract Note") or ""),
        sighting=Sighting(source, len(records) + 1, line),
        arxiv_id=found[0] if found else None,
        url=url if url.startswith(("https://", "http://")) else
        (arxiv_abs_url(found[0]) if found else None),
        authors=_authors(row.get("Author") or "")))


def _arxiv_text(value: str | None) -> str | None:
    """The line of a cell that names arXiv ("Extra" holds one field per line)."""
    if not value:
        return None
    lines = [ln for ln in value.splitlines() if "arxiv" in ln.lower()]
    return lines[0] if lines else value


def _authors(value: str) -> tuple[str, ...]:
    """'Finn, Chelsea; Levine, Sergey' → ('Chelsea Finn', 'Sergey Levine')."""
    names = []
    for name in (clean_text(n) for n in value.split(";")):
        last, _, first = name.partition(",")
        if name:
            names.append(f"{first.strip()} {last.strip()}".strip() if first else name)
    return tuple(names)
