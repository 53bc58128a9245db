"""The recipe: ingest → dedup → select → themes → chunk → summarize → render.

``build_issue`` runs it in memory and returns the issue and its Markdown;
``write_issue`` puts the Markdown in the output folder and remembers what was
published. Both fill the run report as they go, so a failed run still reports
how far it got.
"""

from __future__ import annotations

import logging
import time
from array import array
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from .chunk import Budget, plan_batches
from .dating import (
    Considered,
    first_open_week,
    late_records,
    record_weeks,
    taken_later,
)
from .dedup import DedupResult, deduplicate, known_names
from .errors import SourceError, SourceUnavailable
from .ingest import IngestLimits, load_sources
from .ingest.sources import StdinReader
from .links import ARXIV_API
from .llm.base import ChatBackend
from .llm.label import shown_model
from .llm.offline_backend import OfflineBackend
from .models import Issue, IssueSection, Paper, Record, Stats
from .prompts import Prompts
from .publishing import publish_issue
from .redaction import source_for_logs
from .relevance import Profile, choose
from .render import PastIssue, Renderer
from .report import RunReport
from .resolve import resolve_ids
from .state import Store, content_key
from .summarize import RunLimits, Summarizer
from .themes import Section, ThemeBackend, group_papers
from .tokens import TokenCounter
from .weeks import current_week, parse_week

logger = logging.getLogger("digest")


@dataclass
class Options:
    """Everything a run can be told. The CLI fills it from flags, env and config."""

    week: str = field(default_factory=current_week)
    fmt: str | None = None
    strict: bool = False
    include_published: bool = False
    use_inbox: bool = False  # add what `digest ingest` kept in the store
    require_records: bool = False  # nothing read is an error, not an empty issue (newsletter)
    by_date: bool = False  # take only the records of ``week`` (their listing dates)
    max_themes: int = 10
    budget: Budget = field(default_factory=Budget)
    llm: RunLimits = field(default_factory=RunLimits)
    prompts_dir: Path | None = None
    templates_dir: Path | None = None
    sections: tuple[Section, ...] = ()  # fixed themes from the config file ([[themes]])
    theme_backend: ThemeBackend | None = None  # None: offline TF-IDF (--themes)
    limits: IngestLimits = field(default_factory=IngestLimits)  # caps on what is read ([limits])
    profile: Profile | None = None  # the reader's [profile]: ranks the week (digest.relevance)
    max_papers: int | None = None  # the top N go to themes and the LLM; the rest are listed
    show_rest: bool = True  # list the papers past max_papers under "Also this week"
    resolve_ids: bool = False  # look up the arXiv ids of papers listed without one (network)
    arxiv_api: str = ARXIV_API  # where --resolve-ids asks (a mirror, or a test server)
    model_label: str | None = None  # the model's name in the issue (digest.llm.label)
    history: tuple[PastIssue, ...] = ()  # the output folder's earlier issues (rising themes)
    output_folder: Path | None = None  # where the issue goes: never read as listings

    @property
    def outputs(self) -> tuple[Path, ...]:
        """Folders a walk of the listings leaves out (``load_sources``)."""
        return (self.output_folder.resolve(),) if self.output_folder is not None else ()


@dataclass(frozen=True)
class Built:
    issue: Issue
    markdown: str
    inbox: tuple[Record, ...] = ()  # the inbox records this issue took
    considered: Considered | None = None  # what its run read, for late records (by_date runs)


def build_issue(sources: Sequence[str], options: Options, *,
                backend: ChatBackend | None = None, store: Store,
                report: RunReport | None = None, stdin: StdinReader | None = None) -> Built:
    """Run the whole pipeline for one week and return the rendered issue (``backend``:
    the chat backend that answers; by default the offline one)."""
    backend = backend or OfflineBackend()
    started = time.monotonic()
    report = report if report is not None else RunReport()
    report.week = options.week
    start, end = parse_week(options.week)

    report.stages = {}
    with report.stage("ingest"):
        ingested = load_sources(sources, fmt=options.fmt, strict=options.strict, stdin=stdin,
                                limits=options.limits, outputs=options.outputs)
        report.errors += [str(error) for error in ingested.errors]
        inbox = store.inbox(options.week) if options.use_inbox else []
        records = ingested.records + inbox
        if options.require_records and not records:
            raise nothing_read(sources, report.errors, failed=ingested.errors)
        considered = None
        if options.by_date:
            records, inbox, considered = _in_week(records, inbox, store, options.week, report)
        report.counts = Stats(records_read=len(records))  # a run that fails later says so
    with report.stage("dedup"):
        deduped = deduplicate(records)
        report.counts = Stats(records_read=len(records), papers_unique=len(deduped.papers),
                              duplicates_merged=deduped.duplicates_merged)
    with report.stage("select"):
        # ids found before the selection, so that papers published under an id are known by it
        found = (resolve_ids(deduped.papers, store, base_url=options.arxiv_api)
                 if options.resolve_ids else deduped.papers)
        papers, already_published = _select(found, store, options)
        choice = choose(papers, options.profile, options.max_papers, show_rest=options.show_rest,
                        limits=options.limits)
        report.errors += choice.errors
        papers = list(choice.papers)
        report.relevance = dict(choice.report)
        by_id = {paper.id: paper for paper in papers}

    with report.stage("themes"):
        themes = group_papers(papers, max_themes=options.max_themes, sections=options.sections,
                              backend=options.theme_backend)
    with report.stage("batches"):  # tiktoken counts each paper once here
        summarizer = Summarizer(backend, prompts=Prompts(options.prompts_dir),
                                counter=TokenCounter(backend.model or None),
                                budget=options.budget, store=store,
                                nonce=store.nonce(options.week), limits=options.llm)
        batches = plan_batches(themes, by_id, summarizer.paper_tokens, summarizer.budget)
    with report.stage("summaries"), _reporting_calls(summarizer, report):
        summaries = summarizer.summarize(themes, by_id, batches)

    stats = Stats(records_read=len(records), papers_unique=len(deduped.papers),
                  duplicates_merged=deduped.duplicates_merged,
                  already_published=already_published, papers_in_issue=len(papers),
                  themes=len(themes), batches=len(batches))
    sections = tuple(IssueSection(theme, summary, tuple(by_id[pid] for pid in theme.paper_ids))
                     for theme, summary in zip(themes, summaries, strict=True))
    with report.stage("summaries"), _reporting_calls(summarizer, report):
        intro = summarizer.intro(fallback=compose_intro(sections))
    issue = Issue(week=options.week, start=start, end=end, intro=intro,
                  sections=sections, stats=stats, backend=summarizer.stats.backend,
                  model=shown_model(summarizer.stats.model, options.model_label),
                  fallback_themes=tuple(s.theme.title for s in sections if s.summary.fallback),
                  cost_usd=round(summarizer.stats.answers_cost_usd, 6),
                  reasons=choice.reasons, also=choice.also,
                  excluded=_count(choice.report.get("papers_excluded")),
                  left_out=_count(choice.report.get("papers_left_out")))
    report.describe(issue)
    report.llm = summarizer.stats.as_dict()
    embeddings = getattr(options.theme_backend, "stats", None)
    if callable(embeddings) and (stats_of_embeddings := embeddings()) is not None:
        report.llm["embeddings"] = stats_of_embeddings  # --themes embeddings: its calls
    with report.stage("render"):
        markdown = Renderer(options.templates_dir).markdown(issue, history=options.history)
    report.duration_s = time.monotonic() - started
    return Built(issue, markdown, tuple(inbox), considered)


def _count(value: object) -> int:
    return value if isinstance(value, int) else 0


@contextmanager
def _reporting_calls(summarizer: Summarizer, report: RunReport) -> Iterator[None]:
    """The LLM calls made so far go into the report even when the stage fails (a 401)."""
    try:
        yield
    finally:
        report.llm = summarizer.stats.as_dict()


def dedup_sources(sources: Sequence[str], *, fmt: str | None = None, strict: bool = False,
                  report: RunReport | None = None, stdin: StdinReader | None = None,
                  limits: IngestLimits | None = None) -> DedupResult:
    """Ingest and deduplicate only (``digest dedup``); fills the report's first counts."""
    report = report if report is not None else RunReport()
    ingested = load_sources(sources, fmt=fmt, strict=strict, stdin=stdin, limits=limits)
    report.errors += [str(error) for error in ingested.errors]
    if not ingested.records:
        raise nothing_read(sources, report.errors, outcome="nothing to deduplicate",
                           failed=ingested.errors)
    deduped = deduplicate(ingested.records)
    report.counts = Stats(records_read=len(ingested.records), papers_unique=len(deduped.papers),
                          duplicates_merged=deduped.duplicates_merged)
    return deduped


def write_issue(built: Built, out_dir: Path, store: Store, report: RunReport, *,
                formats: Sequence[str] = ("md",), templates_dir: Path | None = None,
                site_url: str | None = None) -> Path:
    """Publish ``OUT/<week>.md`` (and .html/.txt in ``formats``), ``index.md`` and
    ``feed.xml`` as a recorded transaction (``digest.publishing``); return the Markdown's
    path."""
    with report.stage("publish"):
        read = built.considered
        paths = publish_issue(built.issue, built.inbox, Path(out_dir), store, formats=formats,
                              templates_dir=templates_dir, site_url=site_url,
                              read=(read.keys, read.late) if read is not None else None,
                              llm=report.llm)
    report.outputs.update({key: str(path) for key, path in paths.items()})
    return paths["markdown"]


def weeks_with_records(sources: Sequence[str], options: Options, store: Store, *,
                       today_week: str) -> list[str]:
    """The weeks the sources and the inbox hold records of (undated ones first seen now
    count for ``today_week``): what ``--catch-up`` chooses from."""
    ingested = load_sources(sources, fmt=options.fmt, strict=options.strict,
                            limits=options.limits, outputs=options.outputs)
    inbox = store.inbox(options.week) if options.use_inbox else []
    records = ingested.records + inbox
    if options.require_records and not records:
        raise nothing_read(sources, [str(error) for error in ingested.errors],
                           failed=ingested.errors)
    added = store.inbox_weeks(options.week) if inbox else None
    weeks = record_weeks(records, store, default=today_week, added=added)
    late = late_records(records, weeks, inbox, store)  # the first week a catch-up writes
    opened = first_open_week(store) if late else None
    return sorted({opened if id(record) in late and opened else week
                   for record, week in zip(records, weeks, strict=True)})


def _in_week(records: list[Record], inbox: list[Record], store: Store, week: str,
             report: RunReport) -> tuple[list[Record], list[Record], Considered]:
    """Only ``week``'s records (by listing date), and the late ones of earlier weeks
    (``dating.late_records``); the others are counted in the report. A re-run of a published
    week leaves its records that a later issue took as late there (``dating.taken_later``)."""
    added = store.inbox_weeks(week) if inbox else None
    weeks = record_weeks(records, store, default=week, added=added)
    late = {key: late_week for key, late_week in late_records(
        records, weeks, inbox, store, into=week).items() if late_week < week}
    gone = taken_later(records, weeks, inbox, store, week)
    in_inbox = {id(record) for record in inbox}
    _warn_late([late_week for key, late_week in late.items() if key in in_inbox], "the inbox")
    _warn_late([late_week for key, late_week in late.items() if key not in in_inbox],
               "the listings")
    kept = [record for record, record_week in zip(records, weeks, strict=True)
            if (record_week == week and id(record) not in gone) or id(record) in late]
    report.records_other_weeks = len(records) - len(kept)
    kept_ids = {id(record) for record in kept}
    considered = Considered(array("q", (content_key(record) for record in kept)),
                            frozenset(content_key(record) for record in kept if id(record) in late))
    return kept, [record for record in inbox if id(record) in kept_ids], considered


def _warn_late(weeks: Sequence[str], where: str) -> None:
    if weeks:
        logger.warning("%d record%s of %s %s dated in weeks whose issue is out (%s): this issue "
                       "takes them", len(weeks), "s" if len(weeks) != 1 else "", where,
                       "are" if len(weeks) != 1 else "is", ", ".join(sorted(set(weeks))))


def nothing_read(sources: Sequence[str], errors: Sequence[str], *,
                 outcome: str = "no issue was written", failed: Sequence[Exception] = ()
                 ) -> SourceError:
    """No source could be read, or they held no record: publishing an empty issue would
    announce "no papers this week" to everyone (and hide the fault), so it is an error; a
    temporary one (exit 75) when every source ``failed`` only for now (its server down or
    slow)."""
    problem = ("no source could be read" if errors else "the sources held no paper record")
    for_now = bool(failed) and all(isinstance(error, SourceUnavailable) for error in failed)
    return (SourceUnavailable if for_now else SourceError)(
        ", ".join(map(source_for_logs, sources)) or "the inbox", f"nothing read: {problem}",
        fix=f"{outcome}; " + ("try again later" if for_now else "check the paths and the "
                             "listings") + " (the run report lists each source's error)")


def compose_intro(sections: Sequence[IssueSection]) -> str:
    """One deterministic sentence that says what the week held."""
    if not sections:
        return ""
    n_papers = sum(len(s.papers) for s in sections)
    parts = [f"{s.summary.title or s.theme.title} ({len(s.papers)})" for s in sections]
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    repeated = sum(1 for s in sections for p in s.papers if p.times_seen > 1)
    intro = (f"This week brings {n_papers} paper{'s' if n_papers != 1 else ''} in "
             f"{len(sections)} theme{'s' if len(sections) != 1 else ''}: {listed}.")
    if repeated:
        intro += f" {repeated} of them appeared in more than one listing."
    return intro


def _select(papers: list[Paper], store: Store, options: Options) -> tuple[list[Paper], int]:
    """Leave out papers an earlier issue already carried, unless asked to keep them."""
    if options.include_published:
        return papers, 0
    published = store.published_elsewhere(options.week)
    kept = [paper for paper in papers
            if not any(name in published for name in known_names(paper))]
    return kept, len(papers) - len(kept)
