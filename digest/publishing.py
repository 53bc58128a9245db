"""Publishing an issue as a recorded transaction, and recovering from a crash in it.

The order, and why it is safe against ``kill -9`` at any point:

1. everything is rendered in memory (a broken template changes nothing);
2. the store records the issue as *pending*: week, output folder, content hash, the
   full text of its files, its papers and the inbox records it took, and the issue itself
   (``digest.issue_codec``: what ``digest email`` mails);
3. the files go into place, each atomically (temp file, fsync, rename);
4. one SQLite transaction marks the papers published, the inbox records used, and
   turns the pending row into an ``issues`` row;
5. index.md, feed.xml and .history.json are regenerated from the store (and from
   the history of issues the store does not know, such as a copied-in folder).

A paper is therefore never marked published without being in a written issue file
(4 comes after 3). A run that finds a pending issue (the last run died between 2 and
5) finishes it first, from the recorded text, before anything else: the files are
written again (same bytes) and step 4 and 5 run. Rolling forward rather than back
means the papers a crashed run may already have put in a file are always recorded,
so the next week never repeats them. All of this runs under the run lock
(``digest.runlock``), so no other run publishes meanwhile.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from . import issue_codec
from .dedup import published_names
from .errors import ConfigError, StateBusy, StateError, StateUnavailable, TemplateError
from .files import TEMPORARY_ERRNOS
from .llm._stats import LLMStats
from .models import Issue, Record
from .outputs import (
    HistoryEntry,
    history_entry,
    history_from_json,
    history_to_json,
    load_history,
    past_issues,
    remove_leftovers,
    render_archive,
    render_issue,
    save_history,
    write_files,
)
from .render import Renderer
from .render.rising import compared_issues
from .runlock import run_lock
from .state import Store, record_key, store_fault, templates_gone
from .testhook import pause_at
from .weeks import is_week

logger = logging.getLogger("digest.publishing")

REPORT_KEYS = {".md": "markdown", ".html": "html", ".txt": "text"}


def publish_issue(issue: Issue, inbox: Sequence[Record], out: Path, store: Store, *,
                  formats: Sequence[str] = ("md",), templates_dir: Path | None = None,
                  site_url: str | None = None,
                  read: tuple[Iterable[int], Iterable[int]] | None = None,
                  llm: Mapping[str, Any] | None = None) -> dict[str, Path]:
    """Publish ``issue`` into ``out`` as a recorded transaction; return the paths written,
    keyed as in the run report (markdown, html, text, index, feed). ``read``: the content
    keys of the records its run read, and of the late ones among them (``digest.dating``),
    kept when the issue is out and not before: a run that fails has read nothing. ``llm``:
    the run report's LLM block, whose degraded state is kept with the issue."""
    renderer = Renderer(templates_dir)
    history = archive_history(out, store)
    files = render_issue(issue, out, formats=formats, renderer=renderer, history=history)
    papers = issue.carried
    texts = {path.name: text for path, text in files.items()}
    payload = {"files": texts,
               "papers": sorted({paper.id for paper in papers}),
               "aliases": sorted({name for paper in papers for name in published_names(paper)}),
               "inbox": sorted({record_key(record) for record in inbox}),
               "history": history_to_json(history_entry(issue)),
               "site_url": site_url,
               "templates": str(Path(templates_dir).resolve()) if templates_dir else None,
               "read": {"keys": list(read[0]), "late": sorted(read[1])} if read else None}
    content_hash = files_hash(texts)
    store.begin_publishing(issue.week, str(out.resolve()), content_hash, payload,
                           issue=issue_codec.pack(_kept(issue, history, llm)))
    pause_at("pending")
    return _complete(store, issue.week, out, payload)


def _kept(issue: Issue, history: dict[str, HistoryEntry],
          llm: Mapping[str, Any] | None) -> issue_codec.Kept:
    stats = LLMStats.of(llm or {})
    compared = compared_issues(issue.week, past_issues(history))
    return issue_codec.Kept(issue, tuple(compared), degraded=stats.degraded,
                            stopped=stats.stopped)


def files_hash(files: dict[str, str]) -> str:
    """The SHA-256 of ``json.dumps(files, sort_keys=True)``, made one file at a time: the
    issue of 45,000 papers is 18 MB of Markdown, and the whole dump was one more copy."""
    digest = hashlib.sha256(b"{")
    for number, name in enumerate(sorted(files)):
        digest.update(f"{', ' if number else ''}{json.dumps(name)}: ".encode())
        digest.update(json.dumps(files[name]).encode())
    digest.update(b"}")
    return digest.hexdigest()


def recover(store: Store) -> list[str]:
    """Finish every issue an interrupted run left pending; return their weeks."""
    weeks = []
    for week, out_dir, payload in store.pending():
        out = Path(out_dir)
        remove_leftovers(out)
        _complete(store, week, out, payload)
        logger.warning("finished the issue of %s that an interrupted run left pending in %s",
                       week, out)
        weeks.append(week)
    return weeks


def _complete(store: Store, week: str, out: Path, payload: dict[str, Any]) -> dict[str, Path]:
    """Write the pending issue's files, then index.md, feed.xml and the history, and only
    then record it published: a run killed before that leaves it pending, and the next run
    (whatever it does) finishes all of it."""
    renderer = _renderer_of(week, payload)
    files = {out / name: text for name, text in payload["files"].items()}
    _write_or_explain(out, week, lambda: write_files(out, files))
    _drop_old_formats(out, week, set(payload["files"]))
    pause_at("files")
    archive = regenerate_archive(out, store, renderer, payload.get("site_url"),
                                 pending={week: history_from_json(payload["history"])})
    pause_at("archive")
    _record_published(store, week, out)
    pause_at("published")
    return {_report_key(path): path for path in [*files, *archive]}


def _record_published(store: Store, week: str, out: Path) -> None:
    """A store that cannot record the issue published now (a full or read-only disk) leaves
    it pending, its files out: the error says so, not "nothing was stored"."""
    try:
        store.finish_publishing(week)
    except (StateBusy, StateUnavailable) as error:
        reason = error.reason or str(error)
        raise type(error)(f"{store.path}: {reason}; the issue of {week} is written in {out}, "
                          "but the store could not record it published: it stays pending and "
                          "the next run finishes it, publishing nothing twice: free space or "
                          "make the store writable, then run again", reason=reason) from None


def _renderer_of(week: str, payload: dict[str, Any]) -> Renderer:
    """The renderer of the pending issue's index and feed: the templates it was made with,
    whatever the run finishing it was given (there is no other way to finish it)."""
    templates = payload.get("templates")
    if templates_gone(payload):
        raise TemplateError(
            f"the issue of {week} that an interrupted run left pending was made with the "
            f"templates in {templates}, and that folder is gone: restore it (the issue's "
            "index.md and feed.xml are rendered with them), then run again to finish it")
    return Renderer(Path(templates) if templates else None)


def _drop_old_formats(out: Path, week: str, written: set[str]) -> None:
    """The week's HTML or text file from an earlier run that asked for it and this one did
    not: an older issue, which index.md and feed.xml would link."""
    for suffix in (".html", ".txt"):  # the Markdown is always written
        stale = out / f"{week}{suffix}"
        if stale.name not in written and stale.exists():
            try:
                stale.unlink()
            except OSError as error:
                logger.warning("%s: an older issue, not removed (%s)", stale, error.strerror)
                continue
            logger.info("%s: removed, this run of %s wrote no %s", stale, week, suffix)


def regenerate_archive(out: Path, store: Store, renderer: Renderer, site_url: str | None, *,
                       pending: dict[str, HistoryEntry]) -> list[Path]:
    """Write index.md, feed.xml and .history.json of ``out`` from the store, with the
    ``pending`` issues being finished (plus the history of issues the store does not know);
    return the paths of index and feed."""
    history = archive_history(out, store) | pending
    folder = str(out.resolve())
    files = render_archive(out, history, renderer=renderer, site_url=site_url,
                           published={row["week"] for row in store.issues()
                                      if row["out_dir"] == folder})
    week = ", ".join(sorted(pending))

    def write() -> None:
        write_files(out, files)
        save_history(out, history)

    _write_or_explain(out, week, write)
    return list(files)


def _write_or_explain(out: Path, week: str, write: Callable[[], None]) -> None:
    try:
        write()
    except OSError as error:
        raise output_fault(out, error, f"the issue of {week} stays pending in the store and "
                           "the next run finishes it") from None


def output_fault(out: Path, error: OSError, state: str) -> StateError:
    """One line for a file that could not be written: where, what, what is safe, the fix.
    A full, read-only or failing disk may pass (exit 75); anything else is exit 1. Another
    output folder is no fix: a pending issue is finished in its own folder first."""
    where = error.filename or out
    what = error.strerror or str(error)
    if error.errno in TEMPORARY_ERRNOS:
        return StateUnavailable(f"{where}: cannot write ({what}); {state}: free space or make "
                                "the disk writable, then run again")
    fix = ("remove or rename the folder in its place (digest writes a file there)"
           if error.errno == errno.EISDIR else "fix the folder's permissions")
    return StateError(f"{where}: cannot write ({what}); {state}: {fix}, then run again")


def archive_history(out: Path, store: Store) -> dict[str, HistoryEntry]:
    """What each issue of ``out`` held: the store's record wins over the folder's file."""
    history = load_history(out)
    folder = str(out.resolve())
    for row in store.issues():
        if row["out_dir"] == folder and row["history"]:
            history[row["week"]] = history_from_json(row["history"])
    return history


def refuse_lost_store(store: Store, out: Path, *, mailing: bool = False) -> None:
    """A store that knows no issue beside an output folder that has some was lost, truncated
    or mistyped: publishing with it would put every paper out again, and mailing with it
    (``mailing``) would send weeks sent already. ``new_store`` skips this for publishing."""
    if store.issues() or store.pending():
        return
    weeks = sorted(load_history(out)) or sorted(p.stem for p in _issue_files(out))
    if not weeks:
        return
    lost = f"{store.path} holds no issue, but {out} already has {len(weeks)} " \
           f"({weeks[0]} … {weeks[-1]})"
    if mailing:
        raise StateError(f"{lost}: a new store knows nothing of what was sent. Give the e-mail "
                         "the newsletter's store (or restore it from a backup)", setting="state")
    raise StateError(f"{lost}: a missing or new store would publish their papers again. Use "
                     "the store those issues came from (or restore it from a backup), or allow "
                     "a new store anyway", setting="new_store")


def _issue_files(out: Path) -> list[Path]:
    if not out.is_dir():
        return []
    return sorted(path for path in out.glob("[0-9][0-9][0-9][0-9]-W[0-9][0-9].md")
                  if is_week(path.stem))


def _report_key(path: Path) -> str:
    if path.name in ("index.md", "feed.xml"):
        return path.stem
    return REPORT_KEYS[path.suffix]


@contextmanager
def publishing_session(state_path: str | Path, out: Path, *, command: str, week: str | None,
                       wait_s: float = 0.0, new_store: bool = False,
                       dry_run: bool = False) -> Iterator[Store]:
    """The store of a run that publishes: under the run lock, checked whole (every page read),
    with any pending issue finished, a lost store refused, and the temp files of killed runs
    removed (a dry run writes nothing, not even the lock or a new store: it reads a copy of
    the store in memory, and leaves a pending issue and the temp files to the next run)."""
    require_folder(out)
    if dry_run:
        with Store.copy_of(state_path) as store:
            store.check_whole()
            if not new_store:
                refuse_lost_store(store, out)
            yield store
        return
    with run_lock(state_path, command=command, week=week, wait_s=wait_s):
        pause_at("locked")
        with Store(state_path, new_store=new_store) as store:
            store.check_whole()  # a damaged page can hide papers published: never guess
            recover(store)
            if not new_store:
                refuse_lost_store(store, out)
            remove_leftovers(out)
            yield store


def require_folder(out: Path) -> None:
    """A ConfigError when ``out``, or the nearest part of its path that exists, is a file."""
    existing = next((folder for folder in (out, *out.parents) if folder.exists()), out)
    if existing.exists() and not existing.is_dir():
        raise ConfigError(f"{existing} is a file, not a folder: give the folder the issues go "
                          "into (made if missing)", setting="out")


def unexpected_fault(error: OSError | sqlite3.Error) -> StateError:
    """The last net for a disk or SQLite failure no layer explained: still one line."""
    if isinstance(error, OSError):
        return output_fault(Path(error.filename or "."), error, "nothing more was done")
    return store_fault("the state store", error)
