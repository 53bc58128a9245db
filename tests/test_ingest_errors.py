"""Bad input: each problem is a clear message naming the file, and the others are still read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from digest.errors import SourceError
from digest.ingest import PARSERS, load_sources, parse_text
from digest.ingest.base import MAX_ABSTRACT_CHARS, MAX_TITLE_CHARS

FIXTURES = Path(__file__).parent / "fixtures" / "ingest"
GOOD = str(FIXTURES / "papers.tsv")


def only_error(path: Path | str) -> SourceError:
    result = load_sources([str(path), GOOD])
    assert result.sources_read == 1 and len(result.records) == 1  # the good source still counts
    (error,) = result.errors
    assert error.source == str(path) and error.fix
    return error


@pytest.mark.parametrize("name, problem, line", [
    ("empty.txt", "the source is empty", None),
    ("truncated.json", "the JSON ends early", 3),
    ("unknown.txt", "cannot tell the format", None),
    ("page.html", "HTML web page", None),
])
def test_bad_fixtures(name, problem, line):
    error = only_error(FIXTURES / name)
    assert problem in error.problem
    assert error.line == line


@pytest.mark.parametrize("data, kind", [
    (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", "a PDF"),
    (b"PK\x03\x04\x14\x00\x00\x00", "a zip archive"),
    (b"\x1f\x8b\x08\x00\x00\x00", "a gzip file"),
    (b"\x7fELF\x02\x01\x01\x00\x00\x00\x00", "binary file"),
])
def test_binary_files(tmp_path, data, kind):
    path = tmp_path / "listing.json"
    path.write_bytes(data)
    assert kind in only_error(path).problem


def test_missing_file_and_empty_glob(tmp_path):
    assert "no such file" in only_error(tmp_path / "nope.txt").problem
    assert "no file matches" in only_error(str(tmp_path / "*.nothing")).problem


def test_a_declared_encoding_is_used_and_reported(tmp_path):
    feed = (FIXTURES / "arxiv_api.atom").read_text(encoding="utf-8")
    path = tmp_path / "latin.atom"
    path.write_bytes(feed.replace('encoding="UTF-8"', 'encoding="ISO-8859-1"').encode("latin-1"))
    result = load_sources([str(path)])
    assert result.records[0].authors[1] == "Tomás Lindqvist"
    (warning,) = result.warnings
    assert str(path) in warning and "not UTF-8" in warning and "iso-8859-1" in warning.lower()
    assert "as the source declares" in warning


def test_a_detected_encoding_is_used_and_reported():
    result = load_sources([str(FIXTURES / "cp1252.csv")])
    (record,) = result.records
    assert record.title == "Café Recommendations with “Taste” Embeddings"
    assert "naïve reviews — made up" in record.abstract
    (warning,) = result.warnings
    assert "cp1252.csv" in warning and "decoded as cp1252 (detected)" in warning
    assert "line 2" in warning


def test_utf16_with_a_bom_is_read(tmp_path):
    path = tmp_path / "excel.csv"
    path.write_bytes((FIXTURES / "papers.csv").read_text(encoding="utf-8").encode("utf-16"))
    result = load_sources([str(path)])
    assert len(result.records) == 2 and result.warnings == []


def test_a_declared_encoding_that_does_not_fit_falls_back_to_detection(tmp_path):
    feed = (FIXTURES / "arxiv_listing.rss").read_text(encoding="utf-8")
    path = tmp_path / "liar.rss"
    path.write_bytes(feed.replace("encoding='UTF-8'", "encoding='us-ascii'").encode("cp1252"))
    result = load_sources([str(path)])
    assert result.records[0].authors == ("Mira Okonkwo", "Tomás Lindqvist")
    (warning,) = result.warnings
    assert "declares us-ascii, which does not fit" in warning and "cp1252" in warning


def test_undecodable_bytes_are_an_error_naming_the_line(tmp_path):
    path = tmp_path / "noise.txt"
    path.write_bytes(b"Mar 14\n\nTitle\n\n" + bytes(range(0x80, 0x100)) * 8)
    error = only_error(path)
    assert "not valid UTF-8" in error.problem and error.line == 5


def test_an_oversized_abstract_and_title_are_capped_with_a_warning(tmp_path):
    path = tmp_path / "big.jsonl"
    rows = [{"title": "T " * MAX_TITLE_CHARS, "abstract": "word " * 50_000},
            {"title": "Normal", "abstract": "Normal abstract."}]
    path.write_text("\n".join(json.dumps(row) for row in rows), encoding="utf-8")
    result = load_sources([str(path)])
    big, normal = result.records
    assert len(big.abstract) <= MAX_ABSTRACT_CHARS and big.abstract.endswith("…")
    assert len(big.title) <= MAX_TITLE_CHARS
    assert normal.abstract == "Normal abstract."
    assert len(result.warnings) == 2
    assert all(f"{path}:1: record 1" in w for w in result.warnings)
    assert any("abstract is more than 90,000 characters; kept the first 6,000" in w
               for w in result.warnings)
    assert any("title is 999 characters; kept the first 500" in w for w in result.warnings)


def test_an_oversized_csv_field_is_capped_not_fatal(tmp_path):
    path = tmp_path / "big.csv"
    path.write_text('title,abstract\nBig,"' + "x" * 200_000 + '"\n'
                    'Normal,"A normal abstract of a few words."\n', encoding="utf-8")
    result = load_sources([str(path)])
    assert len(result.records[0].abstract) == MAX_ABSTRACT_CHARS and result.warnings


def test_broken_csv_quoting_names_the_line(tmp_path):
    path = tmp_path / "broken.csv"
    path.write_text('title,abstract\nFine,"Fine."\nBad,"a "quote" inside"\n', encoding="utf-8")
    error = only_error(path)
    assert "broken CSV" in error.problem and error.line == 3


def test_csv_without_a_title_column_lists_the_columns(tmp_path):
    path = tmp_path / "cols.csv"
    path.write_text("name_of_paper,text\nA,B\n", encoding="utf-8")
    error = load_sources([str(path)], fmt="csv").errors[0]
    assert "no title column" in error.problem and "name_of_paper" in error.problem


def test_json_without_any_title_lists_the_fields(tmp_path):
    path = tmp_path / "fields.json"
    path.write_text('[{"heading": "A", "body": "B"}]', encoding="utf-8")
    error = only_error(path)
    assert "no record has a title" in error.problem and "heading" in error.problem


def test_json_that_is_not_a_list_of_papers(tmp_path):
    path = tmp_path / "number.json"
    path.write_text("42", encoding="utf-8")
    assert "found a JSON int" in only_error(path).problem


def test_a_feed_with_no_entries_is_a_warning_and_broken_xml_an_error(tmp_path):
    empty = tmp_path / "empty.rss"
    empty.write_text('<?xml version="1.0"?><rss version="2.0"><channel><title>x</title>'
                     "</channel></rss>", encoding="utf-8")
    broken = tmp_path / "broken.xml"
    broken.write_text("<rss><channel><item><title>Cut", encoding="utf-8")
    result = load_sources([str(empty), str(broken)])
    assert result.sources_read == 1 and "no entries" in result.warnings[0]
    assert "not a well-formed feed" in result.errors[0].problem


def test_a_truncated_feed_keeps_the_complete_entries_with_a_warning(tmp_path):
    text = (FIXTURES / "arxiv_api.atom").read_text(encoding="utf-8")
    path = tmp_path / "cut.atom"
    path.write_text(text[: text.index("<title>Toy Branes")], encoding="utf-8")
    result = load_sources([str(path)])
    assert result.records[0].arxiv_id == "2611.04217"
    assert any("XML error" in w for w in result.warnings)


def test_strict_stops_at_the_first_bad_source():
    with pytest.raises(SourceError, match="truncated.json:3"):
        load_sources([GOOD, str(FIXTURES / "truncated.json"), GOOD], strict=True)


def test_one_bad_source_in_a_directory_does_not_stop_the_others(tmp_path):
    for name in ("papers.csv", "truncated.json", "hf_daily_papers.json", "empty.txt"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    result = load_sources([str(tmp_path)])
    assert result.sources_read == 2 and len(result.records) == 5
    assert sorted(Path(e.source).name for e in result.errors) == ["empty.txt", "truncated.json"]


FORMATS = ["daily-papers", "json", "jsonl", "csv", "feed", None]


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=200), st.sampled_from(FORMATS))
def test_any_text_in_any_format_gives_records_or_a_clean_error(text, fmt):
    try:
        records = parse_text(text, "fuzz.any", fmt=fmt)
    except SourceError as error:
        assert str(error).startswith("fuzz.any")
        return
    assert all(record.title for record in records)


@pytest.mark.parametrize("name, text", [
    ("deep.json", "[" * 100_000),
    ("deep.jsonl", '{"a": ' * 50_000 + "\n"),
    ("deep-head.jsonl", "[" * 3_000 + "\n{}\n"),
])
def test_json_nested_too_deeply_is_a_clean_error(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    error = only_error(path)
    assert "nested too deeply" in error.problem or "no line is a JSON object" in error.problem


def test_json_with_a_huge_integer_is_read(tmp_path):
    path = tmp_path / "big.jsonl"
    path.write_text('{"title": "Huge", "abstract": "An abstract beside a huge number.", "n": '
                    + "7" * 5000 + "}\n",
                    encoding="utf-8")
    (record,) = load_sources([str(path)]).records
    assert record.title == "Huge"


def test_a_parser_bug_is_reported_for_its_source_and_the_others_are_read(monkeypatch, tmp_path):
    def broken(text: str, source: str):
        raise KeyError("a bug")

    monkeypatch.setitem(PARSERS, "broken", broken)  # a third-party parser, registered
    path = tmp_path / "any.txt"
    path.write_text("anything", encoding="utf-8")
    result = load_sources([str(path)], fmt="broken")
    (error,) = result.errors
    assert error.source == str(path) and "unexpected KeyError" in error.problem
    assert "report" in error.fix
    with pytest.raises(SourceError, match="unexpected KeyError"):
        load_sources([str(path)], fmt="broken", strict=True)


def test_an_email_nested_too_deeply_is_a_clean_error(tmp_path):
    nested = b"".join(b"Content-Type: multipart/mixed; boundary=b%d\n\n--b%d\n" % (i, i)
                      for i in range(3000))
    path = tmp_path / "deep.eml"
    path.write_bytes(b"From: a@example.org\nSubject: s\nMIME-Version: 1.0\n" + nested +
                     b"Content-Type: text/plain\n\nhello\n")
    assert "nested too deeply" in only_error(path).problem
