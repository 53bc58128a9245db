"""The themes' term counts on word numbers (``count_terms``) against the plain way: each paper
tokenized into strings, tallied and put in a matrix (``term_matrix``), the title's terms looked
up one by one. Every array must be the same, bit for bit: a different order or dtype could
move a paper to another theme."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse

from digest.ingest import load_sources
from digest.models import Paper
from digest.themes import _text
from digest.themes._term_codes import emitted_terms, term_spellings
from digest.themes._text import _frequent_enough, count_terms, paper_text, term_matrix, tokenize
from tests.fixtures.themes.evalsets import seed_papers

from .conftest import SHARED_DATA


def plain_counts(papers: list[Paper]) -> _text.TermCounts | None:
    """``count_terms`` as it was: strings all the way."""
    titles = [tokenize(p.title) for p in papers]
    counted = term_matrix((tokenize(paper_text(p)) for p in papers), len(papers))
    if counted is None:
        return None
    matrix, terms = counted
    kept = _frequent_enough(matrix, len(papers))
    if not kept.size or (matrix := matrix[:, kept]).nnz == 0:
        return None
    terms = terms[kept]
    column = {t: j for j, t in enumerate(terms)}
    rows = [sorted({column[t] for t in title if t in column}) for title in titles]
    row_ends = np.cumsum([0] + [len(row) for row in rows])
    flat = np.fromiter((j for row in rows for j in row), dtype=np.intc, count=int(row_ends[-1]))
    in_title = sparse.csr_matrix((np.ones(len(flat)), flat, row_ends),
                                 shape=(len(titles), len(column)))
    return _text.TermCounts(matrix, terms, in_title)


def assert_same_counts(ours: _text.TermCounts | None, plain: _text.TermCounts | None) -> None:
    assert (ours is None) == (plain is None)
    if ours is None or plain is None:
        return
    assert list(ours.terms) == list(plain.terms)
    assert ours.terms.dtype == plain.terms.dtype
    for name in ("matrix", "in_title"):
        a, b = getattr(ours, name), getattr(plain, name)
        assert a.shape == b.shape, name
        for part in ("data", "indices", "indptr"):
            x, y = getattr(a, part), getattr(b, part)
            assert x.dtype == y.dtype and np.array_equal(x, y), (name, part)


# Pieces that each touch a rule: stop, weak and strong words, accents folded or not, letters
# that decompose into capitals or breaks, digits, math, LaTeX commands, underscores, control
# characters and the characters the fast scan uses for itself.
PIECES = st.sampled_from([
    " ", " ", " ", "the", "of", "large", "model", "models", "based", "graph", "neural", "net",
    "Graph", "GRAPH", "café", "naïve", "Größe", "größe", "ℓ2", "2d", "x1", "3", "a", "é",
    "e\u0301", "\u0301", ".", ",", ";", "(", ")", "[", "]", "\"", "\n", "...", "$x$", "$",
    "\\alpha", "\\", "_", "-", "–", "→", "α", "ℌ", "ﬁ", "Ⅸ", "\u212a", "İ", "…", "；", "（",
    "\x01", "\x02", "X", "XY", "ß", "²", "½", "\u00a0", "\t", "'", "https", "www",
])
TEXT = st.lists(PIECES, max_size=30).map("".join)


@settings(max_examples=400, deadline=None)
@given(TEXT)
def test_the_terms_read_from_word_numbers_are_tokenizes(text):
    words = _text._Words()
    sequence, _ = _text._one_after_another([words.read(text)])
    codes, _ = emitted_terms(sequence, words.weak_flags())
    assert term_spellings(codes, words.spelled) == tokenize(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(TEXT, TEXT), max_size=12), st.integers(1, 5))
def test_term_counts_on_word_numbers_equal_the_plain_counts(texts, batch):
    papers = [Paper(id=f"p{i}", title=title, abstract=abstract)
              for i, (title, abstract) in enumerate(texts)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_text, "_BATCH_WORDS", batch)  # a paper or a few a batch: terms seen before
        assert_same_counts(count_terms(papers), plain_counts(papers))


@pytest.mark.parametrize("batch", [1, 700, 400_000])
def test_term_counts_of_real_papers_equal_the_plain_counts(batch):
    records = load_sources([str(SHARED_DATA / "arxiv_metadata_sample.csv")]).records
    papers = [Paper(id=f"p{i}", title=p.title, abstract=p.abstract)
              for i, p in enumerate([*seed_papers(), *records])]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_text, "_BATCH_WORDS", batch)
        assert_same_counts(count_terms(papers[:300]), plain_counts(papers[:300]))
        if batch > 1:
            assert_same_counts(count_terms(papers), plain_counts(papers))


def test_stop_words_only_count_nothing():
    papers = [Paper(id=f"p{i}", title="The", abstract="of the and") for i in range(3)]
    assert count_terms(papers) is None
    assert count_terms([]) is None


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_the_non_ascii_runs_are_the_plain_patterns(text):
    """The pattern starts with a character set so that ``re`` scans for it."""
    assert _text._NON_ASCII.findall(text) == re.findall(r"[^\x00-\x7f]+", text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 9)), max_size=60), st.booleans())
def test_row_counts_are_the_counts_of_each_row_and_column(entries, in_order):
    """Rows in order are counted by scipy; any order by one sort: the plain tally either way."""
    from collections import Counter

    from digest.themes._term_codes import row_counts
    if in_order:
        entries = sorted(entries, key=lambda entry: entry[0])
    rows = np.array([row for row, _ in entries], dtype=np.int64)
    columns = np.array([column for _, column in entries], dtype=np.int64)
    flat, counts, sizes = row_counts(rows, columns, 7)
    tally = sorted(Counter(entries).items())
    assert flat.tolist() == [column for (_, column), _ in tally]
    assert counts.tolist() == [count for _, count in tally]
    assert sizes.tolist() == [sum(1 for (row, _), _ in tally if row == r) for r in range(7)]
    assert (flat.dtype, counts.dtype, sizes.dtype) == (np.intc, np.intc, np.int64)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.integers(0, 40), st.integers(0, 2**40 - 1),
                          st.integers(-2**63, 2**63 - 1)), max_size=80))
def test_distinct_codes_are_numpys_unique(codes):
    """Packed with their places and sorted, or by np.unique itself for codes too large."""
    from digest.themes._term_codes import _distinct
    codes = np.array(codes, dtype=np.int64)
    expected = np.unique(codes, return_index=True, return_inverse=True)
    for ours, theirs in zip(_distinct(codes), expected, strict=True):
        assert ours.tolist() == theirs.ravel().tolist()


def test_every_word_number_fits_in_a_bigrams_code():
    from digest.themes._term_codes import WORD_BITS
    assert _text.MAX_WORDS < 2**WORD_BITS  # a word is numbered 1 .. MAX_WORDS
