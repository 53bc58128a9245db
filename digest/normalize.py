"""Text clean-up shared by every ingest format, and the keys dedup compares.

``clean_text`` makes text safe and tidy to show: Unicode NFC, invisible and
direction-changing characters removed, light LaTeX clean-up, whitespace collapsed.
``title_key`` is the identity dedup uses for papers without an arXiv id.
``TermNumbers`` numbers terms in the order they are first seen (a term matrix's columns).
``clean_text`` is idempotent: applying it twice changes nothing (it repeats its
steps until the text stops changing, because one step can expose work for
another, e.g. removing a zero-width space joins a letter and its accent).
"""

from __future__ import annotations

import re
import unicodedata

from .latex import has_latex, strip_latex

# Letters of scripts written without spaces between words (CJK ideographs and kana; Korean is
# written with spaces), for a character class: their runs are sentences, not words.
UNSPACED_LETTERS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"

__all__ = ["clean_text", "encodable", "singular", "strip_latex", "title_key", "find_arxiv_id",
           "arxiv_abs_url", "ARXIV_ID", "TermNumbers"]

# Zero-width characters, bidi controls, BOM, soft hyphen, interlinear annotation marks
# and Unicode tag characters: invisible in a reader, but they can hide or reorder text.
_INVISIBLE = re.compile(
    "[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
    "\ufff9-\ufffb\U000e0000-\U000e007f]"
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SURROGATE = re.compile("[\ud800-\udfff]")  # lone halves (from JSON "\ud800") cannot be encoded
_MAX_PASSES = 6
MAX_CLEAN_CHARS = 100_000
_ASCII_CONTROLS = bytes(range(0x20)) + b"\x7f"  # and so every whitespace but the space

_TYPOGRAPHY = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-",
    "\u2212": "-",
})
_VERSION_TAG = re.compile(r"[\(\[]\s*v\d+\s*[\)\]]\s*$", re.IGNORECASE)
_NON_WORD = re.compile(r"[\W_]+")

# New-style ids (YYMM.NNNN, YYMM.NNNNN from 2015) and old-style ids (archive[.XX]/YYMMNNN).
ARXIV_ID = re.compile(
    r"(?<![\w.])(?:arxiv[:.]\s*)?"
    r"(?P<id>\d{2}(?:0[1-9]|1[0-2])\.\d{4,5}|(?P<archive>[a-z][a-z\-]+)(?:\.[a-z]{2})?/\d{7})"
    r"(?P<version>v\d+)?(?!\w)",
    re.IGNORECASE,
)
_ARXIV_CONTEXT = re.compile(r"arxiv|huggingface\.co/papers/", re.IGNORECASE)


def clean_text(text: str) -> str:
    """Normalize text for display: NFC, no invisible characters, light LaTeX, one-space gaps.

    Text past ``MAX_CLEAN_CHARS`` is dropped first: no title or abstract is that long (ingest
    caps abstracts at a few thousand characters, with a warning), and it bounds the work.
    """
    text = text[:MAX_CLEAN_CHARS]
    if text.isascii():
        if _is_tidy_ascii(text):  # most titles and abstracts: nothing to do
            return text
        if not has_latex(text):  # one cheap pass is enough
            return collapse_whitespace(_CONTROL.sub(" ", text))
    elif _is_tidy(text):  # most other text
        return text
    for _ in range(_MAX_PASSES):
        cleaned = _clean_once(text)
        if cleaned == text:
            break
        text = cleaned
    return text


def _is_tidy_ascii(text: str) -> bool:
    """ASCII text that ``clean_text`` gives back as it is: no control character (so the space
    is its only whitespace), nothing LaTeX clean-up rewrites, no space to collapse."""
    no_control = len(text.encode("ascii").translate(None, _ASCII_CONTROLS)) == len(text)
    return no_control and not has_latex(text) and _single_spaced(text)


def _is_tidy(text: str) -> bool:
    """Text that ``clean_text`` gives back as it is: printable (no surrogate, invisible or
    control character, and the space its only whitespace), NFC, nothing LaTeX clean-up
    rewrites, no space to collapse."""
    return (text.isprintable() and _single_spaced(text) and not has_latex(text)
            and unicodedata.is_normalized("NFC", text))


def encodable(text: str) -> str:
    """``text`` with each lone half of a surrogate pair (JSON's "\\ud800") as U+FFFD: no
    UTF-8 text can hold one."""
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


def _clean_once(text: str) -> str:
    # Surrogates, invisible and control characters are all unprintable: printable text
    # skips the substitutions (most non-ASCII text).
    if not text.isprintable():
        text = encodable(text)
    text = unicodedata.normalize("NFC", text)
    visible = text
    if not text.isprintable():
        visible = _CONTROL.sub(" ", _INVISIBLE.sub("", text))
    stripped = strip_latex(visible)
    # NFC text stays NFC unless something was taken out: "e", a zero-width space and an
    # acute accent compose to "é" once the space is gone.
    if stripped != text:
        stripped = unicodedata.normalize("NFC", stripped)
    return collapse_whitespace(stripped)


def collapse_whitespace(text: str) -> str:
    """Runs of whitespace to one space, none at the ends: ``re.sub(r"\\s+", " ", text).strip()``
    (``str.split`` and ``\\s`` agree on what whitespace is), without a substitution per space."""
    if text.isprintable() and _single_spaced(text):  # the space is printable text's only space
        return text
    return " ".join(text.split())


def _single_spaced(text: str) -> bool:
    """No two spaces in a row and none at the ends."""
    return "  " not in text and not text.startswith(" ") and not text.endswith(" ")


def title_key(title: str) -> str:
    """The identity of a title: case, punctuation, typography, Unicode forms and "(v2)" ignored."""
    text = unicodedata.normalize("NFKC", clean_text(title)).translate(_TYPOGRAPHY)
    text = _VERSION_TAG.sub("", text.strip())
    return _NON_WORD.sub(" ", text.casefold()).strip()


def find_arxiv_id(text: str | None) -> tuple[str, str] | None:
    """Find an arXiv id in an id or URL: (id without version, version suffix or '').

    A bare id ("2401.01234v2", "arXiv:2401.01234", "hep-th/9901001") is taken as is;
    inside longer text the id counts only next to "arxiv" or a Hugging Face paper
    URL, so a DOI or an unrelated number is not mistaken for one.
    """
    if not text:
        return None
    text = text.strip()
    match = ARXIV_ID.search(text)
    if not match:
        return None
    if match.span() != (0, len(text)) and not _ARXIV_CONTEXT.search(text):
        return None
    arxiv_id = match["id"].lower()
    if match["archive"]:  # "math.GT/0309136" is "math/0309136"
        arxiv_id = f"{match['archive'].lower()}/{arxiv_id.rsplit('/', 1)[1]}"
    return arxiv_id, (match["version"] or "").lower()


def arxiv_abs_url(arxiv_id: str, version: str = "") -> str:
    return f"https://arxiv.org/abs/{arxiv_id}{version}"


def singular(word: str) -> str:
    """A lower-case word's crude singular, to fold "agents" into "agent" and "studies" into
    "study" (never "process", "status" or "analysis"): the one rule every stage uses."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


class TermNumbers(dict[str, int]):
    """Each term's number, in the order terms are first asked for. Looked up through ``map``
    (``map(numbers.__getitem__, terms)``), a known term costs no Python call."""

    def __missing__(self, term: str) -> int:
        number = self[term] = len(self)
        return number
