"""Near-duplicates: the same paper with a re-worded title or a revised abstract.

Candidates come only from LSH buckets, never from a pass over all pairs: MinHash LSH
over the abstracts' content words, and a second index over the titles' character
trigrams for papers whose abstract is missing or rewritten. ``confirm`` then decides
each candidate pair from exact measures. The thresholds were chosen on the
near-duplicate evaluation set and the arXiv sample: the measurements are below.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import filterfalse
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from rapidfuzz import fuzz

from ..normalize import singular
from ._boilerplate import NEAR_IDENTICAL, SHARED_BY
from ._shingles import Packed, distinct_sorted, signatures, token_hash
from ._shingles import candidate_pairs as lsh_pairs

if TYPE_CHECKING:
    import numpy as np

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
#
# Precision first (issue 12), re-measured with `bench_dedup.py` on the same sets: precision
# 1.0000 everywhere, recall 0.9094 / 0.8970 / 0.9644 (before: 0.9094 / 0.8957 / 0.9644), and
# precision 1.0000 on the boilerplate sets (before: 0.02-0.03).
#   TITLE_DIFFERENT 0.5: the accepted true pairs of seeds 1-12 with a title ratio below 0.6
#     were 5 (0.48-0.57, abstracts 0.81-1.00); below 0.5 only one (abstract 1.00), so a
#     near-identical abstract (ABSTRACT_IDENTICAL 0.9) loses nothing there. Word order is
#     ignored (token_sort_ratio): "Towards a Blueprint (X)" is "X: A Blueprint".
#   ABSTRACT_LEAST / TITLE_LEAST 0.3: no true pair lost on seeds 1-6 from 0 to 0.35; the
#     candidates among 10k synthetic records fall from 4,919 to 2,880.
#   Strict all-pairs confirmation of groups cost 19 true pairs on seeds 7-8 (705 -> 686):
#     ``_groups`` asks every other pair to be compatible instead.
ABSTRACT_LEAST = 0.3          # least estimated Jaccard of an abstract candidate pair
TITLE_LEAST = 0.3             # ... and of a title-trigram one
MIN_ABSTRACT_WORDS = 12       # fewer content words: boilerplate ("withdrawn"), not evidence
ABSTRACT_SAME = 0.8           # content-word Jaccard of one abstract, however re-titled
ABSTRACT_IDENTICAL = 0.9      # ... and of one abstract under titles that differ
TITLE_DIFFERENT = 0.5         # title ratio below this, without the same words: titles differ
SAME_TITLE_ABSTRACT = 0.3     # the least Jaccard of two abstracts under the same title words
SAME_TITLE_CONTAINED = 0.6    # ... or the least share of the shorter one the longer holds
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
_STOPWORD_BYTES = frozenset(word.encode() for word in STOPWORDS)


def content_words(words: Iterable[str]) -> frozenset[str]:
    return frozenset(w for w in words if w not in STOPWORDS)


_T = TypeVar("_T")


class once(Generic[_T]):  # lower case: used as a decorator, like cached_property
    """``functools.cached_property`` without the lock Python 3.11 takes on every first
    access of every instance: a templated listing asks millions of them. The value is kept
    in the instance's ``__dict__``, so later reads never reach the descriptor."""

    def __init__(self, compute: Callable[[Any], _T]):
        self.compute = compute
        self.name = compute.__name__
        self.__doc__ = compute.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: type | None = None) -> _T:
        if instance is None:
            return self  # type: ignore[return-value]
        value = instance.__dict__[self.name] = self.compute(instance)
        return value


class WordSets:
    """Each record's abstract words: the rows of the distinct abstracts (``packed``) and each
    record's row (records with one abstract share it). As Python sets for the records being
    compared, the most recent ``LIMIT`` rows: sets of every record would cost gigabytes at
    100k records."""

    LIMIT = 4_096

    def __init__(self, words: Packed, rows: Sequence[int] | None = None):
        import numpy as np
        self.packed = words
        self.rows = np.arange(len(words)) if rows is None else np.asarray(rows, dtype=np.int64)
        self._row_of: list[int] = self.rows.tolist()
        self._sizes: list[int] = np.diff(words.offsets).tolist()
        self._sets: OrderedDict[int, frozenset[int]] = OrderedDict()

    def __getitem__(self, record: int) -> frozenset[int]:
        row = self._row_of[record]
        found = self._sets.get(row)
        if found is None:
            found = self._sets[row] = frozenset(self.packed.row(row).tolist())
            if len(self._sets) > self.LIMIT:
                self._sets.popitem(last=False)
        return found

    def size(self, record: int) -> int:
        """How many distinct content words the record's abstract has."""
        return self._sizes[self._row_of[record]]

    def signatures(self, records: Sequence[int]) -> np.ndarray:
        """The MinHash signatures of the records' abstracts, each distinct abstract's once."""
        import numpy as np
        rows = self.rows[np.asarray(records, dtype=np.int64)]
        needed, where = np.unique(rows, return_inverse=True)
        every = len(needed) == len(self.packed)
        return signatures(self.packed if every else self.packed.subset(needed))[where]

    def shared_counts(self, first: Sequence[int], second: Sequence[int]) -> np.ndarray:
        """How many words the abstracts of records ``first[k]`` and ``second[k]`` share."""
        import numpy as np
        rows = self.rows
        return self.packed.shared_counts(rows[np.asarray(first, dtype=np.int64)],
                                         rows[np.asarray(second, dtype=np.int64)])


@dataclass(frozen=True)
class Side:
    """One cluster as near-dup sees it: its titles and its fullest abstract."""

    key: int                 # the cluster's first record
    record: int              # the record whose abstract is compared
    titles: tuple[str, ...]  # loose titles, distinct
    size: int                # distinct content words of that abstract
    sets: WordSets = field(compare=False, repr=False)
    boilerplate: bool = False  # that abstract is a notice or a template: no evidence

    @property
    def words(self) -> frozenset[int]:
        """Hashed stems of the fullest abstract's content words."""
        return self.sets[self.record]

    @property
    def has_abstract(self) -> bool:
        return self.size >= MIN_ABSTRACT_WORDS and not self.boilerplate

    @once
    def title_words(self) -> frozenset[str]:
        return frozenset(w for title in self.titles for w in title.split())

    @once
    def title_stems(self) -> frozenset[str]:
        return frozenset(singular(w) for w in self.title_words)

    @once
    def named(self) -> tuple[tuple[str, str, int, int], ...]:
        """What ``title_conflict`` asks the abstracts about each content word of three
        letters or more in the titles: the word, its stem, and the hashes of the two words an
        abstract would say it with ("widget": widget, widgets). A stem is its own singular
        and keeps three letters or more (``singular``), so both always count."""
        return tuple((word, stem, token_hash(stem), token_hash(stem + "s"))
                     for word in content_words(self.title_words) if len(word) > 2
                     for stem in (singular(word),))


def abstract_content(words: Iterable[bytes]) -> list[bytes]:
    """What abstracts are compared on: their content words (UTF-8, as ``abstract_words``
    gives them)."""
    return list(filterfalse(_STOPWORD_BYTES.__contains__, words))


# Candidates -----------------------------------------------------------------------------

def candidate_pairs(sides: Sequence[Side]) -> list[tuple[int, int]]:
    """Index pairs (i < j) into ``sides`` that share an LSH bucket of abstracts or of titles,
    sorted."""
    import numpy as np

    if len(sides) < 2:
        return []
    with_abstract = [i for i, side in enumerate(sides) if side.has_abstract]
    abstracts = sides[0].sets.signatures([sides[i].record for i in with_abstract])
    entries = [(i, title) for i, side in enumerate(sides) for title in side.titles]
    titles = Packed.of_trigrams([_trigram_text(title) for _, title in entries])
    codes = distinct_sorted(np.concatenate([
        _pair_codes(with_abstract, abstracts, ABSTRACT_LEAST, len(sides)),
        _pair_codes([i for i, _ in entries], signatures(titles), TITLE_LEAST, len(sides))]))
    pairs = list(zip((codes // len(sides)).tolist(), (codes % len(sides)).tolist(), strict=True))
    logger.debug("near-dup: %d candidate pairs among %d clusters", len(pairs), len(sides))
    return pairs


def _pair_codes(ids: Sequence[int], signature, least: float, n: int):  # -> np.ndarray
    """The LSH pairs of ``signature``'s rows as sides (``ids``), each coded i * n + j, i < j;
    none of a side with itself (two titles of one cluster)."""
    import numpy as np

    first, second = lsh_pairs(signature, least)
    sides = np.asarray(ids, dtype=np.int64)
    a, b = sides[first], sides[second]
    low, high = np.minimum(a, b), np.maximum(a, b)
    keep = low != high
    return low[keep] * n + high[keep]


def _trigram_text(title: str) -> str:
    """The text whose character trigrams are the title's (``Packed.of_trigrams`` cuts it):
    its content words, as stopwords' trigrams (" of", "the") would make every pair of titles
    look a little alike and flood the buckets."""
    return f" {' '.join(w for w in title.split() if w not in STOPWORDS) or title} "


def boilerplate_sides(sides: Sequence[Side], pairs: Sequence[tuple[int, int]],
                      evidence: Evidences, shared: np.ndarray) -> set[int]:
    """Sides whose abstract is near-identical to those of SHARED_BY - 1 others with
    different titles: a template, not evidence (see ``_boilerplate``). ``shared`` holds the
    pairs' shared word counts (``Evidences.count``)."""
    unrelated: dict[int, int] = {}
    for i, j in _near_identical(sides, pairs, shared):
        if evidence.of(i, j, keep=False).titles_differ:
            unrelated[i] = unrelated.get(i, 0) + 1
            unrelated[j] = unrelated.get(j, 0) + 1
    return {i for i, count in unrelated.items() if count >= SHARED_BY - 1}


def _near_identical(sides: Sequence[Side], pairs: Sequence[tuple[int, int]],
                    shared: np.ndarray) -> list[tuple[int, int]]:
    """The pairs of two abstracts that are evidence and near-identical, found in numpy: the
    same divisions as ``Evidence.abstract`` (integers to doubles, then one division), so
    only these few pairs need their titles compared."""
    import numpy as np
    if not pairs:
        return []
    first, second = np.array(pairs, dtype=np.int64).T
    size = np.array([side.size for side in sides], dtype=np.int64)
    has = np.array([side.has_abstract for side in sides], dtype=bool)
    jaccard = shared / np.maximum(1, size[first] + size[second] - shared)
    near = has[first] & has[second] & (jaccard >= NEAR_IDENTICAL)
    return [pairs[k] for k in np.flatnonzero(near).tolist()]


# Confirmation ---------------------------------------------------------------------------

def may_confirm(sides: Sequence[Side], pairs: Sequence[tuple[int, int]],
                shared: np.ndarray) -> list[int]:
    """The indices of the pairs ``confirm`` may accept, found in numpy (most candidate pairs
    are neither): it accepts only titles with the same words, or two abstracts (evidence or
    not) whose content-word Jaccard reaches ABSTRACT_MATCH. Titles with the same words have
    words that start alike: the same set of first three letters (``_same_word``), compared as
    a hash of that set when a side has one title. ``shared``: the pairs' shared word counts."""
    import numpy as np
    if not pairs:
        return []
    first, second = np.array(pairs, dtype=np.int64).T
    size = np.array([side.size for side in sides], dtype=np.int64)
    has = np.array([side.has_abstract for side in sides], dtype=bool)
    jaccard = shared / np.maximum(1, size[first] + size[second] - shared)  # as Evidence.abstract
    similar = has[first] & has[second] & (jaccard >= ABSTRACT_MATCH)
    asked = np.unique(np.concatenate([first[~similar], second[~similar]]))  # titles to hash
    starts = np.zeros(len(sides), dtype=np.int64)
    starts[asked] = [_word_starts(sides[i].titles) for i in asked.tolist()]
    alike = (starts[first] == starts[second]) | (starts[first] < 0) | (starts[second] < 0)
    return np.flatnonzero(similar | alike).tolist()


def _word_starts(titles: tuple[str, ...]) -> int:
    """A hash (0 or more) of the first three letters of the one title's content words; -1 for
    several titles."""
    if len(titles) != 1:
        return -1
    return hash(frozenset(w[:3] for w in titles[0].split() if w not in STOPWORDS)) & _LOW_BITS


_LOW_BITS = (1 << 62) - 1

class Evidence:
    """The measures of one pair of sides, each computed once, when first asked for."""

    def __init__(self, a: Side, b: Side, shared: int | None = None):
        self.a, self.b = a, b
        if shared is not None:  # counted for every candidate pair at once (Evidences.count)
            self.__dict__["_shared"] = (shared, a.size, b.size)

    @once
    def title(self) -> float:
        """The best title ratio (0-1)."""
        return max(fuzz.ratio(x, y) for x in self.a.titles for y in self.b.titles) / 100

    @once
    def same_words(self) -> bool:
        return any(same_title_words(x, y) for x in self.a.titles for y in self.b.titles)

    @once
    def titles_differ(self) -> bool:
        """Titles that are neither the same words nor similar strings, in any word order:
        two papers, unless the abstracts say otherwise beyond doubt."""
        if self.same_words or self.title >= TITLE_DIFFERENT:
            return False
        return max(fuzz.token_sort_ratio(x, y) for x in self.a.titles
                   for y in self.b.titles) < TITLE_DIFFERENT * 100

    @once
    def _shared(self) -> tuple[int, int, int]:
        words_a, words_b = self.a.words, self.b.words
        return len(words_a & words_b), len(words_a), len(words_b)

    @once
    def abstract(self) -> float:
        """Content-word Jaccard of the two abstracts."""
        shared, size_a, size_b = self._shared
        return shared / max(1, size_a + size_b - shared)

    @once
    def abstracts_differ(self) -> bool:
        shared, size_a, size_b = self._shared
        return _differ(shared, size_a, size_b)

    @once
    def abstracts_agree(self) -> bool:
        """Abstracts that one paper's listings could give: much the same words, or one
        holding most of the other's (a cut or revised copy). Two papers of one field under
        the same title words share their field's words and no more ("A Survey on Vision
        Transformers" / "Transformers in Vision: A Survey": Jaccard 0.18)."""
        return _agree(*self._shared)


class Evidences:
    """Evidence per pair of side indices. Passes over all candidate pairs ask with
    ``keep=False``: kept for every pair, evidence would cost ~0.4 kB a pair."""

    def __init__(self, sides: Sequence[Side]):
        self.sides = sides
        self._known: dict[tuple[int, int], Evidence] = {}
        self._shared: dict[tuple[int, int], int] = {}

    def count(self, pairs: Sequence[tuple[int, int]]) -> np.ndarray:
        """Count the shared abstract words of every pair (i < j) at once; the counts, in the
        pairs' order."""
        import numpy as np
        if not pairs or not self.sides:
            return np.zeros(len(pairs), dtype=np.int64)
        shared = self.sides[0].sets.shared_counts([self.sides[i].record for i, _ in pairs],
                                                  [self.sides[j].record for _, j in pairs])
        self._shared = dict(zip(pairs, shared.tolist(), strict=True))
        return shared

    def of(self, i: int, j: int, *, keep: bool = True) -> Evidence:
        pair = (i, j) if i < j else (j, i)
        found = self._known.get(pair)
        if found is None:
            found = Evidence(self.sides[pair[0]], self.sides[pair[1]], self._shared.get(pair))
            if keep:
                self._known[pair] = found
        return found


@dataclass(frozen=True)
class Verdict:
    score: float
    detail: str


def confirm(a: Side, b: Side, measured: Evidence | None = None) -> Verdict | None:
    """Whether two clusters are one paper, and on what evidence; None when they are not.

    Titles with the same words need only abstracts that do not differ; similar titles need
    similar abstracts; titles that differ need near-identical abstracts that are evidence
    (not a notice or a template) and no title word that only one paper's abstract explains.
    """
    measured = measured or Evidence(a, b)
    both = a.has_abstract and b.has_abstract
    if both and measured.abstracts_differ:  # cheap, and no rule below accepts it
        return None
    title, same_words = measured.title, measured.same_words
    if not both:
        return Verdict(title, f"same title words (ratio {title:.2f}), "
                              "no abstract to compare") if same_words else None
    abstract = measured.abstract
    evidence = f"title {title:.2f}, abstract {abstract:.2f}"
    if same_words:
        if not measured.abstracts_agree:
            return None
        return Verdict(title, f"same title words; {evidence}")
    if measured.titles_differ:
        similar = abstract >= ABSTRACT_IDENTICAL
    else:
        similar = abstract >= ABSTRACT_SAME or (abstract >= ABSTRACT_MATCH
                                                and title + abstract >= TITLE_PLUS_ABSTRACT)
    if not similar or title_conflict(a, b):  # the costly check last: most pairs fail before
        return None
    return Verdict(abstract, evidence)


def abstracts_disagree(a: frozenset[int], b: frozenset[int]) -> bool:
    """Abstracts that are evidence and that one paper's listings would not give (see
    ``Evidence.abstracts_agree``): two papers under one title."""
    if len(a) < MIN_ABSTRACT_WORDS or len(b) < MIN_ABSTRACT_WORDS:
        return False
    return not _agree(len(a & b), len(a), len(b))


def _agree(shared: int, size_a: int, size_b: int) -> bool:
    return (shared / max(1, size_a + size_b - shared) >= SAME_TITLE_ABSTRACT
            or shared / max(1, min(size_a, size_b)) >= SAME_TITLE_CONTAINED)


def _differ(shared: int, size_a: int, size_b: int) -> bool:
    if size_a < MIN_ABSTRACT_WORDS or size_b < MIN_ABSTRACT_WORDS:
        return False
    return shared / min(size_a, size_b) < 0.3 and shared / (size_a + size_b - shared) < 0.2


def same_title_words(a: str, b: str) -> bool:
    """The same content words, up to spelling ("LLM"/"LLMs", "modeling"/"modelling")."""
    words_a, words_b = _title_content(a), _title_content(b)
    return _covered(words_a - words_b, words_b) and _covered(words_b - words_a, words_a)


@lru_cache(maxsize=1 << 14)
def _title_content(title: str) -> frozenset[str]:
    return content_words(title.split())


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
    their_titles, their_stems = b.title_words, b.title_stems
    words_a, words_b = a.words, b.words
    return {word for word, stem, as_is, plural in a.named
            if stem not in their_stems
            and (as_is in words_a or plural in words_a)
            and not (as_is in words_b or plural in words_b)
            and not any(word in their_word for their_word in their_titles)}
