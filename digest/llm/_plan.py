"""The dry-run plan: every call a run would make, priced, and the table ``--dry-run`` prints.

A run with ``dry_run`` set asks nothing: each call that would go to the model becomes a
``PlanRow`` (in ``LLMStats.plan``) and its question falls back offline, so the stage still
finishes and every later call (merges of those batches, the intro) is planned as well.
Answers the cache already holds are not planned (``cache_hits``). Another stage can use
the same plan to see a run's calls before making them.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from ..textsafety import ellipsize
from ._stats import LLMStats
from .base import ChatRequest


@dataclass(frozen=True)
class PlannedCall:
    """One first-wave call of a run: its cache key and the request that would ask it."""

    key: str
    task: str
    request: ChatRequest
    model: str
    temperature: float | None
    body: Mapping[str, Any]  # what the backend would POST to /v1/chat/completions


@dataclass
class Planner:
    """A run in planning mode (``RunLimits.planner``): the runner lists each first-wave call
    it would make (cache hits left out) and answers none; the summarize stage makes no
    offline fallback for them and asks nothing after them (merges, repairs). This is how
    ``digest.batchjobs`` learns the requests of a Batch API job."""

    calls: list[PlannedCall] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, call: PlannedCall) -> None:
        with self._lock:
            self.calls.append(call)


@dataclass(frozen=True)
class PlanRow:
    task: str
    label: str
    prompt_tokens: int
    output_tokens: int
    cost_usd: float
    stopped: str | None = None  # the token or cost limit that would stop this call

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def plan_table(llm: LLMStats | Mapping[str, Any]) -> str:
    """What ``--dry-run`` prints: each call that would be made, its tokens and its price."""
    stats = LLMStats.of(llm)
    rows = [PlanRow(**row) for row in stats.plan]
    lines = [f"Dry run ({stats.backend}, {stats.model or 'no model'}): nothing was sent."]
    if not rows and not stats.cache_hits:
        return lines[0] + f" The {stats.backend} backend would make no LLM calls.\n"
    lines.append(f"{'task':<8} {'theme':<40} {'prompt':>7} {'output':>7} {'USD':>9}")
    for row in rows:
        price = "(stopped)" if row.stopped else f"{row.cost_usd:.4f}"
        lines.append(f"{row.task:<8} {ellipsize(row.label, 40):<40} {row.prompt_tokens:>7} "
                     f"{row.output_tokens:>7} {price:>9}")
    made = [row for row in rows if not row.stopped]
    prompt = sum(row.prompt_tokens for row in made)
    output = sum(row.output_tokens for row in made)
    cost = sum(row.cost_usd for row in made)
    lines.append(f"{'total':<8} {ellipsize(f'{len(made)} calls', 40):<40} {prompt:>7} {output:>7} "
                 f"{cost:>9.4f}")
    if stopped := [row for row in rows if row.stopped]:
        lines.append(f"{len(stopped)} of these calls would not be made: {stopped[0].stopped} "
                     "stops them, and their themes would be summarised offline.")
    if stats.cache_hits:
        lines.append(f"{stats.cache_hits} answers are already in the cache and cost nothing.")
    lines.append("Output tokens are estimates (the model decides); a merge's prompt is "
                 "estimated from offline summaries.")
    return "\n".join(lines) + "\n"
