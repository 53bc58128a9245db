"""The jobs that publish: the week's newsletter (or every week a crash or a pause left out)
and the e-mail that carries it, each under the store's run lock.

``Digest.newsletter`` and ``Digest.email`` (``digest/run.py``) call these; the CLI only
prints what they return.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from email.message import EmailMessage
from pathlib import Path
from typing import TYPE_CHECKING

from . import issue_codec
from .batchjobs import BatchChoice, batch_step
from .dating import catch_up_weeks
from .dedup import known_names, published_names
from .errors import ConfigError, MailError, MailUnavailable, SourceError
from .llm._stats import LLMStats
from .llm.wiring import degraded_error, degraded_part
from .mail import MailSettings, build_message, send
from .outputs import feed_base, parse_formats, past_issues
from .pipeline import Options, weeks_with_records, write_issue
from .publishing import (
    archive_history,
    publishing_session,
    recover,
    refuse_lost_store,
    require_folder,
)
from .render import Renderer
from .report import RunReport
from .runlock import run_lock
from .sending import already_sent, send_recorded, still_to_send
from .state import Store
from .textsafety import ellipsize
from .weeks import current_week

if TYPE_CHECKING:
    from .models import Issue, Paper
    from .run import Digest

logger = logging.getLogger("digest.jobs")


@dataclass
class Published:
    """What a newsletter run did: the weeks it chose and the issues it wrote (none for a
    dry run, which stops after planning the first week's LLM calls)."""

    weeks: list[str] = field(default_factory=list)
    paths: list[Path] = field(default_factory=list)
    planned: bool = False
    waiting: list[str] = field(default_factory=list)  # Batch API jobs submitted or running


@dataclass
class Mailed:
    """What an e-mail run did: the message, and the server's answer and the recipients it
    took when it was sent, or why nothing was sent (``already``: the store says the week's
    issue reached every recipient)."""

    message: EmailMessage | None = None
    answer: str | None = None
    already: str | None = None
    recipients: tuple[str, ...] = ()


@dataclass(frozen=True)
class PublishChoices:
    """The newsletter job's own choices (the rest comes from the settings)."""

    formats: str | None = None  # "md,html,txt"; None: the default
    site_url: str | None = None
    wait_s: float = 0.0
    new_store: bool = False
    catch_up: bool = False
    fail_on_degraded: bool = False
    batch: BatchChoice | None = None  # the Batch API: submit, or collect what was submitted


def publish(digest: Digest, sources: Sequence[str], options: Options, choices: PublishChoices,
            report: RunReport, on_written: Callable[[Path], None] = lambda path: None,
            on_note: Callable[[str], None] = lambda note: None) -> Published:
    """Write the week's issue into the output folder (every week since the last issue with
    ``catch_up``, oldest first, each once), under the store's run lock."""
    wanted = parse_formats(choices.formats)  # bad values are usage errors before any work
    feed_base(choices.site_url)
    refuse_week_to_come(options.week)
    out_dir = Path(digest.settings["out"])
    options = replace(options, use_inbox=True, require_records=True, by_date=True,
                      output_folder=out_dir)
    done = Published()
    with publishing_session(Path(digest.settings["state"]), out_dir, command="newsletter",
                            week=options.week, wait_s=choices.wait_s,
                            new_store=choices.new_store, dry_run=digest.dry_run) as store:
        _require_listings(sources, store, options.week)
        done.weeks = _weeks(sources, options, store, choices.catch_up)
        if not digest.dry_run:
            _uncollected_jobs(store, min([*done.weeks, options.week]), report)
            _inbox_problems(store, report)
        for week in done.weeks:  # oldest first, each once
            report.week = week
            weekly = replace(options, week=week)
            waiting = (None if digest.dry_run or choices.batch is None else
                       batch_step(digest, sources, weekly, store, report, out=out_dir,
                                  choice=choices.batch))
            if waiting is not None:  # submitted, or still running: nothing to publish yet
                done.waiting.append(waiting)
                on_note(waiting)
                continue
            built = digest.build(sources, weekly, store, report, out=out_dir)
            if digest.dry_run:
                done.planned = True
                return done
            _refuse_a_smaller_rerun(built.issue, store, sources)
            _refuse_degraded(report, choices.fail_on_degraded)
            path = write_issue(built, out_dir, store, report, formats=wanted,
                               templates_dir=options.templates_dir, site_url=choices.site_url)
            report.add_issue()
            done.paths.append(path)
            on_written(path)
    return done


def refuse_week_to_come(week: str, today: dt.date | None = None) -> None:
    """An issue of a week to come has no listings yet, and as the last issue it would stop
    ``--catch-up`` from writing the weeks before it (next week's too: this week's papers
    would be left out without a word)."""
    if week > current_week(today):
        raise ConfigError(f"week {week} is a week to come (this is {current_week(today)}): "
                          "its issue would have no listings yet; give this week or an earlier "
                          "one", setting="week")


def _require_listings(sources: Sequence[str], store: Store, week: str) -> None:
    if not sources and not store.inbox(week):
        raise ConfigError(f"no source given and nothing in the inbox of {store.path}: give "
                          "listing files, folders, URLs or - for stdin, or keep listings there "
                          "with `digest ingest`")


def _weeks(sources: Sequence[str], options: Options, store: Store, catch_up: bool) -> list[str]:
    if not catch_up:
        return [options.week]
    found = weeks_with_records(sources, options, store, today_week=current_week())
    return catch_up_weeks(found, store, until=options.week)


def _inbox_problems(store: Store, report: RunReport) -> None:
    """What ``digest ingest`` left out or doubted since the last issue (a skipped line, an
    attachment it could not read) goes into this run's report: a mail hook's stderr is read
    by nobody. Publishing an issue clears them."""
    problems = store.inbox_problems()
    if problems:
        logger.warning("digest ingest left out or doubted something in %d place(s) since the "
                       "last issue; the run report's errors list them", len(problems))
        report.errors += [f"digest ingest: {problem}" for problem in problems]


def _uncollected_jobs(store: Store, first_week: str, report: RunReport) -> None:
    """Say so of each earlier week's Batch API job that no run of its week has collected: a
    weekly ``--week last`` never comes back to it. This run does not collect it: its sources
    are another week's listings, and its settings may name another server."""
    for job in store.batch_jobs(pending=True):
        if job["week"] < first_week:
            note = (f"{job['week']}: Batch API job {job['id']} (submitted {job['submitted_at']} "
                    f"UTC) is not collected, so that week is not published: run the newsletter "
                    f"of {job['week']} with its listings and settings (--week {job['week']}, "
                    "or --resume) to publish it")
            logger.warning("%s", note)
            report.errors.append(note)


def _refuse_another_issue(issue: Issue, store: Store) -> None:
    """The mail carries the issue the newsletter published for the week, or none: one built
    with other options (``max_papers``, a profile) or other listings is another issue."""
    row = next((row for row in store.issues() if row["week"] == issue.week), None)
    if row is None:  # not published: nothing to be the same as
        return
    published = store.published_in(issue.week)  # its papers and "also this week" alike
    shown = sum(len(section.papers) for section in issue.sections)
    listed = (row["history"] or {}).get("papers", shown)
    if {paper.id for paper in issue.carried} != published or shown != listed:
        raise ConfigError(f"the issue built for {issue.week} ({shown} papers) is not the issue "
                          f"published for it ({listed} papers): give the e-mail the settings "
                          "and listings the newsletter had (the same config file and options), "
                          "or re-run the newsletter first")


def _refuse_a_smaller_rerun(issue: Issue, store: Store, sources: Sequence[str]) -> None:
    """A re-run of a published week writes it again with the same papers: one whose listings
    no longer hold some of them (rotated, overwritten, cut short) would replace the issue
    with a smaller or an empty one, which the week's mail would then send. A paper listed
    with its arXiv id this time and without it then (or the other way round) is the same
    paper: the names the store knows it by are compared, not its id alone."""
    published = store.published_in(issue.week)
    built = set().union(*map(_store_names, issue.carried))
    lost = published - built - store.published_before(issue.week)  # an earlier issue's
    if not lost:
        return
    packed = store.kept_issue(issue.week)
    kept = issue_codec.unpack(packed) if packed is not None else None
    papers = kept.issue.carried if kept else ()
    renamed = {paper.id for paper in papers if paper.id in lost and _store_names(paper) & built}
    lost -= renamed
    if not lost:
        return
    titles = sorted(paper.title for paper in papers if paper.id in lost)
    named = f" (among them {ellipsize(titles[0], 80)!r})" if titles else ""
    raise SourceError(
        ", ".join(sources) or "the inbox",
        f"the issue of {issue.week} published {len(published)} papers, and this run's would "
        f"leave out {len(lost)} of them{named}: its files and records are unchanged",
        fix="give the listings and settings it was built from: a re-run writes a published "
            "week again with the same papers")


def _store_names(paper: Paper) -> set[str]:
    """Every name the store may know ``paper`` by (its id, its title's, its other titles')."""
    return {name.lstrip("~") for name in (*published_names(paper), *known_names(paper))}


def _refuse_degraded(report: RunReport, fail_on_degraded: bool) -> None:
    """With ``fail_on_degraded`` an issue partly summarised offline is an error (exit 75)."""
    error = degraded_error(report.llm) if fail_on_degraded else None
    if error is not None:
        raise error


@dataclass(frozen=True)
class MailChoices:
    """The e-mail job's own choices."""

    mail: MailSettings
    state: Path | None = None  # the store: the inbox, the LLM cache, what was sent
    out: Path | None = None  # the newsletter's folder: its history gives the rising themes
    eml: bool = False  # build the message only; the caller writes it out
    resend: bool = False
    wait_s: float = 0.0
    fail_on_degraded: bool = False


def mail_issue(digest: Digest, sources: Sequence[str], options: Options, choices: MailChoices,
               report: RunReport) -> Mailed:
    """Build the week's issue as one MIME message and send it once (recorded in the store),
    or only build it (``eml``). With a store, the selection is the newsletter's, so the mail
    is that issue and its LLM answers come from the cache; the run holds the store's run
    lock and finishes a pending issue first, ``eml`` or not."""
    if not sources and choices.state is None:
        raise ConfigError("no source given: give listing files, folders, URLs, or - for stdin "
                          "(or a state store, to mail what `digest ingest` kept)")
    if choices.out is not None:
        require_folder(choices.out)
    options = replace(options, use_inbox=choices.state is not None, require_records=True,
                      by_date=True, output_folder=choices.out)
    where = str(choices.state or ":memory:")
    with run_lock(where, command="email", week=options.week, wait_s=choices.wait_s), \
            Store(where) as store:
        if choices.state is not None:  # also with eml: the message is the issue published
            store.check_whole(  # a damaged page can hide what was published or sent
                fix="restore it from a backup: a new store would not know what was sent",
                setting="state")
            recover(store)  # the issue an interrupted newsletter run left pending
            if choices.out is not None and not store.sendings():
                refuse_lost_store(store, choices.out, mailing=True)
        sendings = store if choices.state is not None and not choices.eml else None
        to = still_to_send(sendings, options.week, choices.mail.recipients,
                           resend=choices.resend)
        if sendings is not None and not to:
            return Mailed(already=already_sent(sendings, options.week, choices.mail.recipients))
        message = _message(digest, sources, options, choices, store, report)
        if choices.eml:
            return Mailed(message)
        delivered = send_recorded(sendings, options.week, str(message["Message-ID"]), to,
                                  lambda: send(message, choices.mail, to))
    return Mailed(message, delivered.answer, recipients=delivered.accepted)


def _message(digest: Digest, sources: Sequence[str], options: Options, choices: MailChoices,
             store: Store, report: RunReport) -> EmailMessage:
    """The week's issue as one MIME message: with a store, the issue the newsletter published
    for the week, as it was kept (its rising themes too); otherwise (or for an issue
    published before issues were kept) one built from the listings."""
    kept = _published_issue(store, options.week, report) if choices.state else None
    if kept is not None:
        _refuse_degraded_issue(kept, report, choices.fail_on_degraded)
        issue, history, themes = kept.issue, list(kept.compared), kept.themes
    else:
        if choices.state is not None:
            _refuse_unpublished_week(store, options.week)
        built = digest.build(sources, options, store, report)
        if choices.state is not None:
            _refuse_another_issue(built.issue, store)
        _refuse_degraded(report, choices.fail_on_degraded)
        issue, themes = built.issue, None
        history = past_issues(archive_history(choices.out, store)) if choices.out else []
    renderer = Renderer(options.templates_dir)
    return build_message(issue, text=renderer.text(issue, history=history, themes=themes),
                         html=renderer.html(issue, history=history, themes=themes),
                         settings=choices.mail)


def _published_issue(store: Store, week: str, report: RunReport) -> issue_codec.Kept | None:
    """The issue published for ``week`` as the store kept it (no listing is read again, no
    model asked), or None when there is none to mail."""
    packed = store.kept_issue(week)
    kept = issue_codec.unpack(packed) if packed is not None else None
    if kept is None:
        return None
    issue = kept.issue
    report.describe(issue)
    report.llm = LLMStats(backend=issue.backend, model=issue.model,
                          fallback_themes=list(issue.fallback_themes), degraded=kept.degraded,
                          stopped=kept.stopped).as_dict()
    logger.info("mailing the issue published for %s (%d papers) as it was kept in %s",
                week, issue.stats.papers_in_issue, store.path)
    return kept


def _refuse_unpublished_week(store: Store, week: str) -> None:
    """A store whose newsletter publishes issues mails only those: a week it has not
    published (yet: a catch-up stopped before it, its listing is late) would go out as
    another issue, and be recorded as sent before its own issue is published. A store that
    publishes nothing (mail only) builds the week's issue. A week whose Batch API job the
    newsletter has still to collect will be published: a retry can mail it (exit 75)."""
    waiting = store.batch_jobs(week, pending=True)
    if waiting:
        raise MailUnavailable(f"the issue of {week} is not published yet: the newsletter of "
                              f"{store.path} still has to collect its Batch API job "
                              f"{waiting[-1]['id']}; nothing was sent: mail it once the "
                              "newsletter has published it")
    weeks = [row["week"] for row in store.issues()]
    if weeks and week not in weeks:
        raise MailError(f"the issue of {week} is not published: the newsletter of "
                        f"{store.path} has published up to {weeks[-1]}. Publish {week} with "
                        "the newsletter first, then mail it")


def _refuse_degraded_issue(kept: issue_codec.Kept, report: RunReport,
                           fail_on_degraded: bool) -> None:
    """The published issue is mailed as it is: a retry cannot mend one partly summarised
    offline, so ``fail_on_degraded`` refuses it for good (exit 1) and says how to mend it."""
    offline = degraded_part(report.llm) if fail_on_degraded else None
    if offline is not None:
        week = kept.issue.week
        raise MailError(f"the issue published for {week} is degraded ({offline}), and a "
                        f"degraded issue is not to be mailed: re-run the newsletter for {week} "
                        "when the model answers, or mail it as it is", setting="fail_on_degraded")
