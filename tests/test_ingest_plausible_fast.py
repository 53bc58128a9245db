"""The confidence rules' fast paths (ingest at 50k papers) count exactly what the regexes do."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from digest.ingest import plausible

TEXT = st.text(alphabet=st.sampled_from(list("aZ09 _-.:/@wWmMtTlLiIoOhHpPsSé€ßİ\t\n")) |
               st.characters(), max_size=80)


@settings(max_examples=400, deadline=None)
@given(TEXT)
def test_letters_are_counted_as_the_regex_counts_them(text: str) -> None:
    assert (plausible._ascii_letters(text) + plausible._other_letters(text)
            == len(text) - len(re.sub(r"[^\W\d_]+", "", text)))


@settings(max_examples=400, deadline=None)
@given(TEXT, st.integers(min_value=-2, max_value=90))
def test_enough_letters_is_decided_as_the_regex_count_decides_it(text: str, wanted: int) -> None:
    # the non-ASCII letters are counted only when the ASCII ones fall short
    letters = len(text) - len(re.sub(r"[^\W\d_]+", "", text))
    assert plausible._has_letters(text, wanted) == (letters >= wanted)


def test_half_rounds_up_as_doubling_compares() -> None:
    for count in range(300):
        for letters in range(300):
            assert (letters >= plausible._half(count)) == (letters * 2 >= count), (letters, count)


WORDS = st.sampled_from(["https://x.org", "HTTP://A", "www.a.b", "WwW.", "a@b.cd", "MAILTO:x",
                         "x@y", "@", "word", "é", "a\tb", "\n"]) | TEXT


@settings(max_examples=400, deadline=None)
@given(st.lists(WORDS, max_size=8).map(" ".join))
def test_links_are_counted_as_the_regex_counts_them(text: str) -> None:
    words = text.split()
    links = sum(1 for w in words if plausible._LINK.match(w))
    counted, split = plausible._links_and_words(text)
    assert counted == links
    assert split == len(words) or counted == 0  # the words are counted when links are


@settings(max_examples=600, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("a1 .Zé٣ _\t")), max_size=12))
def test_mostly_numbers_or_symbols_is_the_plain_comparison(text: str) -> None:
    # the spaces are counted only when the letters are fewer than half of all characters
    letters = len(text) - len(re.sub(r"[^\W\d_]+", "", text))
    assert plausible._mostly_numbers_or_symbols(text) == (letters * 2 < len(text) - text.count(" "))
