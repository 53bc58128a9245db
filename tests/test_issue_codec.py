"""The issue kept in the store (``digest.issue_codec``) is the issue published: every field
(but the abstracts no rendering reads), every cited piece of a summary, and the same
renderings in every format, its rising themes too."""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import json
import logging
import zlib

import pytest

from digest import issue_codec
from digest.models import (
    CitedText,
    Issue,
    IssueSection,
    Paper,
    Sighting,
    Stats,
    SummarySegment,
    Theme,
    ThemeSummary,
)
from digest.pipeline import Options, build_issue
from digest.render import PastIssue, PastTheme, Renderer, view
from digest.render.view import past_themes
from digest.state import Store
from tests.conftest import EXAMPLES
from tests.render_samples import hostile_issue


def every_field_set() -> Issue:
    """An issue where no field keeps its default, so a field the codec forgot shows."""
    paper = Paper(id="2611.00001", title="Title é 𝔸 \ud800 \u202e", abstract="Abstract <b>x</b>.",
                  url="https://arxiv.org/abs/2611.00001", authors=("Ada Lovelace", "Alan Turing"),
                  published=dt.date(2026, 11, 17), arxiv_id="2611.00001",
                  sightings=(Sighting("a.json", 3, 12), Sighting("b.txt", 1)), upvotes=7,
                  also_listed_as=("Other title",))
    rest = dataclasses.replace(paper, id="t:abc", url=None, authors=(), published=None,
                               arxiv_id=None, sightings=(), upvotes=None, also_listed_as=())
    cited = CitedText([SummarySegment("One sentence.", ("2611.00001",)),
                       SummarySegment("An uncited one.")])
    section = IssueSection(
        theme=Theme("Theme", ("kw1", "kw2"), ("2611.00001",), label="Label", top_titles=("T",)),
        summary=ThemeSummary(cited, {"2611.00001": "A gist."}, offline=True, title="Named",
                             tldr="What it is about.", fallback=True),
        papers=(paper,))
    return Issue(week="2026-W47", start=dt.date(2026, 11, 16), end=dt.date(2026, 11, 22),
                 intro="The intro.", sections=(section,), stats=Stats(9, 8, 1, 2, 1, 1, 3),
                 backend="openai", model="gpt-x", fallback_themes=("Named",), cost_usd=0.0123,
                 reasons={"2611.00001": ("matches: world model",)}, also=(rest,), excluded=4,
                 left_out=5)


def test_an_issue_of_many_sections_and_papers_is_packed_in_pieces_and_read_back_whole() -> None:
    issue = every_field_set()
    section = issue.sections[0]
    many = dataclasses.replace(
        issue, sections=(section,) * 3,
        also=tuple(dataclasses.replace(issue.also[0], id=f"t:{n}") for n in range(2_345)))
    assert unpacked(many) == read_abstracts_only(many)
    empty = dataclasses.replace(many, sections=(), also=())
    assert unpacked(empty) == empty


def unpacked(issue: Issue) -> Issue:
    kept = issue_codec.unpack(issue_codec.pack(issue_codec.Kept(issue)))
    assert kept is not None
    return kept.issue


def read_abstracts_only(issue: Issue) -> Issue:
    """``issue`` with only the abstracts a rendering reads, as the codec keeps it: those of
    each section's leading papers."""
    def without(paper: Paper) -> Paper:
        return dataclasses.replace(paper, abstract="")

    return dataclasses.replace(issue, also=tuple(map(without, issue.also)), sections=tuple(
        dataclasses.replace(section, papers=tuple(
            paper if place < issue_codec.ABSTRACTS_KEPT else without(paper)
            for place, paper in enumerate(section.papers)))
        for section in issue.sections))


def test_what_else_is_kept_with_the_issue_survives_the_round_trip() -> None:
    compared = (PastIssue("2026-W45", 12, (PastTheme("Qubits", ("qubit",), 7,
                                                     (("qubit", 0.8), ("photon", 0.6))),)),
                PastIssue("2026-W46", 3, ()))
    kept = issue_codec.Kept(every_field_set(), compared, degraded=True, stopped="a deadline")
    back = issue_codec.unpack(issue_codec.pack(kept))
    assert back == dataclasses.replace(kept, issue=read_abstracts_only(kept.issue),
                                       themes=view.past_themes(kept.issue))


def segments(issue: Issue) -> list[object]:
    return [getattr(section.summary.summary, "segments", None) for section in issue.sections]


def test_every_field_of_every_part_survives_the_round_trip() -> None:
    issue = every_field_set()
    kept = unpacked(issue)
    assert kept == read_abstracts_only(issue)
    assert kept.sections[0].papers[0].abstract == issue.sections[0].papers[0].abstract
    assert segments(kept) == segments(issue)  # CitedText compares as text: check the pieces
    assert type(kept.sections[0].summary.summary) is CitedText
    assert type(kept.intro) is str


def test_no_field_of_the_model_is_unknown_to_the_codec() -> None:
    """A field added to a model needs the codec (and its VERSION) changed with it."""
    issue = every_field_set()
    for value in (issue, issue.sections[0], issue.sections[0].theme, issue.sections[0].summary,
                  issue.sections[0].papers[0], issue.stats):
        for spec in dataclasses.fields(value):
            if spec.default is not dataclasses.MISSING:
                assert getattr(value, spec.name) != spec.default, (type(value), spec.name)
            if spec.default_factory is not dataclasses.MISSING:
                assert getattr(value, spec.name) != spec.default_factory(), spec.name


@pytest.mark.parametrize("fmt", ["md", "html", "txt"])
def test_the_kept_issue_renders_byte_for_byte_as_the_one_published(fmt: str) -> None:
    built = build_issue([str(EXAMPLES)], Options(week="2026-W47"), store=Store(":memory:"))
    hostile, _ = hostile_issue()
    renderer = Renderer()
    for issue in (built.issue, hostile, every_field_set()):
        kept = unpacked(issue)
        assert renderer.render(kept, fmt) == renderer.render(issue, fmt)


@pytest.mark.parametrize("blob", [b"", b"\x00\xff", zlib.compress(b"not json"),
                                  zlib.compress(b'{"version": 1}'),
                                  zlib.compress(b'{"version": 1, "week": 5, "sections": 3}'),
                                  zlib.compress(b"[1, 2]")])
def test_what_cannot_be_read_is_none_and_a_warning(blob: bytes,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="digest.issue_codec"):
        assert issue_codec.unpack(blob) is None
    assert "could not be read" in caplog.text


def test_an_issue_kept_by_a_later_version_is_left_to_be_built_again(
        caplog: pytest.LogCaptureFixture) -> None:
    data = json.loads(zlib.decompress(issue_codec.pack(issue_codec.Kept(every_field_set()))))
    data["version"] = issue_codec.VERSION + 1
    with caplog.at_level(logging.WARNING, logger="digest.issue_codec"):
        assert issue_codec.unpack(zlib.compress(json.dumps(data).encode())) is None
    assert "another version of digest" in caplog.text


def large_themes_issue() -> Issue:
    """Two themes of 12 papers each, their TL;DR lines made offline from their leading papers,
    every abstract its own."""
    base = every_field_set()
    topics = (("Qubit", "qubit photon entanglement cavity decoherence"),
              ("Grasp", "robot grasp manipulation gripper tactile"))
    sections = []
    for number, (name, words) in enumerate(topics):
        papers = tuple(dataclasses.replace(
            base.sections[0].papers[0], id=f"2611.{number}{n:04d}",
            title=f"{name}Net {n}: Scalable {words.split()[n % 5]} Learning",
            abstract=f"We study {words} with Scalable methods, variant {n} of {name.lower()}s "
                     f"and word{n}{number} in {words.split()[(n + 2) % 5]} settings.")
            for n in range(12))
        sections.append(IssueSection(
            Theme(name, tuple(words.split()[:2]), tuple(p.id for p in papers)),
            ThemeSummary(CitedText([SummarySegment("About it.", (papers[0].id,))]),
                         {p.id: f"Gist {p.id}." for p in papers}, offline=True),
            papers))
    return dataclasses.replace(base, sections=tuple(sections), fallback_themes=(),
                               intro="The intro.")


@pytest.mark.parametrize("fmt", ["md", "html", "txt"])
def test_a_kept_issue_of_large_themes_renders_its_rising_themes_as_published(fmt: str) -> None:
    issue = large_themes_issue()
    compared = grasp_before(issue)
    kept = issue_codec.unpack(issue_codec.pack(issue_codec.Kept(issue, compared)))
    assert kept is not None and kept.issue.sections[1].papers[-1].abstract == ""
    renderer = Renderer()
    published = renderer.render(issue, fmt, history=compared)
    assert "up from 3%" in published
    assert renderer.render(kept.issue, fmt, history=list(kept.compared),
                           themes=kept.themes) == published


def grasp_before(issue: Issue) -> tuple[PastIssue]:
    """An earlier issue with a small theme about what the abstracts of the "Grasp" theme
    say and its titles do not: only its profile made of every abstract matches it."""
    grasp = past_themes(issue)[1]
    titled = {word.lower() for paper in issue.sections[1].papers for word in paper.title.split()}
    terms = tuple((term, weight) for term, weight in grasp.terms if term not in titled)
    return (PastIssue("2026-W46", 100, (dataclasses.replace(grasp, papers=3, terms=terms),)),)


def test_an_issue_kept_in_format_1_with_every_abstract_is_still_read() -> None:
    issue = large_themes_issue()
    compared = grasp_before(issue)
    data = json.loads(zlib.decompress(issue_codec.pack(issue_codec.Kept(issue, compared))))
    del data["themes"]
    data["version"] = 1
    for section, written in zip(issue.sections, data["sections"], strict=True):
        for paper, fields in zip(section.papers, written["papers"], strict=True):
            fields[2] = paper.abstract
    for paper, fields in zip(issue.also, data["also"], strict=True):
        fields[2] = paper.abstract
    kept = issue_codec.unpack(zlib.compress(json.dumps(data).encode()))
    assert kept is not None and kept.issue == issue
    renderer = Renderer()
    assert renderer.markdown(kept.issue, history=compared) == renderer.markdown(
        issue, history=compared)


def test_the_abstracts_kept_are_those_an_offline_tldr_line_reads() -> None:
    from digest import offline

    assert issue_codec.ABSTRACTS_KEPT >= 2 * offline.TLDR_PAPERS


def test_a_kept_issue_without_its_themes_profiles_renders_other_rising_themes() -> None:
    """The profiles kept are what the mail's rendering reads: without them the rising themes
    are made from the few abstracts kept, and differ (so the test above can fail)."""
    issue = large_themes_issue()
    compared = grasp_before(issue)
    kept = issue_codec.unpack(issue_codec.pack(issue_codec.Kept(issue, compared)))
    assert kept is not None and kept.themes == view.past_themes(issue)
    renderer = Renderer()
    assert renderer.markdown(kept.issue, history=compared) != renderer.markdown(
        issue, history=compared)


# ``every_field_set()`` with one earlier issue compared, degraded and stopped by "a deadline",
# as digest kept it in format 1 (every abstract, no term profiles), before format 2.
FORMAT_1 = (
    "eAGlU8Fu2zAM/RWBZ9WxnSZNjaJA7sWKAQF68IJAtpjEiyx5ktykKPrvI2Wka88zbEukxEe9R+odXtGHzlmoCglnxBNUUOb"
    "l8ubl9g4khKh8vLqK4qZYkhOt/uIqS3J1NnpHzs0RRZpnU3AMUNX3ciULWdJXyPlWQqPa04ThBrSqo62902go/jDEmwvZe2"
    "UMb9vFI/bIIPBD9aiBwlsX4m4MdIY8y4tyLsGjCs7Srncol0WR5fQUHNOr2B4xVOLsvNFiyrL9IAqX1oya8KpbCQb3cedG4r"
    "lg9H5Qnlfq+qrEAmRRSrJ/jk1HlGQNf3hGp7lj92TIPFttaWk4ukiCkrncpkeCxoNXKV30I7Ksbhg4ByihUWnTWWTBsI1UC6"
    "b7Dok5U4pdNDhp2/OuE74RHZ1EOZ0L9pxLFmZQA/pdN618EYKWjGqSvk9plED5dwk3oWyANQlj3yv/xik/p0Tu2aIIaCPaFq"
    "mqJMo/ibfMd23FaNsuohbOpi3EWsKhC1z97yWBtWB/BpTP7feJdzVpcqU51ZmOaLQn1i9HFUVHbxCqoSJxY127A1IoQSXmTO"
    "Xb6SRsWDrxa8xzvKdBr+YL+uv5Khl5TgM1O4u6bkL0qo3ioXm8PMyaR85zjHEI1Wym/KV7zZw/zFQTZl/4M3utxJN7RaPahG"
    "OUFZvRd/bAJUlXie8NX6ZvgTWo7Dd1Lcg5NRfr2GTxEqnTpB2NIQWpteCZusCLSRpS9YMglQl004hprFTTEuz/keRkst6mpN"
    "PvatSc8C9Yqz8d")


def test_an_issue_kept_in_format_1_is_read_whole() -> None:
    kept = issue_codec.unpack(base64.b64decode(FORMAT_1))
    compared = (PastIssue("2026-W45", 12, (PastTheme("Qubits", ("qubit",), 7,
                                                     (("qubit", 0.8), ("photon", 0.6))),)),)
    assert kept == issue_codec.Kept(every_field_set(), compared, degraded=True,
                                    stopped="a deadline")
    assert kept is not None and kept.themes is None  # its abstracts say it
