"""The reader's library: BibTeX and Zotero CSV readers, and every format digest reads."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from digest.errors import SourceError
from digest.ingest import IngestLimits
from digest.relevance import load_library, parse_bibtex, parse_zotero_csv
from digest.relevance._bibtex import split_authors

FIXTURES = Path(__file__).parent / "fixtures" / "relevance"


def test_bibtex_export_with_nested_braces_accents_macros_and_comments() -> None:
    records, warnings = parse_bibtex((FIXTURES / "library.bib").read_text(), "library.bib")
    by_title = {r.title: r for r in records}
    maml = by_title["Model-Agnostic Meta-Learning for Fast Adaptation of Deep Networks"]
    assert maml.authors == ("Chelsea Finn", "Pieter Abbeel", "Sergey Levine")
    assert maml.arxiv_id == "1703.03400" and maml.url == "https://arxiv.org/abs/1703.03400"
    assert maml.abstract.endswith("including classification, regression, and reinforcement "
                                  "learning.")
    world = by_title["World Models: Can agents learn inside of their own dreams?"]
    assert world.authors == ("David Ha", "Jürgen Schmidhuber") and world.abstract == ""
    assert world.arxiv_id == "1803.10122"  # from "journal = {arXiv preprint arXiv:…}"
    dreamer = by_title["Mastering Diverse Domains through World Models"]  # "quoted" values
    assert dreamer.authors[1] == "Jurgis Pašukonis"
    safe = by_title["A Comprehensive Survey on Safe Reinforcement Learning"]  # @article(…)
    assert safe.authors == ("Javier García", "Fernando Fernández") and safe.arxiv_id is None
    book = by_title["Reinforcement Learning: An Introduction (Second Edition) \u2013 & More"]
    assert book.authors == ("Richard S. Sutton", "Andrew G. Barto", "The MIT Press Team")
    assert [r.sighting.line for r in records] == [9, 23, 30, 40, 49]
    assert warnings == ["library.bib:56: @misc{notitle2024} has no title; skipped"]


def test_bibtex_string_macros_concatenate_and_months_expand() -> None:
    text = ('@string{ venue = "Conf" }\n@misc{k, title = "A " # venue # { paper}, '
            'note = jan}\n')
    (record,), _ = parse_bibtex(text, "x.bib")
    assert record.title == "A Conf paper"
    (record,), _ = parse_bibtex('@preamble("x {)} y")\n@comment(skip)\n@misc(k, title={T})',
                                "y.bib")
    assert record.title == "T" and record.sighting.line == 3


def test_a_newline_before_the_bibtex_key_is_read() -> None:
    """"@article{\n  key1,\n  title = {…}\n}" failed with "nlkey.bib:2: expected 'name =
    value' in this entry": the key was looked for only up to the first newline (a probe)."""
    text = "@article{\n  key1,\n  title = {A Paper}\n}\n@misc{\n  title = {No Key}\n}\n"
    records, warnings = parse_bibtex(text, "nlkey.bib")
    assert [r.title for r in records] == ["A Paper", "No Key"] and warnings == []


@contextmanager
def _at_most(seconds: float) -> Iterator[None]:
    """Fail the block, rather than wait, when it runs longer than ``seconds``."""
    def stop(*_: object) -> None:
        raise TimeoutError(f"took longer than {seconds} s")
    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_splitting_authors_is_linear_in_a_run_of_whitespace() -> None:
    """`author={A` + 200,000 spaces + `B}` hung a run: ' and ' was tried at every position
    of the run, each try scanning the rest of it (2.9 s at 20,000 spaces, minutes at 200,000;
    a probe). Linear, it takes well under a second."""
    with _at_most(5.0):
        assert len(split_authors("A" + " " * 200_000 + "B")) == 1  # one name, cut long
        assert split_authors("A" + " " * 100_000 + "and" + "\n" * 100_000 + "B") == ("A", "B")
        text = ("@misc{k, title={T}, author={A" + " " * 200_000 + "and {Barnes and Noble}}}")
        (record,), _ = parse_bibtex(text, "wide.bib")
    assert record.authors == ("A", "Barnes and Noble")


@pytest.mark.parametrize("text, line, problem", [
    ("@article{a, title={ok}}\n\n@article{b,\n  title = {never closed,\n}", 3, "never closed"),
    ("@article{a,\n title = {x},\n author {Finn}\n}", 3, "expected 'name = value'"),
    ('@misc{a,\n title = "open quote}\n', 1, "never closed"),
    ("@misc{a,\n title = ,\n}", 2, "no value"),
])
def test_broken_bibtex_names_the_file_and_line(text: str, line: int, problem: str) -> None:
    with pytest.raises(SourceError) as caught:
        parse_bibtex(text, "lib.bib")
    assert caught.value.line == line and problem in caught.value.problem
    assert str(caught.value).startswith(f"lib.bib:{line}: ")


def test_zotero_csv_export() -> None:
    records, warnings = parse_zotero_csv((FIXTURES / "zotero.csv").read_text(encoding="utf-8"),
                                         "zotero.csv")
    dreamer, rt1, sutton = records
    assert dreamer.title == "Mastering Diverse Domains through World Models"
    assert dreamer.authors == ("Danijar Hafner", "Jurgis Pašukonis", "Jimmy Ba",
                               "Timothy Lillicrap")
    assert dreamer.arxiv_id == "2301.04104" and dreamer.abstract.startswith("Developing a")
    assert rt1.arxiv_id == "2212.06817"  # "Extra": "arXiv: 2212.06817"
    assert rt1.sighting.line == 4  # the row above spans two lines
    assert sutton.abstract == "" and sutton.arxiv_id is None
    assert warnings == ["zotero.csv:6: a row has no title; skipped"]


def test_broken_zotero_csv_names_the_line() -> None:
    text = '"Title","Abstract Note"\n"ok","fine"\n"broken "quote" here","x"\n'
    with pytest.raises(SourceError) as caught:
        parse_zotero_csv(text, "z.csv")
    assert caught.value.line == 3 and "broken CSV" in str(caught.value)


def test_library_reads_every_digest_format_plus_bibtex_and_zotero(tmp_path: Path) -> None:
    liked = tmp_path / "liked.json"
    liked.write_text(json.dumps([{"title": "Dreaming of Robots", "abstract": "World models.",
                                  "authors": ["Chelsea Finn"]}]))
    library = load_library([liked, FIXTURES / "library.bib", FIXTURES / "zotero.csv"])
    titles = [r.title for r in library.records]
    assert titles[0] == "Dreaming of Robots" and len(titles) == 1 + 5 + 3
    assert len(library.warnings) == 2


@pytest.mark.parametrize("name, content, problem", [
    ("missing.bib", None, "no such file"),
    ("empty.bib", "% nothing but a comment\n", "holds no paper"),
    ("liked.json", "[]", "holds no paper"),
    ("liked.jsonl", '{"title": "x"}\n{"title": broken}\n{"title": "y"}\n', ""),
])
def test_bad_library_files_are_errors_naming_the_file(tmp_path: Path, name: str,
                                                      content: str | None, problem: str) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    try:
        library = load_library([path])
    except SourceError as error:
        assert str(error).startswith(str(path)) and problem in str(error)
    else:  # a JSON-lines file keeps its good lines and warns about the bad one, by line
        assert name == "liked.jsonl" and len(library.records) == 2
        assert any(w.startswith(f"{path}:2: not a JSON object") for w in library.warnings)


BIB_PIECES = ["@article{", "@string{", "@comment{", "@preamble(", "@misc(", "key,", "title",
              " = ", "{", "}", '"', "#", ",", ")", "(", "\\", '\\"', "and", "\n", "x", "@", "é"]


@given(st.lists(st.sampled_from(BIB_PIECES), max_size=60))
@settings(max_examples=300, deadline=None)
def test_any_bibtex_text_parses_or_fails_with_a_line(pieces: list[str]) -> None:
    text = "".join(pieces)
    try:
        records, _ = parse_bibtex(text, "fuzz.bib")
    except SourceError as error:
        assert error.line is not None and 1 <= error.line <= text.count("\n") + 1
    else:
        assert all(r.title and r.sighting.source == "fuzz.bib" for r in records)


@given(st.text(alphabet='"Title,Abstract Note\n\r x;é', max_size=300))
@settings(max_examples=300, deadline=None)
def test_any_zotero_csv_text_parses_or_fails_with_a_line(body: str) -> None:
    try:
        records, _ = parse_zotero_csv('"Title","Abstract Note"\n' + body, "fuzz.csv")
    except SourceError as error:
        assert error.line is not None and error.line >= 2
    else:
        assert all(r.title for r in records)


BIB_ENTRY = ("@article{lee2026,\n  title = {Learning World Models for Robot Control},\n"
             "  author = {Lee, Ann},\n  year = {2026}\n}\n")


def test_a_library_folder_or_glob_reads_its_bibtex_and_zotero_files(tmp_path: Path) -> None:
    """`library = ["bibdir/*.bib"]` said "no file matches this pattern"; a folder dropped its
    .bib files (the listing walk's suffixes) or said it held no paper (a probe, stop 28)."""
    folder = tmp_path / "bibdir"
    folder.mkdir()
    (folder / "a.bib").write_text(BIB_ENTRY, encoding="utf-8")
    (folder / "liked.json").write_text(json.dumps([{"title": "Graph Planning for Tool Agents"}]),
                                       encoding="utf-8")
    (folder / "notes.md").write_text("# my notes\nnothing here\n", encoding="utf-8")
    by_glob = load_library([str(folder / "*.bib")])
    assert [r.title for r in by_glob.records] == ["Learning World Models for Robot Control"]
    by_folder = load_library([folder])
    assert sorted(r.title for r in by_folder.records) == [
        "Graph Planning for Tool Agents", "Learning World Models for Robot Control"]
    assert any("notes.md" in warning for warning in by_folder.warnings)


def test_a_library_folder_with_no_paper_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("# my notes\n", encoding="utf-8")
    with pytest.raises(SourceError, match="no paper"):
        load_library([tmp_path])


def _bib(count: int, prefix: str) -> str:
    return "".join(f"@misc{{{prefix}{i}, title = {{Paper {prefix} {i}}}}}\n" for i in range(count))


def test_a_library_keeps_to_the_record_limits_and_counts_each_cut(tmp_path: Path) -> None:
    """A library ignored [limits]: max_records_per_source = 3 and a 10-entry .bib used all
    10 with no error, and four 52 MB BibTeX files (337k entries) took 146 s and 2.1 GB (a
    probe). Now each file keeps to max_records_per_source, all of them to
    max_records_per_run, and each cut is an error that counts what was left out."""
    (tmp_path / "a.bib").write_text(_bib(10, "a"), encoding="utf-8")
    (tmp_path / "b.bib").write_text(_bib(10, "b"), encoding="utf-8")
    library = load_library([tmp_path / "a.bib"], IngestLimits(max_records_per_source=3))
    assert [r.title for r in library.records] == ["Paper a 0", "Paper a 1", "Paper a 2"]
    (cut,) = library.cuts
    assert cut.source == str(tmp_path / "a.bib") and "7 of its 10 records" in cut.problem
    assert "[limits] max_records_per_source" in str(cut)
    library = load_library([tmp_path / "a.bib", tmp_path / "b.bib"],
                           IngestLimits(max_records_per_source=8, max_records_per_run=12))
    assert len(library.records) == 12 and library.records[-1].title == "Paper b 3"
    assert [(c.source, c.problem.split(", so ")[1]) for c in library.cuts] == [
        (str(tmp_path / "a.bib"), "2 of its 10 records were left out (kept 8)"),
        (str(tmp_path / "b.bib"), "2 of its 10 records were left out (kept 8)"),
        (str(tmp_path / "b.bib"), "4 of its 8 records were left out (kept 4)")]
    assert "[limits] max_records_per_run" in str(library.cuts[-1])


@pytest.mark.parametrize("kind", ["json", "jsonl", "csv"])
def test_a_listing_file_in_the_library_is_cut_to_the_cap_like_a_bibtex_one(tmp_path: Path,
                                                                          kind: str) -> None:
    """A JSON or CSV listing past max_records_per_source refused the whole library (exit 1)
    where a BibTeX file of the same size was cut with a count (stop 31's note)."""
    papers = [{"title": f"Graph Networks for Protein Folding, Part {i}",
               "abstract": "We fold proteins with graph networks. " * 8} for i in range(10)]
    path = tmp_path / f"liked.{kind}"
    if kind == "json":
        path.write_text(json.dumps(papers), encoding="utf-8")
    elif kind == "jsonl":
        path.write_text("".join(json.dumps(p) + "\n" for p in papers), encoding="utf-8")
    else:
        path.write_text("title,abstract\n" + "".join(f'"{p["title"]}","{p["abstract"]}"\n'
                                                    for p in papers), encoding="utf-8")
    library = load_library([path], IngestLimits(max_records_per_source=3))
    assert [r.title for r in library.records] == [p["title"] for p in papers[:3]]
    (cut,) = library.cuts
    assert cut.source == str(path) and "7 of its 10 records" in cut.problem
    assert "[limits] max_records_per_source" in str(cut)
