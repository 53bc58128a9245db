"""Untrusted text (titles, abstracts, model output) made safe for each output format.

* Markdown: :func:`escape_markdown` — one line that cannot start a heading, list,
  quote or table, nor make emphasis, a link, an image or raw HTML.
* Plain text: :func:`plain_text` — one line, no control characters, and URL-like
  text defanged (``https[:]//``) so mail clients do not turn it into a link.
* HTML: jinja2's autoescape, plus :func:`html_text`, which also breaks URL-like
  text with an invisible ``<wbr>`` so mail clients do not linkify it.

Every format first drops control characters and bidirectional overrides, which
could rewrite a terminal or reorder what a reader sees.
Links in an issue come only from ingested records, or from digest itself (``digest.links``:
the arXiv page of a known id, else arXiv's title search), through :func:`safe_url`.
"""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit

from markupsafe import Markup, escape

# C0/C1 controls (tab and newline become spaces first), bidi embeddings/overrides/isolates,
# and what no UTF-8 or XML file may hold: lone surrogates (say from a model's JSON) and U+FFFE/F.
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]")
# Characters that always have inline meaning in CommonMark/GFM (code, links, tables, math
# on GitHub, emphasis); a backslash makes each literal. A "*" is always one: a lone "A*B" can
# pair with a star of another value on the same line, or with the template's own "*(".
# The others are escaped only where they would make markup: see ``_CONTEXT``.
_MD_ALWAYS = re.compile(r"([\\`\[\]|$*])")
# "_" unless inside a word (never emphasis there); "~" where it could close a strike-through
# (GFM pairs one "~" or two across values, and no template writes one, so a "~" that cannot
# close pairs with nothing: after a space, as in "at most ~ 3800" or "about ~50%", or before a
# letter or digit after punctuation or at the start, as the templates write a value after a
# space or punctuation); "&" before an entity. An "@" needs one only in what GFM autolinks:
# see ``_AUTOLINK``.
_CONTEXT = re.compile(r"(?<![^\W_])_|_(?![^\W_])|(?<!\s)~(?![^\W_])|(?<=[^\W_])~|&(?=#?\w+;)")
# "<" before a tag or an autolink (a letter, "/", "!" or "?"; or an address's local part and
# its "@": "<1admin@intranet>"), not in "a <= b": written "&lt;", not "\<", as a template of
# the user's may put the value inside an HTML block, where a backslash escapes nothing and an
# entity still shows "<".
_TAG_OPEN = re.compile(r"<(?=[A-Za-z/!?]|[\w.!#$%&'*+/=?^`{|}~-]+@)")
# What would start a block (heading, quote, list, setext underline) at a line's start.
_BLOCK_START = re.compile(r"^([#>+=\-])")
_ORDERED_LIST_START = re.compile(r"^(\d+)([.)])")
# A heading's closing sequence ("## Title ##") would be dropped from the title.
_TRAILING_HASHES = re.compile(r"#+$")
# GFM (and most mail clients) turn bare URLs, www. names and e-mail addresses into links;
# GFM's "www." may follow "_" too ("Foo_www.x"), where "\b" sees no word start.
_AUTOLINK = re.compile(
    r"(?i)(?<=\w)://|(?<=(?<![^\W_])www)\.|(?<=[\w.+-])@(?=[\w-]+\.[\w-])")
# Every character or start of line that one of the patterns above (or "~") needs to match,
# with "://" and "www." (``_may_need_escape``).
_MARKUP_CHAR = re.compile(r"[\\`\[\]|$*_<&~@#]")
_MARKUP_START = re.compile(r"[>+=\-]|\d+[.)]")
_SLUG_DROP = re.compile(r"[^\w\- ]", re.UNICODE)
# LaTeX left in a title or abstract: "\oni" (a paper's own macro) becomes "oni", "\mathcal{R}"
# becomes "R"; "Q^*" becomes "Q∗" (the asterisk operator: a star that is never emphasis).
_LATEX_MACRO = re.compile(r"\\([A-Za-z]+)\*?(?:\{([^{}\\]*)\})?")
_LATEX_STAR = re.compile(r"\^\{?\*\}?")


def one_line(text: object) -> str:
    """One line of text: whitespace collapsed, control and bidi-override characters removed,
    LaTeX macros turned into words."""
    text = _INVISIBLE.sub("", " ".join(str(text).split()))
    if "\\" in text or "^" in text:
        text = _LATEX_STAR.sub("\u2217", _LATEX_MACRO.sub(lambda m: m[2] or m[1], text))
    return text


def escape_markdown(text: object) -> str:
    """Plain text that Markdown shows as typed: one line, nothing that makes markup or links,
    and a backslash only where a character would otherwise make markup at its position."""
    text = one_line(text)
    if not _may_need_escape(text):  # most titles and gists: no pattern below can match
        return text
    text = _MD_ALWAYS.sub(r"\\\1", text)
    text = _CONTEXT.sub(r"\\\g<0>", text)
    text = _TAG_OPEN.sub("&lt;", text)
    text = _AUTOLINK.sub(lambda match: "\\" + match[0], text)
    text = _ORDERED_LIST_START.sub(r"\1\\\2", text)
    text = _TRAILING_HASHES.sub(lambda match: "\\#" * len(match[0]), text)
    return _BLOCK_START.sub(r"\\\1", text)


def _may_need_escape(line: str) -> bool:
    """Whether an escaping pattern may match in ``line`` (one line): one character class, then
    plain look-ups (one alternation of them all, ``(?i:www)`` among them, took ~4 µs a title,
    0.3 s of a 50k issue). Only "W" and "w" lower-case to a "w"."""
    return (_MARKUP_CHAR.search(line) is not None or "://" in line
            or ("." in line and "www." in line.lower()) or _MARKUP_START.match(line) is not None)


def plain_text(text: object) -> str:
    """One line for a plain-text mail, ``https://x`` defanged to ``https[:]//x``, ``www.`` to
    ``www[.]``, ``a@b`` to ``a[@]b``."""
    return _AUTOLINK.sub(lambda match: f"[{match[0][0]}]{match[0][1:]}", one_line(text))


def without_rules(text: str) -> str:
    """A run of one rule character cut to three: wrapped onto a line of its own, a run of 72
    dashes under "6. Notice" would be the plain text's own section heading."""
    return _RULE_RUN.sub(r"\1\1\1", text)


_RULE_RUN = re.compile(r"([-=_*~#+])\1{3,}")


def html_text(text: object) -> Markup:
    """Escaped HTML text with an invisible ``<wbr>`` inside URL-like runs, so nothing linkifies."""
    escaped = str(escape(one_line(text)))
    return Markup(_AUTOLINK.sub(lambda match: f"{match[0][0]}<wbr>{match[0][1:]}", escaped))


def safe_url(url: str | None) -> str | None:
    """An http(s) URL fit for ``[text](<url>)`` and ``href="…"``, or None."""
    if not url:
        return None
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    return quote(url.strip(), safe=":/?#[]@!$&'()*+,;=%~.-_")


def github_slug(title: str, taken: set[str], fallback: str = "section") -> str:
    """The anchor GitHub gives a heading, made unique like GitHub does (-1, -2...);
    ``fallback`` when the title has no letter or digit to make one from."""
    base = _SLUG_DROP.sub("", title.lower()).replace(" ", "-")
    if not base.strip("-_"):
        base = fallback
    slug, n = base, 0
    while slug in taken:
        n += 1
        slug = f"{base}-{n}"
    taken.add(slug)
    return slug
