"""Union-find over records that refuses merges a careful editor would refuse.

Two records with different arXiv ids are different papers, and so are titles whose
markers disagree ("Part II" / "Part III"), however the records got linked: every
merge checks the whole of both clusters, so no chain of near-duplicates can join
them either.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..models import Record
from ._keys import Markers

if TYPE_CHECKING:
    import numpy as np


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

    def may_join(self, first: np.ndarray, second: np.ndarray) -> np.ndarray:
        """``can_join`` of the record pairs ``(first[k], second[k])`` at once, in numpy: each
        cluster's arXiv ids and its markers' kinds, parts and numbers become numbers compared
        as ``can_join`` compares them. The markers of a cluster of several markers' values
        are left to ``can_join`` (they pass here)."""
        import numpy as np
        records = np.unique(np.concatenate([first, second]))
        numbering: dict[object, int] = {}
        keys = np.array([self._keys(record, numbering) for record in records.tolist()],
                        dtype=np.int64).reshape(-1, 5)
        a, b = keys[np.searchsorted(records, first)].T, keys[np.searchsorted(records, second)].T
        root, ids, kinds, parts, numbers = range(5)
        ids_agree = (a[ids] < 0) | (b[ids] < 0) | (a[ids] == b[ids])
        markers_agree = ((a[kinds] == b[kinds]) & (a[parts] == b[parts])
                         & ((a[numbers] < 0) | (b[numbers] < 0) | (a[numbers] == b[numbers])))
        several = (a[kinds] < 0) | (b[kinds] < 0)
        return (a[root] == b[root]) | (ids_agree & (markers_agree | several))

    def _keys(self, record: int, numbering: dict[object, int]) -> tuple[int, int, int, int, int]:
        """The root of ``record``'s cluster, and numbers for its arXiv ids, markers' kinds,
        parts and numbers (-1: none; kinds -1: several markers' values)."""
        def number(value: object) -> int:
            return numbering.setdefault(value, len(numbering))

        root = self.find(record)
        ids = self._ids.get(root)
        markers = self._markers[root]
        if len(markers) != 1:
            return root, number(frozenset(ids)) if ids else -1, -1, -1, -1
        (only,) = markers
        return (root, number(frozenset(ids)) if ids else -1, number(("kinds", only.kinds)),
                number(("parts", only.parts)),
                number(("numbers", only.numbers)) if only.numbers else -1)

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
