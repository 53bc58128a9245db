"""Hugging Face upvotes: read from the Daily Papers API JSON, and the highest kept on merge."""

from __future__ import annotations

from pathlib import Path

from digest.dedup._merge import merge
from digest.ingest.structured import parse_json
from digest.models import Record, Sighting

FIXTURE = Path(__file__).parent / "fixtures" / "ingest" / "hf_daily_upvotes.json"


def _upvotes_by_title() -> dict[str, int | None]:
    parsed = parse_json(FIXTURE.read_text(), str(FIXTURE))
    return {record.title: record.upvotes for record in parsed.records}


def test_paper_upvotes_and_top_level_upvotes_are_read() -> None:
    votes = _upvotes_by_title()
    assert votes["World Models for Sim-to-Real Transfer"] == 42
    assert votes["A Paper Whose Count Sits Outside"] == 7


def test_missing_or_garbage_upvotes_stay_unknown() -> None:
    votes = _upvotes_by_title()
    assert votes["A Paper With A Bogus Count"] is None
    assert votes["A Paper Without Votes"] is None


def _record(source: str, upvotes: int | None) -> Record:
    return Record(title="Same Paper", abstract="x", sighting=Sighting(source, 0),
                  arxiv_id="2411.01001", upvotes=upvotes)


def test_merge_keeps_the_highest_upvotes() -> None:
    paper = merge([_record("a", 3), _record("b", None), _record("c", 17), _record("d", 5)])
    assert paper.upvotes == 17


def test_a_single_record_keeps_its_upvotes() -> None:
    assert merge([_record("a", 9)]).upvotes == 9
    assert merge([_record("a", None), _record("b", None)]).upvotes is None
