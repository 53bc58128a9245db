"""Compact shingles and LSH candidates with bounded work on any input.

Every record's abstract words and title trigrams are hashed once (each distinct token once)
to 64-bit integers and kept in flat numpy arrays, not as per-record string sets: at 50k
records the sets took ~1.2 GB. MinHash signatures are computed in token chunks of bounded
size. Candidate pairs come from LSH buckets, but a bucket of thousands of templated records
yields only each member's nearest neighbours in signature order, and every record keeps at
most ``PER_RECORD`` candidates (the most similar by signature): the work grows linearly.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    import numpy as np

NUM_PERM = 128
BANDS, ROWS = 25, 5   # datasketch's optimal layout for threshold 0.5 at 128 permutations
SMALL_BUCKET = 24     # buckets up to this size give all their pairs ...
WINDOW = 3            # ... larger ones each member's next WINDOW members in signature order
PER_RECORD = 5        # candidates kept per record, the most similar by signature
PAIRS_AT_ONCE = 1 << 15  # pairs per sparse product: ~100 words a row, ~40 MB of temporaries
COMPARED_AT_ONCE = 1 << 13  # signature pairs compared per numpy step: 8k x 128 x 4 bytes
TRIGRAM_CODES = 1 << 22  # trigrams of an alphabet of up to 161 characters made numbers
CHUNK_TOKENS = 1 << 13  # tokens hashed per numpy step: 8k x 128 x 8 bytes = 8 MB a temporary
CHUNK_BYTES = 1 << 20  # text split at once: ~150k pieces, ~8 MB of them as bytes
# Between two texts split at once: a piece no UTF-8 text holds (no character encodes to 0xff)
SEPARATOR = b" \xff "

class _TokenHashes(dict[str | bytes, int]):
    """Each token's 64-bit hash (blake2b: the same in every process), computed once. A plain
    dict looked up through ``map`` costs no Python call per known token. A token given as
    bytes is its UTF-8 form: a word has one hash whether text or bytes."""

    def __missing__(self, token: str | bytes) -> int:
        data = token if isinstance(token, bytes) else token.encode("utf-8", "surrogatepass")
        digest = hashlib.blake2b(data, digest_size=8)
        value = self[token] = int.from_bytes(digest.digest(), "little")
        return value


_HASHES = _TokenHashes()


_Token = TypeVar("_Token", str, bytes, str | bytes)


class _FirstSeen(dict[_Token, int]):
    """Each token's number, in the order tokens are first asked for (through ``map``); the
    tokens not seen before are kept in ``fresh`` until taken."""

    def __init__(self) -> None:
        super().__init__()
        self.fresh: list[_Token] = []

    def __missing__(self, token: _Token) -> int:
        number = self[token] = len(self)
        self.fresh.append(token)
        return number

    def take_fresh(self) -> list[_Token]:
        fresh, self.fresh = self.fresh, []
        return fresh

# Distinct tokens numbered through a dict of their strings, and hashes kept between calls:
# ~30 MB each at most. The 50k benchmark's abstracts have 16,500 distinct words; made-up text
# has millions (and past the bound the packed rows are the same, only slower to make).
NUMBERED = 1 << 18
_CACHE_LIMIT = 1 << 18


def _hashes_of(tokens: Iterable[str | bytes], count: int) -> np.ndarray:
    """The 64-bit hashes of ``count`` distinct tokens, in order; the cache is emptied after
    when it has grown past its bound."""
    import numpy as np
    hashes = np.fromiter(map(_HASHES.__getitem__, tokens), dtype=np.uint64, count=count)
    if len(_HASHES) > _CACHE_LIMIT:
        _HASHES.clear()
    return hashes


def token_hash(token: str | bytes) -> int:
    """A 64-bit hash of ``token``, the same in every process (blake2b), computed once."""
    return _HASHES[token]


class Packed:
    """Rows of distinct token hashes, kept as numbers into one table of hashes (a number per
    distinct hash): a flat int32 array of numbers with offsets (CSR rows). The numbers are
    ready-made sparse columns, and a row's order within it means nothing."""

    def __init__(self, numbers: np.ndarray, offsets: np.ndarray, table: np.ndarray):
        self.numbers = numbers  # int32, each row's distinct numbers
        self.offsets = offsets  # int64, len(rows) + 1
        self.table = table      # uint64, the hash of each number, all distinct

    @classmethod
    def of_tokens(cls, rows: Iterable[Iterable[str | bytes]]) -> Packed:
        """Each row's distinct tokens, numbered in the order first seen and hashed once each
        (a dict looked up through ``map``: no Python call per known token, no list per row).
        Past ``NUMBERED`` distinct tokens (made-up text, or a very large week) the rest are
        hashed as they come and the hashes numbered in numpy, so that no table of strings
        grows with the input; the rows are the same."""
        import numpy as np

        numbering: _FirstSeen[str | bytes] = _FirstSeen()
        numbers, ends = array("i"), array("q", [0])
        rows = iter(rows)
        for row in rows:
            numbers.extend(map(numbering.__getitem__, set(row)))
            ends.append(len(numbers))
            if len(numbering) > NUMBERED:
                table = _hashes_of(numbering, len(numbering))
                del numbering
                collided = len(distinct_sorted(table)) < len(table)  # never seen with 64 bits
                return cls._of_hashes(table[np.frombuffer(numbers, dtype=np.int32)], ends, rows,
                                      rows_distinct=not collided)
        table = _hashes_of(numbering, len(numbering))
        return cls.of_numbers(np.frombuffer(numbers, dtype=np.int32),
                              np.frombuffer(ends, dtype=np.int64), table)

    @classmethod
    def of_texts(cls, texts: Iterable[bytes], split: Callable[[bytes], list[bytes]],
                 words_of: Callable[[bytes], list[bytes]]) -> Packed:
        """Each text's distinct words: ``split`` cuts a text into pieces (and keeps
        ``SEPARATOR`` a piece of its own), ``words_of`` gives a piece's words (none for a stop
        word). Texts are split about CHUNK_BYTES at a time, joined by ``SEPARATOR``, and each
        piece numbered through a dict in the order the split made them (one look-up a piece,
        the pieces still near in memory); each distinct piece's words are worked out once,
        and rows made distinct in numpy. Past ``NUMBERED`` distinct pieces the rest of the
        texts are packed as ``of_tokens`` packs them; the rows are the same."""
        import numpy as np

        pieces: _FirstSeen[bytes] = _FirstSeen()
        words: _FirstSeen[bytes] = _FirstSeen()
        pieces[SEPARATOR.strip()]  # number 0
        pieces.take_fresh()
        piece_words = _PieceWords()
        numbers: list[np.ndarray] = []
        sizes: list[np.ndarray] = []
        texts = iter(texts)
        for chunk in _chunks(texts, CHUNK_BYTES):
            flat = np.fromiter(map(pieces.__getitem__, split(SEPARATOR.join(chunk))),
                               dtype=np.int32)
            piece_words.add([[words[word] for word in words_of(piece)]
                             for piece in pieces.take_fresh()])
            row_numbers, row_sizes = piece_words.rows(flat, len(chunk), len(words))
            numbers.append(row_numbers)
            sizes.append(row_sizes)
            if len(pieces) > NUMBERED:
                table = _hashes_of(words, len(words))
                del pieces, words
                ends = array("q", np.cumsum(np.concatenate([[0], *sizes])).tolist())
                rest = ([w for piece in split(text) for w in words_of(piece)] for text in texts)
                return cls._of_hashes(table[np.concatenate(numbers)], ends, rest,
                                      rows_distinct=len(distinct_sorted(table)) == len(table))
        offsets = np.cumsum(np.concatenate([[0], *sizes]), dtype=np.int64)
        return cls.of_numbers(np.concatenate([np.zeros(0, dtype=np.int32), *numbers]), offsets,
                              _hashes_of(words, len(words)))

    @classmethod
    def _of_hashes(cls, hashed: np.ndarray, ends: array[int], rows: Iterator[Iterable[str | bytes]],
                   *, rows_distinct: bool) -> Packed:
        """The rows whose tokens are ``hashed`` so far (ending at ``ends``; each row's hashes
        distinct unless not ``rows_distinct``), then ``rows``; the hashes numbered by their
        sorted order."""
        import numpy as np
        hashes = array("Q", hashed.tobytes())
        del hashed
        for row in rows:
            if len(_HASHES) > _CACHE_LIMIT:
                _HASHES.clear()
            hashes.extend(set(map(_HASHES.__getitem__, row)))
            ends.append(len(hashes))
        table, numbers = _numbered(np.frombuffer(hashes, dtype=np.uint64))
        return cls.of_numbers(numbers, np.frombuffer(ends, dtype=np.int64), table,
                              rows_distinct=rows_distinct)

    @classmethod
    def of_trigrams(cls, texts: Sequence[str]) -> Packed:
        """Each text's distinct character trigrams, packed as ``of_tokens`` packs their
        lists. When the texts use few distinct characters (titles' loose forms: letters,
        digits, spaces), each trigram is a number in numpy, three letters of an alphabet
        that small, and only each distinct trigram becomes a string, to be hashed."""
        import numpy as np
        from scipy import sparse
        points = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"),
                               dtype=np.uint32)
        seen = np.zeros(0x110000, dtype=bool)
        seen[points] = True
        alphabet = np.flatnonzero(seen)
        size = len(alphabet)
        if size ** 3 > TRIGRAM_CODES:
            return cls.of_tokens(_cut_trigrams(text) for text in texts)
        letters = (np.cumsum(seen) - 1)[points]
        lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        counts = np.maximum(lengths - 2, 0)  # a text of n characters has n - 2 trigrams
        first = np.arange(int(counts.sum())) + np.repeat(
            np.cumsum(lengths) - lengths - (np.cumsum(counts) - counts), counts)
        codes = (letters[first] * size + letters[first + 1]) * size + letters[first + 2]
        present = np.bincount(codes, minlength=size ** 3) > 0
        number_of = np.cumsum(present) - 1
        # each text's distinct codes in order: scipy sorts within each row (a title's ~60),
        # where one sort of all (row, code) keys took 0.2 s at 50k titles
        rows = sparse.csr_matrix((np.ones(len(codes), dtype=np.int32), codes,
                                  np.concatenate([[0], np.cumsum(counts)])),
                                 shape=(len(texts), size ** 3))
        rows.sum_duplicates()
        codes, offsets = rows.indices, rows.indptr
        trigrams = ("".join(map(chr, alphabet[[c // size // size, c // size % size, c % size]]))
                    for c in np.flatnonzero(present).tolist())
        table = _hashes_of(trigrams, int(present.sum()))
        return cls.of_numbers(number_of[codes].astype(np.int32), offsets.astype(np.int64), table)

    @classmethod
    def of_numbers(cls, numbers: np.ndarray, offsets: np.ndarray, table: np.ndarray, *,
                   rows_distinct: bool = True) -> Packed:
        """Rows of distinct numbers whose hashes are ``table[number]``. Two tokens with one
        hash (never seen with 64 bits) become one number, as a set of hashes would count them.
        ``rows_distinct`` false: ``table`` is distinct but a row may hold a number twice."""
        import numpy as np
        distinct, number_of = np.unique(table, return_inverse=True)
        if len(distinct) == len(table) and rows_distinct:
            return cls(numbers, offsets, table)
        rows = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
        codes = np.unique(rows * len(distinct) + number_of.ravel()[numbers])
        sizes = np.bincount(codes // len(distinct), minlength=len(offsets) - 1)
        return cls((codes % len(distinct)).astype(np.int32),
                   np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64), distinct)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def subset(self, indices: Sequence[int] | np.ndarray) -> Packed:
        """The rows at ``indices``, in that order."""
        import numpy as np
        chosen = np.asarray(indices, dtype=np.int64)
        starts, sizes = self.offsets[chosen], np.diff(self.offsets)[chosen]
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        positions = np.arange(offsets[-1]) + np.repeat(starts - offsets[:-1], sizes)
        return Packed(self.numbers[positions], offsets, self.table)

    def row(self, index: int) -> np.ndarray:
        """The hashes of row ``index``."""
        return self.table[self.numbers[self.offsets[index]:self.offsets[index + 1]]]

    def hashes(self, start: int, end: int) -> np.ndarray:
        """The hashes of the flat positions ``start:end`` (rows end to end)."""
        return self.table[self.numbers[start:end]]

    def size(self, index: int) -> int:
        return int(self.offsets[index + 1] - self.offsets[index])

    def shared_counts(self, first: Sequence[int] | np.ndarray,
                      second: Sequence[int] | np.ndarray) -> np.ndarray:
        """How many hashes rows ``first[k]`` and ``second[k]`` have in common, for every k:
        sparse row products in numpy (one Python set intersection a pair was most of dedup
        at 50k records). A row holds a number once, so the product of two rows has an entry
        for each number they share: its length is the count (one byte a value, no sum)."""
        import numpy as np
        from scipy import sparse

        rows = sparse.csr_matrix((np.ones(len(self.numbers), dtype=np.int8), self.numbers,
                                  self.offsets), shape=(len(self), len(self.table)))
        left, right = np.asarray(first, dtype=np.int64), np.asarray(second, dtype=np.int64)
        return np.concatenate([np.zeros(0, dtype=np.int64)] + [
            np.diff(rows[left[k:k + PAIRS_AT_ONCE]].multiply(rows[right[k:k + PAIRS_AT_ONCE]])
                    .indptr).astype(np.int64)
            for k in range(0, len(left), PAIRS_AT_ONCE)])


class _PieceWords:
    """The word numbers of each numbered piece (none for the separator, number 0)."""

    def __init__(self) -> None:
        self.starts = array("q", [0, 0])  # piece n's words: self.words[starts[n]:starts[n + 1]]
        self.words = array("i")
        self.only = array("i", [-1])  # piece n's one word, or -1
        self.single = True  # no piece has more than one word: one look-up a piece

    def add(self, pieces: list[list[int]]) -> None:
        """The word numbers of the pieces numbered next, in order."""
        for words in pieces:
            self.words.extend(words)
            self.starts.append(len(self.words))
            self.only.append(words[0] if len(words) == 1 else -1)
            self.single = self.single and len(words) <= 1

    def rows(self, flat: np.ndarray, texts: int, width: int) -> tuple[np.ndarray, np.ndarray]:
        """The distinct word numbers (sorted) of each of ``texts`` texts whose pieces, separated
        by piece 0, are ``flat``; and each text's number of them. ``width``: words numbered."""
        import numpy as np
        from scipy import sparse
        text = np.cumsum(flat == 0)
        if self.single:
            word = np.frombuffer(self.only, dtype=np.int32)[flat]
            has = word >= 0
            word, text = word[has], text[has]
        else:  # each piece's words, in order
            starts = np.frombuffer(self.starts, dtype=np.int64)[flat]
            counts = np.frombuffer(self.starts, dtype=np.int64)[flat + 1] - starts
            at = np.repeat(starts - (np.cumsum(counts) - counts), counts) + np.arange(counts.sum())
            word = np.frombuffer(self.words, dtype=np.int32)[at]
            text = np.repeat(text, counts)
        offsets = np.concatenate([[0], np.cumsum(np.bincount(text, minlength=texts))])
        rows = sparse.csr_matrix((np.ones(len(word), dtype=np.int32), word, offsets),
                                 shape=(texts, width))
        rows.sum_duplicates()  # sorts each row and keeps a word once
        return rows.indices.astype(np.int32), np.diff(rows.indptr)


def _chunks(texts: Iterator[bytes], size: int) -> Iterator[list[bytes]]:
    """Consecutive texts of about ``size`` bytes in all (at least one text a chunk)."""
    chunk: list[bytes] = []
    filled = 0
    for text in texts:
        chunk.append(text)
        filled += len(text)
        if filled >= size:
            yield chunk
            chunk, filled = [], 0
    if chunk:
        yield chunk


def _cut_trigrams(text: str) -> list[str]:
    return [text[i:i + 3] for i in range(len(text) - 2)]


def _permutations() -> tuple[np.ndarray, np.ndarray]:
    import numpy as np
    rng = np.random.RandomState(1)  # fixed: the same signatures in every run
    a = rng.randint(1, 1 << 62, size=NUM_PERM, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    b = rng.randint(0, 1 << 62, size=NUM_PERM, dtype=np.uint64)
    return a, b


def signatures(packed: Packed) -> np.ndarray:
    """One MinHash signature (uint32 x NUM_PERM) per row: multiply-shift hashing of each
    token hash, the minimum per permutation, over chunks of at most CHUNK_TOKENS tokens."""
    import numpy as np
    a, b = (column[:, None] for column in _permutations())
    out = np.full((NUM_PERM, len(packed)), np.iinfo(np.uint32).max, dtype=np.uint32)
    buffer = np.empty((NUM_PERM, CHUNK_TOKENS), dtype=np.uint64)
    start = 0
    while start < len(packed):
        end = int(np.searchsorted(packed.offsets, packed.offsets[start] + CHUNK_TOKENS, "right"))
        end = min(max(end - 1, start + 1), len(packed))
        lo, hi = packed.offsets[start], packed.offsets[end]
        if hi > lo:
            hashed = _permuted(packed.hashes(lo, hi), a, b, buffer)
            filled = np.flatnonzero(np.diff(packed.offsets[start:end + 1]))
            out[:, start + filled] = np.minimum.reduceat(
                hashed, packed.offsets[start + filled] - lo, axis=1)
        start = end
    return np.ascontiguousarray(out.T)


def _permuted(hashes: np.ndarray, a: np.ndarray, b: np.ndarray,
              buffer: np.ndarray) -> np.ndarray:
    """``(hashes * a + b) >> 32`` for each permutation, in ``buffer`` when the chunk fits:
    each new 8 MB temporary costs its page faults. The values fit in 32 bits; the caller's
    uint32 keeps them."""
    import numpy as np
    fits = len(hashes) <= buffer.shape[1]
    hashed = np.multiply(hashes[None, :], a, out=buffer[:, :len(hashes)] if fits else None)
    hashed += b
    hashed >>= np.uint64(32)
    return hashed


def candidate_pairs(signature: np.ndarray, least: float) -> tuple[np.ndarray, np.ndarray]:
    """Row pairs (i < j) that share an LSH band and whose signatures estimate a Jaccard
    similarity of at least ``least``, at most ~PER_RECORD per row."""
    import numpy as np
    n = len(signature)
    if n < 2:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    found = [_band_pairs(signature, band) for band in range(BANDS)]
    codes = distinct_sorted(np.concatenate(found))
    first, second = codes // n, codes % n
    return _nearest(signature, first, second, least)


def _numbered(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_inverse=True)`` with int32 numbers, by one sort: numpy 2's
    ``unique`` took 3 s for 3 million hashes, the sort 0.2."""
    import numpy as np
    order = np.argsort(values)
    ordered = values[order]
    first = np.empty(len(values), dtype=bool)
    first[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    table = ordered[first]
    del ordered
    numbers = np.empty(len(values), dtype=np.int32)
    numbers[order] = np.cumsum(first, dtype=np.int32) - 1
    return table, numbers


def distinct_sorted(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` for integers: numpy 2's hash table is ~10x slower than a sort
    on the millions of pair codes at 50k records."""
    import numpy as np
    ordered = np.sort(values)
    return ordered[np.concatenate([ordered[:1] == ordered[:1], ordered[1:] != ordered[:-1]])]


def _band_pairs(signature: np.ndarray, band: int) -> np.ndarray:
    """Pairs (as i * n + j) of one band: all pairs of small buckets, neighbours in big ones."""
    import numpy as np
    n = len(signature)
    rows = _not_alone(signature, band)
    if len(rows) == 0:
        return np.zeros(0, dtype=np.int64)
    # the band's values, then the 4 after it: within a bucket (equal band values) members
    # come in signature order, so neighbours in a big bucket are alike; ties by row
    columns = [signature[rows, (band * ROWS + k) % NUM_PERM] for k in range(ROWS + 4)]
    order = rows[np.lexsort(columns[::-1])]
    in_band = signature[order, band * ROWS:(band + 1) * ROWS]
    starts = np.concatenate([[True], (in_band[1:] != in_band[:-1]).any(axis=1)])
    ordered = np.cumsum(starts) - 1  # each position's bucket
    size = np.bincount(ordered)[ordered]
    pairs = []
    for step in range(1, SMALL_BUCKET):
        same = ordered[step:] == ordered[:-step]
        if step > WINDOW:
            same &= size[step:] <= SMALL_BUCKET
        if not same.any():
            break
        left, right = order[:-step][same], order[step:][same]
        pairs.append(np.minimum(left, right) * n + np.maximum(left, right))
    return np.concatenate(pairs) if pairs else np.zeros(0, dtype=np.int64)


def _not_alone(signature: np.ndarray, band: int) -> np.ndarray:
    """The rows, in order, whose band values may be another row's too: those whose 64-bit
    mix of the band's values another row has (equal values, equal mix; a rare equal mix of
    other values only adds a row). Most rows are alone, and one sort of a 64-bit key
    spares them the full sort of nine columns."""
    import numpy as np
    key = np.zeros(len(signature), dtype=np.uint64)
    for column in range(band * ROWS, (band + 1) * ROWS):
        key *= np.uint64(0x9E3779B97F4A7C15)  # wraps: a mix, not a number
        key += signature[:, column]
    order = np.argsort(key)
    ordered = key[order]
    repeated = np.zeros(len(key), dtype=bool)
    repeated[1:] = ordered[1:] == ordered[:-1]
    repeated[:-1] |= repeated[1:]
    shared = np.zeros(len(key), dtype=bool)
    shared[order[repeated]] = True
    return np.flatnonzero(shared)


def _nearest(signature: np.ndarray, first: np.ndarray, second: np.ndarray,
             least: float) -> tuple[np.ndarray, np.ndarray]:
    """Keep a pair when it is similar enough and among the PER_RECORD most similar of
    either of its rows."""
    import numpy as np
    if len(first) == 0:
        return first, second
    similar = np.concatenate([
        np.count_nonzero(signature[first[k:k + COMPARED_AT_ONCE]]
                         == signature[second[k:k + COMPARED_AT_ONCE]], axis=1)
        for k in range(0, len(first), COMPARED_AT_ONCE)])
    enough = similar >= least * NUM_PERM
    first, second, similar = first[enough], second[enough], similar[enough]
    keep = _top_ranked(first, similar) | _top_ranked(second, similar)
    return first[keep], second[keep]


def _top_ranked(rows: np.ndarray, score: np.ndarray) -> np.ndarray:
    import numpy as np
    # by row, then the highest score first, ties in the pairs' order: one stable sort of a
    # key that orders as the (row, -score) pairs do (scores are 0..NUM_PERM)
    order = np.argsort(rows * (NUM_PERM + 1) + (NUM_PERM - score), kind="stable")
    ranked_rows = rows[order]
    starts = np.r_[0, np.flatnonzero(ranked_rows[1:] != ranked_rows[:-1]) + 1]
    rank = np.arange(len(rows)) - np.repeat(starts, np.diff(np.r_[starts, len(rows)]))
    keep = np.zeros(len(rows), dtype=bool)
    keep[order] = rank < PER_RECORD
    return keep
