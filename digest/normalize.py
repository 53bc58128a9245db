"""Text clean-up shared by every ingest format, and the keys dedup compares.

``clean_text`` makes text safe and tidy to show: Unicode NFC, invisible and
direction-changing characters removed, light LaTeX clean-up, whitespace collapsed.
``title_key`` is the identity dedup uses for papers without an arXiv id.
Both are idempotent: applying them twice changes nothing.
"""

from __future__ import annotations

import re
import unicodedata

# Zero-width characters, bidi controls, BOM, soft hyphen and Unicode tag characters:
# invisible in a reader, but they can hide or reorder text.
_INVISIBLE = re.compile(
    "[\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_WHITESPACE = re.compile(r"\s+")

_LATEX_COMMAND_WITH_ARG = re.compile(r"\\(?:emph|textbf|textit|texttt|textsc|mathrm|mathbf|"
                                     r"mathit|mathcal|text|url|mbox)\s*\{([^{}]*)\}")
_LATEX_INLINE_MATH = re.compile(r"(?<!\\)\$([^$]{1,200}?)(?<!\\)\$")
_LATEX_ESCAPES = {r"\%": "%", r"\&": "&", r"\_": "_", r"\#": "#", r"\$": "$", "~": " ",
                  "``": "\u201c", "''": "\u201d"}

_TYPOGRAPHY = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-",
    "\u2212": "-",
})
_VERSION_TAG = re.compile(r"[\(\[]\s*v\d+\s*[\)\]]\s*$", re.IGNORECASE)
_NON_WORD = re.compile(r"[\W_]+")

ARXIV_ID = re.compile(
    r"(?<![\w.])(?:arxiv:\s*)?((?:\d{4}\.\d{4,5})|(?:[a-z][a-z.\-]+/\d{7}))(v\d+)?(?![\w])",
    re.IGNORECASE,
)


def clean_text(text: str) -> str:
    """Normalize text for display: NFC, no invisible characters, light LaTeX, one-space gaps."""
    text = unicodedata.normalize("NFC", text)
    text = _INVISIBLE.sub("", text)
    text = _CONTROL.sub(" ", text)
    text = strip_latex(text)
    return _WHITESPACE.sub(" ", text).strip()


def strip_latex(text: str) -> str:
    """Turn the LaTeX that abstracts commonly carry into plain text."""
    if "\\" not in text and "$" not in text and "``" not in text:
        return text
    previous = None
    while previous != text:  # nested \emph{\textbf{x}}
        previous = text
        text = _LATEX_COMMAND_WITH_ARG.sub(r"\1", text)
    text = _LATEX_INLINE_MATH.sub(r"\1", text)
    for escaped, plain in _LATEX_ESCAPES.items():
        text = text.replace(escaped, plain)
    return text


def title_key(title: str) -> str:
    """The identity of a title: case, punctuation, typography, Unicode forms and "(v2)" ignored."""
    text = unicodedata.normalize("NFKC", clean_text(title)).translate(_TYPOGRAPHY)
    text = _VERSION_TAG.sub("", text.strip())
    return _NON_WORD.sub(" ", text.casefold()).strip()


def find_arxiv_id(text: str | None) -> tuple[str, str] | None:
    """Find an arXiv id in an id or URL: (id without version, version suffix or '')."""
    if not text:
        return None
    match = ARXIV_ID.search(text)
    if not match:
        return None
    return match.group(1).lower(), (match.group(2) or "").lower()


def arxiv_abs_url(arxiv_id: str, version: str = "") -> str:
    return f"https://arxiv.org/abs/{arxiv_id}{version}"
