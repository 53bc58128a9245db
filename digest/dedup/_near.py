"""Near-duplicates: the same paper with a re-worded title or a revised abstract.

Candidates come only from LSH buckets, never from a pass over all pairs: MinHash LSH
over the abstracts' content words, and a second index over the titles' character
trigrams for papers whose abstract is missing or rewritten. ``confirm`` then decides
each candidate pair from exact measures. The thresholds were chosen on the
near-duplicate evaluation set and the arXiv sample: the measurements are below.
"""

from __future__ import annotations

import itertools
import logging
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from datasketch import MinHashLSH
from rapidfuzz import fuzz

logger = logging.getLogger("digest.dedup")

# Measured 2026-11-23 on the evaluation set (tests/fixtures/dedup/evalset.py: seed papers,
# evalset seeds 1-12, ~470 records each) and on the 2,000 distinct papers of the arXiv
# sample with their ids ignored; `benchmarks/bench_dedup.py` prints the end-to-end figures.
# With these values: precision 1.0000 and recall 0.909 (seeds 1-6) / 0.896 (7-12, held
# out); 1 merge among the 2,000 arXiv papers (a real duplicate: one paper under two ids).
#
# LSH settings decide only which pairs are looked at: candidate recall of the true pairs
# (evalset seeds 1-4) against the number of candidates among the 2,000 distinct arXiv
# papers, which are all false and grow with the square of the input:
#   abstract words, 64 perms:  0.3: 0.999 | 0.4: 0.996, 52 | 0.6: 0.967 | 0.8: 0.881
#                   128 perms: 0.4: 1.000, 79 | 0.5: 0.992, 9          <- chosen
#   title trigrams of all words, 64 perms, 0.5: 0.983, 905; 128 perms 0.5: 0.979, 176
#   title trigrams of content words, 128 perms: 0.5: 0.977, 118 <- chosen | 0.6: 0.954, 13
#   title content words + word pairs, 128 perms, 0.5: 0.934, 24
# The two indexes cover for each other: end to end the chosen settings give recall 0.909 /
# 0.896 against 0.908 / 0.897 with 64 perms, 0.4 and all-word trigrams, while the false
# candidates among the arXiv papers fall from 957 to 127.
# Word shingles at about 0.5, as published results on scholarly data suggest; 3-word
# shingles at 0.8 would miss revised versions (0.8 on single words already finds 0.881).
#
# Confirmation thresholds (end result, seeds 1-12, one value changed at a time; measured
# with the earlier 64-perm, 0.4 LSH settings):
#   ABSTRACT_MATCH      0.2-0.4: recall 0.902; 0.5: 0.902; 0.6: 0.896 (precision 1.0 throughout)
#   TITLE_PLUS_ABSTRACT 1.0: 0.903 but 3 false merges in the arXiv sample, 1.1: 2, 1.25: 1
#                       (the real duplicate); 1.4: recall 0.900; 1.6: 0.888
#   ABSTRACT_SAME       0.6-0.9: no change on the set. Template abstracts of companion
#                       papers reach 0.82-1.0 (hard cases): ``title_conflict`` and the title
#                       markers keep those apart, not this threshold.
#   SAME_WORD           75-80: recall 0.903, 85-90: 0.902, 95: arXiv recall drops; 85 with
#                       the same first three letters (so not supervised / unsupervised, 91)
NUM_PERM = 128
ABSTRACT_LSH_THRESHOLD = 0.5  # LSH over abstract content words: candidates only
TITLE_LSH_THRESHOLD = 0.5     # LSH over title character trigrams: candidates only
MIN_ABSTRACT_WORDS = 12       # fewer content words: boilerplate ("withdrawn"), not evidence
ABSTRACT_SAME = 0.8           # content-word Jaccard of one abstract, however re-titled
ABSTRACT_MATCH = 0.4          # the least Jaccard that a similar title can make up for ...
TITLE_PLUS_ABSTRACT = 1.25    # ... when title ratio (0-1) + abstract Jaccard reach this
SAME_WORD = 85                # rapidfuzz ratio for "the same word" (modeling / modelling)

_STOPWORDS = """
a about above after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had has
have having here how i if in into is it its itself just more most no nor not of off on once only or
other our out over own same she should so some such than that the their them then there these they
this those through to too under until up very was we were what when where which while who whom why
will with would you your towards toward via using based new
"""
STOPWORDS = frozenset(_STOPWORDS.split())


def content_words(words: Iterable[str]) -> frozenset[str]:
    return frozenset(w for w in words if w not in STOPWORDS)


@dataclass(frozen=True)
class Side:
    """One cluster as near-dup sees it: its titles and its fullest abstract."""

    key: int                # the cluster's first record
    record: int             # the record whose abstract is compared
    titles: tuple[str, ...]  # loose titles, distinct
    words: frozenset[str]   # content words of the fullest abstract

    @property
    def has_abstract(self) -> bool:
        return len(self.words) >= MIN_ABSTRACT_WORDS

    @cached_property
    def title_words(self) -> frozenset[str]:
        return frozenset(w for title in self.titles for w in title.split())

    @cached_property
    def stems(self) -> frozenset[str]:
        """Stems of the abstract's content words."""
        return frozenset(_stem(w) for w in self.words)


# Candidates -----------------------------------------------------------------------------

def candidate_pairs(sides: Sequence[Side]) -> set[tuple[int, int]]:
    """Index pairs into ``sides`` that share an LSH bucket of abstracts or of titles."""
    with_abstract = [i for i, side in enumerate(sides) if side.has_abstract]
    pairs = _lsh_pairs(with_abstract, [sides[i].words for i in with_abstract],
                       ABSTRACT_LSH_THRESHOLD)
    pairs |= _lsh_pairs(range(len(sides)), [_trigrams(side.titles) for side in sides],
                        TITLE_LSH_THRESHOLD)
    logger.debug("near-dup: %d candidate pairs among %d clusters", len(pairs), len(sides))
    return pairs


def _lsh_pairs(ids: Sequence[int], shingle_sets: Sequence[Iterable[str]],
               threshold: float) -> set[tuple[int, int]]:
    """Pairs (smaller, larger) of ``ids`` whose MinHash signatures agree on every row of at
    least one band. The band layout is datasketch's for ``threshold``; the buckets are
    sorted numpy arrays, several times faster than ``MinHashLSH.insert`` and ``query``."""
    if len(ids) < 2:
        return set()
    id_array = np.asarray(ids, dtype=np.int64)
    layout = MinHashLSH(threshold=threshold, num_perm=NUM_PERM)
    signatures = _signatures(shingle_sets)
    pairs: set[tuple[int, int]] = set()
    for band in range(layout.b):
        rows = np.ascontiguousarray(signatures[:, band * layout.r:(band + 1) * layout.r])
        keys = rows.view(np.dtype((np.void, rows.dtype.itemsize * layout.r))).ravel()
        pairs.update(_bucket_pairs(id_array, keys))
    return pairs


def _bucket_pairs(ids: np.ndarray, keys: np.ndarray) -> Iterator[tuple[int, int]]:
    """Every pair of ids with equal keys; ids ascend, so pairs come out (smaller, larger)."""
    _, bucket, sizes = np.unique(keys, return_inverse=True, return_counts=True)
    shared = sizes[bucket.ravel()] > 1
    if not shared.any():
        return
    members, buckets = ids[shared], bucket.ravel()[shared]
    order = np.argsort(buckets, kind="stable")
    members, buckets = members[order], buckets[order]
    starts = np.flatnonzero(np.r_[True, buckets[1:] != buckets[:-1]])
    for group in np.split(members, starts[1:]):
        yield from itertools.combinations(group.tolist(), 2)


_PRIME = np.uint64((1 << 61) - 1)
_MAX_HASH = np.uint64((1 << 32) - 1)
_RANDOM = np.random.RandomState(1)  # fixed: the same signatures in every run
_PERMUTATIONS = np.array([(_RANDOM.randint(1, _PRIME, dtype=np.uint64),
                           _RANDOM.randint(0, _PRIME, dtype=np.uint64))
                          for _ in range(NUM_PERM)], dtype=np.uint64).T  # rows a, b


def _signatures(shingle_sets: Iterable[Iterable[str]]) -> np.ndarray:
    """One MinHash signature per set, computed as datasketch's "legacy" scheme does (crc32
    of each shingle, then (a * h + b) mod 2^61-1, low 32 bits, the minimum per permutation)
    but without a MinHash object per set: building those was a quarter of the time at 100k
    records."""
    a, b = _PERMUTATIONS
    rows = []
    for shingles in shingle_sets:
        hashes = np.fromiter((zlib.crc32(s.encode()) for s in shingles), dtype=np.uint64)
        if not len(hashes):
            rows.append(np.full(NUM_PERM, _MAX_HASH, dtype=np.uint64))
            continue
        rows.append((((hashes[:, None] * a + b) % _PRIME) & _MAX_HASH).min(axis=0))
    return np.stack(rows)


def _trigrams(titles: Iterable[str]) -> set[str]:
    """Character trigrams of the titles' content words: stopwords' trigrams (" of", "the")
    would make every pair of titles look a little alike and flood the buckets."""
    grams: set[str] = set()
    for title in titles:
        text = f" {' '.join(w for w in title.split() if w not in STOPWORDS) or title} "
        grams.update(text[i:i + 3] for i in range(len(text) - 2))
    return grams


# Confirmation ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Verdict:
    score: float
    detail: str


def confirm(a: Side, b: Side) -> Verdict | None:
    """Whether two clusters are one paper, and on what evidence; None when they are not."""
    if abstracts_differ(a.words, b.words):  # cheap, and no rule below accepts such a pair
        return None
    title = max(fuzz.ratio(x, y) for x in a.titles for y in b.titles) / 100
    same_words = any(same_title_words(x, y) for x in a.titles for y in b.titles)
    if not (a.has_abstract and b.has_abstract):
        return Verdict(title, f"same title words (ratio {title:.2f}), "
                              "no abstract to compare") if same_words else None
    jaccard = len(a.words & b.words) / len(a.words | b.words)
    evidence = f"title {title:.2f}, abstract {jaccard:.2f}"
    if same_words:
        return Verdict(title, f"same title words; {evidence}")
    similar = jaccard >= ABSTRACT_SAME or (jaccard >= ABSTRACT_MATCH
                                           and title + jaccard >= TITLE_PLUS_ABSTRACT)
    if not similar or title_conflict(a, b):  # the costly check last: most pairs fail before
        return None
    return Verdict(jaccard, evidence)


def abstracts_differ(a: frozenset[str], b: frozenset[str]) -> bool:
    """Clearly different abstracts: two papers, even under one title ("Comment on X")."""
    if len(a) < MIN_ABSTRACT_WORDS or len(b) < MIN_ABSTRACT_WORDS:
        return False
    shared = len(a & b)
    return shared / min(len(a), len(b)) < 0.3 and shared / len(a | b) < 0.2


def same_title_words(a: str, b: str) -> bool:
    """The same content words, up to spelling ("LLM"/"LLMs", "modeling"/"modelling")."""
    words_a, words_b = content_words(a.split()), content_words(b.split())
    return _covered(words_a - words_b, words_b) and _covered(words_b - words_a, words_a)


def _covered(words: Iterable[str], by: frozenset[str]) -> bool:
    return all(any(_same_word(w, v) for v in by) for w in words)


def _same_word(a: str, b: str) -> bool:
    """One word spelled two ways. Spelling differs late in a word; a different start is
    another word that merely looks alike (supervised / unsupervised, encoder / decoder)."""
    return a[:3] == b[:3] and fuzz.ratio(a, b) >= SAME_WORD


def title_conflict(a: Side, b: Side) -> bool:
    """One title names something its own abstract says and the other paper never does.

    That is how companion papers and template abstracts differ ("Stability of ..." /
    "Convergence of ...", "... on chemistry" / "... on law"), while a re-worded title
    of one paper keeps to words both versions use.
    """
    return bool(_own_words(a, b)) or bool(_own_words(b, a))


def _own_words(a: Side, b: Side) -> set[str]:
    their_titles = b.title_words
    return {w for w in content_words(a.title_words)
            if len(w) > 2 and _stem(w) in a.stems and _stem(w) not in b.stems
            and _stem(w) not in {_stem(t) for t in their_titles}
            and not any(w in their_word for their_word in their_titles)}


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") else word
