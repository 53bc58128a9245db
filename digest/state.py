"""The state store: one SQLite file that remembers across runs.

What went out in which issue (so next week's issue does not repeat it), the
records ``digest ingest`` keeps for the next issue (the inbox), the
LLM response cache (so a re-run makes no calls) and the ledger of LLM calls
(tokens, latency, outcome, cost). Schema changes are append-only migrations,
numbered; a store written by a newer digest is refused, not damaged. The
connection is not for sharing between threads: the summarize stage touches
the store from its main thread only.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import functools
import hashlib
import json
import os
import secrets
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import Any

from .errors import ConfigError, StateBusy, StateError, StateUnavailable
from .models import Record, Sighting
from .weeks import current_week

MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE issues (week TEXT PRIMARY KEY, papers INTEGER NOT NULL,
                         created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP);
    CREATE TABLE published (paper_id TEXT NOT NULL, week TEXT NOT NULL,
                            PRIMARY KEY (paper_id, week));
    CREATE TABLE llm_cache (key TEXT PRIMARY KEY, model TEXT NOT NULL, response TEXT NOT NULL,
                            created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP);
    """,
    # 2: the LLM call ledger; cache rows say what they were keyed by.
    """
    CREATE TABLE llm_calls (id INTEGER PRIMARY KEY,
                            at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
                            model TEXT NOT NULL, task TEXT NOT NULL,
                            prompt_hash TEXT NOT NULL, cache_key TEXT NOT NULL,
                            prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL,
                            cached_tokens INTEGER NOT NULL, latency_ms INTEGER NOT NULL,
                            retries INTEGER NOT NULL, outcome TEXT NOT NULL,
                            cost_usd REAL NOT NULL);
    ALTER TABLE llm_cache ADD COLUMN prompt_hash TEXT;
    ALTER TABLE llm_cache ADD COLUMN params TEXT;
    """,
    # 3: the inbox: records that `digest ingest` kept for the next issue. ``key`` makes a
    # redelivered e-mail a no-op; ``used_in`` is the week whose issue took the record.
    """
    CREATE TABLE inbox (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE,
                        record TEXT NOT NULL, used_in TEXT,
                        added_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP);
    """,
    # 4: the store's own secret, for prompt delimiters nobody outside can predict.
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    """,
    # 5: publishing as a recorded transaction (pending → issues), what each issue held (for
    # index, feed and history), each mail sent, and the week an undated record was first seen.
    """
    ALTER TABLE issues ADD COLUMN out_dir TEXT;
    ALTER TABLE issues ADD COLUMN content_hash TEXT;
    ALTER TABLE issues ADD COLUMN files TEXT;
    ALTER TABLE issues ADD COLUMN history TEXT;
    CREATE TABLE pending (week TEXT PRIMARY KEY, out_dir TEXT NOT NULL,
                          content_hash TEXT NOT NULL, payload TEXT NOT NULL,
                          started_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP);
    CREATE TABLE sendings (id INTEGER PRIMARY KEY, week TEXT NOT NULL, message_id TEXT NOT NULL,
                           recipients TEXT NOT NULL,
                           started_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
                           sent_at TEXT, answer TEXT);
    CREATE TABLE first_seen (key TEXT PRIMARY KEY, week TEXT NOT NULL);
    """,
    # 6: titles looked up by --resolve-ids (digest.resolve), hits and misses, so a title is
    # asked about once. ``arxiv_id`` and ``url`` are NULL for a miss.
    """
    CREATE TABLE resolved (title_key TEXT PRIMARY KEY, arxiv_id TEXT, url TEXT,
                           checked_at TEXT NOT NULL);
    """,
    # 7: Batch API jobs (digest.batchjobs): one a week at a time, submitted by one run and
    # collected by a later one. ``plan_hash`` is the run's settings and planned calls: a job
    # whose plan no longer matches is not collected into the cache blindly (its answers are
    # keyed by cache key anyway). ``state``: pending, collected, failed.
    """
    CREATE TABLE batch_jobs (id TEXT PRIMARY KEY, week TEXT NOT NULL,
                             input_file TEXT NOT NULL, requests INTEGER NOT NULL,
                             plan_hash TEXT NOT NULL, state TEXT NOT NULL DEFAULT 'pending',
                             outcome TEXT,
                             submitted_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
                             finished_at TEXT);
    """,
    # 8: what each issue's run read (digest.dating): the content key of every record dated in
    # its week, and of each it took from an earlier week (``late`` 1), so that a listing file
    # that came after its week's issue is told from a record that week's run left out. An
    # issue published before this migration has no rows. A key is 63 bits of a hash.
    """
    CREATE TABLE considered (week TEXT NOT NULL, key INTEGER NOT NULL,
                             late INTEGER NOT NULL DEFAULT 0,
                             PRIMARY KEY (week, key)) WITHOUT ROWID;
    CREATE INDEX considered_late ON considered (key) WHERE late = 1;
    """,
    # 9: each issue kept whole (``digest.issue_codec``: compressed JSON), so that the e-mail
    # carries the issue published rather than one built again. Issues published before this
    # migration have none.
    """
    ALTER TABLE pending ADD COLUMN issue BLOB;
    ALTER TABLE issues ADD COLUMN issue BLOB;
    """,
)


@dataclass(frozen=True)
class CallRecord:
    """One LLM call as the ledger keeps it. No prompt text, no key: hashes and numbers."""

    model: str
    task: str
    prompt_hash: str
    cache_key: str
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    latency_ms: int
    retries: int
    outcome: str
    cost_usd: float


class Store:
    """The state store. ``Store(":memory:")`` for tests and for runs that must not persist.

    A new store is built under a temporary name and linked into place fully migrated, so
    a store file of zero bytes can only be a truncated one: it is refused (all history
    would be gone and the next issue would resend everything), never silently recreated,
    unless ``new_store`` says a fresh start is wanted. Upgrades of an older store run
    in one ``BEGIN IMMEDIATE`` transaction that re-reads the version inside it, so twenty
    first uses at once migrate it once. SQLite and disk failures become one-line
    errors naming the file (see ``store_fault``).
    """

    def __init__(self, path: str | Path, *, busy_timeout_s: float = 30.0,
                 new_store: bool = False):
        self.path = str(path)
        try:
            if self.path != ":memory:":
                _prepare_file(Path(self.path), new_store=new_store)
            self._db = sqlite3.connect(self.path, timeout=busy_timeout_s, isolation_level=None,
                                       check_same_thread=False)
            self._migrate()
        except (sqlite3.Error, OSError) as exc:
            raise store_fault(self.path, exc) from None


    @classmethod
    def copy_of(cls, path: str | Path) -> Store:
        """The store at ``path`` copied into memory (upgraded there if old), or an empty one
        if there is none: what a dry run reads, so that it never writes a byte."""
        store = cls(":memory:")
        _refuse_symlink_loop(Path(path))
        if not Path(path).exists():
            return store
        problem = _damage(Path(path))
        if problem:
            raise StateError(f"{path}: {problem}; {_FIX_CORRUPT}", setting="new_store")
        try:
            source = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)
            try:
                source.backup(store._db)
            finally:
                source.close()
            store._migrate(str(path))
        except (sqlite3.Error, OSError) as exc:
            raise store_fault(str(path), exc) from None
        store.path = str(path)  # for messages; the data lives in memory
        return store

    def _migrate(self, name: str | None = None) -> None:
        self._refuse_foreign(name or self.path)
        if self.path != ":memory:" and self._version() < len(MIGRATIONS):
            self._db.execute("PRAGMA journal_mode=WAL")
        if self._version() == len(MIGRATIONS):
            return
        self._db.execute("BEGIN IMMEDIATE")
        try:
            version = self._version()  # again: another process may have migrated meanwhile
            if version > len(MIGRATIONS):
                raise StateError(f"{self.path} was written by a newer digest (schema "
                                 f"{version}); upgrade digest")
            for script in MIGRATIONS[version:]:
                for statement in script.split(";"):
                    if statement.strip():
                        self._db.execute(statement)
            self._db.execute(f"PRAGMA user_version={len(MIGRATIONS)}")
            self._db.execute("COMMIT")
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise

    def _version(self) -> int:
        return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def _refuse_foreign(self, name: str) -> None:
        """Another program's SQLite file is refused before a byte of it changes: a digest
        store of schema N has every table the first N migrations make (a new one has none)."""
        version = self._version()
        if version > len(MIGRATIONS):
            return  # from a newer digest: the upgrade says so
        tables = _table_names(self._db)
        missing = _tables_made_by(version) - tables
        if (version == 0 and tables) or missing:
            raise StateError(f"{name}: not a digest state store (another program's SQLite file: "
                             f"{'tables ' + ', '.join(sorted(tables)) if tables else 'no table'}"
                             f"); nothing was changed in it: give the store its own file's path",
                             setting="state", reason="it is not a digest state store")

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, kind: object, error: BaseException | None, trace: object) -> None:
        """Close; an SQLite error out of the block (a read no method guarded) names the file."""
        self.close()
        if isinstance(error, sqlite3.Error):
            raise store_fault(self.path, error) from None

    # Issues and what they published ------------------------------------------------

    def published_in(self, week: str) -> set[str]:
        """The paper ids ``week``'s issue published (no ``~`` aliases)."""
        rows = self._db.execute("SELECT paper_id FROM published WHERE week = ?", (week,))
        return {paper for (paper,) in rows if not paper.startswith("~")}

    def published_before(self, week: str) -> set[str]:
        """Ids (and ``~`` aliases) of papers published in an issue before ``week``. Not
        later ones: re-running a week after a later issue repeated its papers
        (--include-published) must give that week's issue again. ISO week names
        ("2026-W07") sort in time order."""
        rows = self._db.execute("SELECT paper_id FROM published WHERE week < ?", (week,))
        return {row[0] for row in rows}

    def record_issue(self, week: str, paper_ids: Iterable[str],
                     aliases: Iterable[str] = ()) -> None:
        """The papers of ``week``'s issue, and other names they go by (not counted)."""
        ids = sorted(set(paper_ids))
        names = sorted(set(ids) | set(aliases))
        with self._db:
            self._db.execute("BEGIN")
            self._db.execute("DELETE FROM published WHERE week = ?", (week,))
            self._db.executemany("INSERT INTO published (paper_id, week) VALUES (?, ?)",
                                 [(name, week) for name in names])
            self._db.execute("INSERT OR REPLACE INTO issues (week, papers) VALUES (?, ?)",
                             (week, len(ids)))

    def published_elsewhere(self, week: str) -> set[str]:
        """Names of papers another issue carried: every earlier issue, and later issues
        except what ``week``'s own issue carried too (a re-run of a week keeps its papers,
        also after a later issue repeated them with --include-published)."""
        rows = self._db.execute(
            "SELECT paper_id FROM published WHERE week < ? UNION SELECT * FROM ("
            "SELECT paper_id FROM published WHERE week > ? EXCEPT "
            "SELECT paper_id FROM published WHERE week = ?)", (week, week, week))
        return {row[0] for row in rows}

    # Publishing as a recorded transaction: pending, then published ----------------------

    def begin_publishing(self, week: str, out_dir: str, content_hash: str,
                         payload: Mapping[str, Any], issue: bytes | None = None) -> None:
        """Record ``week``'s issue as pending, with everything needed to finish it (and the
        issue itself, packed), before any of its files goes into place."""
        self._write("INSERT OR REPLACE INTO pending (week, out_dir, content_hash, payload, "
                    "issue) VALUES (?, ?, ?, ?, ?)",
                    (week, out_dir, content_hash, json.dumps(payload, sort_keys=True), issue))

    def pending(self) -> list[tuple[str, str, dict[str, Any]]]:
        """(week, output folder, payload) of every issue a run began and did not finish."""
        rows = self._db.execute("SELECT week, out_dir, payload FROM pending ORDER BY week")
        return [(week, out_dir, json.loads(payload)) for week, out_dir, payload in rows]

    def finish_publishing(self, week: str) -> None:
        """In one transaction: the pending issue's papers become published, its inbox
        records used, what its run read kept, and the issue a row of ``issues``."""
        with self._guard(), self._db:
            self._db.execute("BEGIN IMMEDIATE")
            row = self._db.execute("SELECT out_dir, content_hash, payload FROM pending "
                                   "WHERE week = ?", (week,)).fetchone()
            if row is None:
                return
            out_dir, content_hash, payload = row[0], row[1], json.loads(row[2])
            ids, names = payload["papers"], sorted(set(payload["papers"]) | set(payload["aliases"]))
            self._db.execute("DELETE FROM published WHERE week = ?", (week,))
            self._db.executemany("INSERT INTO published (paper_id, week) VALUES (?, ?)",
                                 [(name, week) for name in names])
            self._db.execute(
                "INSERT OR REPLACE INTO issues (week, papers, out_dir, content_hash, files, "
                "history, issue) VALUES (?, ?, ?, ?, ?, ?, (SELECT issue FROM pending "
                "WHERE week = ?))",  # the packed issue (23 MB at 50k papers) stays in SQLite
                (week, len(ids), out_dir, content_hash, json.dumps(sorted(payload["files"])),
                 json.dumps(payload["history"], sort_keys=True), week))
            self._db.executemany("UPDATE inbox SET used_in = ? WHERE key = ? AND used_in IS NULL",
                                 [(week, key) for key in payload["inbox"]])
            if payload.get("read") is not None:  # what the run read goes with its issue
                self._keep_read(week, payload["read"]["keys"], payload["read"]["late"])
            self._db.execute("DELETE FROM pending WHERE week = ?", (week,))
            self._db.execute("DELETE FROM meta WHERE key = 'inbox_problems'")  # reported

    def _keep_read(self, week: str, keys: Iterable[int], late: Iterable[int]) -> None:
        """The content keys of the records ``week``'s run read (``late``: those it took from
        an earlier week), in place of an earlier run's (``digest.dating``)."""
        self._db.execute("DELETE FROM considered WHERE week = ?", (week,))
        self._db.executemany("INSERT OR IGNORE INTO considered (week, key, late) VALUES (?, ?, 1)",
                             ((week, key) for key in late))
        self._db.executemany("INSERT OR IGNORE INTO considered (week, key, late) VALUES (?, ?, 0)",
                             ((week, key) for key in keys))

    def issues(self) -> list[dict[str, Any]]:
        """Every published issue, oldest first: week, papers, out_dir, files, history, at."""
        rows = self._db.execute("SELECT week, papers, out_dir, files, history, created_at "
                                "FROM issues ORDER BY week")
        return [{"week": week, "papers": papers, "out_dir": out_dir,
                 "files": json.loads(files) if files else [],
                 "history": json.loads(history) if history else None, "published_at": at}
                for week, papers, out_dir, files, history, at in rows]

    def kept_issue(self, week: str) -> bytes | None:
        """``week``'s published issue as ``digest.issue_codec`` packed it; None when the week
        has no issue, or one published before issues were kept."""
        row = self._db.execute("SELECT issue FROM issues WHERE week = ?", (week,)).fetchone()
        return row[0] if row else None

    def considered_in(self, week: str, *, late: bool = False) -> set[int]:
        """The content keys ``week``'s published issue's run read (``late``: only those of
        earlier weeks); none if the issue is not out (a run that failed before it was)."""
        rows = self._db.execute("SELECT key FROM considered WHERE week = ? AND late >= ? AND "
                                "week IN (SELECT week FROM issues)", (week, int(late)))
        return {key for (key,) in rows}

    def taken_late(self, after: str = "") -> set[int]:
        """The content keys a published issue (after the week ``after``) took from an earlier
        week."""
        rows = self._db.execute("SELECT key FROM considered WHERE late = 1 AND week > ? AND "
                                "week IN (SELECT week FROM issues)", (after,))
        return {key for (key,) in rows}

    def published_among(self, names: Iterable[str]) -> set[str]:
        """Which of ``names`` (paper ids and ``~`` aliases) an issue published."""
        wanted, found = sorted(set(names)), set()
        for start in range(0, len(wanted), 500):  # below the 999 values older SQLite binds
            chunk = wanted[start:start + 500]
            marks = ", ".join("?" for _ in chunk)
            rows = self._db.execute(f"SELECT paper_id FROM published WHERE paper_id IN ({marks})",
                                    chunk)
            found |= {name for (name,) in rows}
        return found

    def first_seen(self, keys: Mapping[str, str]) -> dict[str, str]:
        """The week each record key was first seen in; unseen keys get the given week."""
        with self._guard(), self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany("INSERT OR IGNORE INTO first_seen (key, week) VALUES (?, ?)",
                                 list(keys.items()))
            return {key: self._db.execute("SELECT week FROM first_seen WHERE key = ?",
                                          (key,)).fetchone()[0] for key in keys}

    # Titles looked up for an arXiv id (digest.resolve) -----------------------------------

    def resolved(self, title_key: str) -> tuple[str | None, str | None, str] | None:
        """(arXiv id, abs URL, when checked) for a title looked up before (None, None for a
        miss), or None when it was never looked up."""
        row = self._db.execute("SELECT arxiv_id, url, checked_at FROM resolved "
                               "WHERE title_key = ?", (title_key,)).fetchone()
        return (row[0], row[1], row[2]) if row else None

    def remember_resolved(self, title_key: str, arxiv_id: str | None, url: str | None) -> None:
        """Record the answer of one lookup (a miss too), with the time it was made."""
        checked_at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        self._write("INSERT OR REPLACE INTO resolved (title_key, arxiv_id, url, checked_at) "
                    "VALUES (?, ?, ?, ?)", (title_key, arxiv_id, url, checked_at))

    # Mail: each sending, so an issue goes out once ------------------------------------

    def begin_sending(self, week: str, message_id: str, recipients: Iterable[str]) -> int:
        with self._guard():
            cursor = self._db.execute(
                "INSERT INTO sendings (week, message_id, recipients) VALUES (?, ?, ?)",
                (week, message_id, json.dumps(list(recipients))))
        return int(cursor.lastrowid or 0)

    def finish_sending(self, sending: int, answer: str, recipients: Iterable[str]) -> None:
        """The server took the message for ``recipients`` (those it did not turn away)."""
        self._write("UPDATE sendings SET sent_at = CURRENT_TIMESTAMP, answer = ?, "
                    "recipients = ? WHERE id = ?",
                    (answer, json.dumps(list(recipients)), sending))

    def forget_sending(self, sending: int) -> None:
        """The server refused the message: nothing went out."""
        self._write("DELETE FROM sendings WHERE id = ?", (sending,))

    def sendings(self, week: str | None = None) -> list[dict[str, Any]]:
        """Sendings (of ``week``, or all), oldest first; ``sent_at`` None: not confirmed."""
        where, args = ("WHERE week = ?", (week,)) if week else ("", ())
        rows = self._db.execute("SELECT week, message_id, recipients, started_at, sent_at, "
                                f"answer FROM sendings {where} ORDER BY id", args)
        return [{"week": w, "message_id": mid, "recipients": json.loads(rcpt),
                 "started_at": started, "sent_at": sent, "answer": answer}
                for w, mid, rcpt, started, sent, answer in rows]

    def inbox_size(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM inbox WHERE used_in IS NULL"
                                    ).fetchone()[0])

    def _write(self, sql: str, args: tuple[Any, ...]) -> None:
        with self._guard():
            self._db.execute(sql, args)

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            yield
        except (sqlite3.Error, OSError) as exc:
            raise store_fault(self.path, exc) from None

    def weeks(self) -> list[str]:
        return [row[0] for row in self._db.execute("SELECT week FROM issues ORDER BY week DESC")]

    def nonce(self, week: str) -> str:
        """The prompt-delimiter nonce of ``week``: derived from a random secret kept in the
        store, so no abstract can guess it, and the same on every re-run of the week (the
        LLM cache keeps working when a week's listings grow)."""
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('secret', ?)",
                             (secrets.token_hex(16),))
            secret = self._db.execute("SELECT value FROM meta WHERE key = 'secret'").fetchone()[0]
        return hashlib.sha256(f"{secret}\0{week}".encode()).hexdigest()[:12]

    # The inbox: records waiting for an issue -----------------------------------------

    def check_whole(self, *, fix: str = "", setting: str = "new_store") -> None:
        """Read every page (``PRAGMA quick_check``: ~0.06 s for the 50k benchmark's 80 MB) and
        raise StateError naming the file if one is damaged: what a mail hook asks before it
        stores a mail, which a store restored from a backup would otherwise lose. ``fix`` and
        ``setting``: the advice, where a new store is not one (the e-mail's)."""
        try:
            problem = self._db.execute("PRAGMA quick_check(1)").fetchone()[0]
        except sqlite3.Error as exc:
            raise store_fault(self.path, exc) from None
        if problem != "ok":
            problem = " ".join(problem.replace("*** in database main ***", "").split())
            raise StateError(f"{self.path}: the store is damaged ({problem}); "
                             f"{fix or _FIX_CORRUPT}", setting=setting)

    def add_to_inbox(self, records: Iterable[Record], problems: Sequence[str] = ()) -> int:
        """Keep records for the next issue; return how many were new (a repeat is a no-op).
        ``problems``: what reading them left out or doubted (a skipped line, an attachment
        that could not be read), kept for the next newsletter's report (``inbox_problems``)."""
        rows = [(record_key(record), json.dumps(_record_json(record), sort_keys=True))
                for record in records]
        try:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                before = self._db.total_changes
                self._db.executemany("INSERT OR IGNORE INTO inbox (key, record) VALUES (?, ?)",
                                     rows)
                added = self._db.total_changes - before
                if problems:
                    kept = dict.fromkeys([*self.inbox_problems(), *problems])  # once each
                    self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES "
                                     "('inbox_problems', ?)",
                                     (json.dumps(list(kept)[-INBOX_PROBLEMS_KEPT:]),))
                return added
        except (sqlite3.Error, OSError) as exc:
            raise store_fault(self.path, exc) from None

    def inbox_problems(self) -> list[str]:
        """What ``digest ingest`` left out or doubted since the last issue was published."""
        row = self._db.execute("SELECT value FROM meta WHERE key = 'inbox_problems'").fetchone()
        return list(json.loads(row[0])) if row else []

    def inbox(self, week: str) -> list[Record]:
        """Records not yet taken by an issue, plus those ``week``'s issue took (re-runs)."""
        rows = self._db.execute("SELECT record FROM inbox WHERE used_in IS NULL OR used_in = ? "
                                "ORDER BY id", (week,))
        return [_record_from_json(json.loads(row[0])) for row in rows]

    def inbox_used_in(self, week: str) -> set[str]:
        """The record keys of the inbox records ``week``'s issue took."""
        rows = self._db.execute("SELECT key FROM inbox WHERE used_in = ?", (week,))
        return {key for (key,) in rows}

    def inbox_weeks(self, week: str) -> dict[str, str]:
        """The ISO week each record of ``inbox(week)`` was added in, by record key."""
        rows = self._db.execute("SELECT key, added_at FROM inbox WHERE used_in IS NULL OR "
                                "used_in = ?", (week,))
        return {key: current_week(dt.date.fromisoformat(added[:10])) for key, added in rows}

    def mark_inbox_used(self, week: str, records: Iterable[Record]) -> None:
        """Say that ``week``'s issue took these records, so later issues do not."""
        with self._db:
            self._db.execute("BEGIN")
            self._db.executemany("UPDATE inbox SET used_in = ? WHERE key = ? AND used_in IS NULL",
                                 [(week, record_key(record)) for record in records])

    # LLM response cache ---------------------------------------------------------------

    def cached_response(self, key: str) -> dict | None:
        row = self._db.execute("SELECT response FROM llm_cache WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def cache_response(self, key: str, model: str, response: dict, *,
                       prompt_hash: str | None = None,
                       params: Mapping[str, Any] | None = None) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO llm_cache (key, model, response, prompt_hash, params) "
            "VALUES (?, ?, ?, ?, ?)",
            (key, model, json.dumps(response, sort_keys=True), prompt_hash,
             json.dumps(params, sort_keys=True) if params is not None else None))

    # Batch API jobs (digest.batchjobs) -------------------------------------------------

    def add_batch_job(self, job_id: str, week: str, input_file: str, requests: int,
                      plan_hash: str) -> None:
        self._write("INSERT INTO batch_jobs (id, week, input_file, requests, plan_hash) "
                    "VALUES (?, ?, ?, ?, ?)", (job_id, week, input_file, requests, plan_hash))

    def batch_jobs(self, week: str | None = None, *, pending: bool = False
                   ) -> list[dict[str, Any]]:
        """Batch jobs, oldest first: all, one week's, or only those not yet collected."""
        sql = ("SELECT id, week, input_file, requests, plan_hash, state, outcome, submitted_at,"
               " finished_at FROM batch_jobs WHERE (? IS NULL OR week = ?)"
               + (" AND state = 'pending'" if pending else "") + " ORDER BY submitted_at, id")
        keys = ("id", "week", "input_file", "requests", "plan_hash", "state", "outcome",
                "submitted_at", "finished_at")
        return [dict(zip(keys, row, strict=True))
                for row in self._db.execute(sql, (week, week))]

    def finish_batch_job(self, job_id: str, state: str, outcome: str) -> None:
        self._write("UPDATE batch_jobs SET state = ?, outcome = ?, finished_at = "
                    "CURRENT_TIMESTAMP WHERE id = ?", (state, outcome, job_id))

    # LLM call ledger --------------------------------------------------------------------

    def record_call(self, record: CallRecord) -> None:
        columns = ", ".join(f.name for f in fields(CallRecord))
        marks = ", ".join("?" for _ in fields(CallRecord))
        self._db.execute(f"INSERT INTO llm_calls ({columns}) VALUES ({marks})", astuple(record))

    def calls(self) -> list[CallRecord]:
        """Every call in the ledger, oldest first."""
        columns = ", ".join(f.name for f in fields(CallRecord))
        rows = self._db.execute(f"SELECT {columns} FROM llm_calls ORDER BY id")
        return [CallRecord(*row) for row in rows]


def _record_json(record: Record) -> dict[str, Any]:
    return {"title": record.title, "abstract": record.abstract, "arxiv_id": record.arxiv_id,
            "url": record.url, "authors": list(record.authors),
            "published": record.published.isoformat() if record.published else None,
            "sighting": [record.sighting.source, record.sighting.position,
                         record.sighting.line]}


def _record_from_json(data: dict[str, Any]) -> Record:
    source, position, line = data["sighting"]
    published = dt.date.fromisoformat(data["published"]) if data["published"] else None
    return Record(title=data["title"], abstract=data["abstract"],
                  sighting=Sighting(source, position, line), arxiv_id=data["arxiv_id"],
                  url=data["url"], authors=tuple(data["authors"]), published=published)


def templates_gone(payload: Mapping[str, Any]) -> str | None:
    """The templates folder a pending issue was made with (its index and feed are rendered
    with it), if that folder is gone: the issue cannot be finished until it is restored."""
    templates = payload.get("templates")
    return templates if templates and not Path(templates).is_dir() else None


def record_key(record: Record) -> str:
    """Same listing entry → same key: what it says and where it was read."""
    payload = json.dumps(_record_json(record), sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def content_key(record: Record) -> int:
    """Same entry → same key, wherever it was read: what it says (not its file, position or
    line, which change when a listing is moved or rewritten, nor its upvotes, which grow),
    as 63 bits of a hash: the key of ``considered`` rows."""
    said = hashlib.blake2b(digest_size=8)
    for part in (record.title, record.abstract, record.arxiv_id, record.url, *record.authors,
                 record.published.isoformat() if record.published else None):
        text = (part if part is not None else "\0").encode("utf-8", "surrogatepass")
        said.update(len(text).to_bytes(4, "big"))  # length first: fields cannot run together
        said.update(text)
    return int.from_bytes(said.digest(), "big") >> 1


def _locked(error: BaseException) -> bool:
    return "locked" in str(error) or "busy" in str(error)


_FIX_CORRUPT = ("restore it from a backup, or move it away to start a new store (allowing a "
                "new store beside an output folder that already has issues)")


def store_fault(path: str, error: BaseException) -> StateError:
    """One line for an SQLite or disk failure: the file, what happened and the fix. Busy,
    full, read-only and I/O faults may pass (exit 75); a damaged file will not (exit 1), nor
    will a constraint failure, digest's own bug (exit 1, no advice to restore the store)."""
    if isinstance(error, StateError):
        return error
    text = str(error)
    number = getattr(error, "errno", None)
    if _locked(error):
        return StateBusy(f"{path} is locked by another digest run; nothing was stored, try "
                         "again later", reason="it is locked by another digest run")
    if "full" in text or number in (errno.ENOSPC, errno.EDQUOT) or (
            "I/O" in text and _disk_full(path)):
        reason = f"the disk is full ({text})"
        return StateUnavailable(f"{path}: {reason}; nothing was stored: free some space and run "
                                "again", reason=reason)
    if "readonly" in text or "read-only" in text or number == errno.EROFS:
        reason = f"the store cannot be written ({text})"
        return StateUnavailable(f"{path}: {reason}: the disk is read-only or the file's "
                                "permissions forbid it; nothing was stored: make it writable and "
                                "run again", reason=reason)
    if "I/O" in text or "unable to open" in text or number in (errno.EIO, errno.EACCES):
        reason = f"the store cannot be used now ({text})"
        return StateUnavailable(f"{path}: {reason}; nothing was stored: check the disk and its "
                                "permissions, then run again", reason=reason)
    if isinstance(error, sqlite3.IntegrityError):  # a value digest made broke a constraint
        return StateError(f"{path}: digest tried to store a value the store refuses ({text}); "
                          "the store itself is fine: this is an internal error of digest, "
                          "please report it", reason=f"an internal error of digest ({text})")
    return StateError(f"{path}: not a usable state store, damaged ({text}); {_FIX_CORRUPT}",
                      setting="new_store", reason=f"it is damaged ({text})")


def _disk_full(path: str) -> bool:
    """Whether the store's disk has no room left: SQLite says only "disk I/O error" when it
    cannot make the side file (``-shm``) that even reading a WAL store needs."""
    try:
        disk = os.statvfs(Path(path).parent)
    except OSError:
        return False
    return disk.f_bavail * disk.f_frsize < 64 * 1024


def _prepare_file(path: Path, *, new_store: bool) -> None:
    """Refuse a truncated or foreign file; build a missing store under another name and
    link it into place complete, so that nobody ever sees it half made."""
    _refuse_symlink_loop(path)
    if path.is_dir():  # "" and "." too: not a damaged store, a setting to fix
        raise ConfigError(f"state store {str(path) or '(empty)'}: a folder, not a file; give "
                          "the store a file's path, such as state.sqlite", setting="state")
    _remove_dead_builds(path)
    if path.exists():
        problem = _damage(path)
        if problem and not (new_store and path.stat().st_size == 0):
            raise StateError(f"{path}: {problem}; {_FIX_CORRUPT}", setting="new_store")
        if not problem:
            return
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    fresh = path.with_name(f".{path.name}.new-{os.getpid()}-{secrets.token_hex(4)}")
    try:
        db = sqlite3.connect(fresh, isolation_level=None)
        try:
            for script in MIGRATIONS:  # written in place (rollback journal): no WAL to lose
                db.executescript(script)
            db.execute(f"PRAGMA user_version={len(MIGRATIONS)}")
            db.execute("PRAGMA journal_mode=WAL")  # kept in the file: every later use is WAL
        finally:
            db.close()
        with contextlib.suppress(FileExistsError):  # another first use won: theirs is as good
            os.link(fresh, path)
    finally:
        for leftover in (fresh, Path(f"{fresh}-wal"), Path(f"{fresh}-shm")):
            leftover.unlink(missing_ok=True)


def _refuse_symlink_loop(path: Path) -> None:
    """No retry can open a path that leads back to itself: a setting to fix, not a busy disk."""
    try:
        path.resolve()
    except RuntimeError:  # Python 3.11 and 3.12
        pass
    except OSError as error:  # Python 3.13 raises ELOOP
        if error.errno != errno.ELOOP:
            return
    else:
        return
    raise ConfigError(f"state store {path}: a symlink loop, it leads back to itself; point it "
                      "at a file, or give the store another path", setting="state")


INBOX_PROBLEMS_KEPT = 200  # the newest; a mail hook in a loop must not grow the store


@functools.cache
def _tables_made_by(version: int) -> frozenset[str]:
    db = sqlite3.connect(":memory:")
    try:
        for script in MIGRATIONS[:version]:
            db.executescript(script)
        return _table_names(db)
    finally:
        db.close()


def _table_names(db: sqlite3.Connection) -> frozenset[str]:
    return frozenset(row[0] for row in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"))


def _remove_dead_builds(path: Path) -> None:
    """Remove the half-built stores of first uses that were killed (``.NAME.new-PID-…``)."""
    for leftover in path.parent.glob(f".{path.name}.new-*"):
        pid = leftover.name.removeprefix(f".{path.name}.new-").split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            leftover.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def _damage(path: Path) -> str | None:
    """What is wrong with an existing store file, from its size and SQLite header alone.

    A checkpoint writes page 1, whose header gives the new size, before the pages that grow
    the file, so a store in use can look truncated for a moment: it is only called truncated
    if it still looks so after ``_SETTLE_S``. A run killed in that moment leaves the frames in
    the WAL, from which SQLite finishes the checkpoint when the store is opened: with a WAL
    beside it, a short file is no truncation."""
    problem = _header_damage(path)
    if problem and problem.startswith(_TRUNCATED) and _has_wal(path):
        return None
    deadline = time.monotonic() + _SETTLE_S
    while problem and problem.startswith(_TRUNCATED) and time.monotonic() < deadline:
        time.sleep(_SETTLE_S / 10)
        problem = _header_damage(path)
    return problem


def _has_wal(path: Path) -> bool:
    wal = path.with_name(path.name + "-wal")
    return wal.exists() and wal.stat().st_size > _WAL_HEADER


_WAL_HEADER = 32
_TRUNCATED = "the store is truncated"
_SETTLE_S = 0.5  # a checkpoint of a mail's or an issue's pages takes milliseconds


def _header_damage(path: Path) -> str | None:
    size = path.stat().st_size
    if size == 0:
        return "the store is empty (0 bytes): it was truncated, and all its history is gone"
    with path.open("rb") as handle:
        header = handle.read(100)
    if len(header) < 100 or not header.startswith(b"SQLite format 3\0"):
        return "this is not an SQLite state store (or its header is damaged)"
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    header_valid = header[24:28] == header[92:96]
    if header_valid and size < page_size * pages:
        return f"{_TRUNCATED} ({size} bytes where its header says {page_size * pages})"
    return None
