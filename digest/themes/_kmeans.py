"""k-means (k-means++ seeding, then Lloyd's iterations) and a cut of an average-linkage tree.

They were scikit-learn's ``KMeans(n_init=1)`` and ``AgglomerativeClustering(linkage="average",
metric="precomputed")``; see ``_vectors`` for why digest no longer imports it. The steps,
random draws and stopping rules are scikit-learn's, so the same seed gives the same seeding;
tests/test_themes_math.py compares the labels with scikit-learn's.
"""

from __future__ import annotations

from dataclasses import dataclass
from heapq import heappush, heappushpop

import numpy as np
from scipy import sparse

MAX_ITERATIONS = 300
TOLERANCE = 1e-4  # of the mean variance of the features: centres that move less have converged


@dataclass(frozen=True)
class Clustering:
    labels: np.ndarray  # each row's cluster, 0 .. k - 1
    inertia: float  # sum of squared distances of the rows to their centres


def kmeans(vectors: np.ndarray, k: int, seed: int) -> Clustering:
    """One k-means run on the rows of ``vectors``, seeded by k-means++ from ``seed``."""
    rows = np.array(vectors, dtype=np.float64, order="C")  # centred below: a copy
    tolerance = float(np.mean(np.var(rows, axis=0)) * TOLERANCE)
    rows -= rows.mean(axis=0)
    squared_norms = np.einsum("ij,ij->i", rows, rows)
    centres = _seed_centres(rows, k, squared_norms, np.random.RandomState(seed))
    labels = np.full(len(rows), -1, dtype=np.intp)
    converged = False
    for _ in range(MAX_ITERATIONS):
        previous = labels
        labels = _nearest(rows, centres)
        moved_to = _means(rows, labels, centres)
        shift = float((np.sqrt(_squared_lengths(moved_to - centres)) ** 2).sum())
        centres = moved_to
        if np.array_equal(labels, previous):
            converged = True
            break
        if shift <= tolerance:
            break
    if not converged:
        labels = _nearest(rows, centres)
    inertia = float(np.cumsum(_squared_lengths(rows - centres[labels]))[-1])
    return Clustering(labels.astype(np.int32), inertia)


def _squared_lengths(differences: np.ndarray) -> np.ndarray:
    """Each row's sum of squares, added as scikit-learn's compiled loop adds them (four
    squares at a time, then the groups one after another): the same sums to the last bit,
    so the same stopping point and the same best restart."""
    squares = differences * differences
    whole = squares.shape[1] // 4 * 4
    fours = squares[:, :whole].reshape(len(squares), -1, 4)
    groups = ((fours[:, :, 0] + fours[:, :, 1]) + fours[:, :, 2]) + fours[:, :, 3]
    lengths = np.cumsum(groups, axis=1)[:, -1] if whole else np.zeros(len(squares))
    for i in range(whole, squares.shape[1]):
        lengths = lengths + squares[:, i]
    return lengths


def _seed_centres(rows: np.ndarray, k: int, squared_norms: np.ndarray,
                  rng: np.random.RandomState) -> np.ndarray:
    """k-means++: each next centre drawn in proportion to its squared distance from the
    centres so far, the best of a few draws (Arthur and Vassilvitskii's greedy variant)."""
    n = len(rows)
    weights = np.ones(n, dtype=rows.dtype)
    trials = 2 + int(np.log(k))
    centres = np.empty((k, rows.shape[1]), dtype=rows.dtype)
    first = rng.choice(n, p=weights / weights.sum())
    centres[0] = rows[first]
    closest = _squared_distances(centres[0, np.newaxis], rows, squared_norms)
    potential = closest @ weights
    for c in range(1, k):
        draws = rng.uniform(size=trials) * potential
        candidates = np.searchsorted(np.cumsum(weights * closest), draws)
        np.clip(candidates, None, closest.size - 1, out=candidates)
        to_candidates = _squared_distances(rows[candidates], rows, squared_norms)
        np.minimum(closest, to_candidates, out=to_candidates)
        potentials = to_candidates @ weights.reshape(-1, 1)
        best = np.argmin(potentials)
        potential = potentials[best]
        closest = to_candidates[best]
        centres[c] = rows[candidates[best]]
    return centres


def _squared_distances(points: np.ndarray, rows: np.ndarray,
                       squared_norms: np.ndarray) -> np.ndarray:
    distances = -2 * (points @ rows.T)
    distances += np.einsum("ij,ij->i", points, points)[:, np.newaxis]
    distances += squared_norms.reshape(1, -1)
    np.maximum(distances, 0, out=distances)
    return distances


def _nearest(rows: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Each row's nearest centre (the first of equals)."""
    scores = rows @ (-2.0 * centres.T)  # exactly -2 × the products: scaling by 2 is exact
    scores += np.einsum("ij,ij->i", centres, centres)
    return scores.argmin(axis=1)


def _means(rows: np.ndarray, labels: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """The mean of each cluster's rows. A cluster left empty takes the row farthest from its
    centre (the farthest rows first), which leaves its old cluster."""
    k, n = len(centres), len(rows)
    sizes = np.bincount(labels, minlength=k).astype(rows.dtype)
    # Each cluster's rows added in row order, as the compiled loop adds them: a product with
    # the k × n membership matrix stored by column does that (np.add.at too, but slower).
    members = sparse.csc_matrix((np.ones(n), labels, np.arange(n + 1)), shape=(k, n))
    sums = members @ rows
    empty = np.flatnonzero(sizes == 0)
    if empty.size:
        distances = ((rows - centres[labels]) ** 2).sum(axis=1)
        farthest = np.argpartition(distances, -empty.size)[: -empty.size - 1 : -1]
        for cluster, row in zip(empty, farthest, strict=True):
            sums[labels[row]] -= rows[row]
            sums[cluster] = rows[row]
            sizes[cluster] = 1.0
            sizes[labels[row]] -= 1.0
    filled = sizes > 0
    sums[filled] *= (1.0 / sizes[filled])[:, np.newaxis]
    return sums


def average_linkage_cut(distance: np.ndarray, k: int) -> np.ndarray:
    """k groups of the items of a square ``distance`` matrix: the tree that average linkage
    builds, cut where it has k branches."""
    from scipy.cluster.hierarchy import linkage

    n = len(distance)
    upper = np.triu_indices(n, k=1)
    children = linkage(distance[upper], method="average")[:, :2].astype(int)
    # The k branches: from the root, split the most recently merged node while there are
    # fewer than k (a heap of negated node numbers keeps the latest first).
    nodes = [-(max(children[-1]) + 1)]
    for _ in range(k - 1):
        left, right = children[-nodes[0] - n]
        heappush(nodes, -left)
        heappushpop(nodes, -right)
    labels = np.zeros(n, dtype=np.intp)
    for branch, node in enumerate(-np.array(nodes)):
        labels[_leaves(children, node, n)] = branch
    return labels


def _leaves(children: np.ndarray, node: int, n: int) -> list[int]:
    """The items under ``node`` of the tree."""
    leaves, stack = [], [node]
    while stack:
        top = stack.pop()
        if top < n:
            leaves.append(top)
        else:
            stack.extend(children[top - n])
    return leaves
