"""--resolve-ids as a library: digest.resolve against a fake arXiv API on 127.0.0.1."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from digest.dedup import known_names, merge, published_names
from digest.ingest.fetch import Fetcher
from digest.models import Paper, Record, Sighting
from digest.normalize import title_key
from digest.resolve import resolve_ids, titles_match
from digest.state import Store

from .fake_arxiv import FakeArxiv, fake_arxiv

TITLES = {f"Learning World Models Number {n}": f"2411.0{n:04d}" for n in range(1, 7)}


def _paper(title: str, arxiv_id: str | None = None, source: str = "page.md") -> Paper:
    return merge([Record(title=title, abstract="An abstract.", sighting=Sighting(source, 0),
                         arxiv_id=arxiv_id)])


@pytest.fixture
def fake() -> Iterator[FakeArxiv]:
    papers = {title_key(t): (t.upper() + "  ", i) for t, i in TITLES.items()}  # case differs
    with fake_arxiv(FakeArxiv(papers=papers)) as server:
        yield server


@pytest.fixture
def fetcher(tmp_path: Path) -> Iterator[Fetcher]:
    with Fetcher(cache_dir=tmp_path / "http", polite={}, retries=0, timeout=0.5,
                 deadline_s=1.0) as made:
        yield made


def _resolve(papers: list[Paper], store: Store, fake: FakeArxiv, fetcher: Fetcher,
             **kwargs: object) -> list[Paper]:
    return resolve_ids(papers, store, fetcher=fetcher, base_url=fake.base_url,
                       **kwargs)  # type: ignore[arg-type]


def test_a_match_sets_the_id_the_abs_link_and_the_paper_id(fake, fetcher) -> None:
    title = "Learning World Models Number 1"
    [paper] = _resolve([_paper(title)], Store(":memory:"), fake, fetcher)
    assert paper.arxiv_id == "2411.00001" and paper.id == "2411.00001"
    assert paper.url == "https://arxiv.org/abs/2411.00001"  # built by digest, not the answer's
    assert paper.title == title and len(fake.requests) == 1


def test_a_near_miss_title_gives_no_id(fake, fetcher) -> None:
    fake.mode = "near-miss"
    original = _paper("Learning World Models Number 1")
    store = Store(":memory:")
    assert _resolve([original], store, fake, fetcher) == [original]
    assert store.resolved(title_key(original.title))[:2] == (None, None)  # the miss is cached


def test_no_result_gives_no_id(fake, fetcher) -> None:
    original = _paper("A Title Nobody Has Written")
    assert _resolve([original], Store(":memory:"), fake, fetcher) == [original]


def test_each_title_is_asked_about_once_hits_and_misses(fake, fetcher) -> None:
    store = Store(":memory:")
    papers = [_paper("Learning World Models Number 2"), _paper("A Title Nobody Has Written")]
    first = _resolve(papers, store, fake, fetcher)
    second = _resolve(papers, store, fake, fetcher)
    assert first == second and second[0].arxiv_id == "2411.00002"
    assert len(fake.requests) == 2


def test_papers_with_an_id_are_not_looked_up(fake, fetcher) -> None:
    paper = _paper("Learning World Models Number 3", arxiv_id="2411.00003")
    assert _resolve([paper], Store(":memory:"), fake, fetcher) == [paper]
    assert fake.requests == []


def test_the_cap_bounds_the_lookups_and_keeps_every_paper(fake, fetcher) -> None:
    papers = [_paper(t) for t in TITLES]
    resolved = _resolve(papers, Store(":memory:"), fake, fetcher, limit=2)
    assert len(fake.requests) == 2 and len(resolved) == len(papers)
    assert [p.arxiv_id for p in resolved] == ["2411.00001", "2411.00002"] + [None] * 4
    assert [p.title for p in resolved] == list(TITLES)


def test_the_deadline_bounds_the_lookups(fake, fetcher) -> None:
    clock = lambda: 10.0 * len(fake.requests)  # noqa: E731 (each request "takes" 10 s)
    resolved = _resolve([_paper(t) for t in TITLES], Store(":memory:"), fake, fetcher,
                        deadline_s=25.0, clock=clock)
    assert len(fake.requests) == 3 and sum(p.arxiv_id is not None for p in resolved) == 3


@pytest.mark.parametrize("mode", ["503", "slow", "garbage", "empty", "rss", "xml", "html",
                                  "arxiv-error"])
def test_a_failure_keeps_the_paper_caches_nothing_and_is_logged_once(
        fake, fetcher, mode, caplog) -> None:
    """A 200 answer that was no arXiv API feed (no body, an RSS maintenance notice, an
    <error> document, an HTML page: feedparser flags none as bozo) was cached as "not on
    arXiv" for every title, with no warning; a later run asked nothing (a probe, this stop)."""
    fake.mode = mode
    papers = [_paper(t) for t in TITLES]
    store = Store(":memory:")
    with caplog.at_level(logging.INFO, logger="digest"):
        assert _resolve(papers, store, fake, fetcher) == papers
    assert len(fake.requests) == 3  # three failures in a row: left alone for the run
    assert sum("lookup failed" in r.getMessage() for r in caplog.records) == 1
    fake.mode = "match"
    assert _resolve(papers[:1], store, fake, fetcher)[0].arxiv_id == "2411.00001"


def test_an_id_another_paper_of_the_run_has_is_not_given_twice(fake, fetcher) -> None:
    holder = _paper("Learning World Models, the long version", arxiv_id="2411.00004")
    lookalike = _paper("Learning World Models Number 4")
    assert _resolve([holder, lookalike], Store(":memory:"), fake, fetcher) == [holder, lookalike]


@pytest.mark.parametrize(("ours", "theirs", "same"), [
    ("Learning World Models", "learning world models.", True),
    ("Learning World-Models for Robots", "Learning World Models for Robot", True),
    ("Learning World Models", "Learning World Models Revisited", False),
    ("Diffusion Policies I", "Diffusion Policies II", False),
])
def test_titles_match_only_closely(ours: str, theirs: str, same: bool) -> None:
    assert titles_match(ours, theirs) is same


def test_across_weeks_a_paper_published_without_an_id_is_known_by_its_id_later(
        fake, fetcher) -> None:
    """Week 1 carried it title-only from a Daily Papers page and resolved its id; week 2
    an arXiv listing has it under that id and a revised title: it is not published again."""
    store = Store(":memory:")
    [week1] = _resolve([_paper("Learning World Models Number 5")], store, fake, fetcher)
    store.record_issue("2026-W46", [week1.id], published_names(week1))
    later = _paper("World Models, Learned: Number 5 (revised)", arxiv_id="2411.00005")
    published = store.published_elsewhere("2026-W47")
    assert any(name in published for name in known_names(later))
    unresolved_week1 = _paper("Learning World Models Number 5")
    store2 = Store(":memory:")
    store2.record_issue("2026-W46", [unresolved_week1.id], published_names(unresolved_week1))
    assert not any(name in store2.published_elsewhere("2026-W47") for name in known_names(later))


def test_answers_survive_in_the_store_file_with_their_time(tmp_path: Path) -> None:
    with Store(tmp_path / "state.sqlite") as store:
        store.remember_resolved("a title", "2411.00001", "https://arxiv.org/abs/2411.00001")
        store.remember_resolved("no such title", None, None)
    with Store(tmp_path / "state.sqlite") as store:
        hit, miss = store.resolved("a title"), store.resolved("no such title")
        assert hit is not None and hit[:2] == ("2411.00001", "https://arxiv.org/abs/2411.00001")
        assert miss is not None and miss[:2] == (None, None) and miss[2].startswith("20")
        assert store.resolved("never asked") is None


def test_a_failing_arxiv_is_one_warning_with_the_fetcher_s_retries_too(fake, tmp_path,
                                                                         caplog) -> None:
    """A 503 arXiv gave 10 WARNING lines (9 "retrying in ...", then the failure), against the
    README's "a failure ... is logged once" (a probe, stop 28): a retry is no problem yet."""
    fake.mode = "503"
    with Fetcher(cache_dir=tmp_path / "http", polite={}, retries=2, timeout=0.5,
                 deadline_s=5.0, sleep=lambda seconds: None) as retrying, \
            caplog.at_level(logging.WARNING, logger="digest"):
        _resolve([_paper(t) for t in TITLES], Store(":memory:"), fake, retrying)
    assert len(fake.requests) == 9
    assert [r.getMessage()[:40] for r in caplog.records if r.levelno >= logging.WARNING] == [
        "--resolve-ids: a title lookup failed (ht"]
