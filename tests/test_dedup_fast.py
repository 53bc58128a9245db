"""Dedup's fast paths give what the plain way gives (issue 15).

Each test keeps the plain way next to the fast one: per-row sorted hash lists for the
packed rows, a set of hashes for rows whose tokens share a hash.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from digest.dedup._shingles import Packed, token_hashes

_rows = st.lists(st.lists(st.sampled_from(["graph", "model", "graphs", "a", "é", "x y", "ü",
                                           "learning", "\ud800", "7b", ""]), max_size=12),
                 max_size=10)


def _hash_rows(packed: Packed) -> list[list[int]]:
    return [sorted(packed.row(i).tolist()) for i in range(len(packed))]


@settings(max_examples=200, deadline=None)
@given(_rows)
def test_packed_rows_are_each_rows_distinct_token_hashes(rows):
    packed = Packed.of_tokens(rows)
    assert _hash_rows(packed) == [token_hashes(row) for row in rows]
    assert [packed.size(i) for i in range(len(packed))] == [len(set(row)) for row in rows]


@settings(max_examples=200, deadline=None)
@given(_rows, st.lists(st.integers(0, 20), max_size=15))
def test_a_subset_is_those_rows_in_that_order(rows, picks):
    packed = Packed.of_tokens(rows)
    chosen = [p % len(rows) for p in picks] if rows else []
    assert _hash_rows(packed.subset(chosen)) == [_hash_rows(packed)[i] for i in chosen]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sets(st.integers(0, 9), max_size=8), max_size=8),
       st.lists(st.integers(0, 4), min_size=10, max_size=10))
def test_tokens_sharing_a_hash_count_once(rows, hashes):
    """Two tokens with one 64-bit hash: a row holds that hash once, as a set of hashes does,
    and pairs share it once."""
    numbers = np.array([n for row in rows for n in sorted(row)], dtype=np.int32)
    offsets = np.cumsum([0] + [len(row) for row in rows]).astype(np.int64)
    table = np.array(hashes, dtype=np.uint64)
    packed = Packed.of_numbers(numbers, offsets, table)
    as_sets = [{hashes[n] for n in row} for row in rows]
    assert [set(r) for r in _hash_rows(packed)] == as_sets
    assert [packed.size(i) for i in range(len(rows))] == [len(s) for s in as_sets]
    pairs = [(a, b) for a in range(len(rows)) for b in range(len(rows))]
    counts = packed.shared_counts([a for a, _ in pairs], [b for _, b in pairs])
    assert counts.tolist() == [len(as_sets[a] & as_sets[b]) for a, b in pairs]


def _plain_signature(hashes: list[int]) -> list[int]:
    """MinHash of one row the plain way: Python integers, each permutation's least value."""
    from digest.dedup._shingles import NUM_PERM, _permutations
    a, b = (column.tolist() for column in _permutations())
    if not hashes:
        return [(1 << 32) - 1] * NUM_PERM
    return [min(((h * a[k] + b[k]) % (1 << 64)) >> 32 for h in hashes) for k in range(NUM_PERM)]


@settings(max_examples=30, deadline=None)
@given(_rows)
def test_signatures_are_each_rows_least_permuted_hash(rows):
    from digest.dedup._shingles import signatures
    packed = Packed.of_tokens(rows)
    assert signatures(packed).tolist() == [_plain_signature(token_hashes(row)) for row in rows]


def test_signatures_of_rows_past_a_chunk_and_of_many_chunks():
    """Rows longer than a chunk get a buffer of their own; many rows span chunks."""
    from digest.dedup._shingles import CHUNK_TOKENS, signatures
    long_row = [f"w{n}" for n in range(CHUNK_TOKENS + 5)]
    rows = [[f"t{n}", f"t{n + 1}", f"u{n % 7}"] for n in range(3000)]
    rows[1500:1500] = [long_row, []]
    packed = Packed.of_tokens(rows)
    picked = [0, 1499, 1500, 1501, 1502, 2000, len(rows) - 1]
    signature = signatures(packed)
    assert [signature[i].tolist() for i in picked] == [
        _plain_signature(token_hashes(rows[i])) for i in picked]
