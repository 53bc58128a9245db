"""TF-IDF weights, unit-length rows, LSA axes and the adjusted Rand index, in numpy and scipy.

These were scikit-learn's ``TfidfTransformer(sublinear_tf=True)``, ``normalize``,
``TruncatedSVD`` and ``adjusted_rand_score``. Importing scikit-learn cost every run about
1.2 CPU seconds (it loads scipy.stats and more), a third of a 200-paper issue (issue 15).
Each function here does the same arithmetic in the same order, so it gives the same bits:
tests/test_themes_math.py compares each with scikit-learn's.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg, sparse

# TruncatedSVD's defaults: power iterations, extra random directions.
_POWER_ITERATIONS = 5
_OVERSAMPLES = 10


def tfidf(counts: sparse.csr_matrix) -> sparse.csr_matrix:
    """Sublinear term frequency × smoothed inverse document frequency, rows of unit length."""
    n_papers = counts.shape[0]
    papers_with = np.bincount(counts.indices, minlength=counts.shape[1]).astype(np.float64)
    papers_with += 1.0
    idf = np.full_like(papers_with, fill_value=n_papers + 1, dtype=np.float64)
    idf /= papers_with
    np.log(idf, out=idf)
    idf += 1.0
    weights = sparse.csr_matrix(counts, dtype=np.float64, copy=True)
    np.log(weights.data, weights.data)
    weights.data += 1.0
    weights.data *= idf[weights.indices]
    return unit_rows_sparse(weights)


def unit_rows_sparse(matrix: sparse.csr_matrix) -> sparse.csr_matrix:
    """Each row divided by its length, in place; empty rows stay. The squares are summed in
    the row's order (a sparse product with ones does that; numpy's pairwise sum would not)."""
    squares = sparse.csr_matrix((matrix.data * matrix.data, matrix.indices, matrix.indptr),
                                shape=matrix.shape)
    lengths = np.sqrt(squares @ np.ones(matrix.shape[1]))
    lengths[lengths == 0.0] = 1.0
    matrix.data /= np.repeat(lengths, np.diff(matrix.indptr))
    return matrix


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Each row divided by its length, in place; rows of (nearly) zero length stay."""
    lengths = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))
    lengths[lengths < 10 * np.finfo(lengths.dtype).eps] = 1.0
    vectors /= lengths[:, None]
    return vectors


def lsa_axes(weights: sparse.csr_matrix, dimensions: int, seed: int) -> np.ndarray:
    """The ``dimensions`` strongest directions of the rows (a randomized SVD with LU-normalized
    power iterations), one per row, each signed so that its largest entry is positive."""
    rng = np.random.RandomState(seed)
    transposed = weights.shape[0] < weights.shape[1]
    matrix = weights.T if transposed else weights
    basis = _range(matrix, dimensions + _OVERSAMPLES, rng)
    small = basis.T @ matrix
    u_small, _, vt = linalg.svd(small, full_matrices=False, lapack_driver="gesdd")
    del small
    u = basis @ u_small
    axes = u[:, :dimensions].T if transposed else vt[:dimensions, :]
    largest = np.argmax(np.abs(axes), axis=1) + np.arange(axes.shape[0]) * axes.shape[1]
    axes *= np.sign(np.take(np.reshape(axes, (-1,)), largest, axis=0))[:, np.newaxis]
    return axes


def _range(matrix: sparse.spmatrix, size: int, rng: np.random.RandomState) -> np.ndarray:
    """An orthonormal basis that captures most of ``matrix``'s range."""
    # Both products by rows (CSR): a product by columns (the transpose of a CSR matrix is
    # CSC) scatters its sums and took 2.5 times as long. Each sum still adds its terms in
    # the same order (by column, as the CSC loop does), so the bits are the same. Each
    # product is new, so the LU may work in it instead of a copy.
    forward, backward = matrix.tocsr(), matrix.T.tocsr()
    basis = rng.normal(size=(matrix.shape[1], size))
    for _ in range(_POWER_ITERATIONS):
        basis, _ = linalg.lu(forward @ basis, permute_l=True, overwrite_a=True,
                             check_finite=False)
        basis, _ = linalg.lu(backward @ basis, permute_l=True, overwrite_a=True,
                             check_finite=False)
    basis, _ = linalg.qr(forward @ basis, mode="economic", check_finite=False)
    return basis


def adjusted_rand(a: np.ndarray, b: np.ndarray) -> float:
    """How much two labelings of the same items agree, 1 for the same partition and about 0
    for chance (Hubert and Arabie's adjusted Rand index)."""
    n = np.int64(len(a))
    _, a_ids = np.unique(a, return_inverse=True)
    _, b_ids = np.unique(b, return_inverse=True)
    table = sparse.coo_matrix((np.ones(len(a_ids), dtype=np.int64), (a_ids, b_ids)),
                              shape=(a_ids.max() + 1, b_ids.max() + 1)).tocsr()
    table.sum_duplicates()
    per_a = np.ravel(table.sum(axis=1))
    per_b = np.ravel(table.sum(axis=0))
    squares = (table.data**2).sum()
    together_both = int(squares - n)
    only_b = int(table.dot(per_b).sum() - squares)
    only_a = int(table.transpose().dot(per_a).sum() - squares)
    apart_both = int(n**2 - only_b - only_a - squares)
    if only_a == 0 and only_b == 0:
        return 1.0
    return 2.0 * (together_both * apart_both - only_a * only_b) / (
        (together_both + only_a) * (only_a + apart_both)
        + (together_both + only_b) * (only_b + apart_both))
