"""Dedup: one ``Paper`` per paper, however many listings carried it.

1. Exact identity: records with one arXiv id are one paper; so are records whose
   titles have one identity key (case, punctuation, typography, Unicode forms and
   tricks, whitespace, hyphenation, "(v2)" ignored), unless their abstracts are
   clearly different papers ("Comment on X" by two authors). A record is compared with
   at most ``TITLE_HOLDERS`` different papers under its title; past that (a generic or
   hostile title), its copies merge in step 2, on their abstracts.
2. Near-duplicates: MinHash LSH over abstract words and title trigrams proposes
   candidates (a bounded number per record); ``_near.confirm`` accepts a pair on title
   and abstract similarity. Records whose titles differ need near-identical abstracts that
   are evidence: a known notice (withdrawn, proceedings, erratum) or an abstract many
   unrelated titles share is not (``_boilerplate``).
3. No chaining: two groups join on a confirmed pair only when every other pair across
   them is confirmed or compatible (``_groups``), so A like B and B like C never puts A
   with a C whose title differs from A's.
4. Never merged, whatever links them: two different arXiv ids, or titles whose
   markers disagree (comment / reply, Part II / Part III, 2024 / 2025).

The merged paper keeps the richest record's fields, every sighting and the other titles it
was listed under (``Paper.also_listed_as``), and each ``MergedGroup`` says which rule joined
which records (``explain`` prints it).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..models import Paper, Record
from ..normalize import title_key
from ._boilerplate import known_notice
from ._clusters import Clusters, Link
from ._explain import explain
from ._groups import NearGroups
from ._keys import Markers, folded_abstract, loose_title, piece_words, split_pieces, title_markers
from ._merge import distinct_id, known_names, merge, paper_id, published_names
from ._near import (
    Evidences,
    Side,
    Verdict,
    WordSets,
    abstract_content,
    abstracts_disagree,
    boilerplate_sides,
    candidate_pairs,
    confirm,
    may_confirm,
)
from ._shingles import Packed

__all__ = ["DedupResult", "Link", "MergedGroup", "deduplicate", "explain", "known_names", "merge",
           "paper_id", "published_names"]

logger = logging.getLogger("digest.dedup")

RULES = ("arxiv-id", "title", "near-duplicate")  # weakest last
# Different papers under one title a record is compared with: a generic title ("Editorial")
# or a hostile listing can give thousands, and comparing each with all before it took 88 s
# for 5,000 records. Later ones still merge with their copies through the near-duplicate
# stage, which compares abstracts (tests/test_dedup_precision.py).
TITLE_HOLDERS = 64


@dataclass(frozen=True)
class MergedGroup:
    """Records merged into one paper, the weakest rule that joined them, and how."""

    paper_id: str
    records: tuple[Record, ...]
    rule: str
    score: float = 1.0            # the weakest link's score; 1.0 for exact rules
    links: tuple[Link, ...] = ()  # record / matched are indices into ``records``


@dataclass(frozen=True)
class DedupResult:
    papers: list[Paper]
    groups: list[MergedGroup]

    @property
    def duplicates_merged(self) -> int:
        return sum(len(group.records) - 1 for group in self.groups)

    @property
    def records_read(self) -> int:
        return sum(len(paper.sightings) for paper in self.papers)


def deduplicate(records: Sequence[Record]) -> DedupResult:
    """Merge records of the same paper; papers keep the order of their first record."""
    records = list(records)
    keys = [title_key(r.title) for r in records]
    loose = list(map(loose_title, (r.title for r in records), keys))
    clusters = Clusters(records, _markers(records, loose))
    words = _abstract_words(records)
    _join_exact(records, loose, clusters, words)
    _join_near(records, loose, clusters, words)
    result = _result(records, clusters, keys)
    logger.info("dedup: %d records -> %d papers (%d merged)", len(records), len(result.papers),
                result.duplicates_merged)
    return result


def _markers(records: list[Record], loose: list[str]) -> list[Markers]:
    """Each record's title markers, one object per distinct value (most have none)."""
    seen: dict[Markers, Markers] = {}
    return [seen.setdefault(m, m) for m in map(title_markers, (r.title for r in records), loose)]


def _abstract_words(records: list[Record]) -> WordSets:
    """Hashed content words of each abstract; none for a known notice. Each distinct abstract
    is read once (listings of one paper repeat it), its row shared by every record with it."""
    row_of: dict[str, int] = {}
    rows = [row_of.setdefault(r.abstract, len(row_of)) for r in records]
    texts = (b"" if known_notice(abstract) else folded_abstract(abstract) for abstract in row_of)
    return WordSets(Packed.of_texts(texts, split_pieces, _content_words), rows)


def _content_words(piece: bytes) -> list[bytes]:
    return abstract_content(piece_words(piece))


def _join_exact(records: list[Record], loose: list[str], clusters: Clusters,
                words: WordSets) -> None:
    first_with_id: dict[str, int] = {}
    for index, record in enumerate(records):
        if record.arxiv_id:
            other = first_with_id.setdefault(record.arxiv_id, index)
            clusters.join(index, other, "arxiv-id")
    holders: dict[str, list[int]] = {}  # identity key -> one record per cluster with it
    crowded: set[str] = set()  # keys whose holders are full
    for index, title in enumerate(loose):
        key = title.replace(" ", "")  # = identity_key(record.title)
        if not key:
            continue
        firsts = holders.setdefault(key, [])
        match = next((j for j in firsts if clusters.same(index, j) or (
            clusters.can_join(index, j) and not abstracts_disagree(words[index], words[j]))),
                     None)
        if match is not None:
            clusters.join(index, match, "title")
        elif len(firsts) < TITLE_HOLDERS:
            firsts.append(index)
        elif key not in crowded:
            crowded.add(key)
            logger.info("dedup: more than %d different papers share the title %r; later "
                        "records under it are merged on their abstracts only", TITLE_HOLDERS,
                        records[index].title[:80])


def _join_near(records: list[Record], loose: list[str], clusters: Clusters,
               words: WordSets) -> None:
    sides = [_side(group, records, loose, words) for group in clusters.groups()]
    pairs = candidate_pairs(sides)
    evidence = Evidences(sides)
    shared = evidence.count(pairs)
    templates = boilerplate_sides(sides, pairs, evidence, shared)
    sides = evidence.sides = [replace(side, boilerplate=True) if n in templates else side
                              for n, side in enumerate(sides)]
    possible = [pairs[k] for k in may_confirm(sides, pairs, shared)]
    verdicts = _verdicts(sides, possible, clusters, evidence)
    groups = NearGroups(sides, {(v[3], v[4]): v[5] for v in verdicts}, evidence)
    for _, first, second, i, j, verdict in sorted(verdicts, key=lambda v: v[:3]):
        # earlier merges may have ruled this one out; every pair across must agree
        if clusters.can_join(first, second) and groups.join(i, j):
            clusters.join(second, first, "near-duplicate", verdict.score, verdict.detail)


def _verdicts(sides: list[Side], pairs: list[tuple[int, int]], clusters: Clusters,
              evidence: Evidences) -> list[tuple[float, int, int, int, int, Verdict]]:
    """The confirmed candidate pairs, strongest first once sorted."""
    import numpy as np
    verdicts: list[tuple[float, int, int, int, int, Verdict]] = []
    if not pairs:
        return verdicts
    record = np.array([side.record for side in sides], dtype=np.int64)
    first, second = np.array(pairs, dtype=np.int64).T
    joinable = clusters.may_join(record[first], record[second])
    for k in np.flatnonzero(joinable).tolist():
        i, j = pairs[k]
        a, b = sides[i], sides[j]
        if clusters.can_join(a.record, b.record) and (verdict := confirm(
                a, b, evidence.of(i, j, keep=False))):
            verdicts.append((-verdict.score, min(a.key, b.key), max(a.key, b.key), i, j, verdict))
    return verdicts


def _side(group: list[int], records: list[Record], loose: list[str], words: WordSets) -> Side:
    titles: tuple[str, ...]
    if len(group) == 1:  # most clusters
        fullest, titles = group[0], (loose[group[0]],) if loose[group[0]] else ()
    else:
        fullest = max(group, key=lambda i: (words.size(i), len(records[i].abstract)))
        titles = tuple(dict.fromkeys(loose[i] for i in group if loose[i]))
    return Side(key=group[0], record=fullest, titles=titles or ("",),
                size=words.size(fullest), sets=words)


def _result(records: list[Record], clusters: Clusters, keys: list[str]) -> DedupResult:
    groups = clusters.groups()
    papers = _with_distinct_ids([merge([records[i] for i in group], [keys[i] for i in group])
                                 for group in groups])
    links_of: dict[int, list[Link]] = {}
    for link in clusters.links:
        links_of.setdefault(clusters.find(link.record), []).append(link)
    merged = [_merged_group(paper, group, records, links_of[clusters.find(group[0])])
              for paper, group in zip(papers, groups, strict=True) if len(group) > 1]
    return DedupResult(papers, merged)


def _merged_group(paper: Paper, group: list[int], records: list[Record],
                  links: list[Link]) -> MergedGroup:
    position = {index: n for n, index in enumerate(group)}
    local = tuple(Link(position[link.record], position[link.matched], link.rule, link.score,
                       link.detail) for link in links)
    rule = max((link.rule for link in local), key=RULES.index)
    return MergedGroup(paper.id, tuple(records[i] for i in group), rule,
                       min(link.score for link in local), local)


def _with_distinct_ids(papers: list[Paper]) -> list[Paper]:
    """Papers kept apart under one title ("Comment on X") need ids of their own: a paper
    that shares its id with another is left out of the themes."""
    sharing: dict[str, list[Paper]] = {}
    for paper in papers:
        sharing.setdefault(paper.id, []).append(paper)
    new_ids: dict[int, str] = {}
    for pid, same in sharing.items():
        if len(same) > 1:
            new_ids.update(_ids_apart(pid, same))
    return [replace(p, id=new_ids[id(p)]) if id(p) in new_ids else p for p in papers]


def _ids_apart(pid: str, same: list[Paper]) -> dict[int, str]:
    """New ids for the papers that share ``pid``, by ``id(paper)``.

    The most-seen keeps the plain id (ties: the smaller distinct id), the others get one
    with a short hash of their abstract: the same ids whatever the input order. Short hashes
    are 24 bits, which thousands of papers under one title meet: those that meet get the
    whole hash, and papers with the very same text (kept apart by a full group) a number
    after it, in the order of their first sighting.
    """
    short_ids = {id(paper): distinct_id(pid, paper) for paper in same}
    keeper = min(same, key=lambda p: (-len(p.sightings), short_ids[id(p)]))
    others = [paper for paper in same if paper is not keeper]
    short = Counter(short_ids[id(paper)] for paper in others)
    numbered: Counter[str] = Counter()
    ids = {}
    for paper in others:
        new = short_ids[id(paper)]
        if short[new] > 1:
            new = distinct_id(pid, paper, digits=12)
            numbered[new] += 1
            if numbered[new] > 1:
                new = f"{new}-{numbered[new]}"
        ids[id(paper)] = new
    return ids
