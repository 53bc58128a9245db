"""The library entry point: everything a run needs, built once from the settings.

``Digest(settings)`` holds the resolved settings (``digest.settings.resolve_settings``) and
builds what a run needs from them: the options, the LLM backend with its token budget and
limits, the theme backend, the store. Its methods are the commands' jobs, so that Python
callers get exactly what the CLI prints::

    from digest import Digest, resolve_settings

    digest = Digest(resolve_settings({"backend": "offline"}))
    print(digest.summarize(["examples/"], week="2026-W47").markdown, end="")
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from .config import digest_home
from .errors import ConfigError, StateError
from .ingest.limits import ingest_limits
from .links import is_web_url
from .report import RunReport
from .settings import Settings, resolve_settings
from .state import Store
from .weeks import resolve_week

if TYPE_CHECKING:  # the jobs import their stages when a method runs: `digest ingest -`
    from .dedup import DedupResult  # (a mail hook) loads no theme, summary or render code
    from .inbox import Kept
    from .jobs import MailChoices, Mailed, PublishChoices, Published
    from .llm._plan import Planner
    from .pipeline import Built, Options

logger = logging.getLogger("digest")

SUMMARIZE_CACHE = "summarize-cache.sqlite"


def web_base(url: str, setting: str) -> str:
    """An http(s) base URL with a host, or a ConfigError naming the setting."""
    if not is_web_url(url):
        raise ConfigError(f"{setting} = {url!r}: give an http(s) URL with a host, "
                          "e.g. https://export.arxiv.org")
    return url.rstrip("/")


class Digest:
    """One configured digest; each method is one command's job."""

    def __init__(self, settings: Settings | None = None, *, dry_run: bool = False) -> None:
        self.settings = settings if settings is not None else resolve_settings()
        self.dry_run = dry_run

    def options(self, week: str | None = None, *, strict: bool = False,
                include_published: bool = False, show_rest: bool = True) -> Options:
        """The pipeline's options for one week (``None``: this week; ``last``: the last one)."""
        from .pipeline import Options

        s = self.settings
        return Options(week=resolve_week(week_name(week)), fmt=s["format"], strict=strict,
                       include_published=include_published, max_themes=s["max_themes"],
                       prompts_dir=folder("prompts", s["prompts"]),
                       templates_dir=folder("templates", s["templates"]),
                       sections=s.file.get("themes", ()), limits=ingest_limits(s.file),
                       profile=s.file.get("profile"), max_papers=s["max_papers"],
                       show_rest=show_rest,  # a dry run asks arXiv nothing either
                       resolve_ids=bool(s["resolve_ids"]) and not self.dry_run,
                       arxiv_api=web_base(s["arxiv_api"], "arxiv_api"),
                       model_label=s["model_label"])

    def build(self, sources: Sequence[str], options: Options, store: Store,
              report: RunReport | None = None, *, out: Path | None = None,
              planner: Planner | None = None) -> Built:
        """The pipeline with the LLM backend, budget, limits and theme backend the settings
        chose; the backends are closed when it returns. With ``out`` (the output folder the
        issue will be published in) its earlier issues give the rising themes, so that
        ``Built.markdown`` is exactly the file ``write_issue`` writes there. With a ``planner``
        the LLM stage only lists its first-wave calls there (``digest.batchjobs`` plans a
        Batch API job so) and the issue built is a stand-in."""
        from .llm.openai_embed import DEFAULT_EMBEDDING_MODEL
        from .llm.wiring import backend_settings, llm_setup
        from .outputs import past_issues
        from .pipeline import build_issue
        from .publishing import archive_history
        from .themes import make_theme_backend
        from .themes._embeddings import EMBEDDING_TIMEOUT_S

        s = self.settings
        history = tuple(past_issues(archive_history(out, store))) if out is not None else ()
        with llm_setup(s, dry_run=self.dry_run) as llm:
            endpoint = backend_settings(s, model=s["embedding_model"] or DEFAULT_EMBEDDING_MODEL,
                                        timeout_s=EMBEDDING_TIMEOUT_S)
            themes = make_theme_backend(s["theme_backend"], store, endpoint=endpoint,
                                        deadline_s=llm.limits.deadline_s)
            ready = replace(options, budget=llm.budget,
                            llm=replace(llm.limits, planner=planner), theme_backend=themes,
                            history=history or options.history)
            try:
                return build_issue(list(sources), ready, backend=llm.backend, store=store,
                                   report=report)
            finally:  # the embeddings client's connections (the TF-IDF backend has none)
                if callable(close := getattr(themes, "close", None)):
                    close()

    def summarize(self, sources: Sequence[str], *, week: str | None = None,
                  strict: bool = False, show_rest: bool = True,
                  report: RunReport | None = None, cache: bool = True) -> Built:
        """``digest summarize``: the issue in memory; the state store is neither read nor
        written. The model's answers (and the prompts' nonce, so that the same question is
        the same prompt) are kept in ``$DIGEST_HOME/summarize-cache.sqlite``, so asking twice
        does not pay twice; ``cache=False`` keeps nothing, and a dry run only reads them."""
        from .llm.wiring import asks_a_model

        options = replace(self.options(week, strict=strict, include_published=True,
                                       show_rest=show_rest), require_records=True)
        wanted = cache and asks_a_model(self.settings)
        with answer_cache(wanted, read_only=self.dry_run) as store:
            return self.build(sources, options, store, report)

    def newsletter(self, sources: Sequence[str], options: Options,
                   choices: PublishChoices | None = None, report: RunReport | None = None,
                   on_written: Callable[[Path], None] = lambda path: None,
                   on_note: Callable[[str], None] = lambda note: None) -> Published:
        """``digest newsletter``: the week's issue published in the output folder, under the
        store's run lock (see ``digest.jobs.publish``); ``on_note`` hears of Batch API jobs
        submitted or still running (nothing published for their week yet)."""
        from .jobs import PublishChoices, publish

        return publish(self, sources, options, choices or PublishChoices(),
                       report or RunReport(), on_written, on_note)

    def email(self, sources: Sequence[str], options: Options, choices: MailChoices,
              report: RunReport | None = None) -> Mailed:
        """``digest email``: the week's issue as one MIME message, sent once (see
        ``digest.jobs.mail_issue``)."""
        from .jobs import mail_issue

        return mail_issue(self, sources, options, choices, report or RunReport())

    def ingest(self, sources: Sequence[str], *, strict: bool = False,
               stdin: bytes | str = b"") -> Kept:
        """``digest ingest``: keep the listings' records in the store's inbox for the next
        issue (``-`` in ``sources`` reads the bytes ``stdin``, e.g. one listing e-mail)."""
        from .inbox import ingest

        return ingest(Path(self.settings["state"]), sources, fmt=self.settings["format"],
                      strict=strict, limits=ingest_limits(self.settings.file), stdin=stdin)

    def dedup(self, sources: Sequence[str], *, strict: bool = False,
              report: RunReport | None = None) -> DedupResult:
        """``digest dedup``: ingest and merge only."""
        from .pipeline import dedup_sources

        return dedup_sources(sources, fmt=self.settings["format"], strict=strict, report=report,
                             limits=ingest_limits(self.settings.file))


class MissingFolder(ConfigError):
    """A folder setting (``prompts``, ``templates``) names no folder; ``setting`` says which,
    so that the CLI can name its flag."""

    def __init__(self, setting: str, value: str | Path) -> None:
        super().__init__(f"{setting} folder {value}: no such folder", setting=setting)


def answer_cache(wanted: bool, *, read_only: bool = False) -> Store:
    """The store ``digest summarize`` keeps its answers in; in memory when not wanted or when
    the file cannot be used (the run then asks again, and says why). ``read_only`` (a dry
    run) reads a copy of it in memory, so that the plan leaves out what is cached and the
    file is neither made nor changed."""
    if wanted:
        path = digest_home() / SUMMARIZE_CACHE
        try:
            return Store.copy_of(path) if read_only else Store(path)
        except StateError as error:
            logger.warning("the answer cache %s cannot be used (%s); asking without it",
                           path, error)
    return Store(":memory:")


def folder(setting: str, value: str | Path | None) -> Path | None:
    """A folder the settings name, checked before any work is done (None: the shipped one)."""
    if value is None:
        return None
    if not Path(value).is_dir():
        raise MissingFolder(setting, value)
    return Path(value)


def week_name(week: str | None) -> str | None:
    """``2026-w47`` is ``2026-W47``: ISO week names are read case-insensitively."""
    return week.strip().upper() if week and week.strip()[:4].isdigit() else week
