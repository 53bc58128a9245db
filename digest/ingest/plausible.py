"""Is this a paper? The confidence rules that keep READMEs, notes and mails out of the issue.

A record is a paper when its title reads as a title (not a Markdown heading, a list item,
a link, a mail header, a greeting or a package name) and its abstract, when it has one,
reads as prose (not a list of links, a list, a heading or a signature). A source is a
listing when at least one record is a paper *with* an abstract that reads like one:
a few words ending in a full stop ("We prove a variation of Gronwall's lemma.", the
shortest abstracts in the arXiv sample) or a dozen words. Records that are not papers
are dropped with one warning per source; a source with no paper at all is refused.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..errors import SourceError
from ..models import Record
from ..normalize import UNSPACED_LETTERS
from .base import Parsed, describe, where

_MARKUP_START = re.compile(r"^(?:#{1,6}\s|[-*+•▪◦]\s|\d{1,3}[.)]\s|>|\||```|~~~)")
_LINK = re.compile(r"^(?:https?://|www\.|mailto:)|^[^@\s]+@[^@\s]+\.\w+", re.IGNORECASE)
_MAIL_HEADER = re.compile(r"^(?:from|to|cc|bcc|subject|date|sent|reply-to):\s", re.IGNORECASE)
# A greeting or closing is the whole line ("Hi all,", "Cheers, Bob"): "Hey, That's My Model!"
# and "Best-of-N Sampling" are paper titles.
_SALUTATION = re.compile(
    r"^(?:(?:hi|hello|hey|dear|thanks|thank you|many thanks|cheers|best|best wishes|"
    r"(?:best |kind |warm )?regards|greetings|sincerely|yours)(?:[\s,]+\w+){0,2}[\s,.!]*$"
    r"|sent from my\b|--)", re.IGNORECASE)
_IDENTIFIER = re.compile(r"^[a-z0-9]*\d[a-z0-9._-]*$|^[a-z0-9]+[._-][a-z0-9._-]+$")
_SENTENCE_END = re.compile(r"[.!?。！？][\"')\]」』]?$")
# Letters of scripts written without spaces between words, Thai and Lao too.
_UNSPACED = re.compile(f"[{UNSPACED_LETTERS}\u0e00-\u0eff]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_ASCII_LETTERS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_SAMPLE = 2000  # characters of an abstract looked at: enough to tell prose from a list
_SHOWN = 3  # titles quoted in a refusal


class NotAListing(SourceError):
    """A readable source that holds no paper listing (a README, a personal mail, a bounce)."""


def title_problem(title: str) -> str | None:
    """Why ``title`` is not a paper title, or None when it reads as one."""
    if not _has_letters(title, 2):
        return "the title has no words"
    if _MARKUP_START.match(title):
        return "the title is a Markdown heading, a list item or a quote"
    links, words = _links_and_words(title)
    if links and words - links < 2:
        return "the title is a link or an address"
    if _MAIL_HEADER.match(title) or _SALUTATION.match(title) or title.endswith((",", ":")):
        return "the title is a mail header, a greeting or a lead-in line"
    if _IDENTIFIER.match(title):
        return "the title is a version or a package name"
    return None


def abstract_problem(abstract: str) -> str | None:
    """Why a non-empty ``abstract`` is not one, or None when it reads as one."""
    sample = abstract[:_SAMPLE]
    links, words = _links_and_words(sample)
    if links and links * 3 >= words:
        return "the abstract is a list of links"
    if _MARKUP_START.match(abstract):
        return "the abstract is a Markdown heading or a list"
    if _SALUTATION.match(sample):
        return "the abstract is a greeting or a signature"
    if _mostly_numbers_or_symbols(sample):
        return "the abstract is mostly numbers or symbols"
    return None


def _mostly_numbers_or_symbols(text: str) -> bool:
    """Fewer letters than half its characters other than spaces. Most text has letters for
    half of all its characters: its spaces need no counting."""
    if _has_letters(text, _half(len(text))):
        return False
    return not _has_letters(text, _half(len(text) - text.count(" ")))


def _half(count: int) -> int:
    """Half of ``count``, rounded up: ``2 * n >= count`` exactly when ``n >= _half(count)``."""
    return (count + 1) // 2


def _has_letters(text: str, wanted: int) -> bool:
    """Whether ``text`` has ``wanted`` letters or more; the non-ASCII characters are looked at
    only when the ASCII letters fall short (they are few, and slow to count)."""
    letters = _ascii_letters(text)
    return letters >= wanted or letters + _other_letters(text) >= wanted


def _ascii_letters(text: str) -> int:
    """How many ASCII letters ``text`` has, without a regex (it was most of ingest's time)."""
    ascii_part = text.encode("ascii", "ignore")
    return len(ascii_part) - len(ascii_part.translate(None, _ASCII_LETTERS))


def _other_letters(text: str) -> int:
    """The non-ASCII letters, one by one: what ``[^\\W\\d_]`` matches is alphanumeric, not a
    digit."""
    if text.isascii():
        return 0
    return sum(1 for run in _NON_ASCII.findall(text) for char in run
               if char.isalnum() and not char.isdecimal())


def _links_and_words(text: str) -> tuple[int, int]:
    """How many words of ``text`` are links or addresses, and how many words it has. Text
    with no link sign has no link, and is not split: (0, 0)."""
    if not _has_link_sign(text.lower()):
        return 0, 0
    words = text.split()
    return sum(map(bool, map(_LINK.match, words))), len(words)


def _has_link_sign(lowered: str) -> bool:
    """Whether lower-case text holds what every word _LINK matches holds."""
    return "://" in lowered or "www." in lowered or "mailto:" in lowered or "@" in lowered


def reads_as_prose(abstract: str) -> bool:
    """A sentence of five words or more, or a dozen words. Chinese and Japanese write no
    spaces between words: there two of their characters count as a word."""
    words = len(abstract.split())
    if words < 12 and not abstract.isascii():
        words += len(_UNSPACED.findall(abstract)) // 2
    return words >= 12 or (words >= 5 and bool(_SENTENCE_END.search(abstract)))


def record_problem(record: Record) -> str | None:
    return title_problem(record.title) or (abstract_problem(record.abstract)
                                           if record.abstract else None)


def screen(parsed: Parsed, source: str, *, kind: str = "file") -> Parsed:
    """Drop the records that are not papers (one warning), refuse a source with no paper."""
    kept, dropped = [], []
    for record in parsed.records:
        problem = record_problem(record)
        if problem is None:
            kept.append(record)
        else:
            dropped.append((record, problem))
    if not any(reads_as_prose(record.abstract) for record in kept):
        raise not_a_listing(source, kind, [r for r, _ in dropped] + kept)
    if dropped:
        parsed.warnings.append(_dropped_note(source, dropped))
    parsed.records = kept
    return parsed


def not_a_listing(source: str, kind: str, records: Sequence[Record] = (),
                  reason: str = "") -> NotAListing:
    """The refusal: 'no paper listing in this message', with what was found instead."""
    if not reason:
        shown = ", ".join(repr(r.title[:40]) for r in records[:_SHOWN])
        reason = ("no title followed by an abstract that reads like one"
                  + (f" (titles found: {shown})" if shown else ""))
    return NotAListing(source, f"no paper listing in this {kind}: {reason}",
                       fix="pass a listing (a Daily Papers page, an arXiv listing e-mail, JSON, "
                           "CSV or a feed); nothing was kept from it")


def _dropped_note(source: str, dropped: list[tuple[Record, str]]) -> str:
    first, problem = dropped[0]
    more = f" and {len(dropped) - 1} more" if len(dropped) > 1 else ""
    count = f"{len(dropped)} record{'s' if len(dropped) != 1 else ''}"
    return describe(source, f"{count} not read as papers, skipped: "
                    f"{where(first.sighting.position, first.sighting.line)} "
                    f"({first.title[:40]!r}: {problem}){more}",
                    fix="check these entries if they are papers")
