"""The renderer's and the view's shortcuts give what the longer way gives, on any text."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from digest.links import paper_link
from digest.models import Paper
from digest.render.escape import _may_need_escape, escape_markdown, one_line, safe_url
from digest.render.renderer import _tidy
from digest.render.view import _link_url


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


_TITLE_TEXT = st.text(st.characters(codec="utf-8"), max_size=80) | st.sampled_from([
    "A/B testing: 50% of <script>", "Über-Modelle & ‘Quotes’", "x" * 400, "  ", "Σ-ΣΣ ς",
    "q?a#b [c](d) `e` \\f", "ﬁne ｆｕｌｌ width", "\u202e\ud800", "a\x00b\x7fc",
])


@settings(max_examples=400, deadline=None)
@given(_TITLE_TEXT, st.one_of(st.none(), _TITLE_TEXT, st.sampled_from(
    ["2611.00001", "hep-th/9901001v2", "a b?c#d", "../x%41", ""])))
def test_a_link_digest_builds_is_what_safe_url_makes_of_it(title: str, arxiv_id: str | None,
                                                          ) -> None:
    paper = Paper(id="p", title=title, abstract="", arxiv_id=arxiv_id)
    try:
        link = paper_link(paper)
    except UnicodeEncodeError:  # a lone surrogate: no link is made either way
        with pytest.raises(UnicodeEncodeError):
            _link_url(paper)
        return
    assert _link_url(paper) == safe_url(link.url) == link.url


def test_a_source_link_still_goes_through_safe_url() -> None:
    paper = Paper(id="p", title="T", abstract="", url="https://example.org/é")
    assert _link_url(paper) == "https://example.org/%C3%A9"


# The one pattern ``escape._may_need_escape`` replaced.
_MAY_NEED_ESCAPE = re.compile(r"[\\`\[\]|$*_<&~@#]|://|(?i:www)\.|^[>+=\-]|^\d+[.)]")


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(list("wW.:/>+=-19)a İ\u212a_*<&@#é٣") + ["www.", "://", "WwW."]),
                max_size=12))
def test_may_need_escape_finds_what_the_one_pattern_finds(pieces: list[str]) -> None:
    line = one_line("".join(pieces))
    assert _may_need_escape(line) == (_MAY_NEED_ESCAPE.search(line) is not None)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_escape_markdown_is_unchanged_on_any_text(text: str) -> None:
    line = one_line(text)
    if _MAY_NEED_ESCAPE.search(line) is None:
        assert escape_markdown(text) == line
