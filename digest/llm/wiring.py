"""From command-line choices to a ready LLM stage, and back to words for the user.

``llm_setup`` resolves backend, model, base URL, timeout and the run limits
(flag > environment > config file > default), opens the backend, prices the run
once and sizes the token budget from the model's card. ``plan_table`` (from
``_plan``) prints a ``--dry-run``; ``degraded_error`` is what ``--fail-on-degraded``
raises (exit 75). Both read the typed ``LLMStats`` (or a report's ``llm`` block).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..chunk import Budget, budget_for
from ..config import resolve
from ..errors import LLMUnavailable
from . import (
    BackendSettings,
    ChatBackend,
    answers_in_process,
    backend_name,
    make_backend,
    model_card,
    settings_from_env,
)
from ._limits import RunLimits
from ._plan import plan_table
from ._stats import LLMStats

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
    backend: ChatBackend
    budget: Budget
    limits: RunLimits
    timeout_s: float | None = None  # the timeout setting (None: limits fitted per request)

    def close(self) -> None:
        self.backend.close()

    def __enter__(self) -> LLMSetup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def llm_setup(choices: LLMChoices, config: Mapping[str, Any]) -> LLMSetup:
    settings = _backend_settings(choices, config)
    backend = make_backend(resolve("backend", choices.backend, config, "auto"), settings)
    try:
        model = backend.model or None
        limits = RunLimits(
            concurrency=int(resolve("concurrency", choices.concurrency, config, 4)),
            max_cost_usd=resolve("max_cost", choices.max_cost, config),
            max_tokens=resolve("max_tokens", choices.max_tokens, config),
            deadline_s=float(resolve("deadline", choices.deadline, config, DEFAULT_DEADLINE_S)),
            dry_run=choices.dry_run,
            price=model_card(model, config).price if model else None)
        # priced here, once, so that a missing price stops the run before any work
        limits = limits.priced(backend.model, getattr(backend, "price", None))
        return LLMSetup(backend, budget_for(config, model_card(model, config), model), limits,
                        settings.timeout_s)
    except BaseException:
        backend.close()
        raise


def asks_a_model(choices: LLMChoices, config: Mapping[str, Any]) -> bool:
    """Whether these choices make a backend with a model behind it (not offline)."""
    name = backend_name(resolve("backend", choices.backend, config, "auto"),
                        _backend_settings(choices, config))
    return not answers_in_process(name)


def _backend_settings(choices: LLMChoices, config: Mapping[str, Any]) -> BackendSettings:
    return settings_from_env(
        resolve("model", choices.model, config),
        base_url=resolve("base_url", choices.base_url, config),
        api_version=resolve("api_version", None, config),
        provider=resolve("provider", None, config),
        timeout_s=_seconds(resolve("timeout", choices.timeout, config)))


def degraded_error(llm: LLMStats | Mapping[str, Any]) -> LLMUnavailable | None:
    """The error for ``--fail-on-degraded`` when part of the issue was summarised offline."""
    stats = LLMStats.of(llm)
    if not stats.degraded:
        return None
    themes = stats.fallback_themes
    which = f"themes summarised offline: {', '.join(themes)}" if themes else "the intro fell back"
    why = f" ({stats.stopped})" if stats.stopped else ""
    return LLMUnavailable(f"the LLM stage was degraded{why}; {which}. Nothing was written: "
                          "run again later (answers already received are cached)")


def _seconds(value: Any) -> float | None:
    """The ``timeout`` setting: None (not set) lets each request's limit fit the server."""
    return None if value is None else float(value)


__all__ = ["LLMChoices", "LLMSetup", "asks_a_model", "degraded_error", "llm_setup",
           "plan_table"]
