"""One fixture per format (tests/fixtures/ingest, made-up papers), read through load_sources."""

from __future__ import annotations

import ast
import csv
import datetime as dt
import io
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from digest.errors import ConfigError
from digest.ingest import FORMATS, detect_format, load_sources, parse_text
from digest.ingest.fields import (
    ABSTRACT_FIELDS,
    AUTHOR_FIELDS,
    DATE_FIELDS,
    ID_FIELDS,
    TITLE_FIELDS,
    URL_FIELDS,
    record_from_mapping,
)

FIXTURES = Path(__file__).parent / "fixtures" / "ingest"


def load(name: str, **kwargs):
    result = load_sources([str(FIXTURES / name)], **kwargs)
    assert result.errors == [], [str(e) for e in result.errors]
    return result


def test_hugging_face_daily_papers_api():
    result = load("hf_daily_papers.json")
    first, second, third = result.records
    assert first.title == "LanternKV: Streaming Key-Value Cache Eviction for Million-Token Contexts"
    assert first.abstract.startswith("Long-context language models keep")
    assert first.arxiv_id == "2611.04217"
    assert first.url == "https://arxiv.org/abs/2611.04217"
    assert first.authors == ("Mira Okonkwo", "Tomás Lindqvist")
    assert first.published == dt.date(2026, 11, 12)  # the paper's date, not the listing's
    assert second.title == "Gridwise: Weather Forecasting with k-Nearest Analog Ensembles"
    assert (second.arxiv_id, second.url) == ("2611.03001", "https://arxiv.org/abs/2611.03001v2")
    assert third.abstract == ""
    assert len(result.warnings) == 1 and "record 3" in result.warnings[0]
    assert "no abstract" in result.warnings[0]


def test_arxiv_api_atom_results():
    lantern, branes = load("arxiv_api.atom").records
    assert lantern.title.startswith("LanternKV: Streaming Key-Value Cache Eviction for Million")
    assert lantern.arxiv_id == "2611.04217"
    assert lantern.url == "https://arxiv.org/abs/2611.04217v1"  # the version is kept for the link
    assert lantern.authors == ("Mira Okonkwo", "Tomás Lindqvist")
    assert lantern.published == dt.date(2026, 11, 12)
    assert "\n" not in lantern.abstract and lantern.abstract.endswith("8% of the entries.")
    assert branes.arxiv_id == "hep-th/0601999"
    assert "N=2 supersymmetry" in branes.abstract and "g_s → 0" in branes.abstract


def _api_page(tmp_path: Path, total: int, start: int = 0) -> Path:
    text = (FIXTURES / "arxiv_api.atom").read_text(encoding="utf-8")
    text = text.replace("<opensearch:totalResults>2<", f"<opensearch:totalResults>{total}<")
    text = text.replace("<opensearch:startIndex>0<", f"<opensearch:startIndex>{start}<")
    path = tmp_path / "page.atom"
    path.write_text(text, encoding="utf-8")
    return path


def test_an_arxiv_api_answer_that_is_one_page_of_more_results_says_so(tmp_path):
    """An answer whose opensearch:totalResults was 48213 with 2 entries gave 2 records and no
    word: arXiv's default max_results is 10, so a typical query URL quietly gave 10 papers
    (a probe, stop 32). No further page is fetched."""
    from tests.opsrun import cli

    path = _api_page(tmp_path, 48213)
    result = load_sources([str(path)])
    assert len(result.records) == 2
    (warning,) = result.warnings
    assert "the query matched 48,213 papers and this answer holds 2" in warning
    assert "max_results" in warning and "start" in warning
    report = tmp_path / "r.json"
    run = cli("summarize", str(path), "--backend", "offline", "--report", str(report))
    assert run.returncode == 0 and "matched 48,213 papers" in run.stderr
    assert any("matched 48,213" in w for w in json.loads(report.read_text())["warnings"])


def test_a_later_page_and_a_whole_answer_are_told_apart(tmp_path):
    (warning,) = load_sources([str(_api_page(tmp_path, 48213, start=10))]).warnings
    assert "holds 2 (results 11 to 12)" in warning
    assert load_sources([str(_api_page(tmp_path, 2))]).warnings == []


def test_arxiv_listing_rss_strips_the_announce_prefix():
    lantern, pocket = load("arxiv_listing.rss").records
    assert lantern.abstract.startswith("Long-context language models")
    assert "Announce" not in lantern.abstract
    assert (lantern.arxiv_id, lantern.url) == ("2611.04217", "https://arxiv.org/abs/2611.04217v1")
    assert lantern.authors == ("Mira Okonkwo", "Tomás Lindqvist")
    assert pocket.arxiv_id == "2611.01010" and pocket.url.endswith("v2")
    assert pocket.published == dt.date(2026, 11, 13)


def test_arxiv_listing_atom():
    (record,) = load("arxiv_listing.atom").records
    assert record.title == "Sparse Mixtures of Tiny Experts for Keyword Spotting"
    assert record.abstract.startswith("Keyword spotting on hearing aids")
    assert record.arxiv_id == "2611.07777"
    assert record.authors == ("Lea Brandt", "Omar Haddad")


def test_old_arxiv_rss_title_suffix_and_html():
    (record,) = load("arxiv_listing_old.rdf").records
    assert record.title == "Counting Commas: A Made-Up Study of Punctuation in Prompts"
    assert (record.arxiv_id, record.url) == ("2101.09999", "https://arxiv.org/abs/2101.09999v1")
    assert "<" not in record.abstract and "more commas" in record.abstract
    assert "not surprising & not causal" in record.abstract
    assert record.authors == ("Ada Comma", "Full Stop")


def test_arxiv_snapshot_json_lines():
    crops, knots = load("arxiv_snapshot.jsonl").records
    assert crops.title == ("Thermal Imaging for Early Crop Stress Detection with ℓ_1-Sparse "
                           "Autoencoders")
    assert crops.abstract.endswith("No labels are needed.")
    assert crops.authors == ("Rosa Delgado", "Kwame Mensah", "J. Müller")
    assert crops.published == dt.date(2026, 11, 9)  # v1, not the last update
    # identity without a version, the link to the last version (whose text this is)
    assert (crops.arxiv_id, crops.url) == ("2611.08080", "https://arxiv.org/abs/2611.08080v2")
    assert knots.arxiv_id == "math/0612345"


def test_arxiv_snapshot_csv_mangled_by_a_spreadsheet():
    quasars, five = load("arxiv_snapshot_spreadsheet.csv").records
    assert quasars.arxiv_id == "0704.0010"  # 704.001 lost a leading and a trailing zero
    assert quasars.title == "A Made-Up Survey of Imaginary Quasars"
    assert quasars.authors == ("L. Vogel", "M. Ortiz")
    assert five.arxiv_id == "1501.00020"


def test_the_real_arxiv_metadata_sample(tmp_path):
    sample = Path(__file__).resolve().parents[2] / "shared" / "data" / "arxiv_metadata_sample.csv"
    if not sample.is_file():
        pytest.fail(f"{sample} is missing: keep ../shared beside the checkout")
    result = load_sources([str(sample)])
    assert result.errors == [] and result.warnings == []
    assert len(result.records) == 2000
    assert len({r.arxiv_id for r in result.records}) == 2000
    assert all(r.arxiv_id and r.arxiv_id.startswith("0704.") for r in result.records)
    assert all(r.title and r.abstract and r.published for r in result.records)
    assert all("\n" not in r.title for r in result.records)
    raw = _raw_rows(sample)
    for record, row in zip(result.records, raw, strict=True):
        left, right = row["id"].split(".")  # the sample's ids lost their zeros: 704.001
        arxiv_id = f"{left.zfill(4)}.{right.ljust(4, '0')}"
        last = ast.literal_eval(row["versions"])[-1]["version"]
        assert (record.arxiv_id, record.url) == (arxiv_id, f"https://arxiv.org/abs/{arxiv_id}{last}")
        if not re.search(r"[\\$~{}'`]", row["title"]):  # plain titles: only the lines are joined
            assert record.title == " ".join(row["title"].split())
    assert sum("\n" in row["title"] for row in raw) > 500  # so the joining is exercised
    assert sum(len(ast.literal_eval(row["versions"])) > 1 for row in raw) > 500
    _assert_latex_cleaned(result.records, raw)


def _raw_rows(sample: Path) -> list[dict[str, str]]:
    """The sample read independently of digest, with the standard csv module."""
    previous = csv.field_size_limit(2**24)
    try:
        with sample.open(encoding="utf-8", newline="") as file:
            return list(csv.DictReader(file))
    finally:
        csv.field_size_limit(previous)


def _assert_latex_cleaned(records, raw) -> None:
    with_math = [i for i, row in enumerate(raw) if "$" in row["abstract"] + row["title"]]
    still = [i for i in with_math if "$" in records[i].abstract + records[i].title]
    assert len(with_math) > 400 and len(still) < 0.05 * len(with_math)  # unbalanced ones stay
    texts = [r.title + " " + r.abstract for r in records]
    for command in (r"\emph{", r"\textit{", r"\cite{", r"\alpha", r"\frac{", r"\sqrt{",
                    r"\mathcal{", r"\bar{", r"\'", r'\"'):
        assert not any(command in text for text in texts), command
    by_id = {r.arxiv_id: r for r in records}
    assert by_id["0704.0001"].authors[0] == "C. Balázs"  # C. Bal\'azs
    assert "\n" not in by_id["0704.0001"].title


def test_generic_json_with_other_field_names_and_bad_entries():
    result = load("papers.json")
    tidewater, quill = result.records
    assert tidewater.abstract.startswith("Coastal flood forecasts")  # "Summary"
    assert tidewater.url == "https://example.org/papers/tidewater"  # "Link"
    assert tidewater.authors == ("Nadia Rahman", "Piet de Vries")  # "Author", "and"
    assert tidewater.published == dt.date(2026, 11, 9)  # "Published-At"
    assert tidewater.arxiv_id is None
    assert quill.arxiv_id == "2611.02020" and quill.url.endswith("/2611.02020v3")
    assert [r.sighting.position for r in result.records] == [1, 2]
    assert any("record 3" in w and "no title" in w for w in result.warnings)
    assert any("record 4" in w and "not an object" in w for w in result.warnings)


def test_json_lines_skip_a_cut_off_last_line():
    result = load("papers.jsonl")
    ripple, bramble = result.records
    assert ripple.authors == ("Yuki Tanaka", "Erik Solberg")
    assert ripple.arxiv_id == "2611.03333"  # found in the URL
    assert bramble.abstract.startswith("We fuzz")  # "description"
    assert bramble.sighting.line == 3
    assert len(result.warnings) == 1
    assert "papers.jsonl:4" in result.warnings[0] and "truncated" in result.warnings[0]


def test_csv_with_quoted_multiline_fields():
    loom, saltmarsh = load("papers.csv").records
    assert loom.abstract.endswith("at no extra training cost.")
    assert "\n" not in loom.abstract
    assert loom.authors == ("Ana Souza", "Ben Carter")
    assert saltmarsh.sighting.line == 4  # the row after a two-line row
    assert '"hard" negatives' in saltmarsh.abstract
    assert saltmarsh.url is None


def test_tsv():
    (record,) = load("papers.tsv").records
    assert record.title == "Tabby: Tab-Separated Listings Are Fine"
    assert record.arxiv_id == "2611.06060"


@pytest.mark.parametrize("name, fmt", [
    ("hf_daily_papers.json", "json"), ("papers.json", "json"), ("papers.jsonl", "jsonl"),
    ("arxiv_snapshot.jsonl", "jsonl"), ("papers.csv", "csv"), ("papers.tsv", "csv"),
    ("arxiv_api.atom", "feed"), ("arxiv_listing.rss", "feed"), ("arxiv_listing_old.rdf", "feed"),
    ("daily_papers_variants.txt", "daily-papers"),
])
def test_detection_by_content_and_name(name, fmt):
    text = (FIXTURES / name).read_text(encoding="utf-8")
    assert detect_format(text, name) == fmt
    if fmt != "csv":  # the content alone decides, whatever the file is called
        assert detect_format(text, "download") == fmt


def test_json_lines_in_a_json_file_and_a_csv_named_txt():
    lines = (FIXTURES / "arxiv_snapshot.jsonl").read_text(encoding="utf-8")
    assert len(parse_text(lines, "snapshot.json")) == 2
    table = (FIXTURES / "papers.csv").read_text(encoding="utf-8")
    assert detect_format(table, "papers.txt") == "csv"


def test_format_can_be_forced_by_name_or_alias(tmp_path):
    listing = tmp_path / "listing.data"
    listing.write_text((FIXTURES / "arxiv_listing.rss").read_text(encoding="utf-8"))
    for fmt in ("feed", "rss", "atom", "RSS"):
        assert len(load_sources([str(listing)], fmt=fmt).records) == 2
    snapshot = load_sources([str(FIXTURES / "arxiv_snapshot_spreadsheet.csv")],
                            fmt="arxiv-snapshot")
    assert len(snapshot.records) == 2


def test_forcing_the_wrong_format_is_a_clear_source_error():
    result = load_sources([str(FIXTURES / "papers.csv")], fmt="json")
    (error,) = result.errors
    assert error.source.endswith("papers.csv") and "invalid JSON" in error.problem


def test_an_unknown_format_name_is_a_usage_error():
    with pytest.raises(ConfigError, match="unknown format.*daily-papers"):
        load_sources([str(FIXTURES / "papers.csv")], fmt="yaml")


def test_every_record_keeps_its_provenance():
    names = ["hf_daily_papers.json", "papers.csv", "arxiv_api.atom", "daily_papers_variants.txt"]
    result = load_sources([str(FIXTURES / n) for n in names])
    for record in result.records:
        assert Path(record.sighting.source).name in names
        assert record.sighting.position >= 1
    by_source: dict[str, list[int]] = {}
    for record in result.records:
        by_source.setdefault(record.sighting.source, []).append(record.sighting.position)
    assert all(positions == sorted(set(positions)) for positions in by_source.values())


def test_the_readme_documents_every_format_and_accepted_field_name():
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Input formats", 1)[1].split("\n## ", 1)[0]
    for name in FORMATS:
        assert f"`{name}`" in section, name
    for names in (TITLE_FIELDS, ABSTRACT_FIELDS, ID_FIELDS, URL_FIELDS, AUTHOR_FIELDS,
                  DATE_FIELDS):
        for name in names:
            assert f"`{name}`" in section, name


def test_dates_in_common_spellings_are_read_and_an_unreadable_one_is_warned(tmp_path):
    """"17 Nov 2026", "November 17, 2026" and a Unix time were dropped without a word, and the
    paper filed under the week first read (a probe, stop 28); what still cannot be read
    ("11/17/2026": month or day first?) is warned, naming the lines."""
    rows = [{"title": f"Paper {n} on Widgets", "abstract": "We study widgets in depth and find "
             "that they work well in practice.", **date} for n, date in enumerate([
                 {"submitted": "17 Nov 2026"}, {"publication_date": "November 17, 2026"},
                 {"created": 1794873600}, {"date": "11/17/2026"}, {"date": "2026-11-17"}])]
    path = tmp_path / "lab.json"
    path.write_text(json.dumps({"papers": rows}), encoding="utf-8")
    result = load_sources([str(path)])
    assert [r.published for r in result.records] == [
        dt.date(2026, 11, 17)] * 3 + [None, dt.date(2026, 11, 17)]
    assert any("date" in w and "record 4" in w and "11/17/2026" in w for w in result.warnings), (
        result.warnings)


# --- author strings (a probe, stop 29) -------------------------------------------------------

AN_ABSTRACT = ("We study how author strings are split into names when a listing gives them as "
               "one string, with affiliations, in either name order, for a weekly issue.")


def _authors_read(value, fmt: str = "json") -> tuple[str, ...]:
    """The authors one record with ``value`` as its authors is read with, in ``fmt``."""
    title = "Splitting author strings into names"
    if fmt == "csv":
        out = io.StringIO()
        csv.writer(out).writerows([["title", "abstract", "authors"], [title, AN_ABSTRACT, value]])
        text = out.getvalue()
    else:
        text = json.dumps({"title": title, "abstract": AN_ABSTRACT, "authors": value})
        text = text if fmt == "jsonl" else f"[{text}]"
    (record,) = parse_text(text, f"authors.{fmt}", fmt=fmt)
    return record.authors


@pytest.mark.parametrize("fmt", ["json", "jsonl", "csv"])
@pytest.mark.parametrize("value, names", [
    ("Zinaida A. Lykova (Newcastle University, England)", ("Zinaida A. Lykova",)),
    ("A. Author (MIT, USA), B. Author (ETH, Switzerland)", ("A. Author", "B. Author")),
    ("A. One (MIT (CSAIL), USA) and B. Two [ETH, Zurich]", ("A. One", "B. Two")),
    ("Finn, Chelsea and Levine, Sergey", ("Chelsea Finn", "Sergey Levine")),
    ("Finn, Chelsea and Levine, Sergey and others", ("Chelsea Finn", "Sergey Levine")),
    ("van der Berg, Jan; Finn, Chelsea", ("Jan van der Berg", "Chelsea Finn")),
    ("Finn, Chelsea", ("Chelsea Finn",)),
    # names in a script written without spaces are two names, as before (a probe, this stop:
    # "王伟, 李娜" was shown as one person, "李娜 王伟")
    ("王伟, 李娜", ("王伟", "李娜")),
    ("Wang, 李娜", ("Wang", "李娜")),
    ("Chelsea Finn, Sergey Levine", ("Chelsea Finn", "Sergey Levine")),
    ("A. One, B. Two and C. Three", ("A. One", "B. Two", "C. Three")),
    ("A. One, B. Two, and C. Three", ("A. One", "B. Two", "C. Three")),
    ("Nadia Rahman and Piet de Vries", ("Nadia Rahman", "Piet de Vries")),
    ("A.B.Kaidalov, M.I.Vysotsky", ("A.B.Kaidalov", "M.I.Vysotsky")),
    ("The BABAR Collaboration, B. Aubert, et al", ("The BABAR Collaboration", "B. Aubert")),
])
def test_an_author_string_is_split_into_names_without_affiliations(value, names, fmt):
    """Commas inside an affiliation split it ("(Newcastle University and England)"), and
    BibTeX's "Last, First and Last, First" became four names (a probe, stop 29)."""
    assert _authors_read(value, fmt) == names


def test_an_author_list_reads_last_first_and_affiliations_like_a_string():
    """``["Finn, Chelsea"]`` was shown as "Finn, Chelsea" and its string form as two names."""
    listed = ["Finn, Chelsea", "Levine, Sergey (UC Berkeley, USA)", "Pieter Abbeel"]
    assert _authors_read(listed) == ("Chelsea Finn", "Sergey Levine", "Pieter Abbeel")
    # a name and what follows it is not flipped: "Stanford Chelsea Finn" would be wrong
    assert _authors_read(["Chelsea Finn, Stanford"]) == ("Chelsea Finn, Stanford",)
    assert _authors_read("Finn, Chelsea and Levine, Sergey") == _authors_read(listed)[:2]


def test_an_author_object_reads_its_name_like_a_list_item():
    """``[{"name": "Finn, Chelsea"}]`` stayed "Finn, Chelsea" where the list item
    ``["Finn, Chelsea"]`` reads "Chelsea Finn" (a probe, this stop)."""
    objects = [{"name": "Finn, Chelsea"}, {"fullname": "Levine, Sergey (UC Berkeley, USA)"},
               {"name": "Pieter Abbeel"}, {"name": 42}]
    assert _authors_read(objects) == ("Chelsea Finn", "Sergey Levine", "Pieter Abbeel", "42")


def test_the_arxiv_listing_and_the_fields_drop_affiliations_with_one_function():
    from digest.ingest import arxiv_listing, fields

    assert fields.without_affiliations is arxiv_listing.without_affiliations
    assert arxiv_listing.without_affiliations("A. One (MIT (CSAIL)), B. Two [1]") == (
        "A. One , B. Two ")


ZH = [("大型语言模型在医学中的应用综述",
       "本文综述了大型语言模型在医学领域的应用，包括临床决策支持、病历生成、医学问答和药物发现。我们分析了"
       "现有方法的优点和局限，并讨论了数据隐私、幻觉和监管方面的挑战，最后提出了未来的研究方向。"),
      ("大規模言語モデルの医療応用に関する調査",
       "本稿では、大規模言語モデルの医療分野への応用を概観する。臨床意思決定支援、カルテ作成、医療質問応答、"
       "創薬を取り上げ、既存手法の長所と限界を分析し、今後の研究課題を示す。")]


def test_a_listing_of_papers_in_chinese_or_japanese_is_read():
    """A JSON listing of two Chinese (or Japanese) papers with full abstracts was refused as
    "no title followed by an abstract that reads like one": an abstract was prose only with
    a dozen words between spaces, which these scripts do not write (a probe, stop 32)."""
    for title, abstract in ZH:
        text = json.dumps([{"title": title, "abstract": abstract, "date": "2026-11-17"}],
                          ensure_ascii=False)
        (record,) = parse_text(text, "zh.json")
        assert record.title == title and record.abstract == abstract


# An arXiv id written as a JSON number -------------------------------------------------------

def _records(text: str) -> list:
    """The records of a JSON array, each read as the JSON reader reads an object."""
    return [record_from_mapping(item, "listing.json", n, None)
            for n, item in enumerate(json.loads(text))]


def _ids(objects: list[dict]) -> list[str | None]:
    return [r.arxiv_id for r in _records(json.dumps(objects))]


def test_an_arxiv_id_written_as_a_number_keeps_its_trailing_zero():
    """{"id": 2401.01230} was read as 2401.0123 (no such id) unless the record had a
    ``versions`` field, so the same paper as {"id": "2401.01230"} was listed twice, once with a
    broken link (a probe, stop 32)."""
    records = _records('[{"id": 2401.01230, "title": "A"}, {"id": "2401.01230", "title": "B"},'
                       ' {"id": 704.001, "title": "C"}, {"arxiv_id": 1501.2, "title": "D"}]')
    assert [r.arxiv_id for r in records] == ["2401.01230", "2401.01230", "0704.0010", "1501.20000"]
    assert records[0].url == "https://arxiv.org/abs/2401.01230"


def test_a_number_that_cannot_be_an_arxiv_id_is_not_taken_as_one():
    """A bad month, more digits than the month's ids have, or no paper number: not an id."""
    assert _ids([{"id": 2413.01234, "title": "A"}, {"id": 2400.0123, "title": "B"},
                 {"id": 2401.012345, "title": "C"}, {"id": 1412.12345, "title": "D"},
                 {"id": 12401.0123, "title": "E"}, {"id": 2401.0, "title": "F"},
                 {"id": 2401, "title": "G"}, {"id": True, "title": "H"},
                 {"id": 2413.01234, "url": "https://arxiv.org/abs/2401.00007", "title": "I"}]
                ) == [None] * 8 + ["2401.00007"]


_ERA_IDS = st.one_of(  # 4 digits after the dot to 2014, 5 from 2015 on
    st.builds(lambda y, m, n: f"{y:02d}{m:02d}.{n:04d}", st.integers(7, 14), st.integers(1, 12),
              st.integers(1, 9999)).filter(lambda i: i >= "0704"),
    st.builds(lambda y, m, n: f"{y:02d}{m:02d}.{n:05d}", st.integers(15, 99), st.integers(1, 12),
              st.integers(1, 99999)))


@settings(max_examples=400, deadline=None)
@given(_ERA_IDS, st.booleans())
def test_an_arxiv_id_as_a_number_and_as_a_string_is_one_id(arxiv_id, snapshot):
    """Whatever zeros a number drops, and with or without a snapshot's ``versions``."""
    extra = {"versions": [{"version": "v1"}]} if snapshot else {}
    objects = [{"id": float(arxiv_id), "title": "A", **extra},
               {"id": arxiv_id, "title": "B", **extra}]
    assert _ids(objects) == [arxiv_id, arxiv_id]
