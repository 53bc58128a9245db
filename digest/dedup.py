"""Dedup: one ``Paper`` per paper, however many listings carried it.

Identity is the arXiv id when a record has one, else the normalized title
(``normalize.title_key``). Records that share either key are one paper. The
merged paper keeps the richest fields and every sighting.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from .models import Paper, Record
from .normalize import title_key

logger = logging.getLogger("digest.dedup")


@dataclass(frozen=True)
class MergedGroup:
    """Records merged into one paper, and the rule that merged them."""

    paper_id: str
    records: tuple[Record, ...]
    rule: str


@dataclass(frozen=True)
class DedupResult:
    papers: list[Paper]
    groups: list[MergedGroup]

    @property
    def duplicates_merged(self) -> int:
        return sum(len(group.records) - 1 for group in self.groups)


def deduplicate(records: Sequence[Record]) -> DedupResult:
    """Merge records of the same paper; papers keep the order of their first record."""
    clusters = _cluster_by_identity(records)
    papers = [merge(cluster) for cluster in clusters]
    groups = [MergedGroup(paper.id, tuple(cluster), _rule(cluster))
              for paper, cluster in zip(papers, clusters) if len(cluster) > 1]
    logger.info("dedup: %d records -> %d papers", len(records), len(papers))
    return DedupResult(papers, groups)


def _cluster_by_identity(records: Sequence[Record]) -> list[list[Record]]:
    """Union records sharing an arXiv id or a title key (a record may bridge both)."""
    parent = list(range(len(records)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first_with_key: dict[str, int] = {}
    for index, record in enumerate(records):
        for key in _identity_keys(record):
            if key in first_with_key:
                parent[find(index)] = find(first_with_key[key])
            else:
                first_with_key[key] = index
    clusters: dict[int, list[Record]] = {}
    for index, record in enumerate(records):
        clusters.setdefault(find(index), []).append(record)
    return list(clusters.values())  # in order of each cluster's first record


def _identity_keys(record: Record) -> list[str]:
    keys = [f"t:{title_key(record.title)}"]
    if record.arxiv_id:
        keys.append(f"a:{record.arxiv_id}")
    return keys


def _rule(cluster: list[Record]) -> str:
    ids = {r.arxiv_id for r in cluster if r.arxiv_id}
    return "arxiv-id" if ids and all(r.arxiv_id for r in cluster) else "title"


def paper_id(arxiv_id: str | None, title: str) -> str:
    if arxiv_id:
        return arxiv_id
    return "t:" + hashlib.sha256(title_key(title).encode()).hexdigest()[:12]


def merge(cluster: Sequence[Record]) -> Paper:
    """One paper from records of it: the fullest abstract, any id, link and authors."""
    richest = max(cluster, key=lambda r: (bool(r.arxiv_id), bool(r.url), len(r.abstract)))
    arxiv_id = next((r.arxiv_id for r in cluster if r.arxiv_id), None)
    return Paper(
        id=paper_id(arxiv_id, cluster[0].title),
        title=richest.title,
        abstract=max((r.abstract for r in cluster), key=len),
        url=richest.url or next((r.url for r in cluster if r.url), None),
        authors=max((r.authors for r in cluster), key=len),
        published=min((r.published for r in cluster if r.published), default=None),
        arxiv_id=arxiv_id,
        sightings=tuple(r.sighting for r in cluster),
    )
