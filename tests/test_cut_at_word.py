"""One truncation helper for word-boundary cuts (issue 16): ``textsafety.cut_at_word`` does what
the render stage's ``shorten`` and ingest's ``_cut`` did, each with its own settings."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from digest.ingest.base import capped
from digest.models import Record, Sighting
from digest.render.chart import shorten
from digest.textsafety import cut_at_word

TEXT = st.text(alphabet=st.sampled_from(list("ab ·,;:\t\né")), max_size=40)


def chart_shorten_before(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0] if " " in text[: limit - 1] else text[: limit - 1]
    return cut.rstrip(" ·,;:") + "…"


def ingest_cut_before(text: str, limit: int) -> str:
    head = text[: limit - 1]
    space = head.rfind(" ")
    if space > limit * 0.8:
        head = head[:space]
    return head.rstrip() + "…"


@settings(max_examples=500, deadline=None)
@given(TEXT, st.integers(min_value=2, max_value=30))
def test_the_one_helper_cuts_as_each_old_one_did(text, limit):
    assert shorten(text, limit) == chart_shorten_before(text, limit)
    if len(text) > limit:  # ingest cut only what was too long
        assert cut_at_word(text, limit, near=0.8) == ingest_cut_before(text, limit)
    assert len(cut_at_word(text, limit)) <= limit


def test_an_overlong_title_is_cut_at_a_word_near_the_limit_and_said():
    words = " ".join(["wordy"] * 200)
    record = Record(title=words, abstract="An abstract.", sighting=Sighting("listing.txt", 1))
    cut, notes = capped(record)
    assert cut.title.endswith("wordy…") and len(cut.title) < len(words)
    assert notes and "the title is" in notes[0]
