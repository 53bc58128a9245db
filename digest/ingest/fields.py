"""One record from one JSON object or CSV row, whatever its field names.

Field names are matched without regard to case, spaces, dashes or underscores
("Title", "abstract_text", "Published-At"). The accepted names are listed in the
README. Two shapes get special care: Hugging Face Daily Papers API entries (the
paper under ``paper``; ``paper.id`` is the arXiv id) and the arXiv metadata
snapshot (``id``, ``versions``, ``authors_parsed``, ``update_date``).
"""

from __future__ import annotations

import ast
import datetime as dt
import email.utils
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..models import Record, Sighting
from ..normalize import arxiv_abs_url, clean_text, find_arxiv_id
from .arxiv_listing import without_affiliations

# Accepted field names, first match wins (documented in the README's "Input formats").
TITLE_FIELDS = ("title", "paper_title", "name")
ABSTRACT_FIELDS = ("abstract", "summary", "description", "abstract_text", "content", "text")
ID_FIELDS = ("arxiv_id", "arxiv", "id", "paper_id", "eprint", "doi")
URL_FIELDS = ("url", "abs_url", "link", "href", "pdf_url")
AUTHOR_FIELDS = ("authors_parsed", "authors", "author", "creators", "creator")
DATE_FIELDS = ("date", "published", "published_at", "publishedat", "publication_date",
               "submitted", "created", "created_at", "first_published", "update_date",
               "updated")

_KEY = re.compile(r"[\s_\-]+")
_MAX_LITERAL = 100_000
_OLD_SNAPSHOT_ID = re.compile(r"^(\d{3,4})\.(\d{1,5})$")
_LATIN_NAME = re.compile(r"[A-Za-z\u00c0-\u024f' .,-]+")
_NAME_GROUP = re.compile(r";|\band\b")  # between names; a comma may be inside "Last, First"


def record_from_mapping(item: Mapping[str, Any], source: str, position: int,
                        line: int | None) -> Record | None:
    """The record, or None when the object has no title (the caller warns)."""
    fields = _flatten(item)
    title = clean_text(_text(_first(fields, TITLE_FIELDS)))
    if not title:
        return None
    arxiv = _arxiv_id(fields)
    url = _url(fields, arxiv)
    return Record(
        title=title,
        abstract=clean_text(_text(_first(fields, ABSTRACT_FIELDS))),
        sighting=Sighting(source, position, line),
        arxiv_id=arxiv[0] if arxiv else None,
        url=url,
        authors=_authors(_first(fields, AUTHOR_FIELDS)),
        published=_published(fields),
        upvotes=_upvotes(fields.get("upvotes")),
    )


def _upvotes(value: Any) -> int | None:
    """Hugging Face upvotes (``paper.upvotes`` or top-level ``upvotes``): a count or nothing."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    return value if isinstance(value, int) and value >= 0 else None


def field_names(item: Mapping[str, Any]) -> list[str]:
    return sorted(str(name) for name in item)


def _flatten(item: Mapping[str, Any]) -> dict[str, Any]:
    """Keys normalized; a Hugging Face entry's ``paper`` object merged over the outer one."""
    fields = {normalized_key(k): v for k, v in item.items()}
    if isinstance(fields.get("versions"), str):  # the snapshot as CSV: parse the list once
        fields["versions"] = _python_list(fields["versions"]) or fields["versions"]
    paper = fields.get("paper")
    if isinstance(paper, Mapping):
        fields.update({normalized_key(k): v for k, v in paper.items() if v not in (None, "")})
        fields.setdefault("arxiv_id", paper.get("id"))
    return fields


def normalized_key(name: Any) -> str:
    return _KEY.sub("_", str(name).strip().casefold())


def _first(fields: Mapping[str, Any], names: Iterable[str]) -> Any:
    return next((fields[n] for n in names if fields.get(n) not in (None, "", [], {})), None)


def _text(value: Any) -> str:
    if value is None or isinstance(value, Mapping | list):
        return ""
    return str(value)


def _arxiv_id(fields: Mapping[str, Any]) -> tuple[str, str] | None:
    for name in ID_FIELDS + URL_FIELDS:
        value = fields.get(name)
        if isinstance(value, int | float) and not isinstance(value, bool):
            found = find_arxiv_id(_number_id(value))
        else:
            found = find_arxiv_id(_snapshot_id(_text(value), fields))
        if found:
            return found
    return None


def _number_id(value: float) -> str:
    """The arXiv id a JSON number stands for, its zeros put back (2401.0123 was 2401.01230),
    or "" when no id is written so: a number keeps no zeros to tell the digits apart."""
    match = _OLD_SNAPSHOT_ID.match(repr(value)) if isinstance(value, float) else None
    if not match:
        return ""
    yymm, number = match[1].zfill(4), match[2]
    digits = _id_digits(yymm)
    return f"{yymm}.{number.ljust(digits, '0')}" if len(number) <= digits and number.strip(
        "0") else ""


def _snapshot_id(value: str, fields: Mapping[str, Any]) -> str:
    """Undo a spreadsheet's damage to snapshot ids: 704.001 was 0704.0010."""
    match = _OLD_SNAPSHOT_ID.match(value.strip())
    if not match or "versions" not in fields:
        return value
    yymm = match[1].zfill(4)
    return f"{yymm}.{match[2].ljust(_id_digits(yymm), '0')}"


def _id_digits(yymm: str) -> int:
    """Digits after the dot of an arXiv id: 4 to December 2014, 5 from January 2015."""
    return 4 if int(yymm) < 1501 else 5


def _url(fields: Mapping[str, Any], arxiv: tuple[str, str] | None) -> str | None:
    given = _text(_first(fields, URL_FIELDS)).strip()
    if arxiv:
        return arxiv_abs_url(arxiv[0], arxiv[1] or _latest_version(fields))
    if given.startswith(("https://", "http://")) and not any(c.isspace() for c in given):
        return given
    return None


def _latest_version(fields: Mapping[str, Any]) -> str:
    """The snapshot's last version ("v2"): its title and abstract are that version's."""
    versions = _versions(fields)
    last = versions[-1] if versions else None
    version = _text(last.get("version")).strip().lower() if isinstance(last, Mapping) else ""
    return version if re.fullmatch(r"v\d{1,4}", version) else ""


def _versions(fields: Mapping[str, Any]) -> list[Any]:
    versions = fields.get("versions")
    return versions if isinstance(versions, list) else []


def _authors(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = _python_list(value) or _split_authors(value)
    if not isinstance(value, list):
        return ()
    names = [_author_name(a) for a in value]
    return tuple(name for name in (clean_text(n) for n in names) if name)


def _split_authors(value: str) -> list[str]:
    """One string of names, affiliations dropped: "A. One (MIT, USA), B. Two and C. Three",
    or "Last, First" names as BibTeX ("Finn, Chelsea and Levine, Sergey") and reference
    managers ("Finn, Chelsea; Levine, Sergey") write them, which come back "First Last"."""
    groups = [group for group in (clean_text(g) for g in _NAME_GROUP.split(
        without_affiliations(value))) if _a_name(group)]
    if _last_first(groups):
        return [_first_last(group) for group in groups]
    return [name for group in groups for name in group.split(",") if _a_name(name)]


def _a_name(text: str) -> bool:
    """Not empty, nor BibTeX's "and others" or an "et al." that stands for more names."""
    return clean_text(text).casefold().rstrip(".") not in ("", "others", "et al")


def _last_first(groups: list[str]) -> bool:
    """Whether the names are "Last, First": each of several holds exactly one comma (a list
    "A, B and C" has none in its last part), or the only one does after a single word, as in
    "Finn, Chelsea" (read as one person, not as two one-word names; not in a script written
    without spaces, where "王伟, 李娜" is two names); and no family name has an initial, as
    "A.B.Kaidalov, M.I.Vysotsky" would."""
    lasts = [group.partition(",")[0] for group in groups]
    if not groups or any(group.count(",") != 1 for group in groups) or any(
            "." in last for last in lasts):
        return False
    return len(groups) > 1 or (len(lasts[0].split()) == 1 and _LATIN_NAME.fullmatch(groups[0])
                               is not None)


def _first_last(name: str) -> str:
    """"Finn, Chelsea" → "Chelsea Finn"; a name with no comma or several stays as it is."""
    if name.count(",") != 1:
        return name
    last, _, first = name.partition(",")
    return f"{first.strip()} {last.strip()}".strip()


def _author_name(author: Any) -> str:
    if isinstance(author, Mapping):  # {"name": "Finn, Chelsea"} reads as the name alone
        name = author.get("name") or author.get("fullname") or ""
        return _author_name(name) if isinstance(name, str) else _text(name)
    if isinstance(author, list):  # authors_parsed: [last, first, suffix]; "Heath," happens
        last, first, suffix = (author + ["", "", ""])[:3]
        return " ".join(str(part).strip().rstrip(",") for part in (first, last, suffix)
                        if str(part).strip().rstrip(","))
    if isinstance(author, str):  # one name of a list: "Finn, Chelsea (Stanford)"
        name = clean_text(without_affiliations(author))
        return _first_last(name) if _last_first([name]) else name
    return _text(author)


def _python_list(value: str) -> list[Any] | None:
    """The snapshot CSV stores lists as Python literals: "[['Doe', 'J.', '']]"."""
    if not value.lstrip().startswith("[") or len(value) > _MAX_LITERAL:
        return None
    try:
        parsed = ast.literal_eval(value)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return parsed if isinstance(parsed, list) else None


def _published(fields: Mapping[str, Any]) -> dt.date | None:
    versions = _versions(fields)
    if versions and isinstance(versions[0], Mapping):
        first = _date(versions[0].get("created"))  # v1: when the paper appeared
        if first:
            return first
    return _date(_first(fields, DATE_FIELDS))


def unreadable_date(item: Mapping[str, Any]) -> str | None:
    """The date an object gives that no reading of ``_date`` understands, if any: a paper
    dated so is filed under the week it was first read, which a warning must say."""
    fields = _flatten(item)
    value = _first(fields, DATE_FIELDS)
    text = _text(value).strip()
    return text[:40] if text and _date(value) is None else None


# "17 Nov 2026", "Nov 17, 2026", "November 17, 2026" (a day and month spelled out: never
# ambiguous, unlike "11/17/2026").
_SPELLED_DATES = ("%d %b %Y", "%d %B %Y", "%b %d, %Y", "%B %d, %Y", "%b %d %Y", "%B %d %Y")
_EPOCH_RANGE = (1e8, 1e11)  # Unix seconds from 1973 to 5138; milliseconds are 1,000 times more


def _date(value: Any) -> dt.date | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _epoch(float(value))
    text = _text(value).strip()
    if not text:
        return None
    try:
        return dt.date.fromisoformat(text[:10])
    except ValueError:
        pass
    try:
        return email.utils.parsedate_to_datetime(text).date()  # "Mon, 2 Apr 2007 19:18:42 GMT"
    except (TypeError, ValueError, IndexError):
        pass
    for spelling in _SPELLED_DATES:
        try:
            return dt.datetime.strptime(text, spelling).date()
        except ValueError:
            continue
    return None


def _epoch(seconds: float) -> dt.date | None:
    if _EPOCH_RANGE[0] * 1000 <= seconds < _EPOCH_RANGE[1] * 1000:
        seconds /= 1000
    if not _EPOCH_RANGE[0] <= seconds < _EPOCH_RANGE[1]:
        return None
    return dt.datetime.fromtimestamp(seconds, dt.UTC).date()
