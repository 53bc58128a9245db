"""The issue kept in the store (``digest.issue_codec``) is the issue published: every field,
every cited piece of a summary, and the same renderings in every format."""

from __future__ import annotations

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
from digest.render import PastIssue, PastTheme, Renderer
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
    assert unpacked(many) == many
    empty = dataclasses.replace(many, sections=(), also=())
    assert unpacked(empty) == empty


def unpacked(issue: Issue) -> Issue:
    kept = issue_codec.unpack(issue_codec.pack(issue_codec.Kept(issue)))
    assert kept is not None
    return kept.issue


def test_what_else_is_kept_with_the_issue_survives_the_round_trip() -> None:
    compared = (PastIssue("2026-W45", 12, (PastTheme("Qubits", ("qubit",), 7,
                                                     (("qubit", 0.8), ("photon", 0.6))),)),
                PastIssue("2026-W46", 3, ()))
    kept = issue_codec.Kept(every_field_set(), compared, degraded=True, stopped="a deadline")
    assert issue_codec.unpack(issue_codec.pack(kept)) == kept


def segments(issue: Issue) -> list[object]:
    return [getattr(section.summary.summary, "segments", None) for section in issue.sections]


def test_every_field_of_every_part_survives_the_round_trip() -> None:
    issue = every_field_set()
    kept = unpacked(issue)
    assert kept == issue
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
