"""The offline summarizer: extractive, deterministic, no network.

Everything it writes is taken from the abstracts' own sentences, lightly trimmed:

* Sentences come from ``digest.sentences``: split without being fooled by abbreviations,
  cleaned, rewritten to stand alone.
* :func:`paper_gist` picks the sentence that states a paper's contribution
  ("we propose …", "X is a …", the method named in the title) over background
  openers, results and "code is available" lines.
* :func:`theme_summary` picks a few sentences close to the theme's TF-IDF centroid
  and its keywords, at most one per paper and none too similar to another.

It is the backend for users without an API key and the fallback whenever the
LLM's answer cannot be used.
"""

from __future__ import annotations

import heapq
import logging
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain
from operator import attrgetter, itemgetter
from typing import TYPE_CHECKING, NamedTuple

from .models import CitedText, Paper, SummarySegment
from .normalize import TermNumbers, singular
from .sentences import (
    CLOSERS,
    HAS_WORD,
    aims,
    clean_sentence,
    contributes,
    may_contain,
    refers_back,
    rewrite,
    shorten_sentence,
    split_sentences,
    standalone,
    wordset,
)

__all__ = ["content_term_set", "content_terms", "paper_gist", "paper_gists", "split_sentences",
           "theme_summary", "theme_tldr"]

if TYPE_CHECKING:
    import numpy as np

logger = logging.getLogger("digest.offline")

# ---------------------------------------------------------------- gists

_DEFINITION = re.compile(r"^[A-Z][\w-]*(?: [\w-]+){0,3},? (?:is|are) (?:a|an|the first)\b")
_BACKGROUND_START = re.compile(
    r"(?:(?:large|recent|modern|current|existing|many|most|nowadays|despite|while|"
    r"although|with the|the (?:rapid|recent|success|emergence|advent|development))\b|"
    r"in recent years|over the (?:past|last)|in the (?:past|last))", re.IGNORECASE)
_BACKGROUND_CLAIM = re.compile(
    r"\b(?:ha(?:ve|s)|ha(?:ve|s) recently) (?:shown|demonstrated|achieved|become|emerged|"
    r"gained|attracted|seen|made|introduced|proposed|explored|studied|investigated|focused|"
    r"relied|developed|used|produced|considered)\b", re.IGNORECASE)
_RESULTS = re.compile(
    r"\b(?:outperform|surpass|achiev|improv\w* (?:by|over)|"
    r"experiment(?!\s+with\b)\w*|results? (?:show|demonstrate|indicate|suggest|reveal)|empirical|"
    r"evaluation\w* (?:show|demonstrate)|(?:show|demonstrate|find) that (?:our|the proposed)|"
    r"(?:demonstrat|show|validat|verif)\w* (?:the )?"
    r"(?:effectiveness|efficacy|superiority|benefits?|generali[sz]ability))",
    re.IGNORECASE,
)
_RESULTS_HINTS = ("outperform", "surpass", "achiev", "improv", "experiment", "result",
                  "empirical", "evaluation", "that our", "that the proposed", "effectiveness",
                  "efficacy", "superiority", "benefit", "generali")


def _reports_results(sentence: str) -> bool:
    return may_contain(sentence, _RESULTS_HINTS) and bool(_RESULTS.search(sentence))


def _opens_on_background(sentence: str) -> bool:
    """A sentence on the field ("Recent work has shown …"), not on the paper."""
    return bool(_BACKGROUND_START.match(sentence)) or (
        may_contain(sentence, ("have ", "has ")) and bool(_BACKGROUND_CLAIM.search(sentence)))


_LINK = re.compile(
    r"https?://|www\.|github\.com|\b(?:code|data|datasets?|models?|weights|checkpoints)\b"
    r"[^.]{0,60}\b(?:available|released)\b|\bavailable (?:at|on|online)\b|"
    r"\b(?:release|open-source)\w* (?:our|the|all) (?:code|data|models?|weights)\b",
    re.IGNORECASE,
)
_LINK_HINTS = ("http", "www.", "github", "available", "release", "open-source")
_NUMBER = re.compile(r"\d[\d.,]*\s?%|\b\d+(?:\.\d+)?[kKMB×x]?\b(?!\))")
_DIGIT = re.compile(r"\d")
_IN_THIS_PAPER = re.compile(r"\bin this (?:paper|work|thesis|article|study)\b", re.IGNORECASE)


@lru_cache(maxsize=8192)  # asked of the rewritten text and of the clean one, mostly equal
def _numbers(text: str) -> int:
    """How many numbers (and percentages) ``text`` gives."""
    return len(_NUMBER.findall(text)) if _DIGIT.search(text) else 0


def paper_gist(paper: Paper, *, max_chars: int = 220) -> str:
    """One line saying what the paper does, taken from its abstract's own sentences."""
    table = [row for row in _sentence_table(paper.abstract) if row.has_word]
    title = " ".join(paper.title.split())
    if table:
        best, score = _best_gist(table, _title_name(title), set(_tokens(title)))
        if score <= -5:
            logger.debug("no usable sentence in %s; using the first", paper.id)
            best = 0
        return shorten_sentence(table[best].text, max_chars)
    logger.debug("empty abstract for %s: no gist (the title is shown already)", paper.id)
    return ""


def paper_gists(papers: Sequence[Paper], *, max_chars: int = 220) -> dict[str, str]:
    """Each paper's gist by id: what a batch needs when its theme is summarised as a whole."""
    return {paper.id: paper_gist(paper, max_chars=max_chars) for paper in papers}


@lru_cache(maxsize=8192)
def _is_link(sentence: str) -> bool:
    """A URL or a "code is available" sentence (cheap substring test first)."""
    low = sentence.lower()
    return any(hint in low for hint in _LINK_HINTS) and bool(_LINK.search(sentence))


def _title_name(title: str) -> str | None:
    """The method name of a "Name: subtitle" title, if there is one."""
    head, sep, _ = title.partition(":")
    head = head.strip()
    if sep and head and len(head.split()) <= 3:
        return head
    return None


_SPACES_AND_HYPHENS = re.compile(r"[\s-]+")


def _squash(text: str) -> str:
    return _SPACES_AND_HYPHENS.sub(" ", text.lower())


def _find_name(name: str, sentence: str) -> int | None:
    """Where the title's method name (or its plural) first appears as whole words: the
    ``(?<!\\w)name(?:e?s)?(?!\\w)`` search of the squashed texts, without compiling a pattern
    per paper."""
    return _find_squashed(_squash(name), sentence)


def _find_squashed(needle: str, sentence: str) -> int | None:
    """:func:`_find_name` of the name squashed already (once a paper, not once a sentence)."""
    if needle.split(" ", 1)[0] not in sentence.lower():  # squashing keeps its words as written
        return None
    text = _squash(sentence)
    start = text.find(needle)
    while start >= 0:
        end = start + len(needle)
        if not (start and _is_word_char(text[start - 1])) and any(
                text.startswith(tail, end) and not _is_word_char(text[end + len(tail):][:1])
                for tail in ("es", "s", "")):
            return start
        start = text.find(needle, start + 1)
    return None


def _is_word_char(char: str) -> bool:
    """What ``\\w`` matches: a letter, digit or underscore (empty: no character)."""
    return char.isalnum() or char == "_"


def _best_gist(table: Sequence[_Sentence], name: str | None, title_terms: set[str]
               ) -> tuple[int, float]:
    """The index and score of the best gist, the first of equals: what
    ``max(range(len(table)), key=lambda i: (score(i), -i))`` picks. A sentence's additions,
    taking it for an aim until that is asked (:func:`_gist_gains`), bound its score from above,
    as all that follows lowers it (float rounding never lets a subtraction of zero or more raise
    a sum): the rest, most of the cost, is worked out only while it can still beat the best."""
    gains = _all_gist_gains(table, name, title_terms)
    best, best_score = -1, -math.inf
    # The highest bound first; among equal bounds the first sentence (a reverse sort is stable).
    for i in sorted(range(len(table)), key=lambda i: gains[i][0], reverse=True):
        if (gains[i][0], -i) < (best_score, -best):
            break  # neither this sentence nor any after it can win
        score = _gist_score(table[i], i, *gains[i], (best_score, -best))
        if (score, -i) > (best_score, -best):
            best, best_score = i, score
    return best, best_score


def _all_gist_gains(table: Sequence[_Sentence], name: str | None, title_terms: set[str]
                    ) -> list[tuple[float, bool, float, float]]:
    """:func:`_gist_gains` of each sentence. What the whole abstract lacks no sentence has:
    in ASCII text (where lower-casing goes letter by letter), a word missing from all the
    sentences lower-cased together is not looked for in each (most abstracts never say "in
    this" or the title's name)."""
    said = " ".join(row.clean for row in table)
    ascii_only = said.isascii()
    low = said.lower() if ascii_only else ""
    in_this = not ascii_only or "in this " in low
    needle = _squash(name) if name else None
    if needle is not None and ascii_only and needle.split(" ", 1)[0] not in low:
        needle = None
    return [_gist_gains(row, needle, in_this, title_terms) for row in table]


def _gist_gains(row: _Sentence, needle: str | None, in_this: bool, title_terms: set[str]
                ) -> tuple[float, bool, float, float]:
    """What a sentence's gist score adds, in the order it adds it: +3 a contribution ("we
    propose …") or +1.5 an aim, +1 "in this paper", +2 the title's name (+1.5 more opening
    "Name is a …"), then up to +1.5 the title's terms. All but the last are halves, so their
    sums are exact in any order: the score is ``(lead + rest) + share`` whatever the lead.
    Returns that with the lead of an aim for a sentence that states no contribution (a bound:
    :func:`aims` is asked later, only if it can still win), the contribution, rest and share.
    ``needle`` is the title's name squashed (None: no name, or none in the abstract);
    ``in_this``: whether the abstract may say "in this"."""
    clean = row.clean
    contribution = row.clean_contribution
    rest = 0.0
    if in_this and may_contain(clean, ("in this ",)) and _IN_THIS_PAPER.search(clean):
        rest += 1.0
    mention = _find_squashed(needle, clean) if needle is not None else None
    if mention is not None:
        rest += 2.0
        if mention == 0 and _DEFINITION.match(clean):  # "X is a …"
            rest += 1.5
    share = 0.0
    if title_terms:
        terms = row.terms if clean == row.text else _tokens(clean)  # the table's, if they hold
        share = 1.5 * len(title_terms.intersection(terms)) / len(title_terms)
    return ((3.0 if contribution else 1.5) + rest) + share, contribution, rest, share


def _gist_score(row: _Sentence, index: int, bound: float, contribution: bool, rest: float,
                share: float, to_beat: tuple[float, int]) -> float:
    """The sentence's merit as the paper's gist: its gains less what reads badly, subtracted
    in one fixed order so that equal merits are equal floats. Once the score falls below
    ``to_beat`` (a score and the negated index of its sentence) the rest is not worked out:
    the sentence has lost whatever it would lose."""
    clean = row.clean
    score = bound
    if not contribution and not aims(clean):
        score = (0.0 + rest) + share
        if (score, -index) < to_beat:
            return score
    if _is_link(clean):  # a URL or "code is available": never the gist
        return -10.0
    if _reports_results(clean):  # "outperforms", "experiments show"
        score -= 0.75 if contribution else 1.5
    if not contribution and (index == 0 or _opens_on_background(clean)):
        score -= 1.5
    for penalty in _GIST_PENALTIES:
        if (score, -index) < to_beat:
            break
        score -= penalty(clean)
    return score


_GIST_PENALTIES: tuple[Callable[[str], float], ...] = (
    lambda clean: 0.5 if clean.lower().startswith("however") else 0.0,
    lambda clean: 2.0 if refers_back(standalone(clean)) else 0.0,
    lambda clean: 1.0 if _numbers(clean) >= 2 else 0.0,
    lambda clean: 1.0 if len(clean.split()) < 6 else 0.0,
)


# ---------------------------------------------------------------- TL;DR lines

TLDR_TERMS = 2  # specific phrases of the theme a TL;DR line names
TLDR_PAPERS = 2  # leading papers it names, with what each is about
TOPIC_WORDS = 7
# Where a title's topic phrase ends: "Compositional Tool Graphs | for Planning with …".
_TOPIC_END = wordset("for with via using in from under through by on towards toward without "
                      "at as beyond into across against and")


def theme_tldr(title: str, keywords: Sequence[str], papers: Sequence[Paper]) -> str:
    """One line on what a theme is about, in no paper's words: its specific phrases the title
    does not say already, and what its leading papers' titles name ("Reward model and
    preference data, with RAFT (reward-ranked fine-tuning) and SALMON (self-alignment)").
    Never a bare list of names, and no gist copied. A lone word leads only if it names a
    thing also in small letters: "Chiral", capital at a sentence's start, is an adjective."""
    from .themes._label import generic_name, nameable  # the themes stage loaded them already

    said = title.casefold()
    specific = [k for k in keywords if k.casefold() not in said and nameable(k)
                and not generic_name(k) and not _capital_adjective(k, nameable)]
    terms = ([k for k in specific if " " in k] or specific)[:TLDR_TERMS]
    topics = [topic for p in papers[:2 * TLDR_PAPERS] if (topic := _paper_topic(p))]
    if not topics and not terms and papers:  # no phrase passed: the first title's words
        topics = [_paper_topic(papers[0], strict=False)]
    leading = " and ".join(topics[:TLDR_PAPERS])
    if not terms:
        return f"{leading[:1].upper()}{leading[1:]}." if leading else ""
    named = " and ".join(terms)
    named = named[:1].upper() + named[1:]
    return f"{named}, with {leading}." if leading else f"{named}."


def _capital_adjective(term: str, nameable: Callable[[str], bool]) -> bool:
    """A lone word capitalized only as a sentence opens ("Chiral") that names nothing in
    small letters; names ("X-ray", "Kaluza-Klein", "DeepSeek-R1") are left as they are."""
    return (" " not in term and "-" not in term and term[:1].isupper() and term[1:].islower()
            and not nameable(term.lower()))


def _paper_topic(paper: Paper, *, strict: bool = True) -> str:
    """"ToolWeaver (compositional tool graphs)", or the topic alone ("real-world offline
    reinforcement learning") for a title without a short name before a colon. A capitalized
    word is lower-cased where the abstract writes it so (names keep their capitals)."""
    head, sep, tail = " ".join(paper.title.split()).partition(":")
    named = bool(sep and head.strip() and len(head.split()) <= 4 and tail.strip())
    words = re.split(r"[?:]|\s\(", tail if named else head)[0].split()
    while words and (words[0].lower() in ("a", "an", "the", "on", "about")
                     or _PART_NUMBER.fullmatch(words[0])):
        words = words[1:]
    topic, whole = _topic_words(words)
    topic = ["-".join(_as_written(part, paper.abstract) for part in word.split("-"))
             for word in topic]
    text = " ".join(topic).rstrip(",;.")
    if named:
        return f"{head.strip()} ({text})" if len(topic) >= 2 and whole else head.strip()
    if not strict:
        return text
    return text if whole and _noun_phrase(topic) else ""


def _topic_words(words: Sequence[str]) -> tuple[list[str], bool]:
    """A title's words up to where its topic phrase ends (a linking word, a full stop, or
    the title's end), at most ``TOPIC_WORDS``; and whether the phrase is whole: one longer
    than that is cut where it needs its next word ("indicator of …"), so it names nothing.
    A phrase cut so loses its last words that cannot end one."""
    topic: list[str] = []
    for word in words:
        if len(topic) >= 2 and word.lower() in _TOPIC_END:
            return _ended(_without_participle(topic))
        if len(topic) == TOPIC_WORDS:
            return _ended(topic, cut=True)
        if word.endswith(".") and len(word) > 2 and not _INITIALS.fullmatch(word):
            return _ended([*topic, word.rstrip(".")])  # the title's first sentence ends here
        topic.append(word)
    return _ended(topic)


def _without_participle(topic: list[str]) -> list[str]:
    """The phrase without a past participle that led into the linking word ("ellipsoidal
    oscillations induced | by ..."): it cannot end a topic. Two words are kept at least."""
    last = topic[-1].lower()
    if len(topic) > 2 and len(last) > 5 and last.endswith("ed") and not last.endswith("eed"):
        return topic[:-1]
    return topic


def _ended(topic: list[str], *, cut: bool = False) -> tuple[list[str], bool]:
    whole = not cut and not (topic and topic[-1].lower() in _CANNOT_END_TOPIC)
    while topic and topic[-1].lower() in _CANNOT_END_TOPIC:
        topic.pop()
    return topic, whole


# Where a capital cannot be a sentence's: after a word in small letters, a comma, a hyphen,
# or an article ("A Flory-Huggins model is solved", "The Borel sets").
_AFTER_A_WORD = r"(?:(?<=[a-z,;] )|(?<=-)|(?<=\b[Aa] )|(?<=\b[Aa]n )|(?<=\b[Tt]he ))"


def _as_written(word: str, abstract: str) -> str:
    """A title's capitalized word as running text writes it: "Graphs" → "graphs", but a name
    the abstract capitalizes mid-sentence and never writes in lower case ("Borel") stays."""
    if not (word[:1].isupper() and word[1:].islower()):
        return word
    mid_sentence = re.search(rf"{_AFTER_A_WORD}{re.escape(word)}\b", abstract)
    if mid_sentence and not re.search(rf"\b{re.escape(word.lower())}\b", abstract):
        return word
    return word.lower()


# Titles that are sentences or questions ("Is RL …", "Streaming deep RL finally works") name
# no topic a TL;DR line can borrow.
_NOT_A_TOPIC = wordset("is are was were does do did can could should will would works why how "
                        "what when where which who towards toward beyond rethinking has have had")
_CANNOT_END_TOPIC = _TOPIC_END | wordset("of a an the to or")
_PART_NUMBER = re.compile(r"[IVX]+\.|\d+\.")  # "I. The mass gap …"
_INITIALS = re.compile(r"(?:[A-Z]\.)+|vs\.|e\.g\.|i\.e\.|al\.|etc\.", re.IGNORECASE)


def _noun_phrase(words: Sequence[str]) -> bool:
    from .themes._label import NOUN_GERUNDS, TITLE_VERBS

    first = words[0].lower() if words else ""
    gerund = first.endswith("ing") and first not in NOUN_GERUNDS
    return (len(words) >= 2 and not gerund and first not in TITLE_VERBS
            and not any(word.lower() in _NOT_A_TOPIC for word in words))


# ---------------------------------------------------------------- theme summaries

_STOPWORDS = wordset(
    """a about above after again against all also an and any are as at be because been
    before being between both but by can could did do does doing during each either few
    for from further had has have having how however if in into is it its itself just
    may might more most much must no nor not of off on once only or other our ours out
    over own same should so some such than that the their theirs them then there these
    they this those through thus to too under until up upon very via was we were what
    when where whether which while who whom why will with within without would yet you
    your propose proposed paper work approach method methods novel new use using used
    based show shows results result present introduce furthermore moreover"""
)
_WORD = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")


BACKGROUND, CONTRIBUTION, DETAIL = 0, 1, 2
_FIRST_PERSON = re.compile(r"\b(?:we|our|us|this (?:paper|work|thesis|study|survey))\b", re.I)
_ANAPHORA_START = re.compile(r"(?:this|these|those|it|they|such|its|their|that)\b", re.I)
_ANAPHORA = re.compile(
    r"\b(?:such|these|those|aforementioned|the above|this (?!paper|work))\b", re.I
)
# "However, ..." or "Most agents, however, ..." answers a sentence the reader never saw.
_ANAPHORA_HINTS = ("such", "these", "those", "aforementioned", "the above", "this")


def _has_anaphora(text: str) -> bool:
    return may_contain(text, _ANAPHORA_HINTS) and bool(_ANAPHORA.search(text))


_CONNECTIVE = re.compile(
    r"^(?:however|but|yet|moreover|furthermore|additionally|in addition|also|thus|therefore|"
    r"hence|instead|nevertheless|nonetheless|still|consequently|in contrast|in turn)\b"
    r"|^[^,.;]{1,60}, (?:however|though|therefore|thus|instead|in turn|in contrast),", re.I)


class _Sentence(NamedTuple):
    """One sentence of an abstract, with what every gist asks of it. What only a theme
    summary asks (its role, results, pointing back, eligibility) is worked out when asked: a
    summary asks it of the few hundred sentences its selection looks at, of a theme's
    thousands. A named tuple: as immutable as a frozen dataclass, made in a third of the time
    (~0.2 s of the 50k run's 300k sentences; issue 15)."""

    position: int  # among all the abstract's sentences
    clean: str  # markup stripped: what a gist is scored on
    text: str  # rewritten to stand alone: what a gist or summary shows
    has_word: bool
    terms: tuple[str, ...]  # the distinct terms of ``text``, in first-seen order
    tallies: tuple[int, ...]  # how often ``text`` has each of them
    # ``clean`` states the paper's contribution ("we propose …"): what the gist asks of every
    # sentence; the rewritten text's is asked only of the summary's candidates (:attr:`role`).
    clean_contribution: bool

    @property
    def counts(self) -> tuple[tuple[str, int], ...]:
        """Each term with its count: two flat tuples hold them (~12 pair tuples less a
        sentence, and flat tuples are what a theme summary reads in bulk)."""
        return tuple(zip(self.terms, self.tallies, strict=True))

    @property
    def contribution(self) -> bool:
        """Whether ``text`` states the paper's contribution."""
        return self.clean_contribution if self.text == self.clean else contributes(self.text)

    @property
    def role(self) -> int:
        return _role(self.text, self.position, self.contribution)

    @property
    def results(self) -> bool:
        return _reports_results(self.text)

    @property
    def anaphora(self) -> int:
        """2 opens with one ("It ...", "However, ..."), 1 has one, 0 none."""
        text = self.text
        if _ANAPHORA_START.match(text) or _CONNECTIVE.search(text) or refers_back(text):
            return 2
        return int(_has_anaphora(text))

    def fits(self, max_chars: int) -> bool:
        """Whether a summary can show it (a whole sentence, no link, few numbers)."""
        return bool(self.terms) and _eligible(self.text, max_chars)


@dataclass(frozen=True, slots=True)
class _Candidate:
    paper: int
    sentence: _Sentence
    vector: dict[str, float]  # TF-IDF weights, unit length, in the order of the sentence's terms
    role: int

    @property
    def text(self) -> str:
        return self.sentence.text

    @property
    def index(self) -> int:
        return self.sentence.position


def _split_table(abstract: str) -> tuple[_Sentence, ...]:
    """Split, cleaned, rewritten, tokenized and flagged once per abstract."""
    return tuple(_sentence(i, clean_sentence(raw))
                 for i, raw in enumerate(split_sentences(abstract)))


class _CacheInfo(NamedTuple):
    hits: int
    misses: int
    chars: int


class _TableCache:
    """``lru_cache`` for sentence tables, bounded by the characters of the abstracts held,
    not their number: a table costs ~11 bytes a character, so 16,384 made-up abstracts of
    6,000 characters held over 1 GB. The bound is ~14,000 real abstracts (~180 MB): a theme's
    gists and its summary still share one split of each abstract."""

    def __init__(self, build: Callable[[str], tuple[_Sentence, ...]], max_chars: int):
        self._build = build
        self._max_chars = max_chars
        self._tables: OrderedDict[str, tuple[_Sentence, ...]] = OrderedDict()
        self._chars = self._hits = self._misses = 0
        self._lock = threading.Lock()

    def __call__(self, abstract: str) -> tuple[_Sentence, ...]:
        with self._lock:
            table = self._tables.get(abstract)
            if table is not None:
                self._hits += 1
                self._tables.move_to_end(abstract)
                return table
        table = self._build(abstract)
        with self._lock:
            self._misses += 1
            if abstract not in self._tables:
                self._tables[abstract] = table
                self._chars += len(abstract)
            while self._chars > self._max_chars and len(self._tables) > 1:
                oldest, _ = self._tables.popitem(last=False)
                self._chars -= len(oldest)
        return table

    def cache_info(self) -> _CacheInfo:
        return _CacheInfo(self._hits, self._misses, self._chars)

    def cache_clear(self) -> None:
        with self._lock:
            self._tables.clear()
            self._chars = self._hits = self._misses = 0


_TABLE_CHARS = 1 << 24
_sentence_table = _TableCache(_split_table, _TABLE_CHARS)


def _sentence(index: int, clean: str) -> _Sentence:
    text = rewrite(clean)
    counts = _tally(_tokens(text))
    return _Sentence(index, clean, text, bool(HAS_WORD.search(clean)), tuple(counts),
                     tuple(counts.values()), contributes(clean))


def _tally(terms: list[str]) -> dict[str, int]:
    """``Counter(terms)`` (the same counts in the same first-seen order) without its
    per-call checks: a sentence has about ten terms."""
    counts: dict[str, int] = {}
    get = counts.get
    for term in terms:
        counts[term] = get(term, 0) + 1
    return counts


def content_terms(text: str) -> list[str]:
    """The content words of ``text``: lower case, no stop words or numbers, plurals folded."""
    return _tokens(text)


def content_term_set(text: str) -> set[str]:
    """``set(content_terms(text))``, each distinct piece looked up once; only the pieces of
    several words ("input/output") are read word by word (a title and abstract has one in
    about a quarter of the listings: reading all of it again cost more than the pattern)."""
    pieces = set(text.lower().split())
    terms = set(map(_PIECE_TERM.__getitem__, pieces))
    if _SEVERAL in terms:
        terms.discard(_SEVERAL)
        for piece in pieces:
            if _PIECE_TERM[piece] == _SEVERAL:
                terms.update(map(_TERM_OF.__getitem__, _WORD.findall(piece)))
    terms.discard("")
    return terms


def _tokens(text: str) -> list[str]:
    """The terms of ``_WORD``'s words of ``text``, found by piece: ``_WORD`` finds words only
    inside the pieces that whitespace separates, so a text's words are its pieces' words, and
    most pieces ("agents,", "(LLMs)", "LLM-based") hold one. A split and a dict look-up a
    piece cost a fifth of the pattern's search (issue 15); a text with a piece of several
    words ("input/output", "naïve") is read word by word."""
    low = text.lower()
    terms = list(filter(None, map(_PIECE_TERM.__getitem__, low.split())))
    if _SEVERAL in terms:
        return list(filter(None, map(_TERM_OF.__getitem__, _WORD.findall(low))))
    return terms


class _Terms(dict[str, str]):
    """Each lower-case word's content term ("agents" → "agent"; "" for a stop word, a number
    or a single letter), worked out once: the 50k run looks up 21M words, of a vocabulary of
    about 100k. A plain dict looked up through ``map`` costs no Python call per known word,
    where an ``lru_cache`` costs one; it is emptied past a bound, so no input grows it without
    end."""

    def __missing__(self, word: str) -> str:
        if len(self) >= _TERMS_CACHED:
            self.clear()
        term = "" if word in _STOPWORDS or len(word) <= 1 or word.isdigit() else singular(word)
        self[word] = term
        return term


_TERMS_CACHED = 1 << 18
_TERM_OF = _Terms()
_SEVERAL = "\x00"  # no term: a piece that holds the words of more than one term


class _PieceTerms(dict[str, str]):
    """Each whitespace-separated piece of lower-case text's term: the one term of its words
    ("agents," → "agent", "LLM-based" → "llm-based"), "" for none ("(e.g.,"), ``_SEVERAL`` for
    more. Worked out once and emptied past a bound, as ``_Terms``; a piece longer than a word
    ever is (made-up text: thousands of characters without a space) is not kept."""

    def __missing__(self, piece: str) -> str:
        if len(self) >= _TERMS_CACHED:
            self.clear()
        terms = list(filter(None, map(_TERM_OF.__getitem__, _WORD.findall(piece))))
        term = terms[0] if len(terms) == 1 else _SEVERAL if terms else ""
        if len(piece) <= _PIECE_CHARS_CACHED:
            self[piece] = term
        return term


_PIECE_CHARS_CACHED = 64


_PIECE_TERM = _PieceTerms()


def _cosine(a: dict[str, float], b: dict[str, float]) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(w * b.get(t, 0.0) for t, w in a.items())


def _role(text: str, index: int, contribution: bool) -> int:
    if contribution:
        return CONTRIBUTION
    if index <= 2 and not (may_contain(text, ("we", "our", "us", "this "))
                           and _FIRST_PERSON.search(text)):
        return BACKGROUND
    return DETAIL


def _eligible(text: str, max_chars: int) -> bool:
    return (
        6 <= len(text.split()) <= 45
        and len(text) <= max_chars
        and text.rstrip(CLOSERS)[-1:] in ".!?"
        and not _is_link(text)
        and _numbers(text) < 2
    )


class _TfIdf:
    """A theme's sentences as unit TF-IDF vectors (tf = 1 + log count, idf = log((1 + n) /
    (1 + df)) + 1 over its sentences) and their closeness to the theme's centroid, the mean of
    its papers' unit vectors (each paper the sum of its sentences'), in numpy.

    Every float is the one the per-sentence dict code before it made (benchmarks/predictions.md,
    round 4): the same operations on the same values, and each sum taken in the same order
    (one row's weights in the order of its terms, a paper's sentences in order, the papers in
    order): ``np.add.at`` and a sparse product with ones add one value after another, where
    ``np.sum`` would add in pairs. ``tests/test_offline_speed.py`` holds the dict code and
    compares."""

    def __init__(self, rows: Sequence[tuple[int, _Sentence]], n_papers: int):
        import numpy as np

        self.rows = rows
        vocabulary = TermNumbers()
        sentences = list(map(itemgetter(1), rows))
        sizes = np.fromiter(map(len, map(attrgetter("terms"), sentences)), np.int64, len(rows))
        entries = int(sizes.sum())
        terms = np.fromiter(map(vocabulary.__getitem__,
                                chain.from_iterable(map(attrgetter("terms"), sentences))),
                            np.int64, entries)
        counts = np.fromiter(chain.from_iterable(map(attrgetter("tallies"), sentences)),
                             np.int64, entries)
        self.starts = np.concatenate(([0], np.cumsum(sizes)))
        self.row_of_entry = np.repeat(np.arange(len(rows)), sizes)
        self.terms, self.vocabulary = terms, vocabulary
        df = np.bincount(terms, minlength=len(vocabulary)).tolist()
        idf = np.array([math.log((1 + len(rows)) / (1 + n)) + 1.0 for n in df])
        tf = np.array([0.0] + [1 + math.log(c) for c in range(1, int(counts.max(initial=1)) + 1)])
        raw = tf[counts] * idf[terms]
        self.weights = raw / np.repeat(np.sqrt(_row_sums(raw * raw, self.starts)), sizes)
        paper_of_entry = np.repeat(np.fromiter((p for p, _ in rows), np.int64, len(rows)), sizes)
        self.centroid = _centroid(self.weights, terms, paper_of_entry, n_papers, len(vocabulary))

    def closeness(self, keywords: Sequence[set[str]]) -> list[float]:
        """Each sentence's closeness to the theme, plus its keywords: its relevance but for
        what reads well or badly out of context (:func:`_relevance`)."""
        import numpy as np

        score = _row_sums(self.weights * self.centroid[self.terms], self.starts)
        if keywords:
            found = np.zeros(len(score))
            for words in keywords:
                found += self._has_all(words)
            score += 0.15 * found / len(keywords)
        return score.tolist()

    def vector(self, index: int) -> dict[str, float]:
        """The unit TF-IDF vector of sentence ``index``, in the order of its terms."""
        start, end = self.starts[index], self.starts[index + 1]
        return dict(zip(self.rows[index][1].terms,
                        self.weights[start:end].tolist(), strict=True))

    def _has_all(self, words: set[str]) -> np.ndarray:
        """1.0 for each sentence that has every one of ``words``, else 0.0."""
        import numpy as np

        if not all(word in self.vocabulary for word in words):
            return np.zeros(len(self.rows))
        ids = [self.vocabulary[word] for word in words]
        hits = np.bincount(self.row_of_entry[np.isin(self.terms, ids)], minlength=len(self.rows))
        return (hits == len(ids)).astype(np.float64)


_ROLE_BONUS = {BACKGROUND: 0.05, CONTRIBUTION: 0.05, DETAIL: -0.1}
_MOST_BONUS = max(_ROLE_BONUS.values())  # the rest of a relevance only lowers it


def _relevance(closeness: float, row: _Sentence) -> float:
    """A sentence's relevance to its theme: its closeness, plus its role's bonus, less what
    reads badly out of context (results, a sentence that points back), added in this order."""
    score = closeness + _ROLE_BONUS[row.role]
    if row.results:
        score -= 0.1
    anaphora = row.anaphora
    if anaphora == 2:
        score -= 0.1
    elif anaphora == 1:
        score -= 0.05
    return score


def _row_sums(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The sum of each row's values (``values[starts[k]:starts[k + 1]]``), added one after
    another in order as Python's ``sum`` adds them."""
    import numpy as np

    # Column by column over the rows, longest first: the k-th addition of every row that has
    # a k-th value at once, so each row's sum is ((0 + v0) + v1) + ... as ``sum`` makes it, in
    # as many numpy additions as the longest row has values (issue 15).
    lengths = np.diff(starts)
    longest_first = np.argsort(-lengths, kind="stable")
    firsts, remaining = starts[longest_first], lengths[longest_first]
    sums = np.zeros(len(lengths))
    # How many rows have a k-th value, for each k: a prefix, as the rows are longest first.
    having = np.searchsorted(-remaining, -np.arange(int(remaining.max(initial=0))))
    for k, rows in enumerate(having.tolist()):
        sums[:rows] += values[firsts[:rows] + k]
    result = np.empty_like(sums)
    result[longest_first] = sums
    return result


def _centroid(weights: np.ndarray, terms: np.ndarray, paper_of_entry: np.ndarray,
              n_papers: int, n_terms: int) -> np.ndarray:
    """The unit mean of the papers' unit vectors, each paper the sum of its sentences'
    vectors. A paper's terms are kept in the order it first uses them and the theme's in the
    order the papers first use them: the orders their norms were summed in."""
    import numpy as np

    _, first, inverse = np.unique(paper_of_entry * n_terms + terms, return_index=True,
                                  return_inverse=True)
    # A (paper, term) slot for each, numbered by first use, paper by paper: the entries that
    # use a slot first, in entry order, and each slot's number counted along them (no sort).
    firsts = _marked(first, len(terms))
    rank = (np.cumsum(firsts) - 1)[first]
    sums = np.zeros(len(first))
    np.add.at(sums, rank[inverse.ravel()], weights)  # one sentence after another
    in_order = np.flatnonzero(firsts)
    slot_paper, slot_term = paper_of_entry[in_order], terms[in_order]
    starts = np.searchsorted(slot_paper, np.arange(n_papers + 1))
    unit = sums / np.sqrt(_row_sums(sums * sums, starts))[slot_paper]
    total = np.zeros(n_terms)
    np.add.at(total, slot_term, unit)  # one paper after another
    # Each term's first slot: the least slot number among its slots.
    first_slot = np.full(n_terms, len(slot_term))
    np.minimum.at(first_slot, slot_term, np.arange(len(slot_term)))
    seen = total[slot_term[_marked(first_slot[first_slot < len(slot_term)], len(slot_term))]]
    norm = math.sqrt(sum((seen * seen).tolist()))
    return total / norm if norm else total


def _marked(positions: np.ndarray, size: int) -> np.ndarray:
    """A mask of ``size`` entries, True at ``positions``."""
    import numpy as np

    mask = np.zeros(size, dtype=bool)
    mask[positions] = True
    return mask


def theme_summary(
    papers: Sequence[Paper],
    *,
    keywords: Sequence[str] = (),
    max_sentences: int = 3,
    max_chars: int = 700,
) -> CitedText:
    """A short extractive paragraph about the theme as a whole, each sentence citing the
    paper it was taken from (``CitedText.segments``)."""
    rows = [(p, row) for p, paper in enumerate(papers) for row in _sentence_table(paper.abstract)]
    if max_sentences <= 0 or max_chars <= 0 or not any(row.terms for _, row in rows):
        return CitedText(())
    tfidf = _TfIdf(rows, len(papers))
    closeness = tfidf.closeness([set(_tokens(k)) for k in keywords if _tokens(k)])
    ranking = _candidates(rows, closeness, max_chars)
    pool = _Pool(rows, tfidf)
    chosen = _select(pool, ranking, max_sentences, max_chars)
    if not chosen:  # not even one sentence fits: cut the best one
        best = pool[ranking.first(1)[0]]  # the tiers end with any sentence with words
        return _cited([(shorten_sentence(best.text, max_chars), best.paper)], papers)
    chosen.sort(key=lambda c: (c.role, c.paper, c.index))
    sentences = _attribute([c.text for c in chosen])
    while len(sentences) > 1 and len(" ".join(sentences)) > max_chars:
        sentences.pop()
    return _cited([(text, c.paper) for text, c in zip(sentences, chosen, strict=False)], papers)


def _candidates(rows: Sequence[tuple[int, _Sentence]], closeness: Sequence[float],
                max_chars: int) -> _Ranking:
    """The sentences a summary may take, most relevant first: those it can show that do not
    point back to a sentence the reader never saw; failing that, those it can show; failing
    those, any with words (pointing back or not, in that order)."""
    tiers: tuple[Callable[[_Sentence], bool], ...] = (
        lambda row: row.fits(max_chars) and row.anaphora < 2,
        lambda row: row.fits(max_chars),
        lambda row: bool(row.terms) and row.anaphora < 2,
        lambda row: bool(row.terms))
    for admits in tiers:
        ranking = _Ranking(rows, closeness, admits)
        if ranking[0] is not None:
            break
    return ranking


class _Ranking:
    """Sentences (indices into a theme's rows) that ``admits`` lets in, most relevant first
    and the earlier of equals first, ranked only as far as the selection asks.

    A sentence's relevance is at most its closeness plus ``_MOST_BONUS``, so sentences are
    looked at in the order of that bound, and one is ranked once no sentence not yet looked
    at can reach it. The role, results and pointing back of the rest of a big theme's
    sentences are never worked out: the ranks are those of a sort of every sentence."""

    def __init__(self, rows: Sequence[tuple[int, _Sentence]], closeness: Sequence[float],
                 admits: Callable[[_Sentence], bool]):
        self.rows, self.closeness, self.admits = rows, closeness, admits
        self.bounds = [c + _MOST_BONUS for c in closeness]
        # Highest bound first, equal bounds in row order (a reverse sort is stable).
        self._to_look_at = sorted(range(len(rows)), key=self.bounds.__getitem__, reverse=True)
        self._looked = 0
        self._waiting: list[tuple[float, int]] = []  # (-relevance, row): a heap
        self.ranked: list[int] = []
        self.relevance: dict[int, float] = {}

    def __getitem__(self, rank: int) -> int | None:
        """The row at ``rank``; None when fewer sentences are admitted."""
        while len(self.ranked) <= rank:
            if not self._rank_one():
                return None
        return self.ranked[rank]

    def first(self, count: int) -> list[int]:
        """The rows of the first ``count`` ranks (all of them when fewer are admitted)."""
        self[count - 1]  # ranks that many, if there are
        return self.ranked[:count]

    def _rank_one(self) -> bool:
        order, waiting = self._to_look_at, self._waiting
        while True:
            if waiting and (self._looked == len(order)
                            or -waiting[0][0] > self.bounds[order[self._looked]]):
                self.ranked.append(heapq.heappop(waiting)[1])
                return True
            if self._looked == len(order):
                return False
            index = order[self._looked]
            self._looked += 1
            row = self.rows[index][1]
            if self.admits(row):
                self.relevance[index] = score = _relevance(self.closeness[index], row)
                heapq.heappush(waiting, (-score, index))


class _Pool:
    """The candidate sentences by row, each made (with its vector and role) when the
    selection first looks at it."""

    def __init__(self, rows: Sequence[tuple[int, _Sentence]], tfidf: _TfIdf):
        self.rows, self.tfidf = rows, tfidf
        self._made: dict[int, _Candidate] = {}

    def __getitem__(self, index: int) -> _Candidate:
        made = self._made.get(index)
        if made is None:
            paper, row = self.rows[index]
            made = self._made[index] = _Candidate(paper, row, self.tfidf.vector(index), row.role)
        return made


def _cited(pieces: Sequence[tuple[str, int]], papers: Sequence[Paper]) -> CitedText:
    return CitedText([SummarySegment(text, (papers[index].id,)) for text, index in pieces])


# "We propose X" is right inside an abstract but wrong in a summary of several papers:
# say whose work it is instead ("One paper proposes X", "Another introduces Y").
_OPENING_VERBS = ("propose|introduce|present|develop|release|build|provide|design|describe|"
                  "study|investigate|explore|show|demonstrate|find|argue|identify|analy[sz]e")
_WHOSE = ("One paper", "Another", "A third", "Another")


# "We provide X and study Y": a verb joined to the opening one by "and" had "we" for its
# subject too. It is one of these, followed by what a verb takes ("the", "that", "how" ...).
_RESEARCH_VERBS = _OPENING_VERBS + (
    "|evaluate|compare|derive|prove|discuss|examine|extend|establish|apply|conduct|report|"
    "offer|obtain|achieve|validate|verify|highlight|reveal|discover|formulate|implement|"
    "characteri[sz]e|quantify|construct|train|benchmark|outline|review|survey|assess|measure|"
    "leverage")
# Any of them opens a summary sentence as "One paper <verb>s", and a few more that take no
# "and" before them in an abstract's run-on ("We create agents that ...", "We use ...").
_FIRST_PERSON_OPENING = re.compile(
    r"^(?:We|This (?:paper|work|study))\s+(" + _RESEARCH_VERBS
    + r"|create|use|learn|adopt|employ|consider|address|tackle|model|aim|seek)s?\b")
_JOINED_VERB = re.compile(
    r"(?<!\S)(\S+)(\s+and\s+)(" + _RESEARCH_VERBS + r")(?=\s+(?:the|a|an|that|how|whether|"
    r"our|its|their|this|these|those|which|what|why|when|it|them|several|two|three|new|both|"
    r"each|various|such|different|multiple|extensive)\b)")
_A_VERB = re.compile(r"(?:" + _RESEARCH_VERBS + r")s?|\w+(?:ed|ing)", re.IGNORECASE)


def _attribute(sentences: list[str]) -> list[str]:
    attributed = []
    count = 0
    for text in sentences:
        match = _FIRST_PERSON_OPENING.match(text)
        if match:
            rest = _JOINED_VERB.sub(_third_person_joined, text[match.end():])
            text = f"{_WHOSE[min(count, len(_WHOSE) - 1)]} {_third_person(match[1])}{rest}"
            text = re.sub(r"\b([Oo])ur\b", lambda m: "Its" if m[1] == "O" else "its", text)
            count += 1
        attributed.append(text)
    return attributed


def _third_person_joined(match: re.Match[str]) -> str:
    """The joined verb made third person, unless it may have a subject of its own: right
    after another verb ("agents explore and identify"), or after a clause that could give
    it one ("a method where agents learn and identify"; a parenthesis does not count)."""
    before, joint, verb = match.groups()
    said_before = _PARENTHESIS.sub("", match.string[:match.start(2)])
    if _A_VERB.fullmatch(before.rstrip(",")):
        return match[0]
    clauses = list(_CLAUSE.finditer(said_before))
    if clauses and not _AGREES_WITH_A_THING.match(said_before, clauses[-1].start()):
        return match[0]
    return f"{before}{joint}{_third_person(verb)}"


_PARENTHESIS = re.compile(r"\([^()]*\)")
_CLAUSE = re.compile(r"\b(?:where|which|that|who|whom|whose|while|when|whereby|whether|if)\b",
                     re.IGNORECASE)
# "which comprises a ...", "that is ...": the clause's verb agrees with a thing, so
# a bare verb after it ("... and propose") is the opening "we"'s. "which users adopt" is not.
_AGREES_WITH_A_THING = re.compile(
    r"(?:which|that|who)\s+(?:is|was|has|\w+(?<![siu])s\s+(?:the|a|an|our|its|their|this|"
    r"these|those|both|two|three|each|several|new|to|of|in|on|with|for|from))\b",
    re.IGNORECASE)


def _third_person(verb: str) -> str:
    if verb.endswith("y"):
        return verb[:-1] + "ies"
    return verb + ("es" if verb.endswith(("sh", "ch", "ss", "x")) else "s")


def _select(pool: _Pool, ranking: _Ranking, max_sentences: int, max_chars: int
            ) -> list[_Candidate]:
    """Maximal marginal relevance: relevant, not alike, one per paper, one background."""
    picking = _Picking(pool, ranking, max_chars)
    while len(picking.chosen) < max_sentences:
        best = picking.best_open()
        if best is None:
            break
        picking.chosen.append(pool[best])
        picking.room -= 1 + len(pool[best].text)
    return picking.chosen


class _Picking:
    """The state of one MMR selection, looking only at the most relevant candidates.

    A candidate's score is ``0.75 * relevance - 0.25 * redundancy`` with redundancy >= 0, so
    none outside the ``width`` most relevant can beat one inside that scores more than
    0.75 times the best relevance outside: the window widens until one does. The pick is the
    one a scan of every candidate would make, at the cost of a few hundred cosines. A sentence
    longer than the room left is out of the running at once, as the room only shrinks, and so
    is one too like a pick (redundancy over 0.5), as that only grows: a scan would pass it
    over whenever it came first, and passing over a theme of one abstract's copies one at a
    time was quadratic. Candidates are known by their row in the theme, so the earlier of
    equal scores is the smaller number.
    """

    def __init__(self, pool: _Pool, ranking: _Ranking, max_chars: int):
        self.pool, self.ranking, self.relevance = pool, ranking, ranking.relevance
        self.room = max_chars + 1  # each sentence costs its length and a space
        self.chosen: list[_Candidate] = []
        self._redundancy: dict[int, tuple[float, int]] = {}  # value, picks counted
        self.width = 64

    def best_open(self) -> int | None:
        while True:
            inside = [i for i in self.ranking.first(self.width) if self._is_open(i)]
            best = max(inside, key=self._score) if inside else None
            outside = self.ranking[self.width]
            if outside is None:
                return best
            bound = 0.75 * self.relevance[outside]
            if best is not None and self._score(best)[0] > bound:
                return best
            self.width *= 2

    def redundancy(self, i: int) -> float:
        value, counted = self._redundancy.get(i, (0.0, 0))
        for pick in self.chosen[counted:]:
            value = max(value, _cosine(self.pool[i].vector, pick.vector))
        self._redundancy[i] = (value, len(self.chosen))
        return value

    def _score(self, i: int) -> tuple[float, int]:
        return 0.75 * self.relevance[i] - 0.25 * self.redundancy(i), -i

    def _is_open(self, i: int) -> bool:
        candidate = self.pool[i]
        return len(candidate.text) < self.room and all(
            candidate.paper != pick.paper and not (candidate.role == pick.role == BACKGROUND)
            for pick in self.chosen) and self.redundancy(i) <= 0.5
