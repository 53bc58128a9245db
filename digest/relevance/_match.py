"""Matching a reader's terms and names against papers.

Terms (keywords, excludes) match as phrases, ignoring case, accents and the hyphens,
slashes and spaces between words: "sim-to-real" matches "Sim to Real" and "sim-to-real",
"world model" matches "World Models". Names match on the family name and the first
initial, so "Chelsea Finn" follows "C. Finn", "Finn, Chelsea" and "Chelsea B. Finn";
two full first names must agree ("Carl Finn" is someone else).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["NameKey", "Phrase", "fold", "name_key", "phrases"]

_TOKEN = re.compile(r"[\w+#]+")


def fold(text: str) -> str:
    """Lower case, accents off, words separated by single spaces: 'Sim-to-Réal' → 'sim to real'."""
    plain = text.casefold()
    if not plain.isascii():  # ASCII has nothing to decompose: a week's abstracts mostly
        decomposed = unicodedata.normalize("NFKD", plain)
        plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(_TOKEN.findall(plain.replace("_", " ")))


@dataclass(frozen=True)
class Phrase:
    """One term of the profile and the pattern that finds it in folded text."""

    term: str
    pattern: re.Pattern[str]

    def found_in(self, folded_text: str) -> bool:
        return self.pattern.search(folded_text) is not None


def phrases(terms: Sequence[str]) -> list[Phrase]:
    """Patterns for the terms that have a word in them (a plural 's'/'es' also matches)."""
    found = []
    for term in terms:
        words = fold(term)
        if words:
            pattern = rf"(?<![\w+#]){re.escape(words)}(?:e?s)?(?![\w+#])"
            found.append(Phrase(term, re.compile(pattern)))
    return found


@dataclass(frozen=True)
class NameKey:
    last: str
    first: str  # the folded first given name ('' if none); one letter when only an initial

    def same_person(self, other: NameKey) -> bool:
        if not self.last or self.last != other.last or not self.first or not other.first:
            return False
        if len(self.first) > 1 and len(other.first) > 1:
            return self.first == other.first
        return self.first[0] == other.first[0]


def name_key(name: str) -> NameKey:
    """'Finn, Chelsea' / 'Chelsea B. Finn' / 'C. Finn' → last 'finn', first 'chelsea' / 'c';
    a suffix ('Jr.', 'II') is no family name, and a trailing comma no "Last, First"."""
    name = name.strip().rstrip(",").strip()
    last_part, comma, first_part = name.partition(",")
    if comma and _unsuffixed(first_part.split()) == []:  # "Heath, Jr." or "Evans, II"
        last_part, comma, first_part = last_part, "", ""
    given, family = (first_part, last_part) if comma else _split_given(last_part)
    family_words = _unsuffixed(fold(family).split())
    given_words = fold(given.replace(".", ". ")).split()
    return NameKey(family_words[-1] if family_words else "",
                   given_words[0] if given_words else "")


_SUFFIXES = frozenset(["jr", "sr", "ii", "iii", "iv"])


def _unsuffixed(words: list[str]) -> list[str]:
    while words and words[-1].lower().rstrip(".") in _SUFFIXES:
        words = words[:-1]
    return words


def _split_given(name: str) -> tuple[str, str]:
    words = _unsuffixed(name.split())
    return (" ".join(words[:-1]), words[-1]) if words else ("", "")
