"""Union-find over records that refuses merges a careful editor would refuse.

Two records with different arXiv ids are different papers, and so are titles whose
markers disagree ("Part II" / "Part III"), however the records got linked: every
merge checks the whole of both clusters, so no chain of near-duplicates can join
them either.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..models import Record
from ._keys import Markers


@dataclass(frozen=True)
class Link:
    """Why two records are one paper: the rule that joined them and its score."""

    record: int   # index of the record that joined ...
    matched: int  # ... the cluster holding this record
    rule: str     # "arxiv-id", "title" or "near-duplicate"
    score: float  # 1.0 for exact rules
    detail: str = ""


_NO_IDS: frozenset[str] = frozenset()


class Clusters:
    def __init__(self, records: Sequence[Record], markers: Sequence[Markers]):
        self._parent = list(range(len(records)))
        self._ids = {i: {r.arxiv_id} for i, r in enumerate(records) if r.arxiv_id}
        self._markers = {i: {m} for i, m in enumerate(markers)}
        self.links: list[Link] = []

    def find(self, i: int) -> int:
        while self._parent[i] != i:
            self._parent[i] = self._parent[self._parent[i]]
            i = self._parent[i]
        return i

    def same(self, i: int, j: int) -> bool:
        return self.find(i) == self.find(j)

    def arxiv_ids(self, i: int) -> set[str]:
        return self._ids.get(self.find(i), set())

    def can_join(self, i: int, j: int) -> bool:
        """No two arXiv ids and no disagreeing title markers in the merged cluster."""
        a, b = self.find(i), self.find(j)
        if a == b:
            return True
        ids_a, ids_b = self._ids.get(a, _NO_IDS), self._ids.get(b, _NO_IDS)
        if ids_a and ids_b and ids_a != ids_b:
            return False
        ours, theirs = self._markers[a], self._markers[b]
        if len(ours) == 1 and len(theirs) == 1:  # most clusters: one title's markers
            (mine,), (other,) = ours, theirs
            return mine is other or mine.compatible(other)  # one object per distinct value
        return all(m.compatible(n) for m in ours for n in theirs)

    def join(self, i: int, j: int, rule: str, score: float = 1.0, detail: str = "") -> None:
        """Merge the clusters of ``i`` and ``j`` (the caller checked ``can_join`` if it must)."""
        a, b = self.find(i), self.find(j)
        if a == b:
            return
        keep, gone = min(a, b), max(a, b)  # the earliest record stays the root
        self._parent[gone] = keep
        self._ids[keep] = self._ids.get(keep, set()) | self._ids.pop(gone, set())
        if not self._ids[keep]:
            del self._ids[keep]
        self._markers[keep] |= self._markers.pop(gone)
        self.links.append(Link(i, j, rule, score, detail))

    def groups(self) -> list[list[int]]:
        """Record indices per cluster, clusters in order of their first record."""
        by_root: dict[int, list[int]] = {}
        for index in range(len(self._parent)):
            by_root.setdefault(self.find(index), []).append(index)
        return list(by_root.values())
