"""digest: research-paper listings in, a weekly Markdown newsletter out.

The stages are small modules with typed interfaces (see ``digest.pipeline`` for
the recipe); the names below are the public library API.
"""

from .chunk import Budget, plan_batches
from .dedup import DedupResult, deduplicate
from .errors import (
    ConfigError,
    DigestError,
    LLMError,
    LLMUnavailable,
    SourceError,
    StateError,
    TemplateError,
)
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

__all__ = [
    "BACKENDS", "Batch", "Budget", "Built", "ChatBackend", "ChatRequest", "Completion",
    "ConfigError", "DedupResult", "Digest", "DigestError", "IngestResult", "Issue", "LLMError",
    "LLMUnavailable", "MailChoices", "Mailed", "Options", "Paper", "PublishChoices", "Published",
    "Record", "Renderer", "RunReport", "Sighting", "SourceError",
    "Settings", "StateError", "Store", "TemplateError", "Theme", "ThemeSummary", "build_issue",
    "deduplicate", "escape_markdown", "group_papers", "load_sources", "plan_batches",
    "register_backend", "resolve_settings", "write_issue",
]
