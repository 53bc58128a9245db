"""The command line: a thin layer over ``digest.pipeline``.

Each command parses options, calls the library, and turns a ``DigestError`` into
a one-line message on stderr and its exit code (0 ok, 1 error, 2 usage,
75 temporary failure). ``DIGEST_RAISE_ERRORS=1`` shows the full traceback.
"""

from __future__ import annotations

import errno
import gc
import importlib
import json
import logging
import os
import re
import sqlite3
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypedDict

import typer

from . import __version__
from .config import BOUNDS
from .errors import EX_ERROR, EX_USAGE, ConfigDeferred, ConfigError, DigestError, OutputUnavailable
from .models import Stats
from .report import RunReport, is_stream, report_json, write_report
from .settings import resolve_settings, setting_sources, starter_config

if TYPE_CHECKING:
    from .run import Digest
    from .settings import Settings


class _Later:
    """A library module imported when a command first uses it: `digest --version`, `--help`
    and the mail hook do not pay for the stages they never run."""

    def __init__(self, module: str) -> None:
        self._module = module

    def __getattr__(self, name: str) -> Any:
        return getattr(importlib.import_module(self._module, __package__), name)


_batch = _Later(".batchjobs")
_dedup = _Later(".dedup")
_history = _Later(".history")
_jobs = _Later(".jobs")
_mail = _Later(".mail")
_sources = _Later(".ingest.sources")
_wiring = _Later(".llm.wiring")

app = typer.Typer(
    help="Turn paper listings into a weekly Markdown newsletter, with an LLM or fully offline.",
    epilog="Exit codes: 0 ok, 1 error, 2 usage, "
    "75 temporary failure (LLM endpoint, mail server, or a locked, full or read-only state store).",
    no_args_is_help=True, pretty_exceptions_enable=False)


class _Range(TypedDict):
    min: float | None
    max: float | None


def _range(setting: str) -> _Range:
    """An option's min and max: the setting's bounds, which the config file's value obeys too."""
    return {"min": BOUNDS[setting].low, "max": BOUNDS[setting].high}


# Options shared by newsletter and summarize.
Sources = Annotated[list[str] | None, typer.Argument(  # noqa: UP007
    help="Listing files, directories, globs, or - for stdin.", show_default=False)]
Week = Annotated[str | None, typer.Option(
    help="ISO week, e.g. 2026-W47, or 'last' (the last complete week) \\[default: this week]. "
    "newsletter and email take only that week's papers, by listing date.")]
Backend = Annotated[str | None, typer.Option(
    help="auto, openai or offline. auto = openai when OPENAI_API_KEY or OPENAI_BASE_URL is set.")]
Model = Annotated[str | None, typer.Option(help="Model name \\[env DIGEST_MODEL].")]
ModelLabel = Annotated[str | None, typer.Option(
    "--model-label", help="The model's name in the issue, e.g. when the server reports a file "
    "path \\[env DIGEST_MODEL_LABEL].")]
ConfigPath = Annotated[Path | None, typer.Option("--config", help="TOML config file.")]
ReportPath = Annotated[Path | None, typer.Option(
    "--report", help="Write the run report (JSON) here, also when the run fails; - for stdout "
    "(after the product).")]
Format = Annotated[str | None, typer.Option(
    "--format", help="Force the input format (default: detected per source): daily-papers, "
    "json, jsonl, csv, feed (RSS/Atom), arxiv-snapshot, hf-daily-papers, arxiv-listing, email.")]
Strict = Annotated[bool, typer.Option("--strict", help="Stop at the first unreadable source.")]
ThemesBackend = Annotated[str | None, typer.Option(
    "--themes", help="tfidf (offline, the default) or embeddings (the OpenAI-compatible "
    "/v1/embeddings endpoint; vectors cached in the state store).")]
MaxThemes = Annotated[int | None, typer.Option(
    **_range("max_themes"), help="At most this many themes.")]
MaxPapers = Annotated[int | None, typer.Option(
    "--max-papers", **_range("max_papers"), help="Only the N papers that rank best for the "
    "reader's \\[profile] go to themes and the LLM; the rest are listed under 'Also this "
    "week' \\[config max_papers; default: all].")]
ResolveIds = Annotated[bool | None, typer.Option(
    "--resolve-ids/--no-resolve-ids", help="Look up the arXiv id of each paper listed without "
    "one (arXiv's API, one request every 3 s, at most 200 a run, cached in the state store) so "
    "its title links to its page \\[config resolve_ids; default: off].", show_default=False)]
NoRest = Annotated[bool, typer.Option(
    "--no-rest", help="Leave the papers past --max-papers out instead of listing them.")]
NoCache = Annotated[bool, typer.Option(
    "--no-cache", help="Ask the model again: neither read nor keep answers in the cache under "
    "$DIGEST_HOME.")]
PromptsDir = Annotated[Path | None, typer.Option(
    "--prompts", help="Folder of prompt templates overriding the shipped ones.")]
TemplatesDir = Annotated[Path | None, typer.Option(
    "--templates", help="Folder of issue templates (issue.md.j2, issue.html.j2, issue.txt.j2, "
    "index.md.j2, feed.xml.j2) overriding the shipped ones, one by one.")]
Formats = Annotated[str | None, typer.Option(
    "--formats", help="Files to write: md (always), html, txt; comma-separated, e.g. md,html,txt.")]
SiteUrl = Annotated[str | None, typer.Option(
    "--site-url", help="Public URL of the output folder, for absolute links and ids in feed.xml.")]
StatePath = Annotated[Path | None, typer.Option(
    "--state", help="SQLite state store \\[env DIGEST_STATE; default: "
    "~/.local/share/digest/state.sqlite].")]
Verbose = Annotated[int, typer.Option(
    "--verbose", "-v", count=True, help="More logging on stderr.")]
Quiet = Annotated[bool, typer.Option(
    "--quiet", "-q", help="Only errors on stderr: no warnings (they stay in the run report).")]
# LLM options, shared too.
BaseUrl = Annotated[str | None, typer.Option(
    "--base-url", help="OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 "
    "\\[env OPENAI_BASE_URL].")]
Timeout = Annotated[float | None, typer.Option(
    "--timeout", **_range("timeout"), help="Most seconds one LLM request may take \\[default: "
    "fitted to the server's speed].")]
Concurrency = Annotated[int | None, typer.Option(
    "--concurrency", **_range("concurrency"), help="LLM calls in parallel \\[default: 4].")]
MaxCost = Annotated[float | None, typer.Option(
    "--max-cost", **_range("max_cost"), help="Make no LLM call past this many USD; the rest is "
    "summarised offline.")]
MaxTokens = Annotated[int | None, typer.Option(
    "--max-tokens", **_range("max_tokens"), help="Make no LLM call past this many tokens (prompt "
    "+ output); the rest is summarised offline.")]
Deadline = Annotated[float | None, typer.Option(
    "--deadline", **_range("deadline"), help="Seconds the LLM stage may take before the rest is "
    "summarised offline \\[default: 900].")]
DryRun = Annotated[bool, typer.Option(
    "--dry-run", help="Print the LLM calls, their token counts and estimated cost; call "
    "nothing, write nothing.")]
Wait = Annotated[float, typer.Option(
    "--wait", min=0, help="Seconds to wait for another run holding the store's run lock "
    "\\[default: 0: exit 75 at once, naming it].")]
FailOnDegraded = Annotated[bool, typer.Option(
    "--fail-on-degraded", help="Exit 75 and write nothing when any part of the issue had to be "
    "summarised offline.")]


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"digest {__version__}")
        raise typer.Exit()


@app.callback()
def _main(version: Annotated[bool, typer.Option(
        "--version", callback=_show_version, is_eager=True, help="Show the version.")] = False
          ) -> None:
    pass


@app.command()
def newsletter(
    sources: Sources = None,
    out: Annotated[Path | None, typer.Option(help="Output folder \\[default: outputs/].")] = None,
    week: Week = None,
    state: StatePath = None,
    backend: Backend = None,
    model: Model = None,
    model_label: ModelLabel = None,
    config: ConfigPath = None,
    report: ReportPath = None,
    fmt: Format = None,
    strict: Strict = False,
    include_published: Annotated[bool, typer.Option(
        "--include-published", help="Keep papers that an earlier issue already carried.")] = False,
    max_themes: MaxThemes = None,
    max_papers: MaxPapers = None,
    no_rest: NoRest = False,
    resolve_ids: ResolveIds = None,
    themes: ThemesBackend = None,
    prompts: PromptsDir = None,
    templates: TemplatesDir = None,
    formats: Formats = None,
    site_url: SiteUrl = None,
    verbose: Verbose = 0,
    quiet: Quiet = False,
    base_url: BaseUrl = None,
    timeout: Timeout = None,
    concurrency: Concurrency = None,
    max_cost: MaxCost = None,
    max_tokens: MaxTokens = None,
    deadline: Deadline = None,
    dry_run: DryRun = False,
    fail_on_degraded: FailOnDegraded = False,
    wait: Wait = 0.0,
    catch_up: Annotated[bool, typer.Option(
        "--catch-up", help="Write every week with papers since the last issue, up to --week, "
        "oldest first, each once.")] = False,
    new_store: Annotated[bool, typer.Option(
        "--new-store", help="Accept a missing or empty state store beside an output folder "
        "that already has issues (their papers may go out again).")] = False,
    batch_api: Annotated[bool, typer.Option(
        "--batch-api", help="Send the week's LLM calls as one Batch API job (half price, done "
        "within 24 h); a later run collects it. Config batch_api: true, false or \"auto\".")
    ] = False,
    resume: Annotated[bool, typer.Option(
        "--resume", help="Collect the week's Batch API job if it is done; never submit one.")
    ] = False,
    batch_output: Annotated[Path | None, typer.Option(
        "--batch-output", help="A Batch API output JSONL written elsewhere (vLLM's run_batch): "
        "its answers go to the cache, then the issue is made.")] = None,
) -> None:
    """The weekly job: write OUT/<YYYY-Www>.md and print its path.

    With no SOURCE, the issue is made of what `digest ingest` kept in the state store.
    """
    _setup_logging(verbose, quiet)
    run = RunReport(week=week)
    with _handled(report, run):
        digest = _digest(config, dry_run, out=out, state=state, backend=backend, model=model,
                         model_label=model_label,
                         format=fmt, max_themes=max_themes, max_papers=max_papers,
                         resolve_ids=resolve_ids,
                         theme_backend=themes, prompts=prompts, templates=templates,
                         base_url=base_url, timeout=timeout, concurrency=concurrency,
                         max_cost=max_cost, max_tokens=max_tokens, deadline=deadline,
                         batch_api=True if batch_api else None)
        options = digest.options(week, strict=strict, include_published=include_published,
                                 show_rest=not no_rest)
        batching = _batch.BatchChoice(_batch.batch_mode(digest.settings["batch_api"]), resume,
                                      batch_output)
        choices = _jobs.PublishChoices(formats, site_url, wait, new_store, catch_up,
                                       fail_on_degraded, batch=batching)
        done = digest.newsletter(sources or [], options, choices, run,
                                 on_written=lambda path: _tell(str(path), f"{path} is published"),
                                 on_note=lambda note: _tell(note, "the Batch API job stands"))
        if done.planned and choices.batch is not None and choices.batch.mode is not False:
            factor = _batch.batch_price_factor(digest.settings.file)
            _product(_batch.plan_lines(run.llm, factor), "the plan")
        if done.planned:
            _product(_wiring.plan_table(run.llm), "the plan")
        elif not done.weeks:
            _tell(f"nothing to catch up: no records after the last issue, up to "
                  f"{options.week}", "nothing was published")


@app.command()
def summarize(
    sources: Sources = None,
    week: Week = None,
    backend: Backend = None,
    model: Model = None,
    model_label: ModelLabel = None,
    config: ConfigPath = None,
    report: ReportPath = None,
    fmt: Format = None,
    strict: Strict = False,
    max_themes: MaxThemes = None,
    max_papers: MaxPapers = None,
    no_rest: NoRest = False,
    resolve_ids: ResolveIds = None,
    themes: ThemesBackend = None,
    prompts: PromptsDir = None,
    templates: TemplatesDir = None,
    verbose: Verbose = 0,
    quiet: Quiet = False,
    base_url: BaseUrl = None,
    timeout: Timeout = None,
    concurrency: Concurrency = None,
    max_cost: MaxCost = None,
    max_tokens: MaxTokens = None,
    deadline: Deadline = None,
    dry_run: DryRun = False,
    fail_on_degraded: FailOnDegraded = False,
    no_cache: NoCache = False,
) -> None:
    """On demand: the same pipeline, the issue as Markdown on stdout; state untouched."""
    _setup_logging(verbose, quiet)
    run = RunReport(week=week)
    with _handled(report, run):
        _require_sources(sources)
        digest = _digest(config, dry_run, backend=backend, model=model,
                         model_label=model_label, format=fmt,
                         max_themes=max_themes, max_papers=max_papers, resolve_ids=resolve_ids,
                         theme_backend=themes,
                         prompts=prompts, templates=templates, base_url=base_url,
                         timeout=timeout, concurrency=concurrency, max_cost=max_cost,
                         max_tokens=max_tokens, deadline=deadline)
        built = digest.summarize(sources or [], week=week, strict=strict, show_rest=not no_rest,
                                 report=run, cache=not no_cache)
        if not _stop_after_llm(run, dry_run, fail_on_degraded):
            _product(built.markdown, "the issue")


@app.command()
def dedup(
    sources: Sources = None,
    explain: Annotated[bool, typer.Option(
        "--explain", help="List each merged group: the kept title, the other records and why "
        "(rule, score).")] = False,
    config: ConfigPath = None,
    report: ReportPath = None,
    fmt: Format = None,
    strict: Strict = False,
    verbose: Verbose = 0,
    quiet: Quiet = False,
) -> None:
    """Merge the papers several listings carried; print the counts (and why, with --explain)."""
    _setup_logging(verbose, quiet)
    run = RunReport()
    with _handled(report, run):
        _require_sources(sources)
        result = _digest(config, format=fmt).dedup(sources or [], strict=strict, report=run)
        _product(_dedup.explain(result, groups=explain), "the counts")


@app.command()
def ingest(
    sources: Sources = None,
    state: StatePath = None,
    config: ConfigPath = None,
    report: ReportPath = None,
    fmt: Format = None,
    strict: Strict = False,
    verbose: Verbose = 0,
    quiet: Quiet = False,
) -> None:
    """Keep listings in the state store for the next issue (a mail hook reads stdin).

    `digest ingest -` reads one listing e-mail on stdin. Exit 75 on any state-store fault
    (busy, full, read-only, damaged): the mail system keeps the mail and retries.
    """
    _setup_logging(verbose, quiet)
    run = RunReport()
    with _handled(report, run):
        _require_sources(sources)
        with _deferred_setting():
            settings = resolve_settings({"format": fmt, "state": state}, config)
            if "-" in (sources or []) and sys.stdin is not None and sys.stdin.isatty():
                _say("Reading a listing from the terminal; end it with Ctrl-D.")  # a person
            data = _sources.read_stdin(None) if "-" in (sources or []) else b""
            kept = _run_of(settings).ingest(sources or [], strict=strict, stdin=data)
        run.errors += kept.errors
        run.counts = Stats(records_read=kept.read)
        _tell(f"{kept.added} new record{'s' if kept.added != 1 else ''} kept for the "
              f"next issue ({kept.read - kept.added} already there)", "the listing is stored")


@contextmanager
def _deferred_setting() -> Iterator[None]:
    """A wrong setting (config file, environment) met by the mail hook is exit 75: the mail
    waits in the queue until it is fixed; exit 2 bounced it for good."""
    try:
        yield
    except ConfigError as error:
        if isinstance(error, ConfigDeferred):
            raise
        raise ConfigDeferred(f"{error} (the mail stays with the mail system, which retries it "
                             "once the setting is fixed)", setting=error.setting) from None


@app.command()
def email(
    sources: Sources = None,
    to: Annotated[list[str] | None, typer.Option(  # noqa: UP007
        "--to", help="Recipient; repeat for more \\[env DIGEST_MAIL_TO, comma-separated].")] = None,
    sender: Annotated[str | None, typer.Option(
        "--from", help="Sender address \\[env DIGEST_MAIL_FROM].")] = None,
    smtp_host: Annotated[str | None, typer.Option(
        "--smtp-host", help="SMTP server \\[env DIGEST_SMTP_HOST].")] = None,
    smtp_port: Annotated[int | None, typer.Option(
        "--smtp-port", **_range("smtp_port"), help="SMTP port \\[env DIGEST_SMTP_PORT; default "
        "587].")
    ] = None,
    eml: Annotated[bool, typer.Option(
        "--eml", help="Write the message to stdout (for `sendmail -t`) instead of sending it.")
    ] = False,
    week: Week = None,
    state: Annotated[Path | None, typer.Option(
        help="State store: the week's published issue is mailed as kept, or one is built "
        "with its inbox and LLM cache; nothing is marked published \\[env DIGEST_STATE, or the "
        "config file's state; default: none].")] = None,
    out: Annotated[Path | None, typer.Option(
        help="The newsletter's output folder: its history gives the rising themes of an "
        "issue built \\[the config file's out; default: none].")] = None,
    backend: Backend = None,
    model: Model = None,
    model_label: ModelLabel = None,
    config: ConfigPath = None,
    report: ReportPath = None,
    fmt: Format = None,
    strict: Strict = False,
    max_themes: MaxThemes = None,
    max_papers: MaxPapers = None,
    no_rest: NoRest = False,
    resolve_ids: ResolveIds = None,
    themes: ThemesBackend = None,
    prompts: PromptsDir = None,
    templates: TemplatesDir = None,
    verbose: Verbose = 0,
    quiet: Quiet = False,
    base_url: BaseUrl = None,
    timeout: Timeout = None,
    fail_on_degraded: FailOnDegraded = False,
    wait: Wait = 0.0,
    resend: Annotated[bool, typer.Option(
        "--resend", help="Send the week's issue even though the state store says it went out "
        "already.")] = False,
) -> None:
    """Send the issue by SMTP as one MIME message (text + HTML), or --eml to stdout.

    Exit 75 when the SMTP server is unavailable or defers the message: try again later.
    """
    _setup_logging(verbose, quiet)
    run = RunReport(week=week)
    with _handled(report, run):
        digest = _digest(config, out=out, state=state, backend=backend, model=model,
                         model_label=model_label, format=fmt, max_themes=max_themes,
                         max_papers=max_papers, resolve_ids=resolve_ids, theme_backend=themes,
                         prompts=prompts,
                         templates=templates, base_url=base_url, timeout=timeout,
                         mail_from=sender, mail_to=",".join(to) if to else None,
                         smtp_host=smtp_host, smtp_port=smtp_port)
        mail = _mail.mail_settings(digest.settings, sending=not eml)
        choices = _jobs.MailChoices(mail, _chosen(digest, "state"), _chosen(digest, "out"), eml,
                                    resend, wait, fail_on_degraded)
        options = digest.options(week, strict=strict, show_rest=not no_rest)
        mailed = digest.email(sources or [], options, choices, run)
        if mailed.already:
            _tell(mailed.already, "nothing was sent")
        elif eml and mailed.message is not None:
            _product(_mail.as_eml(mailed.message), "the message")
        elif mailed.message is not None:
            _tell(f"sent {mailed.message['Subject']} to {', '.join(mailed.recipients)} "
                  f"({mailed.answer})", "the issue was sent")


JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON (for monitoring).")]


@app.command()
def status(state: StatePath = None, config: ConfigPath = None, as_json: JsonFlag = False
           ) -> None:
    """The store at a glance: run lock holder, pending issue, inbox, next and last issue,
    last sending."""
    with _handled(None, RunReport()):
        data = _history.status(Path(resolve_settings({"state": state}, config)["state"]))
        _print(data, _history.status_lines(data), as_json, "the status")


@app.command()
def history(state: StatePath = None, config: ConfigPath = None, as_json: JsonFlag = False
            ) -> None:
    """Every published issue: week, papers, files, when, and whom it was sent to."""
    with _handled(None, RunReport()):
        rows = _history.history(Path(resolve_settings({"state": state}, config)["state"]))
        _print(rows, _history.history_lines(rows), as_json, "the history")


@app.command("config")
def show_config(config: ConfigPath = None, as_json: JsonFlag = False) -> None:
    """The effective settings and where each came from (flag, env, file or default),
    secrets masked."""
    with _handled(None, RunReport()):
        settings = resolve_settings(config_path=config)
        _print(settings.shown(), settings.lines(), as_json, "the settings")


@app.command()
def init(path: Annotated[Path, typer.Argument(help="Where to write it.")] = Path("digest.toml")
         ) -> None:
    """Write a commented starter digest.toml; an existing file is never overwritten."""
    _setup_logging(0)
    with _handled(None, RunReport()):
        written = starter_config(path)
        _tell(f"wrote {written}: edit it, then pass --config {path}", f"{written} was written")


def _print(data: Any, lines: list[str], as_json: bool, what: str) -> None:
    text = json.dumps(data, indent=2, ensure_ascii=False) if as_json else "\n".join(lines)
    _product(text + "\n", what)


def _product(data: str | bytes, what: str) -> None:
    """Write the command's product (the ``--eml`` message, the Markdown, a listing) to stdout
    whole, and flush: stdout that cannot take all of it is exit 75, not a cut-off product and
    exit 0 (a full disk takes part of a write without an error)."""
    if sys.stdout is None:  # started with no standard output (`>&-`)
        raise OutputUnavailable(f"standard output: it is closed; {what} was not written: "
                                "give the command somewhere to write, then run again")
    raw = data if isinstance(data, bytes) else data.encode(sys.stdout.encoding or "utf-8",
                                                            sys.stdout.errors or "strict")
    try:
        sys.stdout.flush()  # what was printed before goes first
        view = memoryview(raw)
        while view:
            written = sys.stdout.buffer.write(view)
            if not written:
                raise OSError(errno.EIO, "nothing was written")
            view = view[written:]
        sys.stdout.buffer.flush()
    except OSError as error:
        raise OutputUnavailable(f"standard output: cannot write ({_why(error)}); {what} was not "
                                "written whole: free space or fix where the output goes, then "
                                "run again") from None


def _tell(line: str, done: str) -> None:
    """Print a line about work that is done by now (an issue published, a mail sent or
    stored): stdout that cannot take it is a warning saying what was done, and the exit code
    still says the work is done (0), as for a run report that cannot be written: exit 75
    would have the mail system deliver the mail again and stop `&& digest email`, for a
    line `digest status` and the run report give anyway."""
    try:
        if sys.stdout is None:  # started with none (`>&-`): click would drop the line unseen
            raise OSError(errno.EBADF, "it is closed")
        typer.echo(line)
    except OSError as error:
        logging.getLogger("digest.cli").warning(
            "standard output: cannot write (%s); %s, only this line could not be printed: %s",
            _why(error), done, line)


def _say(line: str) -> None:
    """A line on stderr that can never change the exit code: on a full log disk (the cron
    line's `2>> digest.log`) the line is lost, the code stands."""
    with suppress(OSError):
        typer.echo(line, err=True)


def _why(error: OSError) -> str:
    return error.strerror or str(error)






def _stop_after_llm(run: RunReport, dry_run: bool, fail_on_degraded: bool) -> bool:
    """True when the run ends before writing: a dry run prints its plan instead; with
    --fail-on-degraded an issue partly summarised offline is an error (exit 75)."""
    if dry_run:
        _product(_wiring.plan_table(run.llm), "the plan")
        return True
    error = _wiring.degraded_error(run.llm) if fail_on_degraded else None
    if error is not None:
        raise error
    return False






def _run_of(settings: Settings, dry_run: bool = False) -> Digest:
    from .run import Digest

    return Digest(settings, dry_run=dry_run)


def _digest(config: Path | None, dry_run: bool = False, **flags: Any) -> Digest:
    """The library's run, from the flags given (None: not given), the environment and the
    config file: every command resolves its settings here, once."""
    return _run_of(resolve_settings(flags, config), dry_run=dry_run)


def _chosen(digest: Digest, name: str) -> Path | None:
    """A path setting the user chose (flag, environment or config file), or None: the e-mail
    uses no store and no output folder unless told to."""
    if digest.settings.origin(name).startswith("default"):
        return None
    return Path(digest.settings[name])


def _require_sources(sources: list[str] | None) -> None:
    if not sources:
        raise ConfigError("no SOURCE given: pass listing files, folders, URLs, or - for stdin")




@contextmanager
def _handled(report_path: Path | None, run: RunReport) -> Iterator[None]:
    """Turn DigestError into a message and exit code; write the report whatever happens."""
    started = time.monotonic()
    code = 0
    if report_path is not None and str(report_path) in _STDOUT_NAMES:
        report_path = Path("-")  # after the product, as `--report -`: never a file over it
    _refuse_report_over_another_file(report_path)
    kept = _WarningsKept(run)
    logging.getLogger("digest").addHandler(kept)
    try:
        yield
    except (DigestError, OSError, sqlite3.Error) as caught:
        if os.environ.get("DIGEST_RAISE_ERRORS"):
            raise
        error = (caught if isinstance(caught, DigestError)
                 else _Later(".publishing").unexpected_fault(caught))
        run.errors.append(str(error))
        _say(f"Error: {error}{_flag_hint(error)}")
        code = error.exit_code
    except Exception as error:  # noqa: BLE001 - the report must say the run failed
        run.errors.append(f"internal error: {type(error).__name__}: {error}")
        code = EX_ERROR
        raise
    finally:
        logging.getLogger("digest").removeHandler(kept)
        kept.close()
        run.duration_s = max(run.duration_s, time.monotonic() - started)
        if report_path is not None:
            _write_report(report_path, run, code)
    if code:
        raise typer.Exit(code)



def _flag_hint(error: DigestError) -> str:
    """The library names the setting; the CLI adds the flag, config key and variable that set it."""
    if error.setting is None:
        return ""
    return f" (set by {setting_sources(error.setting, _flags_by_setting())})"


# Settings whose flag has another name (or reads better).
_FLAG_ALIASES = {"mail_from": "--from", "mail_to": "--to", "theme_backend": "--themes"}


def _flags_by_setting() -> dict[str, str]:
    """Setting (or run option) name → its long flag, over every command."""
    command = typer.main.get_command(app)
    options = {opt for sub in getattr(command, "commands", {}).values()
               for param in sub.params for opt in param.opts if opt.startswith("--")}
    flags = {option[2:].replace("-", "_"): option for option in options}
    return flags | _FLAG_ALIASES


_STDOUT_NAMES = frozenset({"/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"})


def _refuse_report_over_another_file(path: Path | None) -> None:
    """``--report`` replaces an earlier run report, never another file: pointed at the state
    store or an issue, it destroyed them. Said before the run starts (exit 2)."""
    if path is None or str(path) == "-" or is_stream(Path(path)) or not Path(path).is_file():
        return  # none yet; or a stream (a pipe, a FIFO, /dev/stdout), which a read would wait on
    try:
        with open(path, "rb") as existing:
            head = existing.read(64)
    except OSError:  # not readable: writing it says what is wrong
        return
    if head.strip() and not re.match(rb'\s*\{\s*("week"|})', head):
        _say(f"Error: --report {path}: it holds something else than a run report; nothing "
             "was run: give the report a path of its own (such as report.json)")
        raise typer.Exit(EX_USAGE)


def _write_report(path: Path, run: RunReport, code: int) -> None:
    """A report that cannot be written is a warning, not a failure, once the issue is out:
    the exit code must still say what happened to the issue (and let `&& digest email` run)."""
    try:
        if str(path) == "-":  # --report -: after the product, on stdout
            if sys.stdout is None:  # started with it closed (`>&-`): echo would say nothing
                raise OSError(errno.EBADF, "it is closed")
            typer.echo(report_json(run), nl=False)
        else:
            write_report(path, run)
    except OSError as error:
        where = "standard output" if str(path) == "-" else path
        _say(f"Warning: {where}: cannot write the run report ({_why(error)}); the run itself "
             + ("succeeded" if code == 0 else "failed as said above"))


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever sys.stderr is now (test runners swap it)."""

    @property  # type: ignore[override]
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass


def _setup_logging(verbose: int, quiet: bool = False) -> None:
    """stderr shows ERROR with -q, WARNING by default, INFO with -v, DEBUG with -vv; warnings
    are made even with -q, for the run report (``_WarningsKept``)."""
    level = (logging.ERROR if quiet else logging.WARNING if verbose == 0
             else logging.INFO if verbose == 1 else logging.DEBUG)
    logger = logging.getLogger("digest")
    logger.setLevel(min(level, logging.WARNING))
    handler = next((h for h in logger.handlers if isinstance(h, _StderrHandler)), None)
    if handler is None:
        handler = _StderrHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        logger.addHandler(handler)
    handler.setLevel(level)


class _WarningsKept(logging.Handler):
    """The run's warnings, kept in its report (the first ``MAX``; then how many more)."""

    MAX = 500

    def __init__(self, run: RunReport):
        super().__init__(logging.WARNING)
        self.run, self.more = run, 0
        self.setFormatter(logging.Formatter("%(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno != logging.WARNING:  # errors are in the report's errors
            return
        if len(self.run.warnings) < self.MAX:
            self.run.warnings.append(self.format(record))
        else:
            self.more += 1

    def close(self) -> None:
        if self.more:
            self.run.warnings.append(f"... and {self.more} more warnings")
        super().close()


# The cyclic collector's default pace (a pass every 700 new objects, a full one every 100
# passes) kept rescanning the run's millions of long-lived, acyclic objects (records, papers,
# sentence tables): 8 of a 50,000-paper run's 90 CPU seconds. digest's own process collects
# young objects every 50,000 instead; cycles are still collected. A library caller keeps its own.
GC_THRESHOLDS = (50_000, 20, 10)


def _flushed() -> None:
    """What click printed itself (``--version``, ``--help``, a usage error) may still sit in
    the buffer: flushed here, a full disk or a closed pipe is exit 75 in one line, not a
    traceback at the interpreter's exit."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except OSError as error:
        _unwritable(error)


def _unwritable(error: OSError) -> NoReturn:
    with suppress(OSError, ValueError):
        sys.stdout = None  # type: ignore[assignment] # nothing more goes there
    _say(f"Error: standard output: cannot write ({_why(error)}); what the command printed "
         "was not written whole: free space or fix where the output goes, then run again")
    raise SystemExit(OutputUnavailable.exit_code) from None


def main() -> None:
    gc.set_threshold(*GC_THRESHOLDS)
    if sys.stdout is None and {"--help", "--version"} & set(sys.argv[1:]):
        _unwritable(OSError(errno.EBADF, "it is closed"))  # click would print nowhere, exit 0
    try:
        app()  # always ends in SystemExit (click's standalone mode)
    except SystemExit as exit_:
        if exit_.code == 1 and isinstance(exit_.__context__, BrokenPipeError):
            # rich met a broken pipe (it sends stdout to /dev/null and exits 1): a usage
            # error's message on stderr keeps its code; help on stdout is stdout's failure
            intended = getattr(exit_.__context__.__context__, "exit_code", None)
            if isinstance(intended, int):
                raise SystemExit(intended) from None
            _unwritable(exit_.__context__)
        _flushed()
        raise
    except OSError as error:  # what click prints itself: every command's own are handled
        intended = getattr(error.__context__, "exit_code", None)
        if isinstance(intended, int):  # its message for an error (a usage error: 2) failed
            raise SystemExit(intended) from None  # on a full stderr: the code still stands
        _unwritable(error)
    finally:
        # The interpreter's last collection walks every object still alive (a 50,000-paper
        # run's millions: a second of CPU), only to find cycles whose memory the process gives
        # back anyway. Frozen objects are left out of it. atexit handlers still run and what
        # is not in a cycle is still freed; by now the run has closed its files, store and lock.
        gc.freeze()
