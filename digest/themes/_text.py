"""Turn paper text into terms: tokenizing, domain stop words, term counts per paper."""

from __future__ import annotations

import logging
import re
import string
import struct
import unicodedata
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from ..models import Paper
from ..normalize import TermNumbers
from ._term_codes import FirstSight, emitted_terms, row_counts, term_spellings

log = logging.getLogger("digest.themes")

# Words too common in paper listings to name or separate a theme on their own. They are
# still allowed in a bigram next to a strong word: "language models", "multi agent".
_WEAK = """
    propose proposed proposes proposing method methods model models modeling approach approaches
    paper papers result results show shows shown showing novel based using use used uses
    performance task tasks state art existing new work works experiment experiments experimental
    demonstrate demonstrates demonstrated achieve achieves achieved achieving outperform
    outperforms outperforming significant significantly effective effectively extensive framework
    frameworks present presents presented introduce introduces introduced study studies studied
    investigate investigated different various recent recently small high low good better best
    obtain obtained find found consider considered given case cases terms number order provide
    provides general important key main simple able make makes way ways problem problems
    furthermore moreover finally addition particular respectively including improve improved
    improves improving improvement via like code available analysis data time effect effects
    property properties function functions system systems structure process processes non multi
    self pre co sub semi prove proves proved let observed observation observations type types
    related certain possible second first allow allows allowing leads lead use general generally
    """
WEAK_WORDS = frozenset(_WEAK.split())
# The English stop words of the University of Glasgow's Information Retrieval Group, as
# scikit-learn ships them (BSD-3-Clause; tests/test_themes_math.py checks they are the same).
_ENGLISH = """
    a about above across after afterwards again against all almost alone along already also
    although always am among amongst amoungst amount an and another any anyhow anyone
    anything anyway anywhere are around as at back be became because become becomes becoming
    been before beforehand behind being below beside besides between beyond bill both bottom
    but by call can cannot cant co con could couldnt cry de describe detail do done down due
    during each eg eight either eleven else elsewhere empty enough etc even ever every
    everyone everything everywhere except few fifteen fifty fill find fire first five for
    former formerly forty found four from front full further get give go had has hasnt have
    he hence her here hereafter hereby herein hereupon hers herself him himself his how
    however hundred i ie if in inc indeed interest into is it its itself keep last latter
    latterly least less ltd made many may me meanwhile might mill mine more moreover most
    mostly move much must my myself name namely neither never nevertheless next nine no
    nobody none noone nor not nothing now nowhere of off often on once one only onto or
    other others otherwise our ours ourselves out over own part per perhaps please put
    rather re same see seem seemed seeming seems serious several she should show side since
    sincere six sixty so some somehow someone something sometime sometimes somewhere still
    such system take ten than that the their them themselves then thence there thereafter
    thereby therefore therein thereupon these they thick thin third this those though three
    through throughout thru thus to together too top toward towards twelve twenty two un
    under until up upon us very via was we well were what whatever when whence whenever
    where whereafter whereas whereby wherein whereupon wherever whether which while whither
    who whoever whole whom whose why will with within without would yet you your yours
    yourself yourselves
    """
# Dropped like English stop words, so "large language models" gives "language models".
STOP_WORDS = frozenset(_ENGLISH.split()) | {"et", "al", "ie", "eg", "vs", "wrt", "large", "com"}
STOP_WORDS |= {"http", "https", "www", "github"}

_MATH = re.compile(r"\$[^$]*\$")
_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")
_PHRASE_BREAK = re.compile(r"[.,;:!?()\[\]{}\"\n]+")


# Whole words of Latin letters (after accents are folded): a word with other letters ("größe",
# "ℓ2") is left out rather than cut into pieces that read like other words. A run of phrase
# breaks matches as "": one scan of the text instead of a split into phrases and a scan of each.
_WORD_OR_BREAK = re.compile(r"(?<![^\W_])([a-z][a-z0-9]+)(?![^\W_])|" + _PHRASE_BREAK.pattern)


def tokenize(text: str) -> list[str]:
    """Unigrams (strong words only) and bigrams of adjacent non-stop words, not both weak."""
    terms: list[str] = []
    append = terms.append
    previous, previous_weak = "", False
    for word in _WORD_OR_BREAK.findall(_prepared(text)):
        if not word or word in STOP_WORDS:  # a phrase ends, or a stop word breaks it
            previous = ""
            continue
        weak = word in WEAK_WORDS
        if not weak:
            append(word)
        if previous and not (previous_weak and weak):
            append(f"{previous} {word}")
        previous, previous_weak = word, weak
    return terms


def _prepared(text: str) -> str:
    """The text as its words are read: math and LaTeX commands out, lower case, accents
    folded."""
    return _fold(_without_markup(text).lower())


def _without_markup(text: str) -> str:
    """Math ends a phrase; a LaTeX command is no word."""
    if "$" in text:
        text = _MATH.sub(" . ", text)
    if "\\" in text:
        text = _LATEX_COMMAND.sub(" ", text)
    return text


# ``tokenize``'s scan, in string methods: a run of word characters is a word when it is all
# a-z and 0-9 and starts with a letter, as the pattern's lookarounds decide. Each character
# is translated to itself (a-z, 0-9), to a space (not a word character), to the break mark,
# or to "X" (a word character no word has: "ß", "α", a capital left by folding "ℌ"), and the
# text split at spaces and around break marks.
_BREAK_MARK = "\x01"
_WORD = re.compile(r"[a-z][a-z0-9]+")
_C_INT = struct.Struct("=i")
_BREAK = _C_INT.pack(0)  # a phrase break's word number
_FOLDED_RUNS = str.maketrans(
    {chr(c): " " for c in range(128)}
    | {c: c for c in string.ascii_lowercase + string.digits}
    | dict.fromkeys(string.ascii_uppercase, "X")
    | dict.fromkeys('.,;:!?()[]{}"\n', _BREAK_MARK))
_ASCII_RUNS = _FOLDED_RUNS | str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def _runs(text: str) -> list[str]:
    """``text``'s runs of word characters and its break marks, in order."""
    text = _without_markup(text)
    if text.isascii():  # lower case in the translation
        spaced = text.translate(_ASCII_RUNS)
    else:
        spaced = _NON_ASCII.sub(_plain_run, text.lower()).translate(_FOLDED_RUNS)
    return spaced.replace(_BREAK_MARK, f" {_BREAK_MARK} ").split()


def _plain_run(match: re.Match[str]) -> str:
    """A run of non-ASCII characters folded as ``_fold`` folds it, each character left
    that is not ASCII made a space or "X"."""
    return "".join(map(_PLAIN.__getitem__, unicodedata.normalize("NFKD", match[0])))


class _PlainCharacters(dict[str, str]):
    """What ``_plain_run`` makes of each character: "" for a combining mark (``_fold`` drops
    it), the character itself if ASCII, else "X" for a word character, a space for any
    other."""

    def __missing__(self, char: str) -> str:
        if unicodedata.combining(char):
            plain = ""
        elif char.isascii():
            plain = char
        else:
            plain = "X" if _WORD_CHARACTER.match(char) else " "
        self[char] = plain
        return plain


_PLAIN = _PlainCharacters()
_WORD_CHARACTER = re.compile(r"[^\W_]")


class _Words(dict[str, bytes]):
    """Each word's number, from 1 in the order words are first read; 0 for a phrase break
    or a stop word, which end a phrase alike; none for a run that is no word. Looked up
    through ``map``, a known word costs no Python call; each number is kept as its four
    bytes (a C int), so a text's numbers are one ``bytes.join``. Past ``MAX_WORDS`` words a
    new one reads as a phrase break, and is not kept; nor are runs that are no word past
    twice that many entries."""

    def __init__(self) -> None:
        super().__init__()
        self.spelled = [""]  # word number → word
        self.weak = bytearray(1)  # word number → 1 for a weak word
        self.full = False

    def __missing__(self, run: str) -> bytes:
        if not _WORD.fullmatch(run):  # a break, or no word: "a", "2d", "größe"
            number = _BREAK if run == _BREAK_MARK else b""
        elif run in STOP_WORDS:
            number = _BREAK
        elif len(self.spelled) > MAX_WORDS:
            self.full = True
            return _BREAK
        else:
            number = _C_INT.pack(len(self.spelled))
            self.spelled.append(run)
            self.weak.append(run in WEAK_WORDS)
            self[run] = number  # a word keeps its number
            return number
        if len(self) < 2 * MAX_WORDS:  # a run that is no word ("7b", "größe") is kept so far
            self[run] = number
        return number

    def read(self, text: str) -> bytes:
        """The numbers of ``text``'s words and phrase breaks as ``tokenize`` reads them."""
        return b"".join(map(self.__getitem__, _runs(text)))

    def weak_flags(self) -> np.ndarray:
        return np.frombuffer(bytes(self.weak), dtype=np.bool_)


def paper_text(paper: Paper) -> str:
    """The text that is clustered: the title twice (to weigh it up), then the abstract."""
    return f"{paper.title}\n{paper.title}\n{paper.abstract}"

@dataclass(frozen=True)
class TermCounts:
    """How often each term occurs in each paper (papers × terms), and the terms."""

    matrix: sparse.csr_matrix
    terms: np.ndarray
    in_title: sparse.csr_matrix  # 1 where the term is in the paper's title (names weigh it up)


def count_terms(papers: Sequence[Paper]) -> TermCounts | None:
    """Count the terms of every paper, or None if no term survives pruning.

    What ``CountVectorizer(analyzer=tokenize, min_df=2, max_df=0.5)`` computes over
    ``paper_text`` (terms sorted, then pruned), entries in its order. Words are read once
    into numbers and the phrase rules, bigrams and tallies worked out on arrays of them a
    batch of papers at a time (``emitted_terms``, ``FirstSight``, ``row_counts``): a Python
    step per word was most of the stage at 50,000 papers. Only the terms kept are spelled
    out: text of made-up words has millions that occur once.

    Generated text is bounded: past ``MAX_WORDS`` distinct words a new word reads as a
    phrase break, and past ``MAX_DISTINCT_TERMS`` a term never seen before is not counted
    (the 50k benchmark reads 60,000 words and 115,000 terms; both are logged). Of the terms
    kept, at most ``most_terms(len(papers))``, those in the most papers, are clustered on."""
    words = _Words()
    titles = [words.read(paper.title) for paper in papers]
    vocabulary = FirstSight(MAX_DISTINCT_TERMS)
    pieces = [_batch_counts(batch, words, vocabulary)
              for batch in _word_batches(papers, titles, words)]
    _log_bounds(words, vocabulary)
    if not len(vocabulary):  # only stop words
        return None
    matrix, papers_with = _csr(pieces, len(papers), len(vocabulary))
    kept_numbers = _frequent_enough(matrix, len(papers), papers_with)
    if not kept_numbers.size:
        return None
    # The order of each row's entries is sklearn's: by first sight in the corpus, then
    # renumbered in term order without sorting again. Sums over a row follow that order, and
    # the same order gives the same bits, so the same themes.
    terms, place = _sorted_terms(term_spellings(vocabulary.codes()[kept_numbers],
                                                words.spelled))
    column = np.full(len(vocabulary), -1, dtype=np.intc)  # term number → kept column
    column[kept_numbers] = place
    matrix = matrix[:, kept_numbers].astype(np.float64)
    if matrix.nnz == 0:
        return None
    matrix.indices = place.take(matrix.indices)
    return TermCounts(matrix, terms, _in_title(titles, words, vocabulary, column, len(terms)))


# Bounds on generated text: the 2,000 real abstracts of the arXiv sample read 13,500 distinct
# words and 59,000 distinct terms, the 50k benchmark 60,000 and 115,000; each distinct word
# or term costs ~100-200 bytes.
MAX_WORDS = 1_000_000
MAX_DISTINCT_TERMS = 4_000_000


def most_terms(n_papers: int) -> int:
    """How many terms at most are clustered on: ~20 a paper, within 20,000 and 150,000.
    Real listings keep 6-15 a paper; made-up words keep hundreds, and each costs the
    clustering's SVD a row of its basis."""
    return min(150_000, max(20_000, 20 * n_papers))


def _log_bounds(words: _Words, vocabulary: FirstSight) -> None:
    if words.full:
        log.warning("themes: the papers hold more than %s distinct words (generated or garbled "
                    "text?); words first seen after that end a phrase and are not counted",
                    f"{MAX_WORDS:,}")
    if vocabulary.left_out:
        log.warning("themes: the papers hold more than %s distinct terms (generated or garbled "
                    "text?); terms first seen after that are not counted",
                    f"{MAX_DISTINCT_TERMS:,}")


# Words worked out together: arrays of a few MB each. That is ~2,000 real papers, or a few
# hundred abstracts of made-up words joined by hyphens (thousands of terms each).
_BATCH_WORDS = 400_000


def _word_batches(papers: Sequence[Paper], titles: Sequence[bytes], words: _Words
                  ) -> Iterator[list[bytes]]:
    """Each paper's word numbers as ``tokenize(paper_text(paper))`` reads them, its title's
    read once (a line break ends every phrase, so the title's terms repeat as they are; only
    a "$" in the title can open math across lines), in batches of about ``_BATCH_WORDS``."""
    batch: list[bytes] = []
    size = 0
    for paper, title in zip(papers, titles, strict=True):
        listed = (words.read(paper_text(paper)) if "$" in paper.title
                  else title + _BREAK + title + _BREAK + words.read(paper.abstract))
        batch.append(listed)
        size += len(listed)
        if size >= _BATCH_WORDS * len(_BREAK):
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _batch_counts(batch: list[bytes], words: _Words, vocabulary: FirstSight
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The papers' term counts as CSR pieces (``row_counts``), columns numbered by first
    sight."""
    sequence, rows = _one_after_another(batch)
    codes, positions = emitted_terms(sequence, words.weak_flags())
    numbers = vocabulary.number(codes)
    if vocabulary.left_out:  # a term past the bound is not counted
        counted = numbers >= 0
        numbers, positions = numbers[counted], positions[counted]
    return row_counts(rows[positions], numbers, len(batch))


def _one_after_another(word_lists: Iterable[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """The lists' word numbers in one array, each list after a phrase break (0), and the
    number of the list each word is in."""
    pieces: list[bytes] = []
    lengths: list[int] = []
    for listed in word_lists:
        pieces += (_BREAK, listed)
        lengths.append(len(listed) + len(_BREAK))
    rows = np.repeat(np.arange(len(lengths)), np.array(lengths, dtype=np.int64) // len(_BREAK))
    return np.frombuffer(b"".join(pieces), dtype=np.intc), rows


def _csr(pieces: list[tuple[np.ndarray, np.ndarray, np.ndarray]], n: int, n_terms: int
         ) -> tuple[sparse.csr_matrix, np.ndarray]:
    """The batches' pieces as one matrix of counts (C ints, made float64 once pruned: made-up
    text has tens of millions of entries before), built as ``term_matrix`` builds its own,
    and how many papers have each term (counted a batch at a time: a count over the whole
    matrix would copy its column numbers as 64-bit ones). The pieces are emptied."""
    papers_with = np.zeros(n_terms, dtype=np.int64)
    for piece in pieces:
        counted = np.bincount(piece[0])
        papers_with[:len(counted)] += counted
    row_ends = np.concatenate([[0], *(piece[2] for piece in pieces)]).cumsum()
    columns = np.concatenate([piece[0] for piece in pieces]).astype(np.intc, copy=False)
    counts = np.concatenate([piece[1] for piece in pieces]).astype(np.intc, copy=False)
    pieces.clear()
    matrix = sparse.csr_matrix((counts, columns, row_ends.astype(np.int64)), shape=(n, n_terms))
    matrix.sort_indices()
    return matrix, papers_with


def term_matrix(term_lists: Iterable[list[str]], n: int
                ) -> tuple[sparse.csr_matrix, np.ndarray] | None:
    """Each of the ``n`` lists' term counts, one row each, and the terms in sorted order
    (column j counts ``terms[j]``): what ``CountVectorizer`` computes, entries in its order.
    None when no list has a term."""
    vocabulary = TermNumbers()
    columns, values, row_ends = array("i"), array("i"), array("q", [0])
    for listed in term_lists:
        tally = Counter(listed)
        columns.extend(map(vocabulary.__getitem__, tally))
        values.extend(tally.values())
        row_ends.append(len(columns))
    if not vocabulary:
        return None
    matrix = sparse.csr_matrix(
        (np.frombuffer(values, dtype=np.intc).astype(np.float64),
         np.frombuffer(columns, dtype=np.intc), np.frombuffer(row_ends, dtype=np.int64)),
        shape=(n, len(vocabulary)))
    # The order of each row's entries is sklearn's: by first sight in the corpus, then
    # renumbered in term order without sorting again. Sums over a row follow that order, and
    # the same order gives the same bits, so the same themes.
    matrix.sort_indices()
    ordered, place = _sorted_terms(list(vocabulary))
    matrix.indices = place.take(matrix.indices)
    return matrix, ordered


def _sorted_terms(terms: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The terms in sorted order (as sklearn keeps them), and each term's place in it."""
    order = sorted(range(len(terms)), key=terms.__getitem__)
    place = np.empty(len(terms), dtype=np.intc)
    place[order] = np.arange(len(terms), dtype=np.intc)
    return np.array([terms[i] for i in order], dtype=object), place


def _frequent_enough(matrix: sparse.csr_matrix, n: int, papers_with: np.ndarray | None = None
                     ) -> np.ndarray:
    """The columns of terms in at least 2 papers and at most half of them (20 papers or more;
    every term below that), in order; at most ``most_terms(n)`` of them, those in the most
    papers (of equals, the earlier column). ``papers_with`` counts each column's papers, if
    known."""
    if papers_with is None:
        papers_with = np.bincount(matrix.indices, minlength=matrix.shape[1])
    low, high = (2, 0.5 * n) if n >= 20 else (1, 1.0 * n)
    kept = np.flatnonzero((papers_with >= low) & (papers_with <= high))
    most = most_terms(n)
    if len(kept) > most:
        widest = np.argsort(-papers_with[kept], kind="stable")[:most]
        kept = np.sort(kept[widest])
    return kept


def _in_title(titles: Sequence[bytes], words: _Words, vocabulary: FirstSight,
              column: np.ndarray, n_kept: int) -> sparse.csr_matrix:
    """1 where a kept term is in the paper's title (names weigh it up). ``column`` is each
    term number's kept column, -1 for a term dropped."""
    sequence, rows = _one_after_another(titles)
    codes, positions = emitted_terms(sequence, words.weak_flags())
    numbers = vocabulary.known_number(codes)
    columns = np.append(column, -1)[numbers]  # a term never counted (-1) is not kept
    found = columns >= 0
    flat, _, sizes = row_counts(rows[positions][found], columns[found], len(titles))
    return sparse.csr_matrix((np.ones(len(flat)), flat.astype(np.intc),
                              np.concatenate([[0], sizes]).cumsum()),
                             shape=(len(titles), n_kept))


# One character, then the rest of the run: a pattern that starts with a character set is
# searched for by a scan over that set; one that starts with a repeat is tried at each place.
_NON_ASCII = re.compile(r"[^\x00-\x7f][^\x00-\x7f]*")


def _fold(text: str) -> str:
    """'café' → 'cafe', 'naïve' → 'naive': accents kept apart would split a word in two.

    Only the runs of non-ASCII characters are decomposed: the same result as decomposing the
    whole text (a combining mark is never ASCII, and is dropped wherever it ends up), at a
    fraction of the cost on an abstract with one "é" or "–" in it."""
    if text.isascii():
        return text
    return _NON_ASCII.sub(_fold_run, text)


def _fold_run(match: re.Match[str]) -> str:
    decomposed = unicodedata.normalize("NFKD", match[0])
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))
