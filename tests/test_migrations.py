"""Store migrations: a store of every earlier schema upgrades in place, keeps its rows, and a
failed upgrade changes nothing (issue 16: no test covered them)."""

from __future__ import annotations

import sqlite3

import pytest

from digest.errors import StateError
from digest.state import MIGRATIONS, Store

LATEST = len(MIGRATIONS)


def _store_at(path, version: int) -> None:
    """A store file as digest wrote it at schema ``version``, with a row per table it had."""
    db = sqlite3.connect(path)
    for script in MIGRATIONS[:version]:
        db.executescript(script)
    if version >= 1:
        db.execute("INSERT INTO issues (week, papers) VALUES ('2026-W40', 2)")
        db.executemany("INSERT INTO published (paper_id, week) VALUES (?, '2026-W40')",
                       [("arxiv:2601.00001",), ("arxiv:2601.00002",)])
        db.execute("INSERT INTO llm_cache (key, model, response) VALUES ('k1', 'm', '{\"a\": 1}')")
    db.execute(f"PRAGMA user_version={version}")
    db.commit()
    db.close()


def _version(path) -> int:
    db = sqlite3.connect(path)
    try:
        return db.execute("PRAGMA user_version").fetchone()[0]
    finally:
        db.close()


@pytest.mark.parametrize("version", range(1, LATEST))
def test_a_store_of_every_earlier_schema_upgrades_and_keeps_its_rows(tmp_path, version):
    path = tmp_path / "state.sqlite"
    _store_at(path, version)
    with Store(path) as store:
        assert store.published_before("2026-W41") == {"arxiv:2601.00001", "arxiv:2601.00002"}
        assert store.cached_response("k1") == {"a": 1}
        assert store.inbox_size() == 0  # tables of later schemas exist and work
        assert store.sendings() == []
        assert store.resolved("no such title") is None
        assert store.considered_in("2026-W40") == set()  # an issue from before: none read
    assert _version(path) == LATEST


def test_an_upgraded_store_is_the_same_schema_as_a_new_one(tmp_path):
    old, new = tmp_path / "old.sqlite", tmp_path / "new.sqlite"
    _store_at(old, 1)
    Store(old).close()
    Store(new).close()

    def schema(path):
        db = sqlite3.connect(path)
        try:
            rows = db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' "
                              "ORDER BY name").fetchall()
        finally:
            db.close()
        return {name: " ".join(sql.split()) for name, sql in rows}

    assert schema(old) == schema(new)


def test_a_failed_upgrade_changes_nothing(tmp_path):
    path = tmp_path / "state.sqlite"
    _store_at(path, 2)
    db = sqlite3.connect(path)  # a table of migration 3 already there: the upgrade must fail
    db.execute("CREATE TABLE inbox (x)")
    db.commit()
    db.close()
    with pytest.raises(StateError, match="state.sqlite"):
        Store(path)
    assert _version(path) == 2  # rolled back: no half-migrated store
    db = sqlite3.connect(path)
    try:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        assert "meta" not in tables and "pending" not in tables
        assert db.execute("SELECT count(*) FROM published").fetchone()[0] == 2
    finally:
        db.close()


def test_a_store_from_a_newer_digest_is_refused_untouched(tmp_path):
    path = tmp_path / "state.sqlite"
    _store_at(path, LATEST)
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version={LATEST + 1}")
    db.commit()
    db.close()
    with pytest.raises(StateError, match="newer digest"):
        Store(path)
    assert _version(path) == LATEST + 1


def test_opening_a_current_store_twice_migrates_nothing(tmp_path):
    path = tmp_path / "state.sqlite"
    Store(path).close()
    with Store(path) as store:
        store.record_issue("2026-W47", ["a"])
    with Store(path) as store:
        assert store.published_before("2026-W48") == {"a"}
    assert _version(path) == LATEST
