"""The store's side of the LLM calls: the answer cache and the ledger of calls.

An answer is cached under (model, prompt hash, parameters): the same question to the same
model is asked once; a repair is cached under its original's key. Every call made is a
ledger row. The store is touched from the calling thread only (sqlite3 is not shared), and
writes wait in a list until ``flush`` so that a commit never delays starting calls.

What the answers an issue uses cost (``cost_of_answers``) is read back from the ledger by
their cache keys, cached answers included: a re-run that asks nothing costs what the
first one did, so it writes the same bytes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..state import CallRecord, Store
from ._calls import Call
from .answers import clean_answer
from .base import Message


@dataclass(frozen=True)
class Cached:
    """A cached answer: usable (no ``problems``) or to be repaired like a fresh invalid one."""

    answer: Any
    problems: list[str]
    data: Any

    @property
    def text(self) -> str:
        """The answer as the model wrote it, for a repair request."""
        return json.dumps(self.data, ensure_ascii=False)


class Ledger:
    def __init__(self, store: Store | None, model: str, temperature: float | None) -> None:
        self._store = store
        self._model = model
        self._temperature = temperature
        self._writes: list[Callable[[Store], None]] = []
        self._used: set[str] = set()  # keys of the answers delivered (model or cache)
        self._costs: dict[str, float] = {}  # what this run paid, by key (no store)

    def key(self, call: Call) -> str:
        """The cache key of a call's question (a repair shares its original's)."""
        original = call.original
        return question_key(self._model, original.messages, self._params(original))

    def cached(self, call: Call, key: str) -> Cached | None:
        """What the cache holds for this question, checked like a fresh answer; None when it
        holds nothing."""
        data = self._store.cached_response(key) if self._store is not None else None
        if data is None:
            return None
        try:  # a Batch API answer, another digest version's, or written by hand: checked again
            answer, problems = call.check(clean_answer(data))
        except ValueError as error:
            return Cached(None, [str(error)], data)
        return Cached(answer, list(problems), data)

    def used(self, key: str) -> None:
        """An answer under ``key`` went into the issue."""
        self._used.add(key)

    def cost_of_answers(self) -> float:
        """What the answers used cost when they were bought: every ledger row under their
        keys (the original call and its repair), this run's or an earlier one's."""
        if not self._used:
            return 0.0
        self.flush()
        if self._store is None:
            return sum(self._costs.get(key, 0.0) for key in sorted(self._used))
        return sum(row.cost_usd for row in self._store.calls() if row.cache_key in self._used)

    def record(self, call: Call, key: str, usage: tuple[int, int, int], cost: float,
               latency_s: float, retries: int, outcome: str) -> None:
        prompt, output, cached = usage
        self._costs[key] = self._costs.get(key, 0.0) + cost
        record = CallRecord(self._model, call.task, prompt_hash(call.messages), key, prompt,
                            output, cached, round(latency_s * 1000), retries, outcome, cost)
        self._writes.append(lambda store: store.record_call(record))

    def remember(self, call: Call, key: str, data: Any) -> None:
        original = call.original
        hashed, params = prompt_hash(original.messages), self._params(original)
        self._writes.append(lambda store: store.cache_response(
            key, self._model, data, prompt_hash=hashed, params=params))

    def flush(self) -> None:
        writes, self._writes = self._writes, []
        if self._store is not None:
            for write in writes:
                write(self._store)

    def _params(self, call: Call) -> dict[str, Any]:
        """What besides the prompt shapes an answer (a backend may expose its temperature)."""
        return {"max_tokens": call.max_tokens, "task": call.task,
                "temperature": self._temperature}


def question_key(model: str, messages: tuple[Message, ...], params: dict[str, Any]) -> str:
    """The cache key of a question: the model, the prompt and what else shapes the answer
    (the Batch API path keys its requests with it too: ``custom_id``)."""
    payload = json.dumps({"model": model, "prompt": prompt_hash(messages), "params": params},
                         sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def prompt_hash(messages: tuple[Message, ...]) -> str:
    text = json.dumps([dict(m) for m in messages], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()
