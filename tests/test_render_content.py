"""What an issue holds, in each rendering, and how the output folder is written."""

from __future__ import annotations

import json
import os
import re
import stat
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from digest.cli import app
from digest.errors import TemplateError
from digest.models import CitedText, SummarySegment
from digest.offline import theme_summary
from digest.outputs import publish
from digest.pipeline import compose_intro
from digest.render import Renderer

from .conftest import EXAMPLES
from .render_samples import (
    MARKDOWN,
    SectionSpec,
    earlier_issue,
    inline_text,
    make_issue,
    md_headings,
    md_tokens,
    paper,
    plain_issue,
    read_html,
)

TITLE = "Research digest, 2026-W47 (16–22 November 2026)"
ATOM = "{http://www.w3.org/2005/Atom}"


def themes_issue(sizes: list[int]):
    """One theme per size, papers numbered across themes, each with a gist."""
    specs, n = [], 0
    for t, size in enumerate(sizes):
        papers = [paper(n + i, f"Paper {n + i}") for i in range(size)]
        specs.append(SectionSpec(f"Theme {t}", f"Summary {t}.", papers,
                                 {p.id: f"Gist of {p.title}." for p in papers}, (f"topic{t}",)))
        n += size
    return make_issue(specs)


def md_list_items(markdown: str, after: str) -> list[str]:
    """The visible text of the items of the first list after the heading ``after``."""
    tokens = md_tokens(markdown)
    start = next(i for i, t in enumerate(tokens) if t.type == "inline" and t.content == after)
    items, depth = [], 0
    for i in range(start, len(tokens)):
        kind = tokens[i].type
        if kind in ("bullet_list_open", "ordered_list_open"):
            depth += 1
        elif kind in ("bullet_list_close", "ordered_list_close"):
            return items
        elif kind == "inline" and depth:
            items.append(inline_text(tokens[i]))
    return items


# --- title, TL;DR, contents ---------------------------------------------------------------------

def test_title_names_the_iso_week_and_its_dates_in_every_format():
    issue = plain_issue()
    renderer = Renderer()
    assert md_headings(renderer.markdown(issue))[0] == (1, TITLE)
    page = read_html(renderer.html(issue))
    assert [e.text for e in page.elements if e.tag == "title"][0] == TITLE  # then the chart's
    assert renderer.text(issue).splitlines()[0] == TITLE


def test_a_year_boundary_week_has_both_years_in_its_title():
    issue = make_issue([], week="2026-W53")
    assert md_headings(Renderer().markdown(issue))[0] == (
        1, "Research digest, 2026-W53 (28 December 2026 – 3 January 2027)")


@pytest.mark.parametrize(("sizes", "bullets"), [
    ([4], 1), ([2, 2], 2), ([3, 2, 1], 3), ([1, 1, 1, 1], 4), ([5, 4, 3, 2, 2, 1, 1], 5)])
def test_tldr_says_once_per_theme_what_it_is_about(sizes, bullets):
    """Issue 14: the TL;DR was each theme's first gist, repeated below word for word, and one
    theme was listed three times."""
    issue = themes_issue(sizes)
    markdown = Renderer().markdown(issue)
    items = md_list_items(markdown, "TL;DR")
    assert [item.split(":")[0] for item in items] == [f"Theme {t}" for t in range(bullets)]
    gists = {g for s in issue.sections for g in s.summary.gists.values()}
    assert not [item for item in items if any(gist in item for gist in gists)]
    assert items[0].startswith("Theme 0: Topic0, with paper 0")


def test_tldr_takes_the_backends_line_when_there_is_one():
    issue = themes_issue([2, 1])
    first = replace(issue.sections[0], summary=replace(issue.sections[0].summary,
                                                       tldr="Agents that *plan* [x](y)."))
    issue = replace(issue, sections=(first, *issue.sections[1:]))
    markdown = Renderer().markdown(issue)
    assert md_list_items(markdown, "TL;DR")[0] == "Theme 0: Agents that *plan* [x](y)."


def test_counts_come_once_then_the_contents():
    """Issue 14: the intro, the contents and the chart gave the same counts three times."""
    issue = themes_issue([3, 2, 1])
    issue = replace(issue, intro=compose_intro(issue.sections))  # the pipeline's offline intro
    markdown = Renderer().markdown(issue)
    assert markdown.count("(3)") + markdown.count("| 3 |") == 1, markdown
    assert "6 papers in 3 themes." in markdown
    assert "This week brings" not in markdown
    text = Renderer().text(issue)
    assert "This week brings" not in text and "6 papers in 3 themes." in text


def test_contents_lists_every_theme_with_a_link_to_its_heading():
    issue = themes_issue([3, 2, 1])
    markdown = Renderer().markdown(issue)
    rows = [inline_text(t) for t in md_tokens(markdown) if t.type == "inline"
            and t.content.startswith(("1. [", "2. [", "3. ["))]
    assert rows == ["1. Theme 0", "2. Theme 1", "3. Theme 2"]
    page = read_html(Renderer().html(issue))
    ids = {e.attrs["id"] for e in page.elements if e.tag == "h2" and "id" in e.attrs}
    toc = [e.attrs["href"] for e in page.elements
           if e.tag == "a" and str(e.attrs["href"]).startswith("#")]
    assert ids == {"theme-0", "theme-1", "theme-2"}
    assert {href.lstrip("#") for href in toc} == ids  # TL;DR and contents point at headings


# --- citations ---------------------------------------------------------------------------------

def cited_issue():
    issue = plain_issue()
    robots = issue.sections[0]
    towels, insertion = robots.papers[0], robots.papers[1]
    summary = CitedText([SummarySegment("Robots fold towels.", (towels.id,)),
                         SummarySegment("And insert pegs by touch.", (insertion.id, "elsewhere")),
                         SummarySegment("Cheaply.")])
    cited = replace(robots, summary=replace(robots.summary, summary=summary))
    return replace(issue, sections=(cited, *issue.sections[1:]))


def test_a_summary_cites_its_papers_and_each_mention_links_to_the_entry():
    """Issue 14, point 3: a reader can jump from any claim to its paper, in every format."""
    renderer = Renderer()
    markdown = renderer.markdown(cited_issue())
    assert ("Robots fold towels. ([Folding Towels with Two Arms](#paper-1-1)) And insert pegs by "
            "touch. ([Tactile Insertion](#paper-1-2)) Cheaply.") in markdown
    assert '- **[Folding Towels with Two Arms]' in markdown
    assert re.search(r'^- \*\*\[Folding Towels with Two Arms\].* <a id="paper-1-1"></a>$', markdown,
                     re.MULTILINE)
    page = read_html(renderer.html(cited_issue()))
    ids = {e.attrs.get("id") for e in page.elements}
    cites = [(e.attrs["href"], e.text) for e in page.elements
             if e.tag == "a" and str(e.attrs["href"]).startswith("#paper-")]
    assert cites == [("#paper-1-1", "Folding Towels with Two Arms"),
                     ("#paper-1-2", "Tactile Insertion")]
    assert {"paper-1-1", "paper-1-2", "paper-3-1"} <= ids
    text = " ".join(renderer.text(cited_issue()).split())
    assert ("Robots fold towels. (Folding Towels with Two Arms [1.1]) And insert pegs by touch. "
            "(Tactile Insertion [1.2]) Cheaply.") in text
    assert "* [1.2] Tactile Insertion" in text


def test_the_offline_summary_cites_the_papers_its_sentences_come_from():
    papers = [paper(1, "Fold: Towel Folding"), paper(2, "Touch: Tactile Insertion")]
    papers = [replace(papers[0], abstract="We propose Fold, a robot policy that folds towels "
                      "with two arms and a camera."),
              replace(papers[1], abstract="We propose Touch, a robot policy that inserts pegs "
                      "with tactile sensing and two arms.")]
    summary = theme_summary(papers, keywords=["robot"])
    assert isinstance(summary, CitedText)
    assert [s.paper_ids for s in summary.segments] == [("2611.00001",), ("2611.00002",)]
    issue = make_issue([SectionSpec("Robots", summary, papers)])
    markdown = Renderer().markdown(issue)
    assert "([Fold](#paper-1-1))" in markdown and "([Touch](#paper-1-2))" in markdown


# --- themes and papers --------------------------------------------------------------------------

def test_each_theme_has_its_title_summary_and_papers_with_link_authors_gist_and_sightings():
    markdown = Renderer().markdown(plain_issue())
    assert [text for level, text in md_headings(markdown) if level == 2][2:] == [
        "Robot manipulation", "Tool agents", "Speech translation"]
    assert "## Tool agents\n\nAgents plan tool calls.\n\n" in markdown
    assert ("- **[Graph Planning for Tool Agents](<https://arxiv.org/abs/2611.00011>)** "
            "*(Ada Lovelace and Alan Turing; in 2 listings)*: "
            'The gist of graph planning for tool agents. <a id="paper-2-1"></a>\n') in markdown
    assert ("- **[Verifying Function Calls](<https://arxiv.org/abs/2611.00012>)** "
            "*(Grace Hopper, Edsger Dijkstra, Barbara Liskov et al.)*: ") in markdown
    assert ("- **[Folding Towels with Two Arms](<https://arxiv.org/abs/2611.00021>)**: "
            "The gist") in markdown  # no authors, seen once: no parentheses
    assert markdown.count("listings)") == 2


def test_html_and_text_carry_the_same_papers_links_and_sightings():
    issue = plain_issue()
    page = read_html(Renderer().html(issue))
    text = Renderer().text(issue)
    for number, section in enumerate(issue.sections, start=1):
        for place, p in enumerate(section.papers, start=1):
            link = [e for e in page.elements if e.tag == "a" and e.attrs["href"] == p.url]
            assert [e.text for e in link] == [p.title]
            assert f"  * [{number}.{place}] {p.title}\n" in text and f"    {p.url}\n" in text
    assert "(Ada Lovelace and Alan Turing; in 2 listings)" in "".join(page.text)
    assert "    Ada Lovelace and Alan Turing; in 2 listings\n" in text
    assert "    in 3 listings\n" in text


# --- the picture of the week -------------------------------------------------------------------

def test_chart_is_inline_svg_in_html_with_bars_in_proportion():
    page = read_html(Renderer().html(themes_issue([4, 2, 1])))
    assert sum(e.tag == "svg" for e in page.elements) == 1
    widths = [float(str(e.attrs["width"])) for e in page.elements if e.tag == "rect"]
    assert widths[0] == pytest.approx(2 * widths[1]) == pytest.approx(4 * widths[2])


def test_chart_is_a_table_in_markdown_and_text_lines_in_plain_text():
    issue = themes_issue([4, 2, 1])
    markdown = Renderer().markdown(issue)
    assert "| 1. [Theme 0](#theme-0) | 4 | `████████████████████` 57% |" in markdown
    assert "| 3. [Theme 2](#theme-2) | 1 | `█████` 14% |" in markdown
    text = Renderer().text(issue)
    assert "  1. Theme 0  ████████████████████ 4\n  2. Theme 1  ██████████ 2\n" in text, text


# --- rising themes --------------------------------------------------------------------------------

def test_rising_themes_compare_with_the_earlier_issues_in_the_folder(tmp_path):
    publish(earlier_issue("2026-W45"), tmp_path)
    publish(earlier_issue("2026-W46"), tmp_path)
    publish(plain_issue("2026-W47"), tmp_path, formats=["md", "html", "txt"])
    markdown = (tmp_path / "2026-W47.md").read_text()
    assert md_list_items(markdown, "Rising themes") == [
        "Tool agents: 2 papers, 33% of this issue, no similar theme before"]
    assert "Compared with 2 earlier issues (2026-W45, 2026-W46):" in markdown
    assert "Tool agents" in (tmp_path / "2026-W47.html").read_text().split("Rising themes")[1]
    assert "Rising themes\n-------------" in (tmp_path / "2026-W47.txt").read_text()


def test_a_theme_that_grew_is_rising_with_its_earlier_share(tmp_path):
    publish(earlier_issue("2026-W46"), tmp_path)  # speech: 4 of 8 papers = 50%
    speech = [paper(60 + n, f"Speech {n}") for n in range(9)]
    robots = [paper(70, "Robot")]
    publish(make_issue([SectionSpec("Speech translation", "S.", speech, {}, ("speech",)),
                        SectionSpec("Robot manipulation", "R.", robots, {}, ("robot",))]),
            tmp_path)
    items = md_list_items((tmp_path / "2026-W47.md").read_text(), "Rising themes")
    assert items == ["Speech translation: 9 papers, 90% of this issue, up from 50%"]


def test_without_earlier_issues_there_is_no_rising_section(tmp_path):
    publish(plain_issue(), tmp_path, formats=["md", "html", "txt"])
    for suffix in ("md", "html", "txt"):
        assert "Rising themes" not in (tmp_path / f"2026-W47.{suffix}").read_text()


# --- footer -------------------------------------------------------------------------------------

def test_footer_gives_counts_backend_model_and_cost():
    issue = plain_issue()
    footer = ("8 records read · 2 duplicates merged · 6 papers · 3 themes · "
              "backend openai (gpt-4o-mini) · cost $0.01")
    assert Renderer().markdown(issue).endswith("---\n\n" + footer + "\n")
    assert footer in "".join(read_html(Renderer().html(issue)).text)
    assert " ".join(Renderer().text(issue).split("-" * 72)[-1].split()) == footer


# --- an empty week ------------------------------------------------------------------------------

def test_an_empty_week_through_the_cli_is_a_short_issue_that_says_so(tmp_path):
    # Sources with no record at all are an error (nothing read, issue 11); a week is empty
    # when what was read belongs to other weeks (listing dates).
    source = tmp_path / "other-week.json"
    source.write_text('[{"title": "A paper of the week before", "abstract": "We fold towels '
                      'with two arms and a camera.", "date": "2026-11-10"}]\n')
    out = tmp_path / "out"
    result = CliRunner().invoke(app, [
        "newsletter", str(source), "--out", str(out), "--week", "2026-W47", "--backend",
        "offline", "--state", str(tmp_path / "s.sqlite"), "--formats", "md,html,txt",
        "--report", str(tmp_path / "report.json")])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == str(out / "2026-W47.md")
    markdown = (out / "2026-W47.md").read_text()
    assert markdown == (
        f"# {TITLE}\n\nNo papers this week: the listings read held no records of this "
        "week, so there is nothing to report.\n\n---\n\n0 records read · 0 duplicates merged · "
        "0 papers · 0 themes · backend offline · cost $0.00\n")
    assert "No papers this week" in (out / "2026-W47.html").read_text()
    assert "No papers this week" in (out / "2026-W47.txt").read_text()
    assert json.loads((tmp_path / "report.json").read_text())["counts"]["papers_in_issue"] == 0
    assert "2026-W47" in (out / "index.md").read_text()


def test_a_week_whose_papers_were_all_published_says_so():
    issue = make_issue([], stats=make_issue([]).stats.__class__(
        records_read=5, papers_unique=4, already_published=4))
    assert "All 4 papers in this week's listings already appeared in earlier issues." in (
        Renderer().markdown(issue))


# --- the output folder --------------------------------------------------------------------------

def test_every_output_file_is_written_to_a_temp_file_fsynced_then_renamed(tmp_path, monkeypatch):
    events: list[tuple[str, str]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def replace(src: str, dst: str) -> None:
        events.append(("rename", f"{src} -> {dst}"))
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    publish(plain_issue(), tmp_path, formats=["md", "html", "txt"])
    names = ["2026-W47.md", "2026-W47.html", "2026-W47.txt", "index.md", "feed.xml",
             ".history.json"]
    for name in names:
        target = f" -> {tmp_path / name}"
        renames = [e for e in events if e[0] == "rename" and e[1].endswith(target)]
        assert len(renames) == 1, name
        temp = renames[0][1].split(" -> ")[0]
        assert Path(temp).parent == tmp_path and Path(temp).name != name
        assert events.index(("fsync", temp)) < events.index(renames[0])
        folder_syncs = [i for i, e in enumerate(events) if e == ("fsync", str(tmp_path))]
        assert any(i > events.index(renames[0]) for i in folder_syncs)  # the rename is durable
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(names)  # no temp file left


def test_output_files_are_readable_by_others_like_any_published_page(tmp_path):
    publish(plain_issue(), tmp_path, formats=["md", "html"])
    for path in tmp_path.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) & 0o044 == 0o044, path.name


def test_a_broken_template_changes_no_file(tmp_path):
    out = tmp_path / "out"
    publish(plain_issue(), out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "issue.txt.j2").write_text("{{ issue.no_such_field }}\n")
    with pytest.raises(TemplateError, match="no_such_field"):
        publish(earlier_issue("2026-W48"), out, formats=["md", "txt"],
                renderer=Renderer(templates))
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_index_lists_issues_newest_first(tmp_path):
    for week in ("2026-W46", "2026-W44", "2026-W47", "2026-W45"):
        publish(earlier_issue(week), tmp_path)
    index = (tmp_path / "index.md").read_text()
    assert re.findall(r"^- \[(\d{4}-W\d\d)\]", index, re.MULTILINE) == [
        "2026-W47", "2026-W46", "2026-W45", "2026-W44"]


def test_feed_is_valid_atom_with_one_entry_per_issue_newest_first(tmp_path):
    for week in ("2026-W45", "2026-W46"):
        publish(earlier_issue(week), tmp_path, formats=["md", "html"])
    publish(plain_issue(), tmp_path, site_url="https://digest.example.org/issues")
    root = ET.parse(tmp_path / "feed.xml").getroot()
    assert root.tag == f"{ATOM}feed"
    for node in [root, *root.findall(f"{ATOM}entry")]:  # RFC 4287 §4.1.1 and §4.1.2
        assert node.findtext(f"{ATOM}id") and node.findtext(f"{ATOM}title")
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", node.findtext(f"{ATOM}updated"))
    entries = root.findall(f"{ATOM}entry")
    assert [e.findtext(f"{ATOM}id") for e in entries] == [
        "https://digest.example.org/issues/2026-W47.md",
        "https://digest.example.org/issues/2026-W46.md",
        "https://digest.example.org/issues/2026-W45.md"]
    assert root.findtext(f"{ATOM}updated") == "2026-11-22T00:00:00Z"
    assert [e.find(f"{ATOM}link").get("href") for e in entries] == [  # type: ignore[union-attr]
        "2026-W47.md", "2026-W46.html", "2026-W45.html"]
    assert root.get("{http://www.w3.org/XML/1998/namespace}base") == (
        "https://digest.example.org/issues/")


def test_a_user_template_that_is_not_utf8_is_a_template_error_naming_the_file(tmp_path):
    """A template saved as UTF-16 (or Latin-1) ended in a UnicodeDecodeError traceback, exit 1
    (a probe)."""
    templates = tmp_path / "tpl"
    templates.mkdir()
    (templates / "issue.md.j2").write_bytes(b"\xff\xfe")
    with pytest.raises(TemplateError, match=r"tpl/issue\.md\.j2: not valid UTF-8 \(line 1\)"):
        Renderer(templates).markdown(plain_issue())
    result = CliRunner().invoke(app, ["summarize", str(EXAMPLES), "--week", "2026-W47",
                                      "--templates", str(templates)])
    assert result.exit_code == 1
    assert f"{templates / 'issue.md.j2'}: not valid UTF-8" in result.stderr


@pytest.mark.parametrize(("template", "error"), [
    ("line one\n{{ 1 // 0 }}\n", "ZeroDivisionError"),
    ("line one\n<p{{ {issue.title: 1} | xmlattr }}>\n", "ValueError"),
    ("line one\n{{ issue.title | truncate(1, true, '...') }}\n", "AssertionError"),
])
def test_a_user_template_failing_while_it_renders_is_a_template_error_naming_its_line(
        tmp_path, template, error):
    """`{{ 1 // 0 }}`, or an attribute name made of a title (fine until a week's title has a
    space), ended in a Python traceback, exit 1 (a probe, this stop)."""
    templates = tmp_path / "tpl"
    templates.mkdir()
    (templates / "issue.html.j2").write_text(template)
    with pytest.raises(TemplateError) as caught:
        Renderer(templates).html(plain_issue())
    message = str(caught.value)
    assert message.startswith(f"{templates / 'issue.html.j2'}:2: ") and error in message, message
    assert "\n" not in message
    result = CliRunner().invoke(app, [
        "newsletter", str(EXAMPLES), "--week", "2026-W47", "--backend", "offline", "--out",
        str(tmp_path / "out"), "--state", str(tmp_path / "s.sqlite"), "--formats", "md,html",
        "--templates", str(templates)])
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert f"{templates / 'issue.html.j2'}:2" in result.stderr


def test_an_issue_the_profile_emptied_says_so():
    """Every paper excluded by the profile: the issue said "The listings read for this week
    held no papers to report", though they held 30 (a probe, stop 28)."""
    from digest.models import Stats
    from digest.render.view import empty_reason

    stats = Stats(records_read=40, papers_unique=30, papers_in_issue=0)
    assert "30 papers" in empty_reason(stats, excluded=30)
    assert "profile" in empty_reason(stats, excluded=30)
    mixed = Stats(records_read=40, papers_unique=30, already_published=10, papers_in_issue=0)
    reason = empty_reason(mixed, excluded=20)
    assert "10" in reason and "20" in reason


@pytest.mark.parametrize("fmt", ["markdown", "html", "text"])
def test_the_footer_counts_the_papers_left_out_so_its_numbers_add_up(fmt):
    """"105 records read · 0 duplicates merged · 102 papers": the 3 papers the profile left out,
    and those that appeared in an earlier issue, were in the run report only, so a subscriber
    could not see where they went (a probe, this stop)."""
    from dataclasses import replace

    issue = plain_issue()
    counted = replace(issue, excluded=3, stats=replace(issue.stats, already_published=2))
    footer = getattr(Renderer(), fmt)(counted).replace("\n", " ")
    assert "2 papers published before · 3 papers left out by the profile" in footer
    assert "published before" not in getattr(Renderer(), fmt)(issue)
    # --max-papers with --no-rest: the papers past it were in the report only (a probe, this
    # stop: "100 records read · 0 duplicates merged · 2 papers left out by the profile · 30
    # papers", 68 papers nowhere)
    cut = getattr(Renderer(), fmt)(replace(counted, left_out=68)).replace("\n", " ")
    assert "3 papers left out by the profile · 68 more not listed" in cut


def test_a_theme_named_like_a_heading_before_it_gets_github_s_next_anchor():
    """A theme titled "Contents" was linked as #contents, which GitHub gives to the issue's own
    "## Contents" above it (a probe, stop 28)."""
    from tests.render_samples import SectionSpec, make_issue, paper

    issue = make_issue([SectionSpec("Contents", "About contents.", [paper(1, "A paper")]),
                        SectionSpec("TL;DR", "About summaries.", [paper(2, "B paper")])])
    markdown = Renderer().markdown(issue)
    assert "(#contents-1)" in markdown and "(#tldr-1)" in markdown
    assert "(#contents)" not in markdown and "(#tldr)" not in markdown


@pytest.mark.parametrize("rising", [False, True], ids=["alone", "with-rising-section"])
def test_a_theme_named_rising_themes_is_linked_to_its_own_heading(tmp_path, rising):
    """A theme labelled "Rising themes" was linked as #rising-themes also when the issue's own
    "## Rising themes" section stood above it and took that anchor: the contents and the TL;DR
    sent the reader to the rising section (a probe, stop 28). The view was built before it was
    known whether that section is shown."""
    from digest.render.escape import github_slug

    if rising:
        publish(earlier_issue("2026-W46"), tmp_path)
    summaries = {"Rising themes": "About themes that rise.", "Robot manipulation": "Robots."}
    issue = make_issue([
        SectionSpec("Rising themes", summaries["Rising themes"],
                    [paper(1, "Trend Detection"), paper(2, "Topic Drift")], {}, ("trend",)),
        SectionSpec("Robot manipulation", summaries["Robot manipulation"],
                    [paper(3, "Folding Towels with a Robot")], {}, ("robot", "manipulation"))])
    markdown = publish(issue, tmp_path)["markdown"].read_text()
    tokens = MARKDOWN.parse(markdown)
    taken: set[str] = set()
    headings = {}  # GitHub's anchor of each heading, in order → (its text, the paragraph after)
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            after = next((inline_text(t) for t in tokens[i + 3:] if t.type == "inline"), "")
            headings[github_slug(inline_text(tokens[i + 1]), taken)] = (
                inline_text(tokens[i + 1]), after)
    assert ("rising-themes-1" in headings) is rising
    links = [(str(child.attrs["href"]), token.children[n + 1].content)  # (anchor, link text)
             for token in tokens if token.type == "inline"
             for n, child in enumerate(token.children or []) if child.type == "link_open"
             and str(child.attrs["href"]).startswith("#")
             and not str(child.attrs["href"]).startswith("#paper-")]
    assert sorted(text for _, text in links) == sorted(2 * list(summaries))  # TL;DR, contents
    for href, text in links:
        assert headings[href.lstrip("#")] == (text, summaries[text]), href


@pytest.mark.parametrize(("template", "expected"), [
    ("line one\n\n{{ nonexist }}\n", ":3: 'nonexist' is undefined"),
    ("line one\n{{ issue.title.__class__ }}\n", ":2: access to attribute '__class__'"),
])
def test_a_user_templates_undefined_name_or_refused_attribute_names_its_folder_and_line(
        tmp_path, template, expected):
    """``{{ nonexist }}`` on line 3 said "Error: issue.md.j2: 'nonexist' is undefined": no
    folder, no line, as the prompts said before stop 31 (a probe, stop 32)."""
    templates = tmp_path / "tpl"
    templates.mkdir()
    (templates / "issue.md.j2").write_text(template)
    with pytest.raises(TemplateError) as caught:
        Renderer(templates).markdown(plain_issue())
    assert str(caught.value).startswith(f"{templates / 'issue.md.j2'}{expected}"), caught.value


def test_a_missing_include_names_the_missing_template_not_the_one_including_it(tmp_path):
    """``{% include "footer_missing.j2" %}`` said "template issue.md.j2 not found", blaming
    the template that exists (a probe, stop 32)."""
    templates = tmp_path / "tpl"
    templates.mkdir()
    (templates / "issue.md.j2").write_text('top\n{% include "footer_missing.md.j2" %}\n')
    with pytest.raises(TemplateError) as caught:
        Renderer(templates).markdown(plain_issue())
    message = str(caught.value)
    assert message.startswith("template footer_missing.md.j2 not found (included by "
                              "issue.md.j2"), message
    assert str(templates) in message
