"""Dedup's fast paths give what the plain way gives (issue 15).

Each test keeps the plain way next to the fast one: per-row sorted hash lists for the
packed rows, a set of hashes for rows whose tokens share a hash.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from digest.dedup import _shingles
from digest.dedup._keys import Markers
from digest.dedup._shingles import Packed, token_hash
from digest.models import Record, Sighting

_rows = st.lists(st.lists(st.sampled_from(["graph", "model", "graphs", "a", "é", "x y", "ü",
                                           "learning", "\ud800", "7b", ""]), max_size=12),
                 max_size=10)


def token_hashes(tokens) -> list[int]:
    """The plain way: a row's sorted distinct 64-bit token hashes."""
    return sorted({token_hash(token) for token in tokens})


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


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 50), max_size=60))
def test_distinct_sorted_is_np_unique(values):
    from digest.dedup._shingles import distinct_sorted
    codes = np.array(values, dtype=np.int64)
    assert distinct_sorted(codes).tolist() == sorted(set(values))


@settings(max_examples=100, deadline=None)
@given(st.sampled_from([2, 5, 9, 14, 40]), st.integers(0, 9_000), st.integers(0, 3))
def test_nearest_keeps_similar_pairs_among_each_rows_most_similar(rows, seed, spread):
    """The plain way: count equal signature entries pair by pair in Python, keep a pair when
    it is among the PER_RECORD best of the pairs with its first row or of those with its
    second row (ties: the earlier pair)."""
    from digest.dedup._shingles import NUM_PERM, PER_RECORD, _nearest
    rng = np.random.default_rng(seed)
    signature = rng.integers(0, spread + 1, size=(rows, NUM_PERM)).astype(np.uint32)
    pairs = sorted({(int(a), int(b)) for a, b in rng.integers(0, rows, size=(12 * rows, 2))
                    if a < b})  # at 40 rows, ~20 pairs a row: ties past numpy's small sorts
    first = np.array([a for a, _ in pairs], dtype=np.int64)
    second = np.array([b for _, b in pairs], dtype=np.int64)
    least = 0.3
    similar = {p: sum(x == y for x, y in zip(signature[p[0]].tolist(),
                                             signature[p[1]].tolist(), strict=True))
               for p in pairs}
    enough = [p for p in pairs if similar[p] >= least * NUM_PERM]

    def best(row: int, end: int) -> set[tuple[int, int]]:
        mine = [p for p in enough if p[end] == row]
        return set(sorted(mine, key=lambda p: -similar[p])[:PER_RECORD])

    kept = [p for p in enough if p in best(p[0], 0) or p in best(p[1], 1)]
    got = _nearest(signature, first, second, least)
    with pytest.MonkeyPatch.context() as patch:  # pairs compared a few at a time
        patch.setattr("digest.dedup._shingles.COMPARED_AT_ONCE", 3)
        assert [a.tolist() for a in _nearest(signature, first, second, least)] == [
            a.tolist() for a in got]
    assert list(zip(got[0].tolist(), got[1].tolist(), strict=True)) == kept


def _regex_words(abstract: str) -> list[str]:
    import re
    import unicodedata
    return re.findall(r"\w+", unicodedata.normalize("NFKC", abstract).casefold())


def _decoded(words: list[bytes]) -> list[str]:
    return [word.decode("utf-8", "surrogatepass") for word in words]


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=80)
       | st.text(max_size=40)
       | st.lists(st.sampled_from(["Café", "naïve", "–", "×", "Ǆ", "ﬁ", "ß", "İ", "x²", "Ⅻ",
                                   "\u00a0", "\u2009", "\ud800", "_", "-", "A", "b7", " ", "\n"]),
                  max_size=30).map("".join))
def test_abstract_words_are_the_regex_words(text):
    from digest.dedup._keys import abstract_words
    assert _decoded(abstract_words(text)) == _regex_words(text)


def test_abstract_words_of_every_ascii_character():
    from digest.dedup._keys import abstract_words
    text = "".join(map(chr, range(128))) + " Graph-based LLMs_v2, i.e. 3.5x faster!"
    assert _decoded(abstract_words(text)) == _regex_words(text)
    assert _decoded(abstract_words(text + " café")) == _regex_words(text + " café")


def test_a_word_hashes_alike_as_text_and_as_bytes():
    assert token_hash("naïve") == token_hash("naïve".encode()) != token_hash("naive")


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["", "Withdrawn.", "We study graphs of graphs and trees here",
                                 "Café naïve models – all of them, again and again and again",
                                 "A B C D E F G H I J K L M N O P"]), max_size=12))
def test_records_with_one_abstract_get_one_row(abstracts):
    """Each distinct abstract is read once; every record gets the row of its text."""
    from digest.dedup import _abstract_words
    from digest.dedup._boilerplate import known_notice
    from digest.dedup._keys import abstract_words
    from digest.dedup._near import abstract_content
    records = [Record(title=f"T{n}", abstract=text, sighting=Sighting("s", n))
               for n, text in enumerate(abstracts)]
    words = _abstract_words(records)
    expected = [[] if known_notice(text) else abstract_content(abstract_words(text))
                for text in abstracts]
    assert [sorted(words[i]) for i in range(len(records))] == [
        token_hashes(row) for row in expected]
    assert [words.size(i) for i in range(len(records))] == [len(set(row)) for row in expected]
    assert len(words.packed) == len(set(abstracts))


_texts = st.lists(st.one_of(
    st.text(max_size=40),
    st.lists(st.sampled_from(["The", "graph", "graphs", "of", "café", "x×y", "naïve–model",
                              "\ud800", "Ⅻ", "ǅ", "ﬁne", "  ", "-", "_", "7B", "\xff", "ß"]),
             max_size=12).map(" ".join)), max_size=12)


def _plain_rows(texts: list[str]) -> list[list[int]]:
    """The plain way: each text's content words one text at a time, hashed."""
    from digest.dedup._keys import abstract_words
    from digest.dedup._near import abstract_content
    return [token_hashes(abstract_content(abstract_words(text))) for text in texts]


@settings(max_examples=300, deadline=None)
@given(_texts, st.sampled_from([1, 7, 64, 1 << 22]), st.sampled_from([0, 3, 1 << 18]))
def test_texts_split_at_once_give_each_texts_content_words(texts, chunk, numbered):
    """Texts joined and split a chunk at a time, each piece's words worked out once, give
    the rows of splitting each text alone, at any chunk size and past the numbered bound
    (non-ASCII, surrogates, ligatures, words glued by symbols, empty texts)."""
    from digest.dedup import _content_words
    from digest.dedup._keys import folded_abstract, split_pieces
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_shingles, "CHUNK_BYTES", chunk)
        patch.setattr(_shingles, "NUMBERED", numbered)
        packed = Packed.of_texts(map(folded_abstract, texts), split_pieces, _content_words)
    assert _hash_rows(packed) == _plain_rows(texts)
    assert [packed.size(i) for i in range(len(texts))] == [len(r) for r in _plain_rows(texts)]


def test_the_separator_is_a_piece_no_text_holds():
    from digest.dedup._keys import folded_abstract, split_pieces
    assert split_pieces(_shingles.SEPARATOR) == [_shingles.SEPARATOR.strip()]
    every = "".join(map(chr, range(0x20, 0x3000))) + "\ud800\udfff"
    assert b"\xff" not in folded_abstract(every)


_markers = st.builds(
    lambda kinds, parts, numbers: Markers(frozenset(kinds), frozenset(parts), frozenset(numbers)),
    st.sets(st.sampled_from(["comment", "reply"]), max_size=1),
    st.sets(st.integers(1, 3), max_size=1), st.sets(st.sampled_from(["2024", "2025"]), max_size=2))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([None, "1", "2"]), _markers), min_size=1, max_size=8),
       st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=8))
def test_can_join_is_every_pair_of_markers_compatible_and_one_arxiv_id(records, joins):
    """The plain rule: no two arXiv ids, every marker of one cluster compatible with every
    marker of the other (equal markers may be one object or two)."""
    from digest.dedup._clusters import Clusters
    from digest.models import Record, Sighting
    listed = [Record(title="t", abstract="", arxiv_id=arxiv_id, sighting=Sighting("a", n, n))
              for n, (arxiv_id, _) in enumerate(records)]
    clusters = Clusters(listed, [markers for _, markers in records])
    for i, j in joins:
        clusters.join(i % len(records), j % len(records), "title")
    members = {root: [i for i in range(len(records)) if clusters.find(i) == root]
               for root in range(len(records))}
    for i in range(len(records)):
        for j in range(len(records)):
            a, b = members[clusters.find(i)], members[clusters.find(j)]
            ids = {records[k][0] for k in a} - {None}, {records[k][0] for k in b} - {None}
            plain = clusters.same(i, j) or (
                not (ids[0] and ids[1] and ids[0] != ids[1])
                and all(records[x][1].compatible(records[y][1]) for x in a for y in b))
            assert clusters.can_join(i, j) == plain


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sets(st.integers(0, 17), min_size=8, max_size=16), min_size=2, max_size=9),
       st.sets(st.integers(0, 8), max_size=2))
def test_near_identical_pairs_are_those_whose_word_sets_say_so(rows, notices):
    """Abstracts of 8-16 words out of 18, Jaccards around NEAR_IDENTICAL, some too short to be
    evidence (< 12 words) and some boilerplate: the pairs found in numpy from the shared counts
    are those whose hash sets, compared one pair at a time, are near-identical."""
    from digest.dedup._boilerplate import NEAR_IDENTICAL
    from digest.dedup._near import Evidence, Evidences, Side, WordSets, _near_identical
    words = WordSets(Packed.of_tokens([f"w{n}" for n in row] for row in rows))
    sides = [Side(key=i, record=i, titles=("t",), size=words.packed.size(i), sets=words,
                  boilerplate=i in notices) for i in range(len(rows))]
    pairs = [(i, j) for i in range(len(rows)) for j in range(i + 1, len(rows))]
    shared = Evidences(sides).count(pairs)
    plain = [(i, j) for i, j in pairs if sides[i].has_abstract and sides[j].has_abstract
             and Evidence(sides[i], sides[j]).abstract >= NEAR_IDENTICAL]
    assert _near_identical(sides, pairs, shared) == plain


_titles = st.lists(st.sampled_from(list("aZé &;#x27amp<>Ж́ 2(v)-") + ["&amp;", "&#233;", "а"]),
                   max_size=20).map("".join)


@settings(max_examples=500, deadline=None)
@given(_titles)
def test_loose_title_from_a_known_key_is_the_loose_title(title):
    from digest.dedup._keys import loose_title
    from digest.normalize import title_key
    assert loose_title(title, title_key(title)) == loose_title(title)


@settings(max_examples=200, deadline=None)
@given(_titles, st.sampled_from([None, "2401.00001"]))
def test_a_single_records_paper_from_its_known_key_is_the_same_paper(title, arxiv_id):
    from digest.dedup import merge
    from digest.models import Record, Sighting
    from digest.normalize import title_key
    record = Record(title=title, abstract="", arxiv_id=arxiv_id, sighting=Sighting("a", 1, 1))
    assert merge([record], [title_key(title)]) == merge([record])


def _plain_markers(loose: str) -> Markers:
    """Every word looked at for parts and numbers, as before the fast path."""
    import re

    from digest.dedup._keys import _KIND_PREFIXES, _KIND_WORDS, _parts
    words = loose.split()
    kinds = {_KIND_WORDS[w] for w in words if w in _KIND_WORDS}
    if (prefix := " ".join(words[:2])) in _KIND_PREFIXES:
        kinds.add(_KIND_PREFIXES[prefix])
    parts = _parts(words)
    numbers = {n for w in words for n in re.findall(r"\d+", w)} - {str(p) for p in parts}
    return Markers(frozenset(kinds), frozenset(parts), frozenset(numbers))


_title_words = st.sampled_from(
    ["part", "ii", "iii", "v", "x", "i", "paper", "no", "3", "12", "2024", "gpt4", "7b", "third",
     "one", "two", "comment", "on", "reply", "to", "response", "correction", "widgets", "qwen2",
     "٣", "vol", "series", "erratum", "the", "workshop"])


@settings(max_examples=1000, deadline=None)
@given(st.lists(_title_words, max_size=8))
def test_title_markers_are_the_word_by_word_markers(words):
    from digest.dedup._keys import title_markers
    loose = " ".join(words)
    assert title_markers(loose, loose) == _plain_markers(loose)


def _plain_band_pairs(signature: np.ndarray, band: int) -> list[int]:
    """Every row bucketed by its band values, members in order of the 4 values after the band
    (ties by row): the band's pair codes as before the fast path, distinct and sorted."""
    from digest.dedup._shingles import NUM_PERM, ROWS, SMALL_BUCKET, WINDOW
    n = len(signature)
    rows = np.ascontiguousarray(signature[:, band * ROWS:(band + 1) * ROWS])
    keys = rows.view(np.dtype((np.void, rows.dtype.itemsize * ROWS))).ravel()
    _, bucket, sizes = np.unique(keys, return_inverse=True, return_counts=True)
    bucket = bucket.ravel()
    after = [signature[:, (band * ROWS + ROWS + k) % NUM_PERM] for k in range(4)]
    order = np.lexsort((*after[::-1], bucket))
    ordered, size = bucket[order], sizes[bucket[order]]
    codes: set[int] = set()
    for step in range(1, SMALL_BUCKET):
        same = ordered[step:] == ordered[:-step]
        if step > WINDOW:
            same &= size[step:] <= SMALL_BUCKET
        left, right = order[:-step][same], order[step:][same]
        codes.update((np.minimum(left, right) * n + np.maximum(left, right)).tolist())
    return sorted(codes)


@settings(max_examples=150, deadline=None)
@given(st.integers(2, 80), st.integers(0, 9_000), st.integers(1, 5), st.integers(0, 24))
def test_band_pairs_are_the_plain_buckets_pairs(rows, seed, values, band):
    """Few distinct values: shared buckets, buckets past SMALL_BUCKET, ties in the values
    after the band."""
    from digest.dedup._shingles import NUM_PERM, _band_pairs
    rng = np.random.default_rng(seed)
    signature = rng.integers(0, values + 1, size=(rows, NUM_PERM)).astype(np.uint32)
    signature[rng.random(rows) < 0.3] = rng.integers(0, 1 << 32, size=NUM_PERM, dtype=np.uint64)
    assert sorted(set(_band_pairs(signature, band).tolist())) == _plain_band_pairs(signature, band)


def _plain_merged_titles(cluster: list) -> tuple[str, str, tuple[str, ...]]:
    """The id, title and other titles of a merge, every key and blemish computed again."""
    from collections import Counter

    from digest.dedup._keys import blemishes, identity_key
    from digest.dedup._merge import _richness, paper_id
    from digest.normalize import title_key
    by_richness = sorted(cluster, key=_richness, reverse=True)
    title = min((r.title for r in by_richness), key=blemishes)
    counts = Counter(title_key(r.title) for r in cluster)
    usual = min(counts, key=lambda key: (-counts[key], key))
    arxiv_id = next((r.arxiv_id for r in cluster if r.arxiv_id), None)
    forms = {identity_key(title): title}
    for record in cluster:
        key = identity_key(record.title)
        if key and (key not in forms or blemishes(record.title) < blemishes(forms[key])):
            forms[key] = record.title
    return paper_id(arxiv_id, usual), title, tuple(list(forms.values())[1:])


_cased_titles = st.sampled_from(["Widget Layouts", "widget layouts", "WIDGET LAYOUTS",
                                 "Widget Layouts (v2)", "Widget &amp; Layouts", "Wіdget Layouts",
                                 "Widget  Layouts", "Gadget Layouts", "Widget Layouts!", ""])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_cased_titles | _titles, st.sampled_from([None, "2401.00001"])),
                min_size=2, max_size=6))
def test_a_merge_from_known_keys_has_the_plain_id_and_titles(listed):
    from digest.dedup import merge
    from digest.models import Record, Sighting
    from digest.normalize import title_key
    cluster = [Record(title=title, abstract="", arxiv_id=arxiv_id, sighting=Sighting("a", n, n))
               for n, (title, arxiv_id) in enumerate(listed)]
    for paper in (merge(cluster), merge(cluster, [title_key(r.title) for r in cluster])):
        assert (paper.id, paper.title, paper.also_listed_as) == _plain_merged_titles(cluster)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from(list(" abcz09ÿ¿Жλ中\ud800") + ["\U0001f600"]),
                        max_size=12), max_size=8),
       st.sampled_from([1 << 22, 27, 0]))
def test_trigram_rows_are_each_texts_distinct_trigrams(texts, codes):
    """Numbers in numpy for a small alphabet, strings past TRIGRAM_CODES (0: always)."""
    from digest.dedup._shingles import _cut_trigrams
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("digest.dedup._shingles.TRIGRAM_CODES", codes)
        packed = Packed.of_trigrams(texts)
    assert _hash_rows(packed) == [token_hashes(_cut_trigrams(text)) for text in texts]


def _plain_title_conflict(a, b) -> bool:
    """``title_conflict`` as before its hashes were kept per side: each title word stemmed,
    hashed and looked up for every pair."""
    from digest.dedup._near import content_words
    from digest.normalize import singular

    def says(words, stem):
        return (singular(stem) == stem and token_hash(stem) in words) or (
            len(stem) >= 3 and token_hash(stem + "s") in words)

    def own_words(a, b):
        return {w for w in content_words(a.title_words)
                if len(w) > 2 and (stem := singular(w)) not in b.title_stems
                and says(a.words, stem) and not says(b.words, stem)
                and not any(w in their_word for their_word in b.title_words)}
    return bool(own_words(a, b)) or bool(own_words(b, a))


_conflict_words = st.sampled_from(
    ["widget", "widgets", "gadget", "gadgets", "news", "glass", "glasses", "ox", "of", "the",
     "analysis", "analyses", "bus", "buses", "law", "laws", "chemistry", "mix", "a", "graph"])


@settings(max_examples=500, deadline=None)
@given(st.lists(st.lists(_conflict_words, min_size=1, max_size=5), min_size=1, max_size=3),
       st.lists(st.lists(_conflict_words, min_size=1, max_size=5), min_size=1, max_size=3),
       st.lists(_conflict_words, max_size=12), st.lists(_conflict_words, max_size=12))
def test_title_conflict_is_the_word_by_word_one(titles_a, titles_b, abstract_a, abstract_b):
    """Two sides' titles and abstracts from a few words, their singulars and plurals (and
    words whose singular is not a cut of them): the conflict found from each side's kept
    stems and hashes is the one found word by word."""
    from digest.dedup._near import Side, WordSets, title_conflict
    words = WordSets(Packed.of_tokens([abstract_a, abstract_b]))
    a, b = (Side(key=i, record=i, titles=tuple(" ".join(t) for t in titles),
                 size=words.packed.size(i), sets=words)
            for i, titles in enumerate((titles_a, titles_b)))
    assert title_conflict(a, b) == _plain_title_conflict(a, b)


def _everything_may_confirm(sides, pairs, shared):
    return list(range(len(pairs)))


_title_words = st.lists(st.sampled_from(["Graph", "graphs", "Modeling", "modelling", "of", "the",
                                         "Supervised", "unsupervised", "Part", "II", "2024",
                                         "Widget", "Layouts", "Ünïcode", "a", "LLM", "LLMs"]),
                        min_size=1, max_size=6).map(" ".join)
_abstract_words = st.lists(st.sampled_from([f"w{n}" for n in range(30)] + ["the", "of"]),
                           max_size=40).map(" ".join)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_title_words, _abstract_words), max_size=25))
def test_pairs_left_out_before_confirming_are_pairs_confirm_rejects(listed):
    """``may_confirm`` only spares work: the merges are those of confirming every pair."""
    from digest.dedup import deduplicate
    records = [Record(title=title, abstract=abstract, sighting=Sighting("s", n))
               for n, (title, abstract) in enumerate(listed)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("digest.dedup.may_confirm", _everything_may_confirm)
        every = deduplicate(records)
    assert deduplicate(records) == every


def test_the_evaluation_set_merges_as_when_every_pair_is_confirmed(seeds):
    from digest.dedup import deduplicate
    from digest.ingest import load_sources

    from .fixtures.dedup.evalset import build_evalset, hard_cases
    records = [item.record for item in build_evalset(load_sources([str(seeds)]).records, seed=5)]
    records += [item.record for item in hard_cases()]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("digest.dedup.may_confirm", _everything_may_confirm)
        every = deduplicate(records)
    assert deduplicate(records) == every


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([None, "2401.1", "2401.2"]), _markers),
                min_size=1, max_size=10),
       st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), max_size=6))
def test_may_join_is_can_join_of_every_pair(listed, joins):
    """Exact for clusters of one markers' value; never False where ``can_join`` is True."""
    from digest.dedup._clusters import Clusters
    records = [Record(title="T", abstract="", sighting=Sighting("s", n), arxiv_id=arxiv_id)
               for n, (arxiv_id, _) in enumerate(listed)]
    clusters = Clusters(records, [markers for _, markers in listed])
    for i, j in joins:
        if i < len(records) and j < len(records):
            clusters.join(i, j, "title")  # whatever can_join says: clusters of several values
    pairs = [(i, j) for i in range(len(records)) for j in range(len(records))]
    got = clusters.may_join(np.array([i for i, _ in pairs]), np.array([j for _, j in pairs]))
    for (i, j), may in zip(pairs, got.tolist(), strict=True):
        one_value = all(len(clusters._markers[clusters.find(k)]) == 1 for k in (i, j))
        can = clusters.can_join(i, j)
        assert may == can if one_value else may or not can
