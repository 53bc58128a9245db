"""The state store: one SQLite file that remembers across runs.

What went out in which issue (so next week's issue does not repeat it), the
LLM response cache (so a re-run makes no calls) and the ledger of LLM calls
(tokens, latency, outcome, cost). Schema changes are append-only migrations,
numbered; a store written by a newer digest is refused, not damaged. The
connection is not for sharing between threads: the summarize stage touches
the store from its main thread only.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import Any

from .errors import StateError

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

    def __init__(self, path: str | Path):
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(self.path, timeout=30, isolation_level=None,
                                       check_same_thread=False)
            if self.path != ":memory:":
                self._db.execute("PRAGMA journal_mode=WAL")
            self._migrate()
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
