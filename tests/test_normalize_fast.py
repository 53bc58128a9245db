"""clean_text's fast paths (ingest at 50k papers) give what the plain clean-up gives."""

from __future__ import annotations

import re
import sys
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from digest import normalize
from digest.latex import strip_latex
from digest.normalize import clean_text, collapse_whitespace


def plain_pass(text: str) -> str:
    """One pass of the clean-up without a fast path: every step on every text."""
    cleaned = re.sub("[\ud800-\udfff]", "\ufffd", text)
    cleaned = unicodedata.normalize("NFC", cleaned)
    cleaned = normalize._INVISIBLE.sub("", cleaned)
    cleaned = normalize._CONTROL.sub(" ", cleaned)
    cleaned = unicodedata.normalize("NFC", strip_latex(cleaned))
    return re.sub(r"\s+", " ", cleaned).strip()


def plain_clean_text(text: str) -> str:
    """clean_text without a fast path: every step on every text, until nothing changes."""
    text = text[:normalize.MAX_CLEAN_CHARS]
    for _ in range(6):
        cleaned = plain_pass(text)
        if cleaned == text:
            break
        text = cleaned
    return text


# Mostly tidy ASCII, with what makes it untidy: controls, runs and ends of spaces, LaTeX signs.
ASCII = st.lists(st.sampled_from(["a", "Z", "0", ".", " ", " ", "  ", "'", "''", "`", "~", "$",
                                  "\\", "\\emph{", "}", "\t", "\n", "\r", "\x00", "\x07", "\x1b",
                                  "\x1f", "\x7f", "word", "-"]), max_size=30).map("".join)
NON_ASCII = st.lists(st.one_of(st.sampled_from(["é", "e\u0301", "\u200b", "\u00ad", "\xa0",
                                                "\u3000", "\ud800", "\x85", "\u2028", "ß", " "]),
                               st.characters(), ASCII), max_size=20).map("".join)


# Tidy-looking non-ASCII words, single-spaced, among them what only LaTeX clean-up rewrites.
SINGLE_SPACED = st.lists(st.sampled_from(["Gödel", "α", "naïve", "e\u0301", "x", "\\emph{é}",
                                          "$x^2$", "``é''", "~", "`", "\\'e", "Fig.~3", "$5"]),
                         min_size=1, max_size=8).map(" ".join)


@settings(max_examples=1500, deadline=None)
@given(st.one_of(ASCII, NON_ASCII, SINGLE_SPACED))
def test_text_is_cleaned_as_the_plain_way_cleans_it(text: str) -> None:
    """ASCII with what makes it untidy, any other text, and tidy-looking single-spaced words."""
    assert clean_text(text) == plain_clean_text(text)


@settings(max_examples=400, deadline=None)
@given(NON_ASCII)
def test_collapse_whitespace_fast_path_is_the_regex(text: str) -> None:
    assert collapse_whitespace(text) == re.sub(r"\s+", " ", text).strip()


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from(" \t\n\r\x0b\x0c\x1c\x85\u00a0\u2028\u3000ab."), max_size=30)
       | st.text(max_size=60))
def test_collapsing_whitespace_is_a_join_of_the_split(text: str) -> None:
    # sentence splitting relies on it too (``sentences.split_sentences``)
    assert collapse_whitespace(text) == " ".join(text.split())


def test_what_the_substitutions_remove_is_never_printable() -> None:
    # _clean_once skips the surrogate, invisible and control substitutions on printable text
    every_char = map(chr, range(sys.maxunicode + 1))
    removed = [c for c in every_char if normalize._SURROGATE.match(c)
               or normalize._INVISIBLE.match(c) or normalize._CONTROL.match(c)]
    assert len(removed) > 2048 and not any(c.isprintable() for c in removed)


def test_the_space_is_the_only_printable_whitespace() -> None:
    # collapse_whitespace and the tidy-ASCII test leave printable text's spaces to "  " checks
    spaces = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
    assert [c for c in spaces if c.isprintable()] == [" "]
    assert all(c.encode("utf-8", "surrogatepass")[0] in normalize._ASCII_CONTROLS
               for c in spaces if c.isascii() and c != " ")


# What a pass takes out can leave a letter and an accent side by side: the pass composes them,
# as the plain pass does, so that the passes (at most six) are the same ones.
COMPOSING = ["e\u200b\u0301", "<\u200b\u0338", "a\u00adb\u00ad\u0308", "e\x00\u0301",
             "\ufeffe\u0301", "$x$\u200b\u0301", "\\emph{e}\u0301"]


@given(st.lists(st.sampled_from(COMPOSING + ["e", "\u0301", "\u200b", " ", "a", "\x07"]),
                max_size=12).map("".join))
def test_one_pass_is_the_plain_pass(text: str) -> None:
    assert normalize._clean_once(text) == plain_pass(text)


def test_a_pass_composes_what_it_uncovers() -> None:
    for text in COMPOSING:
        assert normalize._clean_once(text) == plain_pass(text), repr(text)
