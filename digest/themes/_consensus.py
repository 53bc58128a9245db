"""Consensus clustering: many quick k-means runs vote on which papers belong together.

One k-means run lands in one of many local optima, so its themes change with the seed and
with a few papers more or less. Here ``runs`` k-means runs, each from its own seed and with
k spread a little around the chosen k, count how often every pair of papers falls in the
same cluster (the co-association matrix); average-linkage on that matrix then cuts the
papers into k themes. Pairs that stay together across runs stay together: on the
benchmarks this agrees better with the labels and between subsamples than the best single
run (see benchmarks/bench_themes.py).

The matrix is n × n, so above ``sample`` papers the vote runs on a fixed random sample and
every other paper joins the nearest theme centre.
"""

from __future__ import annotations

import numpy as np

from ._kmeans import average_linkage_cut, kmeans


def consensus_labels(
    vectors: np.ndarray, k: int, *, runs: int, spread: int, seed: int, sample: int
) -> np.ndarray:
    """k themes for unit-length ``vectors``: the runs' vote, cut by average linkage."""
    rows = sample_rows(len(vectors), sample, seed)
    upper = min(len(rows), distinct_rows(vectors[rows]))
    together = coassociation(vectors[rows], k, runs=runs, spread=spread, seed=seed, upper=upper)
    labels = cut(together, min(k, upper))
    if len(rows) == len(vectors):
        return labels
    return nearest_centre(vectors, vectors[rows], labels)


def coassociation(
    vectors: np.ndarray, k: int, *, runs: int, spread: int, seed: int, upper: int
) -> np.ndarray:
    """Share of the runs in which each pair of rows fell in the same cluster (n × n)."""
    rng = np.random.RandomState(seed)
    members = []
    for run in range(runs):
        run_k = min(max(2, k + run % (2 * spread + 1) - spread), upper)
        labels = kmeans(vectors, run_k, rng.randint(2**31 - 1)).labels
        members.append(np.eye(run_k, dtype=np.float32)[labels])
    stacked = np.hstack(members)
    return (stacked @ stacked.T) / runs


def cut(together: np.ndarray, k: int) -> np.ndarray:
    """k groups by average linkage on 1 - co-association (pairs apart in most runs split first)."""
    if k < 2:
        return np.zeros(len(together), dtype=int)
    distance = np.clip(1.0 - together, 0.0, None).astype(np.float64)
    return average_linkage_cut(distance, k)


def nearest_centre(vectors: np.ndarray, sampled: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Label every row of ``vectors`` by the nearest (cosine) centre of the labelled sample."""
    centres = np.stack([sampled[labels == c].mean(axis=0) for c in range(labels.max() + 1)])
    return np.asarray((vectors @ centres.T).argmax(axis=1))


def sample_rows(n: int, sample: int, seed: int) -> np.ndarray:
    """All row numbers, or a fixed random ``sample`` of them in order."""
    if n <= sample:
        return np.arange(n)
    return np.sort(np.random.RandomState(seed).choice(n, sample, replace=False))


def distinct_rows(vectors: np.ndarray, at_most: int | None = None) -> int:
    """How many different rows there are (k-means cannot make more clusters than that), or
    ``at_most`` when there are at least that many: the first rows usually show it, where
    telling all 45,000 apart took a sort of them."""
    if (at_most is not None and len(vectors) > _FIRST_ROWS
            and distinct_rows(vectors[:_FIRST_ROWS]) >= at_most):
        return at_most
    found = len(np.unique(vectors.round(6), axis=0))
    return found if at_most is None else min(found, at_most)


_FIRST_ROWS = 1000
