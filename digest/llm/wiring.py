"""From command-line choices to a ready LLM stage, and back to words for the user.

``llm_setup`` takes the run's resolved settings (``digest.settings.resolve_settings``:
flag > environment > config file > default, once), opens the backend, prices the run once
and sizes the token budget from the model's card; ``backend_settings`` is what every
backend that reaches the server (chat, embeddings, files and batches) is made from.
``plan_table`` (from ``_plan``) prints a ``--dry-run``; ``degraded_error`` is what
``--fail-on-degraded`` raises (exit 75). Both read the typed ``LLMStats`` (or a report's
``llm`` block).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..chunk import Budget, budget_for
from ..errors import LLMUnavailable
from . import (
    DEFAULT_MODEL,
    BackendSettings,
    ChatBackend,
    answers_in_process,
    backend_name,
    make_backend,
    model_card,
)
from ._limits import RunLimits
from ._plan import plan_table
from ._stats import LLMStats

if TYPE_CHECKING:
    from ..settings import Settings


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


def llm_setup(settings: Settings, *, dry_run: bool = False) -> LLMSetup:
    """The LLM stage of a run, from its resolved settings (``digest.settings``): nothing here
    reads the environment or the config file again."""
    backend = make_backend(settings["backend"], backend_settings(settings))
    try:
        model = backend.model or None
        limits = RunLimits(
            concurrency=int(settings["concurrency"]), max_cost_usd=settings["max_cost"],
            max_tokens=settings["max_tokens"], deadline_s=float(settings["deadline"]),
            dry_run=dry_run, price=model_card(model, settings.file).price if model else None)
        # priced here, once, so that a missing price stops the run before any work
        limits = limits.priced(backend.model, getattr(backend, "price", None))
        budget = budget_for(settings.values, model_card(model, settings.file), model)
        return LLMSetup(backend, budget, limits, _seconds(settings["timeout"]))
    except BaseException:
        backend.close()
        raise


def asks_a_model(settings: Settings) -> bool:
    """Whether these settings make a backend with a model behind it (not offline)."""
    return not answers_in_process(backend_name(settings["backend"], backend_settings(settings)))


def backend_settings(settings: Settings, *, model: str | None = None,
                     timeout_s: float | None = None) -> BackendSettings:
    """What a backend (chat, embeddings, files and batches) needs to reach the server: the
    run's model (or ``model``), key, URL, API version and provider, and the ``timeout``
    setting (or ``timeout_s`` when that is not set)."""
    timeout = _seconds(settings["timeout"])
    return BackendSettings(
        model=model or settings["model"] or DEFAULT_MODEL, api_key=settings["api_key"] or None,
        base_url=settings["base_url"] or None, api_version=settings["api_version"] or None,
        provider=settings["provider"] or None,
        timeout_s=timeout if timeout is not None else timeout_s)


def degraded_error(llm: LLMStats | Mapping[str, Any]) -> LLMUnavailable | None:
    """The error for ``--fail-on-degraded`` when part of the issue was summarised offline."""
    stats = LLMStats.of(llm)
    if not stats.degraded:
        return None
    why = f" ({stats.stopped})" if stats.stopped else ""
    return LLMUnavailable(f"the LLM stage was degraded{why}; {degraded_part(stats)}. Nothing "
                          "was written: run again later (answers already received are cached)")


def degraded_part(llm: LLMStats | Mapping[str, Any]) -> str | None:
    """What of a degraded issue was summarised offline ("themes summarised offline: ..." or
    "the intro fell back"); None when nothing was."""
    stats = LLMStats.of(llm)
    if not stats.degraded:
        return None
    themes = stats.fallback_themes
    return f"themes summarised offline: {', '.join(themes)}" if themes else "the intro fell back"


def _seconds(value: Any) -> float | None:
    """The ``timeout`` setting: None (not set) lets each request's limit fit the server."""
    return None if value is None else float(value)


__all__ = ["LLMSetup", "asks_a_model", "backend_settings", "degraded_error", "degraded_part",
           "llm_setup", "plan_table"]
