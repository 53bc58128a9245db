"""Consensus clustering: the vote matrix, the cut, the sampled path for many papers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import adjusted_rand_score
from sklearn.preprocessing import normalize

from digest.themes._consensus import coassociation, consensus_labels, cut


def blobs(per_blob: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors around three far-apart directions, and which direction each came from."""
    rng = np.random.RandomState(seed)
    truth = np.repeat(np.arange(3), per_blob)
    vectors = np.eye(3, 8)[truth] + 0.05 * rng.randn(len(truth), 8)
    return normalize(vectors), truth


def test_pairs_in_one_blob_always_vote_together_and_never_with_another():
    vectors, truth = blobs(10)
    together = coassociation(vectors, 3, runs=6, spread=0, seed=1, upper=len(vectors))
    same = truth[:, None] == truth[None, :]
    assert np.allclose(together[same], 1.0)
    assert np.allclose(together[~same], 0.0)


def test_the_cut_follows_the_vote():
    together = np.array([[1, 0.9, 0.1, 0.0], [0.9, 1, 0.0, 0.2], [0.1, 0.0, 1, 0.8],
                         [0.0, 0.2, 0.8, 1]])
    labels = cut(together, 2)
    assert labels[0] == labels[1] != labels[2] == labels[3]
    assert set(cut(together, 1)) == {0}


def test_above_the_sample_size_every_paper_joins_a_voted_theme():
    vectors, truth = blobs(40)
    labels = consensus_labels(vectors, 3, runs=8, spread=1, seed=0, sample=30)
    assert len(labels) == len(vectors)
    assert adjusted_rand_score(truth, labels) == 1.0


def test_the_same_seed_gives_the_same_labels():
    vectors, _ = blobs(20, seed=3)
    vectors = normalize(vectors + np.random.RandomState(5).randn(*vectors.shape))  # overlap
    first = consensus_labels(vectors, 4, runs=10, spread=2, seed=7, sample=1000)
    assert (first == consensus_labels(vectors, 4, runs=10, spread=2, seed=7, sample=1000)).all()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=40), st.integers(1, 8),
       st.integers(1, 10))
def test_distinct_rows_at_most_a_bound_is_the_bounded_count(values, at_most, first_rows):
    """The first rows may settle it; the count is the same as over all rows, bounded."""
    from digest.themes import _consensus
    vectors = np.array([[v % 3, v // 3] for v in values], dtype=np.float64) / 7
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_consensus, "_FIRST_ROWS", first_rows)
        bounded = _consensus.distinct_rows(vectors, at_most=at_most)
    assert bounded == min(_consensus.distinct_rows(vectors), at_most)
