"""Which format a source is in: its content first, its name or Content-Type when content is
ambiguous (plain text could be CSV or a Daily Papers page)."""

from __future__ import annotations

import json
import re
from pathlib import PurePath

from ..errors import SourceError
from .arxiv_listing import looks_like_arxiv_listing
from .csvfmt import looks_like_csv
from .daily_papers import looks_like_daily_papers
from .mailmsg import looks_like_email
from .structured import loads

_EXTENSIONS = {".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv",
               ".tsv": "csv", ".xml": "feed", ".atom": "feed", ".rss": "feed",
               ".txt": "daily-papers", ".md": "daily-papers", ".eml": "email"}
_CONTENT_TYPES = {"json": "json", "jsonl": "jsonl", "ndjson": "jsonl", "x-ndjson": "jsonl",
                  "csv": "csv", "tab-separated-values": "csv", "atom+xml": "feed",
                  "rss+xml": "feed", "rdf+xml": "feed", "xml": "feed"}
_HTML = re.compile(r"<(?:!doctype\s+html|html)\b", re.IGNORECASE)
_FEED = re.compile(r"<(?:rss|feed|rdf:rdf)\b", re.IGNORECASE)
HINT = "daily-papers, arxiv-listing, email, json, jsonl, csv, feed"


def detect_format(text: str, source: str, content_type: str | None = None) -> str:
    head = text.lstrip("\ufeff \t\r\n")[:4000]
    if looks_like_email(head):
        return "email"
    if head.startswith("<"):
        return _markup(head, source)
    if head.startswith("["):
        return "json"
    if head.startswith("{"):
        return "jsonl" if _json_lines(head) else "json"
    hinted = _by_name(source) or _by_content_type(content_type)
    if hinted in ("json", "jsonl", "feed", "email"):
        return hinted  # its parser says precisely what is wrong
    if hinted == "csv" or looks_like_csv(head):
        return "csv"
    if looks_like_arxiv_listing(text):
        return "arxiv-listing"
    if looks_like_daily_papers(text):
        return "daily-papers"
    found = f"it starts with {head[:40]!r}" if head else "it holds only whitespace"
    raise SourceError(source, f"cannot tell the format of this source ({found})",
                      fix=f"force one with the format setting ({HINT})")


def looks_like_html_page(text: str) -> bool:
    """A web page (a maintenance, login or error page), never a listing; a feed is not one."""
    head = text.lstrip("\ufeff \t\r\n")[:1000]
    return head.startswith("<") and bool(_HTML.search(head)) and not _FEED.search(head)


def _markup(head: str, source: str) -> str:
    if looks_like_html_page(head):
        raise SourceError(source, "this is an HTML web page, not a listing",
                          fix="for a Daily Papers page, copy the page's text into a .txt file, "
                              "or use the JSON API https://huggingface.co/api/daily_papers")
    return "feed"


def _json_lines(head: str) -> bool:
    """Several objects, one per line: the first line is a whole object and more follow."""
    lines = [line for line in head.splitlines() if line.strip()]
    if len(lines) < 2 or not lines[1].lstrip().startswith("{"):
        return False
    try:
        return isinstance(loads(lines[0]), dict)
    except json.JSONDecodeError:
        return False


def _by_name(source: str) -> str | None:
    return _EXTENSIONS.get(PurePath(source.split("?", 1)[0]).suffix.lower())


def _by_content_type(content_type: str | None) -> str | None:
    if not content_type:
        return None
    subtype = content_type.split(";", 1)[0].strip().lower().rsplit("/", 1)[-1]
    return _CONTENT_TYPES.get(subtype)
