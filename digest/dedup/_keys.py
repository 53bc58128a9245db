"""What dedup compares: identity keys for titles, abstract words, and title markers.

``normalize.title_key`` already ignores case, punctuation, typography, Unicode forms,
whitespace and a trailing "(v2)". Dedup's identity key adds what that leaves:
HTML entities, accents, look-alike letters from other scripts hidden inside Latin
words, and hyphenation ("Pre-training" = "Pretraining").

Markers are the few words that make two otherwise similar titles different
papers: "Comment on X" and "Reply to Comment on X", "Part II" and "Part III",
"The Third Workshop" and "The Fourth Workshop", "Foo 2024" and "Foo 2025".
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass

from ..normalize import UNSPACED_LETTERS, clean_text, title_key

# Letters of other scripts that look like Latin ones (lower case: keys are casefolded).
# Applied only to words that mix them with Latin letters or are made of them alone in a
# Latin title, so Cyrillic and Greek words stay what they are.
_LOOKALIKES = str.maketrans({
    "а": "a", "в": "b", "е": "e", "һ": "h", "н": "h", "і": "i", "ј": "j", "к": "k",
    "ӏ": "l", "м": "m", "о": "o", "р": "p", "ԛ": "q", "ѕ": "s", "т": "t", "с": "c",
    "у": "y", "х": "x", "ԁ": "d", "ԝ": "w",
    "α": "a", "β": "b", "ε": "e", "η": "h", "ι": "i", "κ": "k", "μ": "m", "ν": "v",
    "ο": "o", "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "ζ": "z",
})
_LATIN = re.compile(r"[a-z]")
_WORD = re.compile(r"\w+")
_DIGITS = re.compile(r"\d+")  # in a loose title "Qwen2.5" is "qwen2 5"
# In ASCII text ``\w`` is letters, digits and "_": every other ASCII byte separates words, as
# the spaces it becomes do for ``bytes.split``, and capitals become small letters (one C pass
# over the bytes, no regex scan). Bytes of UTF-8 sequences stay as they are.
_ASCII_NON_WORD = bytes.maketrans(bytes(range(128)), bytes(
    (c if _WORD.fullmatch(chr(c)) else 32) if not chr(c).isupper() else c + 32
    for c in range(128)))

# Words that make a text about another paper rather than the paper itself.
_KIND_WORDS = {
    "comment": "comment", "comments": "comment",
    "reply": "reply", "replies": "reply", "rejoinder": "reply",
    "erratum": "erratum", "errata": "erratum", "corrigendum": "erratum",
    "addendum": "addendum", "retraction": "retraction", "retracted": "retraction",
    "supplement": "supplement", "supplementary": "supplement",
}
_KIND_PREFIXES = {"response to": "reply", "correction to": "erratum"}
_ROMAN = {"i": 1, "ii": 2, "iii": 3, "iv": 4, "v": 5, "vi": 6, "vii": 7, "viii": 8, "ix": 9,
          "x": 10, "xi": 11, "xii": 12, "xiii": 13, "xiv": 14, "xv": 15}
_AMBIGUOUS_ROMAN = {"i", "v", "x"}  # also the pronoun, a variable, "X-ray"
_PART_WORDS = {"part", "paper", "volume", "vol", "chapter", "section", "book", "no", "series"}
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6,
             "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10, "one": 1, "two": 2,
             "three": 3, "four": 4, "five": 5}


def loose_title(title: str, key: str | None = None) -> str:
    """``title_key`` plus HTML entities, accents and hidden look-alike letters folded; pass
    the title's ``title_key`` when already made (without "&" unescaping changes nothing)."""
    if key is None or "&" in title:
        key = title_key(html.unescape(title))
    if key.isascii():
        return key
    latin_title = bool(_LATIN.search(key))
    words = (_fold_lookalikes(word, latin_title) for word in key.split())
    return _strip_accents(" ".join(words))


def identity_key(title: str) -> str:
    """The exact-identity key of a title: its loose form without word gaps."""
    return loose_title(title).replace(" ", "")


def _fold_lookalikes(word: str, latin_title: bool) -> str:
    """Fold look-alikes in Latin words, and in words made only of them ("а") in Latin titles."""
    if word.isascii() or not latin_title:
        return word
    folded = word.translate(_LOOKALIKES)
    return folded if _LATIN.search(word) or folded.isascii() else word


def _strip_accents(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return unicodedata.normalize(
        "NFC", "".join(ch for ch in decomposed if not unicodedata.combining(ch)))


_HTML_ENTITY = re.compile(r"&(?:#\d+|#x[0-9a-f]+|[a-z]+\d*);", re.IGNORECASE)
_VERSION_TAG = re.compile(r"[(\[]\s*v\d+\s*[)\]]\s*$", re.IGNORECASE)


def blemishes(title: str) -> int:
    """How many listing artefacts a title shows; dedup shows the cleanest title it has."""
    marks = [
        bool(_HTML_ENTITY.search(title)),
        title != clean_text(title) or title != unicodedata.normalize("NFKC", title),
        any(_fold_lookalikes(w, True) != w for w in title.casefold().split()),
        title.isupper() or title.islower(),
        bool(_VERSION_TAG.search(title)),
    ]
    return sum(marks)


def abstract_words(abstract: str) -> list[bytes]:
    """The words of an abstract (runs of word characters), NFKC and casefolded, in order, as
    UTF-8: bytes split faster than text, and an abstract's words are only hashed."""
    return [word for piece in split_pieces(folded_abstract(abstract))
            for word in piece_words(piece)]


def folded_abstract(abstract: str) -> bytes:
    """An abstract NFKC and casefolded, as UTF-8: what ``split_pieces`` cuts."""
    if abstract.isascii():  # NFKC and casefold change nothing more than lower() there
        return abstract.encode()
    return unicodedata.normalize("NFKC", abstract).casefold().encode("utf-8", "surrogatepass")


def split_pieces(text: bytes) -> list[bytes]:
    """Runs of bytes between ASCII non-word characters, ASCII letters in lower case: each an
    ASCII word, or a piece whose words ``piece_words`` finds. Bytes of 128 and over are kept
    as they are (one C pass over the bytes, no regex scan)."""
    return text.translate(_ASCII_NON_WORD).split()


def piece_words(piece: bytes) -> list[bytes]:
    """The words of one piece: itself when ASCII; else a piece with other letters may hold
    characters no word has ("–", "×"), and the pattern splits it."""
    if piece.isascii():
        return [piece]
    words = _WORD.findall(piece.decode("utf-8", "surrogatepass"))
    return [part.encode("utf-8", "surrogatepass") for word in words for part in _unspaced(word)]


_UNSPACED = re.compile(f"[{UNSPACED_LETTERS}]{{2,}}")  # a run of them is a sentence


def _unspaced(word: str) -> list[str]:
    """``word``, or its runs of an unspaced script read two characters at a time ("大型语言" →
    "大型", "型语", "语言"), as an abstract in Chinese is compared on its character pairs."""
    if not _UNSPACED.search(word):
        return [word]
    parts: list[str] = []
    last = 0
    for run in _UNSPACED.finditer(word):
        parts += [word[last:run.start()]] if run.start() > last else []
        text = run.group()
        parts += [text[i:i + 2] for i in range(len(text) - 1)]
        last = run.end()
    return parts + ([word[last:]] if last < len(word) else [])


@dataclass(frozen=True)
class Markers:
    """What a title says about which paper of a family it is."""

    kinds: frozenset[str]    # comment, reply, erratum, ...
    parts: frozenset[int]    # Part II, Paper 3, the Third Workshop
    numbers: frozenset[str]  # any other number in the title: 2024, GPT-4, 7B

    def compatible(self, other: Markers) -> bool:
        """False when the markers say the two titles are different papers of one family."""
        if self.kinds != other.kinds or self.parts != other.parts:
            return False
        return not (self.numbers and other.numbers and self.numbers != other.numbers)


def title_markers(title: str, loose: str | None = None) -> Markers:
    """The markers of ``title``; pass its ``loose_title`` when already computed."""
    text = loose if loose is not None else loose_title(title)
    words = text.split()
    kinds = {_KIND_WORDS[w] for w in _KIND_WORDS.keys() & words}
    if (prefix := " ".join(words[:2])) in _KIND_PREFIXES:
        kinds.add(_KIND_PREFIXES[prefix])
    parts = set() if _PART_STARTS.isdisjoint(words) else _parts(words)
    # digit runs never cross the spaces between words: one scan of the whole title
    numbers = set(_DIGITS.findall(text)) - {str(part) for part in parts}
    return Markers(frozenset(kinds), frozenset(parts), frozenset(numbers))


_PART_STARTS = frozenset(_ORDINALS) | frozenset(_ROMAN) | _PART_WORDS  # a part needs one


def _parts(words: list[str]) -> set[int]:
    parts = set()
    for previous, word in zip(["", *words], words, strict=False):
        if word in _ORDINALS and (word not in ("one", "two", "three", "four", "five")
                                  or previous in _PART_WORDS):
            parts.add(_ORDINALS[word])
        elif word in _ROMAN and (word not in _AMBIGUOUS_ROMAN or previous in _PART_WORDS):
            parts.add(_ROMAN[word])
        elif previous in _PART_WORDS - {"no"} and word.isdigit():
            parts.add(int(word))
    return parts
