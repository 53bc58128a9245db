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

import datetime as dt
import hashlib
import json
import secrets
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import Any

from .errors import StateBusy, StateError
from .models import Record, Sighting

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
    """The state store. ``Store(":memory:")`` for tests and for runs that must not persist."""

    def __init__(self, path: str | Path, *, busy_timeout_s: float = 30.0):
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(self.path, timeout=busy_timeout_s, isolation_level=None,
                                       check_same_thread=False)
            if self.path != ":memory:":
                self._db.execute("PRAGMA journal_mode=WAL")
            self._migrate()
        except sqlite3.OperationalError as exc:
            if _locked(exc):
                raise StateBusy(f"{self.path} is locked by another digest run; try again later"
                                ) from None
            raise StateError(f"{self.path}: cannot use this state store ({exc}); pass another "
                             "--state path or move this file away") from None
        except sqlite3.DatabaseError as exc:
            raise StateError(f"{self.path}: cannot use this state store ({exc}); pass another "
                             "--state path or move this file away") from None

    def _migrate(self) -> None:
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version > len(MIGRATIONS):
            raise StateError(f"{self.path} was written by a newer digest (schema {version}); "
                             "upgrade digest")
        for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
            try:
                self._db.executescript(f"BEGIN; {script}; PRAGMA user_version={number}; COMMIT;")
            except sqlite3.DatabaseError:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # Issues and what they published ------------------------------------------------

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

    def add_to_inbox(self, records: Iterable[Record]) -> int:
        """Keep records for the next issue; return how many were new (a repeat is a no-op)."""
        rows = [(_record_key(record), json.dumps(_record_json(record), sort_keys=True))
                for record in records]
        try:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                before = self._db.total_changes
                self._db.executemany("INSERT OR IGNORE INTO inbox (key, record) VALUES (?, ?)",
                                     rows)
                return self._db.total_changes - before
        except sqlite3.OperationalError as exc:
            if _locked(exc):
                raise StateBusy(f"{self.path} is locked by another digest run; nothing was "
                                "stored, try again later") from None
            raise

    def inbox(self, week: str) -> list[Record]:
        """Records not yet taken by an issue, plus those ``week``'s issue took (re-runs)."""
        rows = self._db.execute("SELECT record FROM inbox WHERE used_in IS NULL OR used_in = ? "
                                "ORDER BY id", (week,))
        return [_record_from_json(json.loads(row[0])) for row in rows]

    def mark_inbox_used(self, week: str, records: Iterable[Record]) -> None:
        """Say that ``week``'s issue took these records, so later issues do not."""
        with self._db:
            self._db.execute("BEGIN")
            self._db.executemany("UPDATE inbox SET used_in = ? WHERE key = ? AND used_in IS NULL",
                                 [(week, _record_key(record)) for record in records])

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


def _record_key(record: Record) -> str:
    """Same listing entry → same key: what it says and where it was read."""
    payload = json.dumps(_record_json(record), sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def _locked(error: sqlite3.OperationalError) -> bool:
    return "locked" in str(error) or "busy" in str(error)
