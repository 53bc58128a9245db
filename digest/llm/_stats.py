"""What the LLM stage did, as a typed object: the run report's ``llm`` block and what the
CLI reads back (degraded, plan, why calling stopped)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

MAX_ERRORS = 10


@dataclass
class LLMStats:
    """The run report's ``llm`` block (the first eleven keys are the documented contract)."""

    backend: str
    model: str | None
    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    failed_calls: int = 0
    fallbacks: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    abstract_tokens: int = 0
    cost_usd: float = 0.0
    cached_tokens: int = 0
    # what the answers the issue uses cost when bought (cached ones too): the footer's cost
    answers_cost_usd: float = 0.0
    repairs: int = 0
    cached_invalid: int = 0  # cached answers (a Batch API job's) that failed their check: repaired
    token_overhead: float | None = None
    fallback_themes: list[str] = field(default_factory=list)
    degraded: bool = False
    stopped: str | None = None  # why calling stopped early: circuit breaker, deadline, budget
    errors: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    dry_run: bool = False
    plan: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def of(cls, value: LLMStats | Mapping[str, Any]) -> LLMStats:
        """Stats from themselves or from a report's ``llm`` block (unknown keys ignored)."""
        if isinstance(value, LLMStats):
            return value
        known = {f.name for f in fields(cls)}
        data = {key: item for key, item in value.items() if key in known}
        data.setdefault("backend", "offline")
        data.setdefault("model", None)
        return cls(**data)

    @property
    def spent_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def note_error(self, message: str) -> None:
        if message not in self.errors and len(self.errors) < MAX_ERRORS:
            self.errors.append(message)

    def stop(self, reason: str) -> bool:
        """Remember the first reason calling stopped; True if this is it."""
        if self.stopped is not None:
            return False
        self.stopped = reason
        return True

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["cost_usd"] = round(self.cost_usd, 6)
        data["answers_cost_usd"] = round(self.answers_cost_usd, 6)
        data["wall_s"] = round(self.wall_s, 3)
        if self.abstract_tokens and self.prompt_tokens:
            data["token_overhead"] = round(self.prompt_tokens / self.abstract_tokens, 3)
        if not self.dry_run:
            del data["plan"]
        return data
