"""LLM backends: one small interface, ``ChatBackend.complete``, and a registry.

``openai`` talks to any OpenAI-compatible server (OpenAI, Azure OpenAI, vLLM,
Ollama, the llama.cpp server) through the official client. ``offline`` is no
chat backend at all: the summarize stage then uses the extractive summarizer
in ``digest.offline``. Retries live in ``openai_chat`` and only there.
``runner`` schedules calls (cache, ledger, budgets, breaker, concurrency);
``response`` reads a completion's HTTP body (bounded, never trusted);
``answers`` parses, cleans and validates what a model says; ``mock`` is a recording
in-process backend for tests (``MockBackend``: ``enqueue`` answers, read ``history``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from .base import (
    BackendSettings,
    ChatBackend,
    ChatRequest,
    Completion,
    DeadlineReached,
    QuotaExhausted,
    RequestRejected,
)
from .catalog import ModelCard, Price, model_card

if TYPE_CHECKING:
    from .openai_chat import OpenAIChat


def __getattr__(name: str) -> Any:
    """``OpenAIChat`` (and with it the openai client) loads when first asked for."""
    if name == "OpenAIChat":
        from .openai_chat import OpenAIChat
        return OpenAIChat
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _openai_chat(settings: BackendSettings) -> ChatBackend:
    from .openai_chat import OpenAIChat
    return OpenAIChat(settings)


DEFAULT_MODEL = "gpt-4o-mini"

BackendFactory = Callable[[BackendSettings], ChatBackend]
BACKENDS: dict[str, BackendFactory | None] = {"openai": _openai_chat, "offline": None}


def register_backend(name: str, factory: BackendFactory) -> None:
    BACKENDS[name] = factory


def make_backend(name: str, settings: BackendSettings) -> ChatBackend | None:
    """The chat backend for ``name`` ("auto" picks openai when a key or URL is set)."""
    if name == "auto":
        name = "openai" if (settings.api_key or settings.base_url) else "offline"
    if name not in BACKENDS:
        raise ConfigError(f"unknown backend {name!r}; choose one of: auto, "
                          + ", ".join(sorted(BACKENDS)))
    factory = BACKENDS[name]
    return factory(settings) if factory else None


def settings_from_env(model: str | None, **overrides: Any) -> BackendSettings:
    """Settings from the environment (as the openai client reads it); overrides win if not None."""
    values: dict[str, Any] = {
        "model": model or os.environ.get("DIGEST_MODEL") or DEFAULT_MODEL,
        "api_key": os.environ.get("OPENAI_API_KEY") or None,
        "base_url": os.environ.get("OPENAI_BASE_URL") or None,
        "api_version": os.environ.get("OPENAI_API_VERSION") or None,
    }
    values.update({key: value for key, value in overrides.items() if value is not None})
    return BackendSettings(**values)


__all__ = [
    "BACKENDS", "BackendSettings", "ChatBackend", "ChatRequest", "Completion", "DEFAULT_MODEL",
    "DeadlineReached", "ModelCard", "OpenAIChat", "Price", "QuotaExhausted", "RequestRejected",
    "make_backend", "model_card", "register_backend", "settings_from_env",
]
