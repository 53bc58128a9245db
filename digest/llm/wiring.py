"""From command-line choices to a ready LLM stage, and back to words for the user.

``llm_setup`` resolves backend, model, base URL, timeout and the run limits
(flag > environment > config file > default), opens the backend, and sizes the
token budget from the model's card. ``plan_table`` prints a ``--dry-run``;
``degraded_error`` is what ``--fail-on-degraded`` raises (exit 75).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..chunk import Budget, budget_for
from ..config import resolve
from ..errors import LLMUnavailable
from . import ChatBackend, make_backend, model_card, settings_from_env
from .runner import RunLimits

DEFAULT_DEADLINE_S = 900.0


@dataclass(frozen=True)
class LLMChoices:
    """The LLM flags of ``newsletter`` and ``summarize``; None means "not given"."""

    backend: str | None = None
    model: str | None = None
    base_url: str | None = None
    timeout: float | None = None
    concurrency: int | None = None
    max_cost: float | None = None
    max_tokens: int | None = None
    deadline: float | None = None
    dry_run: bool = False


@dataclass
class LLMSetup:
    backend: ChatBackend | None
    budget: Budget
    limits: RunLimits

    def close(self) -> None:
        if self.backend is not None:
            self.backend.close()

    def __enter__(self) -> LLMSetup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def llm_setup(choices: LLMChoices, config: Mapping[str, Any]) -> LLMSetup:
    settings = settings_from_env(
        resolve("model", choices.model, config),
        base_url=resolve("base_url", choices.base_url, config),
        api_version=resolve("api_version", None, config),
        provider=resolve("provider", None, config),
        timeout_s=_seconds(resolve("timeout", choices.timeout, config)))
    backend = make_backend(resolve("backend", choices.backend, config, "auto"), settings)
    model = backend.model if backend is not None else None
    limits = RunLimits(
        concurrency=int(resolve("concurrency", choices.concurrency, config, 4)),
        max_cost_usd=resolve("max_cost", choices.max_cost, config),
        max_tokens=resolve("max_tokens", choices.max_tokens, config),
        deadline_s=float(resolve("deadline", choices.deadline, config, DEFAULT_DEADLINE_S)),
        dry_run=choices.dry_run,
        price=model_card(model, config).price if model else None)
    try:
        if backend is not None:
            limits = limits.priced(backend.model)
        return LLMSetup(backend, budget_for(model, config), limits)
    except BaseException:
        if backend is not None:
            backend.close()
        raise


def plan_table(llm: Mapping[str, Any]) -> str:
    """What ``--dry-run`` prints: each call that would be made, its tokens and its price."""
    plan = llm.get("plan") or []
    model = llm.get("model") or "no model"
    lines = [f"Dry run ({llm.get('backend')}, {model}): nothing was sent."]
    if llm.get("backend") == "offline":
        return lines[0] + " The offline backend makes no LLM calls.\n"
    lines.append(f"{'task':<8} {'theme':<40} {'prompt':>7} {'output':>7} {'USD':>9}")
    for row in plan:
        lines.append(f"{row['task']:<8} {_cut(row['label'], 40):<40} {row['prompt_tokens']:>7} "
                     f"{row['output_tokens']:>7} {row['cost_usd']:>9.4f}")
    prompt = sum(row["prompt_tokens"] for row in plan)
    output = sum(row["output_tokens"] for row in plan)
    cost = sum(row["cost_usd"] for row in plan)
    lines.append(f"{'total':<8} {_cut(f'{len(plan)} calls', 40):<40} {prompt:>7} {output:>7} "
                 f"{cost:>9.4f}")
    if llm.get("cache_hits"):
        lines.append(f"{llm['cache_hits']} answers are already in the cache and cost nothing.")
    lines.append("Output tokens are estimates (the model decides); a merge's prompt is "
                 "estimated from offline summaries.")
    return "\n".join(lines) + "\n"


def degraded_error(llm: Mapping[str, Any]) -> LLMUnavailable | None:
    """The error for ``--fail-on-degraded`` when part of the issue was summarised offline."""
    if not llm.get("degraded"):
        return None
    themes = llm.get("fallback_themes") or []
    which = f"themes summarised offline: {', '.join(themes)}" if themes else "the intro fell back"
    why = f" ({llm['stopped']})" if llm.get("stopped") else ""
    return LLMUnavailable(f"the LLM stage was degraded{why}; {which}. Nothing was written: "
                          "run again later (answers already received are cached)")


def _seconds(value: Any) -> float | None:
    """The ``timeout`` setting: None (not set) lets each request's limit fit the server."""
    return None if value is None else float(value)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"
