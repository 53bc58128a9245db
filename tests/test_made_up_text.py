"""Made-up text cannot grow memory without end (issue 15: bounded memory on any input).

Abstracts of made-up words (random letters, or short words joined by hyphens or apostrophes)
have millions of distinct words and terms where a real week has a few hundred thousand. Every
table keyed by a word or term has a bound; below it the result is the unbounded one, and past
it the rule is stated and tested here. A 20,000-paper run of such text (the most a run takes
by default) took 5.4 GB before; ``benchmarks/bench_scale.py --made-up`` measures it.
"""

from __future__ import annotations

import logging
import random
import string
import tracemalloc
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse

from digest import offline
from digest.dedup import _shingles
from digest.dedup._shingles import Packed, token_hash
from digest.models import Paper
from digest.relevance import _similarity
from digest.render import rising
from digest.themes import _text
from digest.themes._term_codes import FirstSight
from digest.themes._text import count_terms

from .test_themes_counting import assert_same_counts, plain_counts


def made_up(count: int, *, seed: int = 3, joiner: str = "-", words: int = 1200) -> list[Paper]:
    rng = random.Random(seed)

    def word(n: int) -> str:
        return "".join(rng.choice(string.ascii_lowercase) for _ in range(n))

    return [Paper(id=f"p{i}", title=f"Paper {word(8)}",
                  abstract="We study graphs. " + joiner.join(word(3) for _ in range(words)))
            for i in range(count)]


def papers_of(texts: list[str]) -> list[Paper]:
    return [Paper(id=f"p{i}", title="x", abstract=text) for i, text in enumerate(texts)]


# Themes ---------------------------------------------------------------------------------

def test_codes_past_the_limit_get_no_number():
    sight = FirstSight(3)
    assert sight.number(np.array([10, 20, 10, 30, 40, 50])).tolist() == [0, 1, 0, 2, -1, -1]
    assert sight.left_out
    assert sight.number(np.array([40, 20, 30])).tolist() == [-1, 1, 2]
    assert sight.known_number(np.array([40, 10])).tolist() == [-1, 0]
    assert sight.codes().tolist() == [10, 20, 30] and len(sight) == 3


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(0, 30), max_size=12), max_size=6), st.integers(0, 40))
def test_a_limited_numbering_is_the_unlimited_ones_first_codes(batches, limit):
    limited, unlimited = FirstSight(limit), FirstSight(10**9)
    for batch in batches:
        codes = np.array(batch, dtype=np.int64)
        expected = unlimited.number(codes)
        expected[expected >= limit] = -1
        assert limited.number(codes).tolist() == expected.tolist()
    assert limited.left_out == (len(unlimited) > limit)


def test_terms_past_the_distinct_bound_are_not_counted(caplog):
    early = ["graph neural networks", "graph neural networks learn"]
    late = ["protein folding kinetics", "protein folding kinetics"]
    papers = papers_of(early + late)
    assert {"protein", "protein folding"} <= set(count_terms(papers).terms)
    with pytest.MonkeyPatch.context() as patch, caplog.at_level(logging.WARNING):
        # the early papers' terms: 4 unigrams and 3 bigrams (no term of the title "x")
        patch.setattr(_text, "MAX_DISTINCT_TERMS", 7)
        bounded = count_terms(papers)
    early_only = plain_counts(papers[:2])
    assert list(bounded.terms) == list(early_only.terms)
    assert np.array_equal(bounded.matrix[:2].toarray(), early_only.matrix.toarray())
    assert bounded.matrix[2:].nnz == 0  # the late papers' terms were all new
    assert "more than 7 distinct terms" in caplog.text


def test_words_past_the_word_bound_read_as_phrase_breaks(caplog):
    papers = papers_of(["alpha beta gamma", "alpha delta beta gamma", "delta gamma beta"])
    with pytest.MonkeyPatch.context() as patch, caplog.at_level(logging.WARNING):
        patch.setattr(_text, "MAX_WORDS", 3)  # alpha, beta, gamma
        bounded = count_terms(papers)
    as_breaks = papers_of(["alpha beta gamma", "alpha . beta gamma", ". gamma beta"])
    assert_same_counts(bounded, plain_counts(as_breaks))
    assert "more than 3 distinct words" in caplog.text


def test_at_most_most_terms_are_clustered_on_those_in_the_most_papers():
    n, columns = 30, 24_000
    most = _text.most_terms(n)
    assert most == 20_000
    spread = 2 + np.arange(columns) % 5  # each column in 2 to 6 papers
    rows = np.concatenate([np.arange(k) for k in spread])
    cols = np.repeat(np.arange(columns), spread)
    matrix = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, columns))
    kept = _text._frequent_enough(matrix, n)
    assert len(kept) == most and np.all(np.diff(kept) > 0)
    widest = sorted(range(columns), key=lambda j: (-spread[j], j))[:most]
    assert kept.tolist() == sorted(widest)


def test_real_sized_listings_are_below_the_term_cap():
    """The cap only binds on made-up text: 20 terms a paper, 20,000 at least."""
    assert _text.most_terms(200) == 20_000
    assert _text.most_terms(4_500) == 90_000
    assert _text.most_terms(45_000) == 150_000


def test_made_up_words_cost_memory_for_the_terms_kept_not_every_term_read():
    """700 abstracts of 1,200 three-letter words joined by hyphens: 1.7 million distinct
    terms, 19,000 kept. Spelling every term out before pruning peaked at 176 MB; now 90."""
    papers = made_up(700)
    tracemalloc.start()
    try:
        counts = count_terms(papers)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert counts is not None and counts.matrix.shape == (700, 18_658)
    assert peak < 130 * 2**20, f"{peak / 2**20:.0f} MB"


# Dedup ----------------------------------------------------------------------------------

_rows = st.lists(st.lists(st.sampled_from(["graph", "model", "graphs", "a", "é", "x y", "ü",
                                           "learning", "\ud800", "7b", ""]), max_size=12),
                 max_size=10)


def _hash_sets(packed: Packed) -> list[set[int]]:
    return [set(packed.row(i).tolist()) for i in range(len(packed))]


@settings(max_examples=200, deadline=None)
@given(_rows, st.integers(0, 8))
def test_tokens_past_the_numbered_bound_are_hashed_as_they_come(rows, numbered):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_shingles, "NUMBERED", numbered)
        bounded = Packed.of_tokens(rows)
    assert _hash_sets(bounded) == [{token_hash(t) for t in row} for row in rows]
    assert [bounded.size(i) for i in range(len(rows))] == [len(set(row)) for row in rows]
    assert len(set(bounded.table.tolist())) == len(bounded.table)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(0, 5), max_size=8), max_size=8))
def test_rows_that_repeat_a_number_hold_it_once(rows):
    numbers = np.array([n for row in rows for n in row], dtype=np.int32)
    offsets = np.cumsum([0] + [len(row) for row in rows]).astype(np.int64)
    table = np.arange(100, 106, dtype=np.uint64)
    packed = Packed.of_numbers(numbers, offsets, table, rows_distinct=False)
    assert _hash_sets(packed) == [{100 + n for n in row} for row in rows]
    assert [packed.size(i) for i in range(len(rows))] == [len(set(row)) for row in rows]


def test_the_token_hash_cache_stays_within_its_bound():
    rows = [[f"w{i}x{j}" for j in range(50)] for i in range(40)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_shingles, "NUMBERED", 100)
        patch.setattr(_shingles, "_CACHE_LIMIT", 300)
        _shingles._HASHES.clear()
        packed = Packed.of_tokens(rows)
        assert len(_shingles._HASHES) <= 300 + 50
    assert len(packed.table) == 2_000


# Summaries ------------------------------------------------------------------------------

def test_the_sentence_table_cache_is_bounded_by_characters_least_recent_out():
    built: list[str] = []

    def build(abstract: str) -> tuple:
        built.append(abstract)
        return (abstract,)

    cache = offline._TableCache(build, max_chars=100)
    a, b, c = "a" * 40, "b" * 40, "c" * 40
    assert cache(a) == (a,) and cache(b) == (b,)
    assert cache(a) == (a,)  # a hit: a is now the most recent
    cache(c)  # 120 characters: b, the least recent, goes
    assert cache.cache_info().chars == 80
    cache(a)
    cache(b)
    assert built == [a, b, c, b]
    assert cache.cache_info()[:2] == (2, 4)
    huge = "d" * 500
    cache(huge)  # alone over the bound: kept until the next one
    assert cache.cache_info().chars == 500
    cache.cache_clear()
    assert cache.cache_info() == (0, 0, 0)


def test_the_sentence_table_cache_holds_a_large_theme_of_real_abstracts():
    """A theme's gists and its summary share one split: 7,000 abstracts of 1,500 characters
    (a 50,000-paper week's largest theme) fit."""
    assert offline._TABLE_CHARS >= 7_000 * 1_500
    assert offline._sentence_table.cache_info().chars <= offline._TABLE_CHARS


# Rising themes --------------------------------------------------------------------------

def _groups() -> list[list[Paper]]:
    rng = random.Random(5)
    vocabulary = [f"term{i}" for i in range(300)]
    return [[Paper(id=f"g{g}p{i}", title=f"Paper {g} {i}",
                   abstract=" ".join(rng.sample(vocabulary[g * 50:g * 50 + 120], 20)))
             for i in range(40)] for g in range(4)]


def test_profiles_below_the_bound_are_the_plain_counts():
    groups = _groups()
    plain = [Counter(term for paper in group for term in rising._paper_terms(paper))
             for group in groups]
    assert rising._group_counts(groups) == plain


def test_past_the_bound_a_paper_adds_only_terms_its_theme_counts(caplog):
    groups = _groups()
    with pytest.MonkeyPatch.context() as patch, caplog.at_level(logging.WARNING):
        patch.setattr(rising, "PROFILED", 150)
        patch.setattr(rising, "_SLICE", 8)
        patch.setattr(rising, "_FOOTHOLD", 30)
        counts = rising._group_counts(groups)
    plain = [Counter(term for paper in group for term in rising._paper_terms(paper))
             for group in groups]
    # each count is at most the plain one, and terms only come from the plain counts
    for bounded, full in zip(counts, plain, strict=True):
        assert not bounded - full
    held = sum(map(len, counts))
    assert held < sum(map(len, plain))
    # the bound, plus one slice's new terms, plus a foothold for each later theme
    most_a_slice = 8 * max(len(rising._paper_terms(p)) for g in groups for p in g)
    assert held <= 150 + most_a_slice + 30 * len(groups)
    assert caplog.text.count("more than 150 term counts") == 1


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1) | st.sampled_from([0, 1, 2**63, 2**64 - 1]),
                max_size=40))
def test_hashes_are_numbered_as_numpy_numbers_them(values):
    flat = np.array(values, dtype=np.uint64)
    table, numbers = _shingles._numbered(flat)
    expected_table, expected_numbers = np.unique(flat, return_inverse=True)
    assert table.tolist() == expected_table.tolist()
    assert numbers.dtype == np.int32 and numbers.tolist() == expected_numbers.ravel().tolist()


def test_runs_that_are_no_word_are_not_kept_without_end():
    """"7abc", "x2y", "größe": runs a word never is, cached so far only (made-up text of
    digits and letters has millions of them)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_text, "MAX_WORDS", 5)
        words = _text._Words()
        text = " ".join(f"{n}abc" for n in range(100)) + " alpha beta"
        numbers = words.read(text)
        assert len(words) <= 2 * 5 + 2
        assert words.read("alpha beta") == numbers[-8:]  # the words kept their numbers
        assert words.read(" ".join(f"{n}abc" for n in range(100))) == b""


# Relevance --------------------------------------------------------------------------------

def _plain_tfidf(texts: list[str]):
    from sklearn.feature_extraction.text import TfidfVectorizer
    return TfidfVectorizer(strip_accents="unicode", lowercase=True, stop_words="english",
                           token_pattern=r"(?u)\b[a-zA-Z_][a-zA-Z0-9_]+\b", ngram_range=(1, 2),
                           sublinear_tf=True, max_features=_similarity.MAX_FEATURES,
                           norm="l2").fit_transform(texts)


def test_the_relevance_tfidf_below_its_bound_is_sklearns():
    from tests.fixtures.themes.evalsets import seed_papers
    texts = [f"{p.title}. {p.abstract}" for p in seed_papers()]
    ours, plain = _similarity._tfidf(texts), _plain_tfidf(texts)
    for part in ("data", "indices", "indptr"):
        assert np.array_equal(getattr(ours, part), getattr(plain, part)), part


def test_the_relevance_vocabulary_is_bounded(caplog):
    """With a reader's library, 20,000 papers of random words took the relevance stage to
    183 s and 6 GB: scikit-learn keeps every word and bigram before it keeps the 50,000
    most frequent."""
    early = ["graph networks learn graphs"] * 3
    late = ["protein folding kinetics"] * 3
    with pytest.MonkeyPatch.context() as patch, caplog.at_level(logging.WARNING):
        patch.setattr(_similarity, "MAX_GRAMS", 7)  # the early texts' words and bigrams
        bounded = _similarity._tfidf(early + late)
    assert bounded.shape[1] == 7
    assert bounded[3:].nnz == 0  # the late texts' words and bigrams all came past it
    assert caplog.text.count("more than 7 distinct words and bigrams") == 1
