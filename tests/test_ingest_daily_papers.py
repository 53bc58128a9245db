"""The Daily Papers page parser: variations of real pages, the year, and fuzzing."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from digest.dedup import deduplicate
from digest.errors import SourceError
from digest.ingest import load_sources, parse_text
from digest.ingest.daily_papers import parse_daily_papers

FIXTURES = Path(__file__).parent / "fixtures" / "ingest"
VARIANTS = (FIXTURES / "daily_papers_variants.txt").read_text(encoding="utf-8")
TITLES = ["Fernweh: Zero-Shot Navigation from Street-View Memories",
          "Orphan Title Without Any Abstract",
          "Sundial: Calibrated Time-Series Forecasts from Frozen Language Models",
          "Pebble: Tiny Recurrent Models for Sensor Streams"]
ABSTRACT = ("A made-up abstract that is long enough to read as prose. It has two sentences, "
            "and it says nothing at all about any real paper.")


def test_variant_page_headers_noise_and_missing_abstract():
    parsed = parse_daily_papers(VARIANTS, "daily_papers_variants.txt")
    assert [r.title for r in parsed.records] == TITLES
    assert parsed.records[1].abstract == ""
    assert all(r.abstract for i, r in enumerate(parsed.records) if i != 1)
    (warning,) = parsed.warnings
    assert warning.startswith("daily_papers_variants.txt:23: entry 2")
    assert "no abstract" in warning
    assert [r.sighting.line for r in parsed.records] == [15, 23, 25, 32]


def test_date_lines_in_other_forms_and_a_second_day():
    records = parse_daily_papers(VARIANTS, "page.txt").records
    assert [r.published for r in records] == [dt.date(2026, 11, 13)] * 3 + [dt.date(2026, 11, 14)]


@pytest.mark.parametrize("transform", [
    lambda t: t.replace("\n", "\r\n"),
    lambda t: "\ufeff" + t,
    lambda t: "\n".join(line + "   \t" for line in t.split("\n")),
    lambda t: t.replace("\n", "\r"),
    lambda t: "\n\n\n" + t.replace("\n\n", "\n \n\n") + "\n\n\n",
], ids=["crlf", "bom", "trailing-spaces", "old-mac", "extra-blank-lines"])
def test_line_ending_bom_and_spacing_variations_give_the_same_records(transform):
    def content(text):
        return [(r.title, r.abstract, r.published, r.sighting.position)
                for r in parse_daily_papers(text, "page.txt").records]

    assert content(transform(VARIANTS)) == content(VARIANTS)


def test_bytes_with_bom_and_crlf_through_load_sources(tmp_path):
    page = tmp_path / "page.txt"
    page.write_bytes(b"\xef\xbb\xbf" + VARIANTS.replace("\n", "\r\n").encode("utf-8"))
    result = load_sources([str(page)])
    assert [r.title for r in result.records] == TITLES
    assert len(result.warnings) == 1


@pytest.mark.parametrize("date_line, name, published", [
    ("Mar 14", "daily_papers_2026-03-16.txt", dt.date(2026, 3, 14)),
    ("Dec 31", "daily_papers_2027-01-02.txt", dt.date(2026, 12, 31)),  # saved after New Year
    ("Mar 14", "papers_2025.txt", dt.date(2025, 3, 14)),
    ("Mar 14", "daily_papers_a.txt", None),  # no year anywhere: left empty, not guessed
    ("March 14, 2024", "daily_papers_a.txt", dt.date(2024, 3, 14)),
    ("14 March 2024", "x.txt", dt.date(2024, 3, 14)),
    ("2024-03-14", "x.txt", dt.date(2024, 3, 14)),
    ("Thu, Mar 14", "papers_2024-03-20.txt", dt.date(2024, 3, 14)),
    ("Daily Papers — Mar 14th", "2024.txt", dt.date(2024, 3, 14)),
])
def test_the_year_comes_from_the_date_line_or_the_file_name(date_line, name, published):
    page = f"Subscribe\n\n{date_line}\n\nA Made-Up Title\n\n{ABSTRACT}\n"
    (record,) = parse_daily_papers(page, name).records
    assert record.published == published


def test_a_page_without_date_or_header_still_parses_title_abstract_pairs():
    page = f"First Made-Up Title\n\n{ABSTRACT}\n\nSecond Made-Up Title\n\n{ABSTRACT}\n"
    records = parse_text(page, "copied.txt")
    assert [r.title for r in records] == ["First Made-Up Title", "Second Made-Up Title"]


@pytest.mark.parametrize("head, kept", [
    ("", None),  # no structure: a title that is no title makes the text no listing
    ("Mar 14\n\n", ["First Made-Up Title", "Third Made-Up Title"]),  # the screen drops it
])
def test_a_title_that_is_no_title_is_judged_once_by_the_page_or_by_the_screen(head, kept):
    page = (f"{head}First Made-Up Title\n\n{ABSTRACT}\n\n- a list item, not a title\n\n"
            f"{ABSTRACT}\n\nThird Made-Up Title\n\n{ABSTRACT}\n")
    if kept is None:
        with pytest.raises(SourceError, match="no paper listing"):
            parse_text(page, "notes.txt")
    else:
        assert [r.title for r in parse_text(page, "notes.txt")] == kept


def test_an_abstract_without_a_title_is_skipped_with_a_warning():
    long_abstract = " ".join([ABSTRACT] * 3)
    page = f"Mar 14\n\nA Title\n\n{long_abstract}\n\n{long_abstract}\n\nNext Title\n\n{ABSTRACT}\n"
    parsed = parse_daily_papers(page, "p.txt")
    assert [r.title for r in parsed.records] == ["A Title", "Next Title"]
    assert len(parsed.warnings) == 1 and "p.txt:7" in parsed.warnings[0]


def test_seed_pages_keep_their_counts(seeds):
    result = load_sources([str(seeds)])
    assert len(result.records) == 226 and result.warnings == [] and result.errors == []
    assert all(r.abstract for r in result.records)
    assert all(r.published is None for r in result.records)  # the seed pages carry no year


def test_examples_keep_their_counts_and_get_dated_from_their_names():
    examples = Path(__file__).resolve().parents[1] / "examples"
    result = load_sources([str(examples / "*.txt")])
    assert len(result.records) == 38 and result.warnings == []
    assert {r.published for r in result.records} == {dt.date(2026, 11, d) for d in (16, 18, 20)}


def test_examples_reading_list_enriches_two_papers_with_links_and_authors():
    examples = Path(__file__).resolve().parents[1] / "examples"
    papers = {p.title.split(":")[0]: p
              for p in deduplicate(load_sources([str(examples)]).records).papers}
    assert len(papers) == 30
    assert papers["ToolWeaver"].url == "https://papers.example.org/2026/toolweaver"
    assert papers["ToolWeaver"].times_seen == 4
    assert papers["GraspFormer"].authors[0] == "Tomasz Wierzbicki"


PAGE_PARTS = st.sampled_from([
    "new", "Subscribe", "Mar 14", "2026-02-30", "Nov 31", "▲ 12", "Submitted by x", "",
    "A Made-Up Title", ABSTRACT, "\ufeff", "\r\n", "\n\n", "   ", "Daily Papers", "$x$", "\x00",
])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(PAGE_PARTS, st.text(max_size=30)), max_size=30).map("\n\n".join))
def test_any_text_gives_records_or_a_clean_error(text):
    try:
        records = parse_text(text, "fuzz.txt", fmt="daily-papers")
    except SourceError as error:
        assert str(error).startswith("fuzz.txt")
        return
    for record in records:
        assert record.title and record.title == record.title.strip()
        assert record.sighting.source == "fuzz.txt" and record.sighting.position >= 1


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_give_records_or_a_clean_error(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("fuzz") / "page.txt"
    path.write_bytes(data)
    result = load_sources([str(path)])
    assert len(result.errors) + result.sources_read == 1
    for error in result.errors:
        assert str(error).startswith(str(path))


def test_a_seven_word_abstract_passes_in_json_and_reads_as_a_title_on_a_page(tmp_path):
    """What the README says of the shortest real abstracts, checked in both places (a probe,
    stop 28, found the README promised it for every format)."""
    import json as json_module

    from digest.errors import SourceError
    from digest.ingest import load_sources
    short = "We prove a variation of Gronwall's lemma."
    listing = tmp_path / "one.json"
    listing.write_text(json_module.dumps([{"title": "A Short Note on Gronwall Inequalities",
                                           "abstract": short}]), encoding="utf-8")
    assert [r.abstract for r in load_sources([str(listing)]).records] == [short]
    page = tmp_path / "page.txt"
    page.write_text(f"Daily Papers\n\nNov 18, 2026\n\nA Short Note on Gronwall Inequalities\n\n"
                    f"{short}\n", encoding="utf-8")
    result = load_sources([str(page)])
    assert result.records == [] and isinstance(result.errors[0], SourceError)
