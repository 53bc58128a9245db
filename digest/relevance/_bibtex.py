"""A BibTeX reader for reading libraries (Zotero, JabRef, Google Scholar, arXiv exports).

Handles what real exports hold: ``{…}`` and ``"…"`` values with nested braces, ``#``
concatenation, ``@string`` macros (and the month names), ``@comment`` / ``@preamble``
and free text between entries, ``(…)`` as entry delimiters, LaTeX accents (``{\\"o}``,
``\\'{e}``, ``{\\ss}``) and protective braces (``{BERT}``). An entry without a title is
skipped with a warning; a structural fault (an entry never closed, a field without ``=``)
is a ``SourceError`` naming the file and the line of the entry.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from ..errors import SourceError
from ..models import Record, Sighting
from ..normalize import arxiv_abs_url, clean_text, find_arxiv_id

__all__ = ["parse_bibtex"]

_MONTHS = {m: m.capitalize() for m in
           ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")}
_NAME = re.compile(r"[A-Za-z0-9_:.+/'\-]+")
_SPECIAL_LETTERS = {"ss": "ß", "o": "ø", "O": "Ø", "ae": "æ", "AE": "Æ", "oe": "œ", "OE": "Œ",
                    "aa": "å", "AA": "Å", "l": "ł", "L": "Ł", "i": "i", "j": "j"}
_SPECIAL = re.compile(r"\\(ss|ae|AE|oe|OE|aa|AA|[oOlLij])(?![A-Za-z])\s*")
_AND = re.compile(r"\s+and\s+", re.IGNORECASE)
_ID_FIELDS = ("eprint", "arxivid", "arxiv", "url", "doi", "journal", "note", "howpublished")
_SKIPPED = {"comment", "preamble"}
_FIX = "check the braces and quotes of that entry; each field is name = {value},"


@dataclass
class _Cursor:
    """Where the reader is in the text, and how to name that place in an error."""

    text: str
    source: str
    pos: int = 0
    newlines: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.newlines = [i for i, ch in enumerate(self.text) if ch == "\n"]

    def line(self, pos: int | None = None) -> int:
        return bisect.bisect_left(self.newlines, self.pos if pos is None else pos) + 1

    def skip_space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def fail(self, problem: str, pos: int | None = None) -> SourceError:
        return SourceError(self.source, problem, line=self.line(pos), fix=_FIX)


def parse_bibtex(text: str, source: str) -> tuple[list[Record], list[str]]:
    """Records of every entry with a title, and warnings about the entries skipped."""
    cursor = _Cursor(text.lstrip("\ufeff"), source)
    macros: dict[str, str] = dict(_MONTHS)
    records: list[Record] = []
    warnings: list[str] = []
    while (at := cursor.text.find("@", cursor.pos)) >= 0:
        cursor.pos = at + 1
        kind = _read_name(cursor).lower()
        if not kind:
            continue  # an "@" in free text (an e-mail address in a comment)
        cursor.skip_space()
        if cursor.peek() not in ("{", "("):  # free text between entries is a comment
            if kind.isalpha():  # not an e-mail address: say so
                warnings.append(f"{source}:{cursor.line(at)}: '@{kind}' is not followed by "
                                "'{' or '('; read as a comment")
            continue
        entry = _read_entry(cursor, kind, at, macros)
        if entry is not None:
            _keep(entry, kind, cursor, at, records, warnings)
    return records, warnings


def _read_entry(cursor: _Cursor, kind: str, start: int,
                macros: dict[str, str]) -> dict[str, str] | None:
    opener = cursor.peek()
    closer = "}" if opener == "{" else ")"
    cursor.pos += 1
    if kind in _SKIPPED:
        _scan(cursor, start, closer)
        return None
    if kind == "string":
        macros.update(_read_fields(cursor, closer, start, macros))
        return None
    key = _read_key(cursor, closer)
    return {"ID": key, **_read_fields(cursor, closer, start, macros)}


def _read_key(cursor: _Cursor, closer: str) -> str:
    cursor.skip_space()  # "@article{\n  key1," is legal BibTeX
    end = len(cursor.text)
    for stop in (",", closer, "\n"):
        found = cursor.text.find(stop, cursor.pos)
        end = min(end, found) if found >= 0 else end
    key = cursor.text[cursor.pos:end].strip()
    if "=" in key:  # no key at all: "@misc{title = ..."
        return ""
    cursor.pos = end + 1 if cursor.text[end:end + 1] == "," else end
    return key


def _read_fields(cursor: _Cursor, closer: str, start: int,
                 macros: dict[str, str]) -> dict[str, str]:
    fields: dict[str, str] = {}
    while True:
        cursor.skip_space()
        if cursor.peek() == closer:
            cursor.pos += 1
            return fields
        if cursor.peek() == ",":
            cursor.pos += 1
            continue
        if not cursor.peek():
            raise cursor.fail(f"this entry is never closed (a '{closer}' is missing)", start)
        name = _read_name(cursor).lower()
        cursor.skip_space()
        if not name or cursor.peek() != "=":
            raise cursor.fail("expected 'name = value' in this entry")
        cursor.pos += 1
        fields[name] = _read_value(cursor, start, macros)


def _read_value(cursor: _Cursor, start: int, macros: dict[str, str]) -> str:
    """A value: {…}, "…", a number or a macro, joined with #."""
    parts = []
    while True:
        cursor.skip_space()
        ch = cursor.peek()
        if ch == "{":
            cursor.pos += 1
            parts.append(_skip_balanced(cursor, start))
        elif ch == '"':
            parts.append(_read_quoted(cursor, start))
        else:
            name = _read_name(cursor)
            if not name:
                raise cursor.fail("a field has no value after '='")
            parts.append(name if name.isdigit() else macros.get(name.lower(), name))
        cursor.skip_space()
        if cursor.peek() != "#":
            return "".join(parts)
        cursor.pos += 1


def _skip_balanced(cursor: _Cursor, start: int) -> str:
    """The text up to the '}' that closes an already-opened '{', braces inside kept."""
    return _scan(cursor, start, "}")


def _read_quoted(cursor: _Cursor, start: int) -> str:
    cursor.pos += 1
    return _scan(cursor, start, '"')


def _scan(cursor: _Cursor, start: int, closer: str) -> str:
    """The text up to ``closer`` outside braces (backslash escapes skipped); the cursor
    goes past it."""
    depth, begin, text = 0, cursor.pos, cursor.text
    while cursor.pos < len(text):
        ch = text[cursor.pos]
        if ch == "\\":
            cursor.pos += 2
            continue
        cursor.pos += 1
        if ch == closer and depth == 0:
            return text[begin:cursor.pos - 1]
        depth += {"{": 1, "}": -1}.get(ch, 0)
    missing = 'a "quoted" value is never closed' if closer == '"' else \
        f"this entry is never closed (a '{closer}' is missing)"
    raise cursor.fail(missing, start)


def _read_name(cursor: _Cursor) -> str:
    match = _NAME.match(cursor.text, cursor.pos)
    if not match:
        return ""
    cursor.pos = match.end()
    return match.group()


def _keep(entry: dict[str, str], kind: str, cursor: _Cursor, start: int,
          records: list[Record], warnings: list[str]) -> None:
    line = cursor.line(start)
    title = tex_to_text(entry.get("title", ""))
    if not title:
        warnings.append(f"{cursor.source}:{line}: @{kind}{{{entry['ID']}}} has no title; skipped")
        return
    found = next(filter(None, (find_arxiv_id(entry.get(f)) for f in _ID_FIELDS)), None)
    url = entry.get("url", "").strip()
    records.append(Record(
        title=title, abstract=tex_to_text(entry.get("abstract", "")),
        sighting=Sighting(cursor.source, len(records) + 1, line),
        arxiv_id=found[0] if found else None,
        url=url if url.startswith(("https://", "http://")) else
        (arxiv_abs_url(found[0]) if found else None),
        authors=split_authors(entry.get("author", ""))))


def tex_to_text(value: str) -> str:
    """A BibTeX value as plain text: accents as letters, protective braces gone."""
    value = _SPECIAL.sub(lambda m: _SPECIAL_LETTERS[m.group(1)], value)
    value = value.replace("---", "\u2014").replace("--", "\u2013")
    value = clean_text(value)
    return clean_text(value.replace("{", "").replace("}", ""))


def split_authors(value: str) -> tuple[str, ...]:
    """'Finn, Chelsea and Levine, Sergey and others' → ('Chelsea Finn', 'Sergey Levine')."""
    names = []
    for raw in _split_top_level(value):
        name = tex_to_text(raw)
        if not name or name.lower() == "others":
            continue
        parts = [p.strip() for p in name.split(",")]
        names.append(" ".join([parts[-1], *parts[:-1]]) if len(parts) > 1 else name)
    return tuple(names)


def _split_top_level(value: str) -> list[str]:
    """Split on ' and ' outside braces: '{Barnes and Noble} and Smith' is two names.

    ' and ' is tried only where a run of whitespace starts: a try scans the whole run, so
    trying it inside the run too made a long run quadratic (minutes for 200,000 spaces)."""
    pieces, depth, last = [], 0, 0
    for i, ch in enumerate(value):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        starts_run = ch.isspace() and (i == 0 or not value[i - 1].isspace())
        if depth == 0 and i >= last and starts_run and (m := _AND.match(value, i)):
            pieces.append(value[last:i])
            last = m.end()
    pieces.append(value[last:])
    return [p for p in pieces if p.strip()]
