"""Near-duplicate groups without chaining.

Two groups join on a confirmed pair (the representatives: ``confirm`` accepted them), and
only when every other pair across them is confirmed too or at least compatible: titles
that do not differ (``titles_differ``) and abstracts alike enough to be versions of one
text. So A like B and B like C never puts A with a C whose title shares nothing with A's.
Strict confirmation of every pair would cost recall: an original, its renamed version and
its listing without an abstract are one paper, but the last two confirm nothing together.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._near import ABSTRACT_MATCH, Evidences, Side, Verdict, confirm

MAX_SIDES = 12  # a paper listed under more unlike titles than this is left in parts


class NearGroups:
    def __init__(self, sides: Sequence[Side], verdicts: dict[tuple[int, int], Verdict],
                 evidence: Evidences):
        self._sides = sides
        self._evidence = evidence
        self._verdicts: dict[tuple[int, int], Verdict | None] = dict(verdicts)
        self._group = list(range(len(sides)))
        self._members: dict[int, list[int]] = {}

    def members(self, side: int) -> list[int]:
        return self._members.get(self._group[side], [side])

    def join(self, i: int, j: int) -> bool:
        """Join the groups of sides ``i`` and ``j`` if every pair across them is one paper."""
        ours, theirs = self.members(i), self.members(j)
        if self._group[i] == self._group[j] or len(ours) + len(theirs) > MAX_SIDES:
            return False
        if not all(self._confirmed(x, y) or self._compatible(x, y)
                   for x in ours for y in theirs):
            return False
        keep, gone = self._group[i], self._group[j]
        for side in theirs:
            self._group[side] = keep
        self._members[keep] = ours + theirs
        self._members.pop(gone, None)
        return True

    def _confirmed(self, x: int, y: int) -> bool:
        pair = (x, y) if x < y else (y, x)
        if pair not in self._verdicts:
            self._verdicts[pair] = confirm(self._sides[pair[0]], self._sides[pair[1]],
                                           self._evidence.of(*pair))
        return self._verdicts[pair] is not None

    def _compatible(self, x: int, y: int) -> bool:
        a, b, measured = self._sides[x], self._sides[y], self._evidence.of(x, y)
        if measured.titles_differ:
            return False
        return not (a.has_abstract and b.has_abstract) or measured.abstract >= ABSTRACT_MATCH
