"""Cluster papers: TF-IDF → LSA → consensus of k-means runs, k chosen from the data, small
clusters merged."""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from scipy import sparse
from threadpoolctl import threadpool_limits

from ..errors import ConfigError
from ..models import Paper, Theme
from ._build import OTHER, themes_from_labels
from ._consensus import consensus_labels, distinct_rows, sample_rows
from ._kmeans import kmeans
from ._text import count_terms
from ._vectors import adjusted_rand, lsa_axes, tfidf, unit_rows

log = logging.getLogger("digest.themes")


@dataclass(frozen=True)
class TfidfThemes:
    """The default backend: TF-IDF → LSA → k-means consensus, k chosen by restarts' agreement."""

    lsa_dimensions: int = 50  # at most; fewer for few papers (papers_per_dimension)
    papers_per_dimension: int = 6
    lsa_min_papers: int = 20  # fewer papers are clustered on their TF-IDF vectors directly
    restarts: int = 4  # k-means runs per k; their agreement measures how real a k is
    consensus_runs: int = 20  # k-means runs that vote on the final themes (_consensus.py)
    consensus_spread: int = 2  # their k goes from k - spread to k + spread
    themes_per_decade: float = 3.0  # target k = this × log10(n papers)
    window: tuple[float, float] = (0.7, 1.5)  # k tried: this range × target
    target_penalty: float = 0.3  # agreement given up per unit of |log(k / target)|
    selection_sample: int = 2500  # papers used to choose k and to vote (all are clustered)
    lsa_sample: int = 5000  # the LSA axes are fitted on at most this many papers (all projected)
    max_share: float = 0.35  # a bigger theme is split in two while there is room

    def group(self, papers: Sequence[Paper], *, max_themes: int, seed: int) -> list[Theme]:
        if max_themes < 1:
            raise ConfigError(f"max_themes must be at least 1, not {max_themes}")
        # One thread: BLAS/OpenMP threads thrash on a shared machine (2,000 papers took 22 s
        # with two threads under load, 0.8 s with one), and one thread is reproducible.
        with threadpool_limits(limits=1):
            return self._group(unique_by_id(papers), max_themes, seed)

    def _group(self, papers: list[Paper], max_themes: int, seed: int) -> list[Theme]:
        counts = count_terms(papers)
        if counts is None:
            return themes_from_labels(papers, np.zeros(len(papers), dtype=int))
        vectors = self._embed(counts.matrix, seed)
        labels = np.full(len(papers), OTHER, dtype=int)
        has_terms = counts.matrix.getnnz(axis=1) > 0
        room = max_themes - 1 if not has_terms.all() and max_themes > 1 else max_themes
        labels[has_terms] = self.cluster_vectors(vectors[has_terms], room, seed)
        return themes_from_labels(papers, labels, vectors, counts)

    def _embed(self, counts: sparse.csr_matrix, seed: int) -> np.ndarray:
        weights = tfidf(counts)
        dimensions = min(self.lsa_dimensions, weights.shape[0] // self.papers_per_dimension,
                         weights.shape[1] - 1)
        if dimensions < 2 or weights.shape[0] < self.lsa_min_papers:
            return unit_rows(weights.toarray())
        # 5,000 papers fix 50 axes as well as 45,000 do; fitting on all was 8-10 s at 50k.
        rows = sample_rows(weights.shape[0], self.lsa_sample, seed)
        fitted_on = weights if len(rows) == weights.shape[0] else weights[rows]
        return unit_rows(weights @ lsa_axes(fitted_on, dimensions, seed).T)

    def cluster_vectors(self, vectors: np.ndarray, max_themes: int, seed: int) -> np.ndarray:
        """k-means consensus at the most reproducible k near the size-based target, then tidied."""
        n = len(vectors)
        candidates = self.candidate_ks(n, max_themes,
                                       distinct=distinct_rows(vectors, at_most=max_themes))
        if not candidates:
            return np.zeros(n, dtype=int)
        k = self._choose_k(vectors, candidates, seed)
        labels = consensus_labels(vectors, k, runs=self.consensus_runs,
                                  spread=self.consensus_spread, seed=seed,
                                  sample=self.selection_sample)
        labels = merge_small_clusters(vectors, labels, min_theme_size(n))
        return self._split_oversized(vectors, labels, max_themes, seed)

    def _choose_k(self, vectors: np.ndarray, candidates: range, seed: int) -> int:
        """The k whose k-means restarts agree best, less a penalty for straying from the target."""
        target = self.target_themes(len(vectors))
        vectors = vectors[sample_rows(len(vectors), self.selection_sample, seed)]
        scores = {}
        for k in candidates:
            _, agreement = self._kmeans_restarts(vectors, k, seed)
            scores[k] = agreement - self.target_penalty * abs(math.log(k / target))
            log.debug("k=%d restart agreement=%.3f score=%.3f", k, agreement, scores[k])
        return max(candidates, key=lambda k: scores[k])

    def target_themes(self, n_papers: int) -> float:
        """How many themes a reader expects: ~4 for 30 papers, 6-7 for 100-300, ~10 for 2,000."""
        return max(2.0, self.themes_per_decade * math.log10(max(n_papers, 2)))

    def candidate_ks(self, n_papers: int, max_themes: int, distinct: int) -> range:
        """The k values tried: a window around the target, within the hard limits."""
        target = self.target_themes(n_papers)
        upper = min(max_themes, n_papers // min_theme_size(n_papers), distinct)
        lower = min(max(2, round(target * self.window[0])), upper)
        return (
            range(lower, min(upper, int(target * self.window[1])) + 1) if upper >= 2 else range(0)
        )

    def _kmeans_restarts(self, vectors: np.ndarray, k: int, seed: int) -> tuple[np.ndarray, float]:
        """Best-inertia labels of several k-means restarts, and how much they agree (mean ARI)."""
        rng = np.random.RandomState(seed)
        runs = []
        for _ in range(self.restarts):
            run = kmeans(vectors, k, rng.randint(2**31 - 1))
            runs.append((run.inertia, run.labels))
        agreement = [adjusted_rand(a, b) for (_, a), (_, b) in combinations(runs, 2)]
        best = min(range(len(runs)), key=lambda i: runs[i][0])
        return runs[best][1], float(np.mean(agreement)) if agreement else 1.0

    def _split_oversized(
        self, vectors: np.ndarray, labels: np.ndarray, max_themes: int, seed: int
    ) -> np.ndarray:
        """Split a theme holding over ``max_share`` of the papers in two, while there is room."""
        smallest = min_theme_size(len(vectors))
        for _ in range(max_themes):
            sizes = np.bincount(labels)
            biggest = int(sizes.argmax())
            if sizes[biggest] <= self.max_share * len(vectors) or len(sizes) >= max_themes:
                break
            members = np.flatnonzero(labels == biggest)
            if distinct_rows(vectors[members]) < 2:
                break
            halves, _ = self._kmeans_restarts(vectors[members], 2, seed)
            if min(np.bincount(halves, minlength=2)) < smallest:
                break
            labels = labels.copy()
            labels[members[halves == 1]] = len(sizes)
        return labels


def min_theme_size(n_papers: int) -> int:
    """Themes smaller than this are folded into their nearest neighbour."""
    return max(3, math.ceil(0.02 * n_papers))


def merge_small_clusters(vectors: np.ndarray, labels: np.ndarray, smallest: int) -> np.ndarray:
    """Move the papers of clusters under ``smallest`` to the nearest remaining centre."""
    labels = labels.copy()
    while True:
        ids, sizes = np.unique(labels, return_counts=True)
        if len(ids) < 2 or sizes.min() >= smallest:
            break
        tiny = ids[sizes.argmin()]
        keep = ids[ids != tiny]
        centres = np.stack([vectors[labels == c].mean(axis=0) for c in keep])
        members = np.flatnonzero(labels == tiny)
        labels[members] = keep[(vectors[members] @ centres.T).argmax(axis=1)]
    return np.unique(labels, return_inverse=True)[1]


def unique_by_id(papers: Sequence[Paper]) -> list[Paper]:
    """Papers sorted by id, first occurrence of each id kept (so input order does not matter)."""
    by_id: dict[str, Paper] = {}
    for paper in papers:
        if paper.id in by_id:
            log.warning("paper id %s given twice; grouping the first", paper.id)
            continue
        by_id[paper.id] = paper
    return [by_id[key] for key in sorted(by_id)]

