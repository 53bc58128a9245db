"""What the reader's profile adds to an issue: a reason per chosen paper, and the papers past
--max-papers in a compact "Also this week" list (title, link and the other titles a merged
paper was listed under)."""

from __future__ import annotations

from dataclasses import replace

from digest.render import Renderer

from .render_samples import DIGEST_LINK, md_tokens, paper, plain_issue, read_html

HOSTILE_REASON = "like: [click](http://evil.example) <b>x</b> # h"
HOSTILE_TITLE = "<b>Bold</b> [click](http://evil.example) # Heading"


def relevance_issue():
    issue = plain_issue()
    also = (paper(41, "A Paper Past the Cut", url="https://arxiv.org/abs/2611.00041"),
            paper(42, "An Unlinked *Paper* Past the Cut"))
    reasons = {"2611.00011": ("matches: world model", "follows: Ada Lovelace"),
               "2611.00021": (HOSTILE_REASON,)}
    return replace(issue, also=also, reasons=reasons)


def test_markdown_shows_reasons_and_the_rest_as_titles_with_links():
    markdown = Renderer().markdown(relevance_issue())
    assert "*(matches: world model · follows: Ada Lovelace)*" in markdown
    assert "; 2 more under Also this week." in markdown
    also = markdown.split("## Also this week\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert also[0] == "- [A Paper Past the Cut](<https://arxiv.org/abs/2611.00041>)"
    assert also[1].startswith("- [An Unlinked \\*Paper\\* Past the Cut](<https://arxiv.org/search/")
    assert not any(line.startswith("- **") for line in also)  # not counted as issue papers


def test_a_hostile_reason_is_text_in_every_format():
    issue = relevance_issue()
    tokens = md_tokens(Renderer().markdown(issue))
    hrefs = {str(t.attrs["href"]) for t in tokens if t.type == "link_open"}
    urls = {p.url for s in issue.sections for p in s.papers} | {issue.also[0].url}
    assert all(h in urls or DIGEST_LINK.match(h) for h in hrefs if not h.startswith("#"))
    assert "http://evil.example" not in hrefs
    page = read_html(Renderer().html(issue))
    assert not [e for e in page.elements if e.tag == "b"]
    assert HOSTILE_REASON in "".join(page.text)
    text = " ".join(Renderer().text(issue).split())  # plain text defangs what looks like a URL
    assert HOSTILE_REASON.replace("http://", "http[:]//") in text


def test_html_and_text_list_the_rest_too():
    issue = relevance_issue()
    page = read_html(Renderer().html(issue))
    links = {(e.text, e.attrs["href"]) for e in page.elements if e.tag == "a"}
    assert ("A Paper Past the Cut", "https://arxiv.org/abs/2611.00041") in links
    text = Renderer().text(issue)
    assert "Also this week\n--------------" in text
    assert "  - A Paper Past the Cut\n    https://arxiv.org/abs/2611.00041" in text


def _issue_with_a_merged_paper_past_the_cut():
    issue = relevance_issue()
    merged = replace(issue.also[0], also_listed_as=("Planning by Retrieval", HOSTILE_TITLE))
    return replace(issue, also=(merged, issue.also[1]))


def test_also_this_week_shows_the_other_titles_escaped_in_every_format():
    """A merged paper past --max-papers showed only its first title under "Also this week":
    the other titles it was listed under appeared nowhere in the issue (a probe, stop 32)."""
    from digest.render import escape_markdown

    issue = _issue_with_a_merged_paper_past_the_cut()
    markdown = Renderer().markdown(issue)
    also = markdown.split("## Also this week\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert also[0] == ("- [A Paper Past the Cut](<https://arxiv.org/abs/2611.00041>) (also listed "
                       f"as: Planning by Retrieval; {escape_markdown(HOSTILE_TITLE)})")
    assert "also listed as" not in also[1]
    tokens = md_tokens(markdown)
    assert "http://evil.example" not in {str(t.attrs.get("href")) for t in tokens}
    assert not {"html_inline", "heading_open"} & {t.type for t in tokens if t.level > 0}
    html = Renderer().html(issue)
    page = read_html(html)
    assert "also listed as: Planning by Retrieval; &lt;b&gt;Bold&lt;/b&gt;" in html
    assert not [e for e in page.elements if e.tag == "b"]
    assert "http://evil.example" not in {e.attrs.get("href") for e in page.elements}
    text = Renderer().text(issue)
    rest = " ".join(text.split("Also this week\n--------------", 1)[1].split())
    assert ("A Paper Past the Cut also listed as: Planning by Retrieval; "
            + HOSTILE_TITLE.replace("http://", "http[:]//")) in rest
