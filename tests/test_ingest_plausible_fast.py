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
    assert plausible._letters(text) == len(text) - len(re.sub(r"[^\W\d_]+", "", text))


@settings(max_examples=400, deadline=None)
@given(st.lists(TEXT, max_size=6).map(" ".join))
def test_links_are_counted_as_the_regex_counts_them(text: str) -> None:
    words = text.split()
    assert plausible._links(words, text) == sum(1 for w in words if plausible._LINK.match(w))
