"""The HTML issue as mail clients and phones need it: inline CSS, a viewport, a readable
width, a dark mode, and nothing that runs or loads from elsewhere."""

from __future__ import annotations

import re

import pytest

from digest.render import Renderer

from .render_samples import hostile_issue, make_issue, plain_issue, read_html


@pytest.fixture(scope="module", params=["plain", "hostile", "empty"])
def html(request) -> str:
    issue = {"plain": plain_issue, "hostile": lambda: hostile_issue()[0],
             "empty": lambda: make_issue([])}[request.param]()
    return Renderer().html(issue)


def test_it_is_one_self_contained_page_with_inline_css(html):
    page = read_html(html)
    tags = [e.tag for e in page.elements]
    assert tags.count("style") == 1  # the dark-mode block; everything else is inline
    assert "link" not in tags or all(
        e.attrs.get("rel") == "icon" and str(e.attrs.get("href")).startswith("data:")
        for e in page.elements if e.tag == "link")
    body = next(e for e in page.elements if e.tag == "body")
    assert "background" in str(body.attrs["style"]) and "color" in str(body.attrs["style"])


def test_it_is_readable_on_a_phone(html):
    page = read_html(html)
    viewport = [e.attrs["content"] for e in page.elements
                if e.tag == "meta" and e.attrs.get("name") == "viewport"]
    assert viewport == ["width=device-width, initial-scale=1"]
    styles = " ".join(str(e.attrs.get("style", "")) for e in page.elements)
    assert re.search(r"max-width:\s*\d+px", styles)
    assert "overflow-wrap:break-word" in styles.replace(" ", "")  # long words and URLs wrap


def test_it_has_a_dark_mode(html):
    page = read_html(html)
    assert [e.attrs["content"] for e in page.elements
            if e.tag == "meta" and e.attrs.get("name") == "color-scheme"] == ["light dark"]
    style = html.split("<style>")[1].split("</style>")[0]
    assert "@media (prefers-color-scheme: dark)" in style
    for selector in ("body", "a", ".card", ".muted", ".bar"):
        assert re.search(rf"(^|[\s,]){re.escape(selector)}[\s,{{]", style), selector


def test_nothing_runs_and_nothing_loads_from_elsewhere(html):
    page = read_html(html)
    assert not {"script", "iframe", "object", "embed", "img", "video", "audio", "form",
                "base", "input"} & {e.tag for e in page.elements}
    assert not [name for e in page.elements for name in e.attrs if name.startswith("on")]
    css = " ".join([html.split("<style>")[1].split("</style>")[0],
                    *(str(e.attrs.get("style", "")) for e in page.elements)])
    assert not re.search(r"url\(|@import|@font-face|expression\(", css, re.IGNORECASE)
    for e in page.elements:
        for name in ("src", "srcset", "poster", "background", "data", "action"):
            assert name not in e.attrs, (e.tag, name)
        if e.tag != "a" and "href" in e.attrs:
            assert str(e.attrs["href"]).startswith("data:"), e.tag
    csp = [e.attrs["content"] for e in page.elements
           if e.tag == "meta" and e.attrs.get("http-equiv") == "Content-Security-Policy"]
    assert csp == ["default-src 'none'; style-src 'unsafe-inline'; img-src data:"]
