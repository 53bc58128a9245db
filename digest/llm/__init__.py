"""LLM backends: one small interface, ``ChatBackend.complete``, and a registry.

``openai`` talks to any OpenAI-compatible server (OpenAI, Azure OpenAI, vLLM,
Ollama, the llama.cpp server) through the official client (imported when a backend
is made, not with this package). ``offline`` (``offline_backend``) answers every
question with digest's own extractive answer, in process. Retries live in
``openai_chat`` and only there (``openai_embed`` uses the same retry layer).
``runner`` schedules calls (cache, ledger, budgets, breaker, concurrency);
``response`` reads a completion's HTTP body (bounded, never trusted);
``answers`` parses, cleans and validates what a model says; ``mock`` is a recording
in-process backend for tests (``MockBackend``: ``enqueue`` answers, read ``history``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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
from .offline_backend import OfflineBackend

DEFAULT_MODEL = "gpt-4o-mini"

BackendFactory = Callable[[BackendSettings], ChatBackend]


def _openai_chat(settings: BackendSettings) -> ChatBackend:
    from .openai_chat import OpenAIChat  # imports openai: only when the backend is made

    return OpenAIChat(settings)


BACKENDS: dict[str, BackendFactory] = {"openai": _openai_chat, "offline": OfflineBackend}


def register_backend(name: str, factory: BackendFactory) -> None:
    BACKENDS[name] = factory


def make_backend(name: str, settings: BackendSettings) -> ChatBackend:
    """The chat backend for ``name`` ("auto" picks openai when a key or URL is set)."""
    return BACKENDS[backend_name(name, settings)](settings)


def backend_name(name: str, settings: BackendSettings) -> str:
    """The registered backend ``name`` means ("auto": openai when a key or URL is set)."""
    if name == "auto":
        name = "openai" if (settings.api_key or settings.base_url) else "offline"
    if name not in BACKENDS:
        raise ConfigError(f"unknown backend {name!r}; choose one of: auto, "
                          + ", ".join(sorted(BACKENDS)), setting="backend")
    return name


def answers_in_process(name: str) -> bool:
    """True when the registered backend ``name`` has no server behind it (offline)."""
    return bool(getattr(BACKENDS.get(name), "in_process", False))


__all__ = [
    "BACKENDS", "BackendSettings", "ChatBackend", "ChatRequest", "Completion", "DEFAULT_MODEL",
    "DeadlineReached", "ModelCard", "OfflineBackend", "OpenAIChat", "Price", "QuotaExhausted",
    "RequestRejected",
    "answers_in_process", "backend_name", "make_backend", "model_card", "register_backend",
]


def __getattr__(name: str) -> Any:
    """``digest.llm.OpenAIChat`` without importing openai with the package."""
    if name == "OpenAIChat":
        from .openai_chat import OpenAIChat

        return OpenAIChat
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
