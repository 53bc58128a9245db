"""Only listings are papers: the hostile corpus in every format, folder walks, the mail hook."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from digest.cli import app
from digest.ingest import load_sources
from digest.ingest.plausible import abstract_problem, title_problem
from digest.state import Store

FIXTURES = Path(__file__).parent / "fixtures" / "ingest"
HOSTILE = FIXTURES / "hostile"
EXPECTED = {name: count for name, count in
            json.loads((HOSTILE / "expected.json").read_text(encoding="utf-8")).items()
            if not name.startswith("_")}
# What every older fixture gave before the confidence rules: they must give the same.
OLDER_FIXTURES = {"arxiv_api.atom": 2, "arxiv_listing.atom": 1, "arxiv_listing.rss": 2,
                  "arxiv_listing_mail.eml": 3, "arxiv_listing_old.rdf": 1,
                  "arxiv_snapshot.jsonl": 2, "arxiv_snapshot_spreadsheet.csv": 2,
                  "cp1252.csv": 1, "daily_papers_forwarded.eml": 2,
                  "daily_papers_html_only.eml": 1, "daily_papers_variants.txt": 4,
                  "hf_daily_papers.json": 3, "papers.csv": 2, "papers.json": 2,
                  "papers.jsonl": 2, "papers.tsv": 1}


def test_the_corpus_covers_every_input_format():
    suffixes = {Path(name).suffix for name in EXPECTED}
    assert {".txt", ".md", ".json", ".jsonl", ".csv", ".atom", ".rss", ".eml"} <= suffixes
    assert set(EXPECTED) == {str(p.relative_to(HOSTILE)) for p in HOSTILE.glob("*/*")}
    accepted = {name: n for name, n in EXPECTED.items() if name.startswith("accept/")}
    assert (len(EXPECTED) - len(accepted), len(accepted), sum(accepted.values())) == (15, 10, 26)
    assert all(n > 0 for n in accepted.values())  # the README's numbers


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_junk_is_refused_and_real_looking_listings_are_kept(name):
    result = load_sources([str(HOSTILE / name)])
    assert len(result.records) == EXPECTED[name]
    if EXPECTED[name] == 0:
        (error,) = result.errors
        kind = "message" if name.endswith(".eml") else "file"
        assert f"no paper listing in this {kind}" in error.problem
        assert error.source == str(HOSTILE / name)
    else:
        assert result.errors == []


def test_precision_and_recall_on_the_corpus_and_the_older_fixtures():
    kept = wanted = right = 0
    cases = [(HOSTILE / n, c) for n, c in EXPECTED.items()]
    cases += [(FIXTURES / n, c) for n, c in OLDER_FIXTURES.items()]
    for path, count in cases:
        got = len(load_sources([str(path)]).records)
        kept, wanted, right = kept + got, wanted + count, right + min(got, count)
    assert (right / kept, right / wanted) == (1.0, 1.0)


def test_a_junk_record_inside_a_listing_is_skipped_with_a_warning():
    result = load_sources([str(HOSTILE / "accept" / "listing.jsonl")])
    assert [r.title[:6] for r in result.records] == ["Mosaic", "Brine:"]
    (warning,) = result.warnings
    assert "1 record not read as papers" in warning and "'## Not a paper'" in warning


def test_a_folder_walk_skips_a_readme_and_notes_with_a_warning(tmp_path):
    for name in ("README.md", "notes.txt"):
        (tmp_path / name).write_bytes((HOSTILE / "refuse" / name).read_bytes())
    (tmp_path / "day.txt").write_bytes((FIXTURES / "daily_papers_variants.txt").read_bytes())
    result = load_sources([str(tmp_path)])
    assert len(result.records) == 4 and result.errors == []
    skipped = [w for w in result.warnings if "skipped, no paper listing in this file" in w]
    assert sorted(w.split(":")[0] for w in skipped) == [str(tmp_path / "README.md"),
                                                         str(tmp_path / "notes.txt")]
    assert load_sources([str(tmp_path)], strict=True).records == result.records


def test_a_readme_named_on_the_command_line_is_an_error():
    result = load_sources([str(HOSTILE / "refuse" / "README.md")])
    assert result.records == [] and len(result.errors) == 1


@pytest.mark.parametrize("name", ["personal_mail.eml", "bounce.eml", "out_of_office.eml"])
def test_digest_ingest_of_a_mail_without_a_listing_exits_1_and_stores_nothing(tmp_path, name):
    state = tmp_path / "state.sqlite"
    mail = (HOSTILE / "refuse" / name).read_text(encoding="utf-8")
    result = CliRunner().invoke(app, ["ingest", "-", "--state", str(state)], input=mail)
    assert result.exit_code == 1
    assert "no paper listing in this message" in result.output
    assert not state.exists() or Store(state).inbox("2026-W47") == []


def test_a_bounce_is_refused_even_though_it_quotes_a_listing():
    bounce = (HOSTILE / "refuse" / "bounce.eml").read_text(encoding="utf-8")
    assert "Lantern: Streaming" in bounce  # the returned message is a real listing
    (error,) = load_sources([str(HOSTILE / "refuse" / "bounce.eml")]).errors
    assert "delivery report" in error.problem


@pytest.mark.parametrize("title", [
    "U-max-Statistics", "Epitaxial graphene", "Hey, That's My Model!", "Best-of-N Sampling",
    "100 Days After DeepSeek-R1: A Survey", "Hi-Fi: High-Fidelity Audio Tokenizers",
    "3.8-Micron Photometry of HD 209458b", "Q&A over Widget Catalogues with Retrieval"])
def test_real_titles_are_titles(title):
    assert title_problem(title) is None


@pytest.mark.parametrize("title", [
    "# Listings folder", "## Layout", "- Anna: pick two papers", "1. Introduction", "> quoted",
    "https://example.org/papers", "Hi all,", "Cheers, Bob", "Best regards, Carol",
    "Subject: lunch", "listing-tools", "v1.4.0", "—", "Action items:"])
def test_junk_titles_are_not(title):
    assert title_problem(title) is not None


@pytest.mark.parametrize("abstract", [
    "https://example.org/a https://example.org/b and https://example.org/c",
    "- https://example.org/h - https://example.org/i", "## Usage", "Best regards, Carol",
    "12 34 56 78 90 ++ -- ** //"])
def test_junk_abstracts_are_not_abstracts(abstract):
    assert abstract_problem(abstract) is not None


def test_an_image_attached_to_a_listing_mail_is_left_alone():
    from email import message_from_bytes, policy

    mail = message_from_bytes((HOSTILE / "accept" / "forward_with_greeting.eml").read_bytes(),
                              policy=policy.default)
    mail.make_mixed()
    mail.add_attachment(b"\x89PNG\r\n\x1a\n" + bytes(range(256)), maintype="image",
                        subtype="png", filename="logo.png")
    result = load_sources(["-"], stdin=lambda: mail.as_bytes())
    assert len(result.records) == 3 and result.warnings == [] and result.errors == []


def test_listings_in_the_body_and_in_an_attachment_both_count():
    from email import message_from_bytes, policy

    mail = message_from_bytes((HOSTILE / "accept" / "forward_with_greeting.eml").read_bytes(),
                              policy=policy.default)
    mail.make_mixed()
    mail.add_attachment((HOSTILE / "accept" / "listing.csv").read_bytes(), maintype="text",
                        subtype="csv", filename="more.csv")
    result = load_sources(["-"], stdin=lambda: mail.as_bytes())
    assert len(result.records) == 5 and {r.sighting.source for r in result.records} == {"<stdin>"}
