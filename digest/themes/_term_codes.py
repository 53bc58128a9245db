"""Term counting on word numbers: the themes tokenizer's phrase rules and bigram pairing over
whole arrays of words at once, instead of a Python step per word (``_text.count_terms``).

A word is a positive number below ``2**WORD_BITS`` (0 is a phrase break: punctuation, a stop
word, a paper's start). A term is a code: a unigram's code is its word's number, a bigram's is
``first << WORD_BITS | second`` (never below ``2**WORD_BITS``, so never a unigram's; below
2**40, so a code and its place in a batch pack into one int64).
"""

from __future__ import annotations

import numpy as np

WORD_BITS = 20
_WORD = (1 << WORD_BITS) - 1
_LOW = (1 << 32) - 1


def emitted_terms(words: np.ndarray, weak: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The codes ``tokenize`` emits for the word numbers ``words`` (``weak[w]`` true for a
    weak word), in its order: at each word its unigram (a strong word), then its bigram with
    the word before (both words, not both weak); and the position of each code's word."""
    current = words.astype(np.int64)
    is_word, is_weak = current != 0, weak[current]
    # Two slots a word, unigram first: the emitted slots in order keep tokenize's order.
    emitted = np.zeros((len(current), 2), dtype=np.bool_)
    emitted[:, 0] = is_word & ~is_weak
    emitted[1:, 1] = is_word[1:] & is_word[:-1] & ~(is_weak[1:] & is_weak[:-1])
    slots = np.flatnonzero(emitted)
    positions = slots >> 1
    codes = current[positions]  # only the codes emitted are made
    bigrams = (slots & 1).astype(np.bool_)
    codes[bigrams] |= current[positions[bigrams] - 1] << WORD_BITS
    return codes, positions


class FirstSight:
    """Each term code's number, in the order codes are first seen (what a dict filled term by
    term gives), for codes seen a batch at a time; at most ``limit`` codes are numbered."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.left_out = False  # whether a code past the limit was seen
        self._sorted = np.empty(0, dtype=np.int64)  # the codes seen, sorted
        self._numbers = np.empty(0, dtype=np.int64)  # their numbers, in the same order
        self._in_order: list[np.ndarray] = []  # the codes seen, in number order

    def __len__(self) -> int:
        return len(self._sorted)

    def number(self, codes: np.ndarray) -> np.ndarray:
        """The number of each of ``codes``; a code not seen before is numbered after every
        code seen before, in the order of its first place in ``codes``, while there is room
        below the limit; -1 for a code past it."""
        distinct, first_place, inverse = _distinct(codes)
        numbers, at, known = self._look_up(distinct)
        fresh = np.flatnonzero(~known)
        by_sight = fresh[np.argsort(first_place[fresh], kind="stable")]
        room = self.limit - len(self)
        if len(by_sight) > room:
            self.left_out = True
            numbers[by_sight[room:]] = -1
            by_sight = by_sight[:room]
            fresh = np.sort(by_sight)
        numbers[by_sight] = len(self) + np.arange(len(by_sight))
        self._in_order.append(distinct[by_sight])
        self._sorted = np.insert(self._sorted, at[fresh], distinct[fresh])
        self._numbers = np.insert(self._numbers, at[fresh], numbers[fresh])
        return numbers[inverse]

    def known_number(self, codes: np.ndarray) -> np.ndarray:
        """The number of each of ``codes``, -1 for a code never seen."""
        numbers, _, known = self._look_up(codes)
        numbers[~known] = -1
        return numbers

    def _look_up(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        at = np.searchsorted(self._sorted, codes)
        known = at < len(self._sorted)
        known[known] = self._sorted[at[known]] == codes[known]
        numbers = np.empty(len(codes), dtype=np.int64)
        numbers[known] = self._numbers[at[known]]
        return numbers, at, known

    def codes(self) -> np.ndarray:
        """Every code seen, in number order."""
        return np.concatenate(self._in_order) if self._in_order else np.empty(0, np.int64)


def _distinct(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(codes, return_index=True, return_inverse=True)``: the distinct codes, the
    first place of each, and each code's place among them. Each code and its place are
    packed into one int64 and sorted: a plain sort instead of a stable argsort, a quarter
    less time. Codes too large to pack (or below 0) are left to ``np.unique``."""
    place_bits = max(1, (len(codes) - 1).bit_length())
    if not len(codes) or codes.min() < 0 or codes.max() >> (63 - place_bits):
        distinct, first_place, inverse = np.unique(codes, return_index=True,
                                                   return_inverse=True)
        return distinct, first_place, inverse.ravel()
    keys = codes.astype(np.int64, copy=False) << place_bits | np.arange(len(codes))
    keys.sort()
    ordered, places = keys >> place_bits, keys & ((1 << place_bits) - 1)
    starts_a_code = np.empty(len(keys), dtype=np.bool_)
    starts_a_code[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=starts_a_code[1:])
    inverse = np.empty(len(keys), dtype=np.intp)
    inverse[places] = np.cumsum(starts_a_code) - 1
    starts = np.flatnonzero(starts_a_code)
    return ordered[starts], places[starts], inverse


def row_counts(rows: np.ndarray, columns: np.ndarray, n_rows: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """How often each (row, column) occurs, as CSR pieces: the columns and their counts
    (C ints: 45,000 papers have millions), row by row and by column within a row, and each
    row's number of entries. ``rows`` and ``columns`` are below 2**31.

    Rows in order (as a batch's words come) are counted by scipy, which sorts within each
    row (a paper's ~200 terms); one sort of all (row, column) keys took twice as long."""
    if len(rows) and not (rows[1:] < rows[:-1]).any():
        from scipy import sparse
        counted = sparse.csr_matrix(
            (np.ones(len(rows), dtype=np.intc), columns.astype(np.intc),
             np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n_rows))])),
            shape=(n_rows, int(columns.max()) + 1))
        counted.sum_duplicates()
        sizes = np.diff(counted.indptr).astype(np.int64)
        return counted.indices.astype(np.intc), counted.data, sizes
    pairs = np.sort(rows.astype(np.int64) << 32 | columns)
    starts = np.flatnonzero(np.diff(pairs, prepend=-1))
    distinct, counts = pairs[starts], np.diff(starts, append=len(pairs))
    sizes = np.bincount(distinct >> 32, minlength=n_rows)
    return (distinct & _LOW).astype(np.intc), counts.astype(np.intc), sizes


def term_spellings(codes: np.ndarray, spelled: list[str]) -> list[str]:
    """Each code's term: its word, or the bigram's two words with a space between
    (``spelled[w]`` is word w; ``spelled[0]`` is "")."""
    first = map(spelled.__getitem__, (codes >> WORD_BITS).tolist())
    second = map(spelled.__getitem__, (codes & _WORD).tolist())
    return [f"{a} {b}" if a else b for a, b in zip(first, second, strict=True)]
