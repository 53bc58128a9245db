"""The renderer's and the view's shortcuts give what the longer way gives, on any text."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from digest.render.renderer import _tidy


def tidy_by_patterns(text: str) -> str:
    """``_tidy`` as it was: both substitutions over the whole text, always."""
    return re.sub(r"\n{3,}", "\n\n", re.sub(r"[ \t]+\n", "\n", text)).strip() + "\n"


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from([" ", "\t", "\n", "\r", "a", "é", "\x0b", "#"]),
               max_size=60))
def test_tidy_is_the_two_substitutions(text: str) -> None:
    assert _tidy(text) == tidy_by_patterns(text)


def test_tidy_mends_spaces_that_make_a_run_of_blank_lines() -> None:
    assert _tidy("a\n \t\n\t\nb \n") == "a\n\nb\n"
    assert _tidy("a\nb\n") == "a\nb\n"
