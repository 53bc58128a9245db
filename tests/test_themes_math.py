"""The themes' own TF-IDF, LSA, k-means, average-linkage cut and Rand index give scikit-learn's
answers, bit for bit: they replaced it so that a run does not pay its import (issue 15), and
the same bits keep the same themes. scikit-learn stays a test dependency for these checks."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse
from sklearn.cluster import AgglomerativeClustering, KMeans
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, TfidfTransformer, TfidfVectorizer
from sklearn.metrics import adjusted_rand_score
from sklearn.preprocessing import normalize
from threadpoolctl import threadpool_limits

from digest.ingest import load_sources
from digest.models import Paper
from digest.themes._kmeans import average_linkage_cut, kmeans
from digest.themes._text import STOP_WORDS, count_terms, term_matrix, tokenize
from digest.themes._vectors import adjusted_rand, lsa_axes, tfidf, unit_rows, unit_rows_sparse
from tests.conftest import SHARED_DATA
from tests.fixtures.themes.evalsets import seed_papers


@pytest.fixture(scope="module")
def arxiv_counts():
    records = load_sources([str(SHARED_DATA / "arxiv_metadata_sample.csv")]).records
    papers = [Paper(id=f"p{i}", title=r.title, abstract=r.abstract)
              for i, r in enumerate(records)]
    return count_terms(papers).matrix


@pytest.fixture(scope="module")
def arxiv_vectors(arxiv_counts):
    """The LSA vectors the themes cluster: 50 dimensions for 2,000 real abstracts."""
    weights = tfidf(arxiv_counts)
    return unit_rows(weights @ lsa_axes(weights, 50, 0).T)


def same(a, b) -> bool:
    return a.shape == b.shape and np.array_equal(a, b)


def test_tfidf_is_sklearns_sublinear_transformer(arxiv_counts):
    ours = tfidf(arxiv_counts)
    theirs = TfidfTransformer(sublinear_tf=True).fit_transform(arxiv_counts).tocsr()
    for part in ("data", "indices", "indptr"):
        assert same(getattr(ours, part), getattr(theirs, part)), part


def test_unit_rows_are_sklearns_normalize_zero_rows_included():
    rng = np.random.RandomState(3)
    vectors = rng.normal(size=(300, 50))
    vectors[[4, 70]] = 0.0
    vectors[5] = 1e-17
    assert same(unit_rows(vectors.copy()), normalize(vectors))
    sparse_rows = normalize(TfidfTransformer().fit_transform(
        (rng.poisson(0.3, size=(200, 80))).astype(float)))
    ours = unit_rows_sparse(sparse_rows.copy())
    assert same(ours.data, normalize(sparse_rows).data)


@pytest.mark.parametrize(("rows", "dimensions", "seed"), [(2000, 50, 0), (300, 40, 7), (60, 2, 1)])
def test_lsa_projection_is_truncated_svds(arxiv_counts, rows, dimensions, seed):
    weights = tfidf(arxiv_counts[:rows])
    axes = lsa_axes(weights, dimensions, seed)
    svd = TruncatedSVD(n_components=dimensions, random_state=seed)
    assert same(weights @ axes.T, svd.fit_transform(weights))
    assert same(axes, svd.components_)


def test_lsa_axes_fitted_on_more_papers_than_terms():
    """The other branch of the randomized SVD: a tall matrix is not transposed."""
    rng = np.random.RandomState(5)
    counts = sparse.csr_matrix(rng.poisson(0.5, size=(400, 30)).astype(float))
    weights = tfidf(counts)
    svd = TruncatedSVD(n_components=10, random_state=2).fit(weights[:300])
    assert same(weights @ lsa_axes(weights[:300], 10, 2).T, svd.transform(weights))


def test_lsa_axes_with_more_directions_asked_than_terms():
    """20 papers over 5 terms: the random basis is wider than the matrix, as in a tiny issue."""
    rng = np.random.RandomState(8)
    weights = tfidf(sparse.csr_matrix(rng.poisson(1.0, size=(20, 5)).astype(float)))
    svd = TruncatedSVD(n_components=4, random_state=3)
    assert same(weights @ lsa_axes(weights, 4, 3).T, svd.fit_transform(weights))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 6)), min_size=1, max_size=60))
def test_adjusted_rand_is_sklearns(pairs):
    a, b = (np.array(side) for side in zip(*pairs, strict=True))
    assert adjusted_rand(a, b) == adjusted_rand_score(a, b)


def assert_kmeans_is_sklearns(vectors: np.ndarray, k: int, seeds) -> None:
    """Labels and inertia equal to KMeans(n_init=1)'s, bit for bit, for every seed."""
    with threadpool_limits(limits=1):
        for seed in seeds:
            ours = kmeans(vectors, k, seed)
            theirs = KMeans(n_clusters=k, n_init=1, random_state=seed).fit(vectors)
            assert same(ours.labels, theirs.labels_), (k, seed)
            assert ours.inertia == theirs.inertia_, (k, seed)


@pytest.mark.parametrize("k", [2, 5, 9, 14])
def test_kmeans_is_sklearns_on_real_abstracts(arxiv_vectors, k):
    assert_kmeans_is_sklearns(arxiv_vectors, k, (0, 1, 123456789))


def test_kmeans_refills_an_empty_cluster_as_sklearn_does():
    """Many repeated rows leave clusters empty; each takes the row farthest from its centre."""
    rng = np.random.RandomState(0)
    vectors = np.vstack([np.repeat(rng.normal(size=(3, 6)), 40, axis=0),
                         rng.normal(size=(5, 6))])
    assert_kmeans_is_sklearns(vectors, 7, range(6))


@pytest.mark.parametrize("features", [2, 3, 5])
def test_kmeans_is_sklearns_on_few_features(features):
    """Fewer than four features, or not a multiple of four: the sums' other branches."""
    rng = np.random.RandomState(features)
    vectors = rng.normal(size=(300, features))
    assert_kmeans_is_sklearns(vectors, 4, range(3))


@pytest.mark.parametrize("k", [1, 2, 3, 8])
def test_average_linkage_cut_is_sklearns(k):
    rng = np.random.RandomState(k)
    labels = rng.randint(0, 5, size=(12, 90))
    together = (labels[:, :, None] == labels[:, None, :]).mean(axis=0)
    distance = np.clip(1.0 - together, 0.0, None)
    theirs = AgglomerativeClustering(n_clusters=k, linkage="average",
                                     metric="precomputed").fit_predict(distance)
    assert same(average_linkage_cut(distance, k), theirs)


def test_stop_words_are_sklearns_english_list_plus_ours():
    assert frozenset(ENGLISH_STOP_WORDS) <= STOP_WORDS
    assert STOP_WORDS - frozenset(ENGLISH_STOP_WORDS) == {
        "et", "al", "vs", "wrt", "large", "com", "http", "https", "www", "github"}


def test_section_vectors_are_sklearns_tfidf_vectorizer():
    texts = [f"{p.title}\n{p.abstract}" for p in seed_papers()] + ["protein folding", "the of and"]
    counts, terms = term_matrix(map(tokenize, texts), len(texts))
    vectorizer = TfidfVectorizer(analyzer=tokenize, sublinear_tf=True)
    theirs = normalize(vectorizer.fit_transform(texts))
    ours = unit_rows_sparse(tfidf(counts))
    assert list(terms) == list(vectorizer.get_feature_names_out())
    for part in ("data", "indices", "indptr"):
        assert same(getattr(ours, part), getattr(theirs, part)), part
    assert term_matrix([["the"], []], 2) is not None
    assert term_matrix([[], []], 2) is None


def test_grouping_papers_does_not_import_sklearn():
    """The point of the change: a run without a relevance library never loads scikit-learn."""
    sample = str(SHARED_DATA / "arxiv_metadata_sample.csv")
    code = ("import sys\n"
            "from digest.ingest import load_sources\n"
            "from digest.dedup import deduplicate\n"
            "from digest.themes import group_papers\n"
            f"records = load_sources([{sample!r}]).records\n"
            "themes = group_papers(deduplicate(records[:400]).papers, max_themes=8)\n"
            "assert len(themes) > 1, themes\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'sklearn'))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
