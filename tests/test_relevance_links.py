"""A link for every paper: the source's, arXiv's, or a title search digest builds itself."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from digest.dedup import deduplicate
from digest.ingest import load_sources
from digest.links import MAX_QUERY_CHARS
from digest.models import Paper
from digest.relevance import paper_link, title_search_url

HOSTILE = [
    'A "quoted" title',
    "Title](javascript:alert(1))",
    "Ends with ) and ] and >",
    "Two\nlines\r\nand\ttabs",
    "javascript:alert(document.cookie)",
    "  spaces   everywhere  ",
    "Ünïcödé: 世界モデル and émojis 🤖",
    "<script>alert(1)</script> & friends",
    "%0d%0aSet-Cookie: x=1 #frag ?q=1",
    "x" * 2000,
    "word " * 500,
]


def _query(url: str) -> str:
    parts = urlsplit(url)
    assert (parts.scheme, parts.netloc, parts.path) == ("https", "arxiv.org", "/search/")
    params = parse_qs(parts.query, keep_blank_values=True)
    assert set(params) == {"query", "searchtype"} and params["searchtype"] == ["title"]
    return params["query"][0]


@pytest.mark.parametrize("title", HOSTILE)
def test_hostile_titles_become_a_query_value_only(title: str) -> None:
    url = title_search_url(title)
    assert url.startswith("https://arxiv.org/search/?query=")
    assert url.isascii() and not any(ch in url for ch in ' \n\r\t"<>()[]\\`{}|^\'')
    assert url.endswith("&searchtype=title") and url.count("&") == 1 and url.count("?") == 1
    assert len(_query(url)) <= MAX_QUERY_CHARS


@given(st.text(max_size=3000))
def test_any_title_gives_a_well_formed_search_url(title: str) -> None:
    url = title_search_url(title)
    assert url.isascii() and " " not in url and len(_query(url)) <= MAX_QUERY_CHARS


def _plain_search_url(title: str) -> str:
    """What ``title_search_url`` builds, the plain way: the pattern and ``quote`` always."""
    import unicodedata
    from urllib.parse import quote

    from digest.links import _NOT_WORD, SEARCH_URL
    query = ""
    for word in _NOT_WORD.sub(" ", unicodedata.normalize("NFKC", title)).split():
        if len(query) + len(word) + 1 > MAX_QUERY_CHARS:
            break
        query = f"{query} {word}" if query else word[:MAX_QUERY_CHARS]
    return SEARCH_URL.format(query=quote(query, safe=""))


@given(st.text(alphabet=st.sampled_from([chr(c) for c in range(128)] + ["é", "ﬁ", "世", "\u0301"]),
               max_size=400))
def test_the_fast_ascii_path_builds_the_plain_url(title: str) -> None:
    assert title_search_url(title) == _plain_search_url(title)


@pytest.mark.parametrize("title", [
    "a" * 299, "a" * 300, "a" * 301, "ab " * 99 + "a", "ab " * 99 + "ab", "ab " * 99 + "abc",
    "ab " * 100, "x" * 150 + " " + "y" * 148, "x" * 150 + " " + "y" * 149])
def test_a_title_at_the_query_limit_gives_the_plain_url(title: str) -> None:
    """The whole title's words are taken at once when they fit (a word loop was most of
    building the view of a 50k issue): at the limit, the same query as the loop."""
    assert title_search_url(title) == _plain_search_url(title)


def test_the_query_keeps_the_words_of_the_title() -> None:
    assert _query(title_search_url("SWE-RL: Advancing LLM Reasoning (via RL)")) == \
        "SWE-RL Advancing LLM Reasoning via RL"
    assert _query(title_search_url("Ünïcödé 世界モデル")) == "Ünïcödé 世界モデル"


def test_source_link_first_then_arxiv_then_search() -> None:
    source = Paper(id="1", title="T", abstract="", url="https://huggingface.co/papers/2401.1",
                   arxiv_id="2401.00001")
    assert paper_link(source).url == "https://huggingface.co/papers/2401.1"
    arxiv = Paper(id="2", title="T", abstract="", arxiv_id="2401.00001")
    assert paper_link(arxiv).url == "https://arxiv.org/abs/2401.00001"
    assert paper_link(arxiv).kind == "arxiv"
    for bad in ("javascript:alert(1)", "ftp://x.org/a", "https://x.org/a b", "//x.org"):
        paper = Paper(id="3", title="T", abstract="", url=bad)
        assert paper_link(paper).kind == "search"


def test_every_seed_paper_gets_a_link(seeds: Path) -> None:
    """The defect: Daily Papers pages carry no ids or URLs, so no title could be clicked."""
    papers = deduplicate(load_sources([str(seeds)]).records).papers
    assert sum(bool(p.url) for p in papers) == 0  # what the pages give
    links = [paper_link(p) for p in papers]
    assert all(link.kind == "search" for link in links)
    assert len({link.url for link in links}) == len(papers) == 179
