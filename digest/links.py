"""A link for every paper: the source's own, else its arXiv page, else a title search.

The search link is built by digest from a fixed host: arXiv's title search
(``https://arxiv.org/search/?query=…&searchtype=title``). arXiv, not Hugging Face's paper
search, because every paper a Daily Papers page lists is an arXiv paper but not every arXiv
paper is on Hugging Face, and arXiv's title search matches the words of the title rather
than a semantic guess. The title only ever becomes a percent-encoded query value: its
punctuation is dropped (arXiv's search ignores it), its length capped, and the result
encoded with ``urllib.parse.quote(safe="")``, so no character of it can end the URL, the
Markdown link or the HTML attribute it lands in.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote, urlsplit

from .models import Paper
from .normalize import arxiv_abs_url

__all__ = ["ARXIV_API", "Link", "SEARCH_URL", "is_web_url", "paper_link", "title_search_url"]

SEARCH_URL = "https://arxiv.org/search/?query={query}&searchtype=title"
ARXIV_API = "https://export.arxiv.org"  # where --resolve-ids asks, unless arxiv_api says
MAX_QUERY_CHARS = 300
# Letters, digits and the hyphens inside words survive; the rest is a word break.
_UNSAFE = re.compile(r'[\s\x00-\x1f\x7f<>"]')
_NOT_WORD = re.compile(r"[^\w\-]+|(?<!\w)-|-(?!\w)|_")

LinkKind = Literal["source", "arxiv", "search"]


@dataclass(frozen=True)
class Link:
    """Where a paper's title links to, and whose link it is: the source's own (``source``),
    the arXiv page of its id (``arxiv``), or digest's title search (``search``)."""

    url: str
    kind: LinkKind


def paper_link(paper: Paper) -> Link:
    if paper.url and is_web_url(paper.url.strip()):
        return Link(paper.url.strip(), "source")
    if paper.arxiv_id:
        return Link(arxiv_abs_url(quote(paper.arxiv_id, safe="/.")), "arxiv")
    return Link(title_search_url(paper.title), "search")


def title_search_url(title: str) -> str:
    """arXiv's title search for ``title``: its words only, at most ``MAX_QUERY_CHARS``."""
    words = _title_words(title)
    query = " ".join(words)
    if len(query) >= MAX_QUERY_CHARS:  # shorter, every word fits: the loop would keep them all
        query = ""
        for word in words:
            if len(query) + len(word) + 1 > MAX_QUERY_CHARS:
                break
            query = f"{query} {word}" if query else word[:MAX_QUERY_CHARS]
    # Only letters, digits, hyphens and spaces are left: in ASCII, spaces are all quote() changes.
    return SEARCH_URL.format(query=query.replace(" ", "%20") if query.isascii()
                             else quote(query, safe=""))


def _title_words(title: str) -> list[str]:
    """The words of ``title``, ``_NOT_WORD`` making the rest a break. In an ASCII title
    without a hyphen (whose fate depends on its neighbours) every character but a letter or
    digit is a break, and NFKC changes no ASCII: one translation does it."""
    if title.isascii() and "-" not in title:
        return title.translate(_ASCII_BREAKS).split()
    return _NOT_WORD.sub(" ", unicodedata.normalize("NFKC", title)).split()


_ASCII_BREAKS = str.maketrans({chr(c): " " for c in range(128) if not chr(c).isalnum()})


def is_web_url(url: str) -> bool:
    """An http(s) URL with a host (and a valid port), without blanks, controls, quotes or
    angle brackets: what digest links to or sends requests to."""
    try:
        parts = urlsplit(url)
        return (parts.scheme in ("http", "https") and bool(parts.hostname)
                and (parts.port is None or parts.port > 0) and not _UNSAFE.search(url))
    except ValueError:  # a bad port or IPv6 literal
        return False
