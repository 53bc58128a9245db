"""The examples issue opened in headless Chromium: it renders, runs nothing, loads nothing.

Chromium is driven over the DevTools protocol (tests/browser.py), which reports every
request the page makes and every script it parses. A control page with a remote image,
stylesheet and font and an inline script shows that the same instruments do see them,
so "nothing seen" means nothing happened. Every host name fails to resolve in this
browser (--host-resolver-rules), so a mistake could never reach the network either.
Screenshots (phone width, light and dark) go to outputs/ for a human to look at.

This test is never skipped: without Chromium it fails and says how to install it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from digest.models import Issue
from digest.pipeline import Options, build_issue
from digest.render import Renderer
from digest.state import Store

from .browser import CHROMIUM, INSTALL_HINT, Chromium
from .conftest import EXAMPLES, ROOT
from .render_samples import read_html

WEEK = "2026-W47"
PHONE = 412
CONTROL = """<!DOCTYPE html><html><head>
<link rel="stylesheet" href="http://css.example/site.css">
<style>@font-face { font-family: F; src: url(http://fonts.example/f.woff2); }
body { font-family: F; }</style></head>
<body><p>control</p><img src="http://img.example/pixel.png">
<script>document.title = "ran";</script><div onclick="x()">x</div></body></html>"""


@pytest.fixture(scope="module")
def browser():
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} not found: {INSTALL_HINT}")
    with Chromium() as chromium:
        yield chromium


@pytest.fixture(scope="module")
def examples_issue() -> Issue:
    with Store(":memory:") as store:
        return build_issue([str(EXAMPLES)], Options(week=WEEK), backend=None, store=store).issue


@pytest.fixture(scope="module")
def issue_page(examples_issue, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("html") / f"{WEEK}.html"
    path.write_text(Renderer().html(examples_issue), encoding="utf-8")
    return path


def without_csp(page: Path) -> Path:
    """The page as a mail client may show it: with its Content-Security-Policy stripped."""
    stripped = page.with_name("no-csp.html")
    html = page.read_text(encoding="utf-8")
    stripped.write_text(re.sub(r"<meta http-equiv=\"Content-Security-Policy\"[^>]*>", "", html),
                        encoding="utf-8")
    assert "Content-Security-Policy" not in stripped.read_text(encoding="utf-8")
    return stripped


def test_the_instruments_see_requests_and_scripts_of_a_control_page(browser, tmp_path):
    control = tmp_path / "control.html"
    control.write_text(CONTROL)
    browser.open(control)
    requested = set(browser.requests())
    assert {"http://css.example/site.css", "http://img.example/pixel.png"} <= requested
    assert len(browser.scripts()) >= 1
    assert any("ERR_NAME_NOT_RESOLVED" in line for line in browser.log())


def test_the_issue_renders_its_title_themes_and_every_paper(browser, issue_page, examples_issue):
    browser.open(issue_page)
    dom = read_html(browser.dom())
    titles = [e.text for e in dom.elements if e.tag == "title"]
    assert titles[0] == f"Research digest, {WEEK} (16–22 November 2026)"
    headings = [e.text for e in dom.elements if e.tag == "h2"]
    shown = [e.text for e in dom.elements if e.tag in ("strong", "a")]
    for section in examples_issue.sections:
        assert (section.summary.title or section.theme.title) in headings
        for paper in section.papers:
            assert shown.count(paper.title) == 1, paper.title
    assert sum(len(s.papers) for s in examples_issue.sections) == 30


@pytest.mark.parametrize("csp", [True, False], ids=["as-written", "csp-stripped"])
def test_the_issue_runs_no_script_and_requests_nothing_but_itself(browser, issue_page, csp):
    page = issue_page if csp else without_csp(issue_page)
    browser.open(page)
    assert browser.requests() == [page.resolve().as_uri()]
    assert browser.scripts() == []
    assert browser.log() == []  # no blocked request, no CSP report, no console output
    dom = read_html(browser.dom())
    assert "script" not in {e.tag for e in dom.elements}
    assert not [name for e in dom.elements for name in e.attrs if name.startswith("on")]


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_the_issue_fits_a_phone_and_follows_the_colour_scheme(browser, issue_page, dark):
    browser.open(issue_page, width=PHONE, dark=dark)
    size = browser.send("Page.getLayoutMetrics")["cssContentSize"]
    assert size["width"] <= PHONE  # nothing wider than the phone: no sideways scrolling
    assert size["height"] > 3000  # all 30 papers laid out, one under the other
    background = computed(browser, "body", "background-color")
    assert background == ("rgb(23, 25, 30)" if dark else "rgb(255, 255, 255)")
    suffix = "-dark" if dark else ""
    png = browser.screenshot(ROOT / "outputs" / f"screenshot-{WEEK}{suffix}.png")
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 50_000


def computed(browser: Chromium, selector: str, prop: str) -> str:
    """A computed style read through the CSS domain (no script runs in the page)."""
    root = browser.send("DOM.getDocument")["root"]["nodeId"]
    node = browser.send("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
    browser.send("CSS.enable")
    styles = browser.send("CSS.getComputedStyleForNode", {"nodeId": node})["computedStyle"]
    return next(s["value"] for s in styles if s["name"] == prop)
