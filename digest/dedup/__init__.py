"""Dedup: one ``Paper`` per paper, however many listings carried it.

1. Exact identity: records with one arXiv id are one paper; so are records whose
   titles have one identity key (case, punctuation, typography, Unicode forms and
   tricks, whitespace, hyphenation, "(v2)" ignored), unless their abstracts are
   clearly different papers ("Comment on X" by two authors).
2. Near-duplicates: MinHash LSH over abstract words and title trigrams proposes
   candidates; ``_near.confirm`` accepts a pair on title and abstract similarity.
3. Never merged, whatever links them: two different arXiv ids, or titles whose
   markers disagree (comment / reply, Part II / Part III, 2024 / 2025).

The merged paper keeps the richest record's fields and every sighting, and each
``MergedGroup`` says which rule joined which records (``explain`` prints it).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..models import Paper, Record
from ._clusters import Clusters, Link
from ._explain import explain
from ._keys import abstract_words, loose_title, title_markers
from ._merge import distinct_id, known_names, merge, paper_id, published_names
from ._near import Side, abstracts_differ, candidate_pairs, confirm, content_words

__all__ = ["DedupResult", "Link", "MergedGroup", "deduplicate", "explain", "known_names", "merge",
           "paper_id", "published_names"]

logger = logging.getLogger("digest.dedup")

RULES = ("arxiv-id", "title", "near-duplicate")  # weakest last


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
    loose = [loose_title(r.title) for r in records]
    markers = [title_markers(r.title, t) for r, t in zip(records, loose, strict=True)]
    clusters = Clusters(records, markers)
    words = _AbstractWords(records)
    _join_exact(records, loose, clusters, words)
    _join_near(records, loose, clusters, words)
    result = _result(records, clusters)
    logger.info("dedup: %d records -> %d papers (%d merged)", len(records), len(result.papers),
                result.duplicates_merged)
    return result


class _AbstractWords:
    """Content words of each record's abstract, computed when first needed."""

    def __init__(self, records: Sequence[Record]):
        self._records = records
        self._cache: dict[int, frozenset[str]] = {}

    def __getitem__(self, index: int) -> frozenset[str]:
        if index not in self._cache:
            self._cache[index] = content_words(abstract_words(self._records[index].abstract))
        return self._cache[index]


def _join_exact(records: list[Record], loose: list[str], clusters: Clusters,
                words: _AbstractWords) -> None:
    first_with_id: dict[str, int] = {}
    for index, record in enumerate(records):
        if record.arxiv_id:
            other = first_with_id.setdefault(record.arxiv_id, index)
            clusters.join(index, other, "arxiv-id")
    holders: dict[str, list[int]] = {}  # identity key -> one record per cluster with it
    for index, title in enumerate(loose):
        key = title.replace(" ", "")  # = identity_key(record.title)
        if not key:
            continue
        firsts = holders.setdefault(key, [])
        match = next((j for j in firsts if clusters.same(index, j) or (
            clusters.can_join(index, j) and not abstracts_differ(words[index], words[j]))), None)
        if match is None:
            firsts.append(index)
        else:
            clusters.join(index, match, "title")


def _join_near(records: list[Record], loose: list[str], clusters: Clusters,
               words: _AbstractWords) -> None:
    sides = [_side(group, records, loose, words) for group in clusters.groups()]
    verdicts = []
    for i, j in candidate_pairs(sides):
        a, b = sides[i], sides[j]
        if clusters.can_join(a.record, b.record) and (verdict := confirm(a, b)):
            verdicts.append((-verdict.score, min(a.key, b.key), max(a.key, b.key), verdict))
    for _, first, second, verdict in sorted(verdicts, key=lambda v: v[:3]):
        if clusters.can_join(first, second):  # earlier merges may have ruled this one out
            clusters.join(second, first, "near-duplicate", verdict.score, verdict.detail)


def _side(group: list[int], records: list[Record], loose: list[str],
          words: _AbstractWords) -> Side:
    fullest = max(group, key=lambda i: len(records[i].abstract))
    titles = tuple(dict.fromkeys(loose[i] for i in group if loose[i]))
    return Side(key=group[0], record=fullest, titles=titles or ("",), words=words[fullest])


def _result(records: list[Record], clusters: Clusters) -> DedupResult:
    groups = clusters.groups()
    papers = _with_distinct_ids([merge([records[i] for i in group]) for group in groups])
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
    """Papers kept apart under one title ("Comment on X") need ids of their own.

    The most-seen of them keeps the plain id (ties: the smaller distinct id), the others
    get one with a hash of their abstract: the same ids whatever the input order.
    """
    sharing: dict[str, list[Paper]] = {}
    for paper in papers:
        sharing.setdefault(paper.id, []).append(paper)
    keeps = {pid: min(same, key=lambda p: (-len(p.sightings), distinct_id(pid, p)))
             for pid, same in sharing.items() if len(same) > 1}
    return [replace(p, id=distinct_id(p.id, p)) if p.id in keeps and keeps[p.id] is not p
            else p for p in papers]
