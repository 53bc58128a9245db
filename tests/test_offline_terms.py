"""The offline summarizer's cached word terms (a dict looked up through ``map``) give the plain
rule's terms, in order, on random text and the seed abstracts, also after the cache is emptied at
its bound."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from digest import offline
from digest.normalize import singular
from tests.test_offline import seed_papers


def plain_tokens(text: str) -> list[str]:
    words = offline._WORD.findall(text.lower())
    return [singular(w) for w in words
            if w not in offline._STOPWORDS and len(w) > 1 and not w.isdigit()]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("abcsiey'-019 .ABS\u0130K")), max_size=80))
def test_tokens_are_the_plain_rule(text: str) -> None:
    assert offline._tokens(text) == plain_tokens(text)


def test_tokens_of_the_seeds_are_the_plain_rule_across_a_cache_reset(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The term cache is emptied at its bound (here 50 words) and keeps giving the rule's
    terms; it never holds more than the bound."""
    monkeypatch.setattr(offline, "_TERMS_CACHED", 50)
    offline._TERM_OF.clear()
    for paper in seed_papers()[:40]:
        assert offline._tokens(paper.abstract) == plain_tokens(paper.abstract)
        assert len(offline._TERM_OF) <= 50
    offline._TERM_OF.clear()


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab-'/.,()é\u00f6\u0130 \t\n\u00a0\u2009\u2013s0"))
               | st.characters(), max_size=60))
def test_terms_found_by_piece_are_the_plain_rule(text: str) -> None:
    """The terms found piece by piece (and word by word when a piece holds several: "a/b",
    "naïve") are the pattern's, for every kind of space, dash, accent and case."""
    assert offline._tokens(text) == plain_tokens(text)
    assert offline.content_term_set(text) == set(plain_tokens(text))


def test_a_piece_of_several_terms_is_read_word_by_word() -> None:
    assert offline._tokens("Input/output models, naïve agents") == [
        "input", "output", "model", "na", "ve", "agent"]
    assert offline._PIECE_TERM["input/output"] == offline._SEVERAL


def test_a_piece_longer_than_a_word_is_not_kept() -> None:
    piece = "a.b" * 1000
    assert offline._tokens(piece) == plain_tokens(piece)
    assert piece not in offline._PIECE_TERM
