"""digest: research-paper listings in, a weekly Markdown newsletter out.

The stages are small modules with typed interfaces (see ``digest.pipeline`` for
the recipe); the names below are the public library API. They load on first use
(``digest.Digest`` imports the run and its stages then), so that ``digest --version``
and the mail hook ``digest ingest -`` do not pay for the stages they never run.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import (
    ConfigError,
    DigestError,
    LLMError,
    LLMUnavailable,
    SourceError,
    StateError,
    TemplateError,
)

if TYPE_CHECKING:
    from .chunk import Budget, plan_batches
    from .dedup import DedupResult, deduplicate
    from .ingest import IngestResult, load_sources
    from .jobs import MailChoices, Mailed, PublishChoices, Published
    from .llm import BACKENDS, ChatBackend, ChatRequest, Completion, register_backend
    from .models import Batch, Issue, Paper, Record, Sighting, Theme, ThemeSummary
    from .pipeline import Built, Options, build_issue, write_issue
    from .render import Renderer, escape_markdown
    from .report import RunReport
    from .run import Digest
    from .settings import Settings, resolve_settings
    from .state import Store
    from .themes import group_papers

__version__ = "0.1.0"

# Public name -> the module that defines it.
_WHERE = {
    **dict.fromkeys(["Budget", "plan_batches"], ".chunk"),
    **dict.fromkeys(["DedupResult", "deduplicate"], ".dedup"),
    **dict.fromkeys(["IngestResult", "load_sources"], ".ingest"),
    **dict.fromkeys(["MailChoices", "Mailed", "PublishChoices", "Published"], ".jobs"),
    **dict.fromkeys(["BACKENDS", "ChatBackend", "ChatRequest", "Completion",
                     "register_backend"], ".llm"),
    **dict.fromkeys(["Batch", "Issue", "Paper", "Record", "Sighting", "Theme",
                     "ThemeSummary"], ".models"),
    **dict.fromkeys(["Built", "Options", "build_issue", "write_issue"], ".pipeline"),
    **dict.fromkeys(["Renderer", "escape_markdown"], ".render"),
    "RunReport": ".report",
    "Digest": ".run",
    **dict.fromkeys(["Settings", "resolve_settings"], ".settings"),
    "Store": ".state",
    "group_papers": ".themes",
}

__all__ = [
    "BACKENDS", "Batch", "Budget", "Built", "ChatBackend", "ChatRequest", "Completion",
    "ConfigError", "DedupResult", "Digest", "DigestError", "IngestResult", "Issue", "LLMError",
    "LLMUnavailable", "MailChoices", "Mailed", "Options", "Paper", "PublishChoices", "Published",
    "Record", "Renderer", "RunReport", "Sighting", "SourceError",
    "Settings", "StateError", "Store", "TemplateError", "Theme", "ThemeSummary", "build_issue",
    "deduplicate", "escape_markdown", "group_papers", "load_sources", "plan_batches",
    "register_backend", "resolve_settings", "write_issue",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'digest' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name], __name__), name)
    globals()[name] = value  # once: later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
