"""Untrusted text (titles, authors, summaries, gists, intros) never becomes markup or a link.

Each rendering is read back with a real parser (markdown-it-py for Markdown, the standard
library for HTML and XML) and its structure compared with what the template makes itself.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from digest.errors import TemplateError
from digest.outputs import publish
from digest.render import Renderer, escape_markdown, html_text, one_line, plain_text, safe_url
from digest.render.escape import without_rules

from .render_samples import (
    HOSTILE,
    SectionSpec,
    allowed_links,
    hostile_issue,
    inline_text,
    make_issue,
    md_headings,
    md_tokens,
    paper,
    plain_issue,
    read_html,
)

URL = "https://arxiv.org/abs/2611.00001"
FORBIDDEN_MD = {"image", "html_block", "blockquote_open", "code_block", "fence", "s_open"}
# The one piece of HTML in the Markdown: digest's anchor on a paper entry, for citations.
OWN_ANCHOR = re.compile(r'<a id="paper-\d+-\d+">|</a>')
HTML_TAGS = {"html", "head", "meta", "link", "title", "style", "body", "div", "h1", "h2", "p",
             "ul", "ol", "li", "a", "strong", "em", "span", "br", "wbr", "hr", "svg", "text",
             "rect"}
BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")
RAW_URL = re.compile(r"(?i)\b(?:https?|ftp)://|\bwww\.")


def one_of_each(text: str):
    """An issue in which ``text`` is the intro, a theme title and summary, a paper's
    title, author and gist."""
    p = paper(1, text, url=URL, authors=(text, "Real Name"), seen=2)
    return make_issue([SectionSpec(text, text, [p], {p.id: text}, ("word",))], intro=text)


# --- Markdown ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text", HOSTILE)
def test_markdown_shows_hostile_text_as_typed_and_nothing_more(text):
    markdown = Renderer().markdown(one_of_each(text))
    tokens = md_tokens(markdown)
    shown = one_line(text)
    assert not FORBIDDEN_MD & {t.type for t in tokens}, markdown
    assert only_own_html(tokens), markdown
    assert only_bars_in_code(tokens)
    assert md_headings(markdown) == [
        (1, "Research digest, 2026-W47 (16–22 November 2026)"), (2, "TL;DR"), (2, "Contents"),
        (2, shown)]
    links = [t.attrs["href"] for t in tokens if t.type == "link_open"]
    assert links == ["#" + anchor_of(markdown)] * 2 + [URL], markdown  # TL;DR, contents, paper
    paragraphs = [inline_text(tokens[i + 1]) for i, t in enumerate(tokens)
                  if t.type == "paragraph_open"]
    assert paragraphs[1] == shown  # the intro, a paragraph at the start of a line
    assert shown in paragraphs  # the theme summary, also at the start of a line
    items = [t for t in tokens if t.type == "list_item_open"]
    assert len(items) == 2  # one TL;DR bullet, one paper (the contents are the table)
    assert sum(t.type == "table_open" for t in tokens) == 1
    assert all(len(row) == 3 for row in table_rows(tokens)), markdown
    assert sum(t.type == "hr" for t in tokens) == 1  # the footer's rule
    assert not RAW_URL.search(markdown.replace(f"(<{URL}>)", "")), markdown


def only_own_html(tokens) -> bool:
    return all(OWN_ANCHOR.fullmatch(t.content) for t in tokens if t.type == "html_inline")


def only_bars_in_code(tokens) -> bool:
    """The one code span digest makes is a bar of the chart."""
    return all(re.fullmatch("█+", t.content) for t in tokens if t.type == "code_inline")


def anchor_of(markdown: str) -> str:
    return re.search(r"\]\(#([^)]*)\)", markdown)[1]  # type: ignore[index]


def table_rows(tokens) -> list[list[str]]:
    rows, row = [], None
    for token in tokens:
        if token.type == "tr_open":
            row = []
        elif token.type in ("th_open", "td_open") and row is not None:
            row.append(token.type)
        elif token.type == "tr_close":
            rows.append(row)
    return rows


def test_markdown_paper_lines_read_back_as_title_authors_and_gist():
    issue, urls = hostile_issue()
    markdown = Renderer().markdown(issue)
    tokens = md_tokens(markdown)
    assert not FORBIDDEN_MD & {t.type for t in tokens}
    assert only_own_html(tokens)
    assert only_bars_in_code(tokens)
    links = {t.attrs["href"] for t in tokens if t.type == "link_open"}
    assert {link for link in links if not str(link).startswith("#")} == allowed_links(issue, urls)
    items = paper_items(tokens)
    for section in issue.sections:
        for p in section.papers:
            expected = one_line(p.title)
            line = next(text for text in items if text.startswith(expected))
            assert one_line(section.summary.gists[p.id]) in line
    first = next(text for text in items if text.startswith(one_line(issue.sections[0]
                                                                      .papers[0].title)))
    assert "(# Ann Author, <b>Bob</b> and [C](http://evil.example); in 3 listings)" in first


def paper_items(tokens) -> list[str]:
    """The visible text of every list item."""
    return [inline_text(tokens[i + 2]) for i, t in enumerate(tokens)
            if t.type == "list_item_open" and tokens[i + 2].type == "inline"]


def test_markdown_links_only_http_urls_of_ingested_records():
    issue, urls = hostile_issue()
    tokens = md_tokens(Renderer().markdown(issue))
    hrefs = [str(t.attrs["href"]) for t in tokens if t.type == "link_open"]
    assert {h for h in hrefs if not h.startswith("#")} == allowed_links(issue, urls)
    papers = sum(len(s.papers) for s in issue.sections)
    assert len(hrefs) == papers + 2 * len(issue.sections)  # the papers, TL;DR, contents


@pytest.mark.parametrize(("text", "escaped"), [
    ("# x", "\\# x"), ("> x", "\\> x"), ("- x", "\\- x"), ("+ x", "\\+ x"), ("1. x", "1\\. x"),
    ("12) x", "12\\) x"), ("a | b", "a \\| b"), ("[a](b)", "\\[a\\](b)"), ("<b>", "&lt;b>"),
    ("x http://e.x", "x http\\://e.x"), ("Title ##", "Title \\#\\#"), ("`c`", "\\`c\\`"),
    ("&amp;", "\\&amp;"), ("a\u202eb\u2066c", "abc"), ("a\nb\t c", "a b c"),
])
def test_escape_markdown_examples(text, escaped):
    assert escape_markdown(text) == escaped


@pytest.mark.parametrize(("text", "escaped"), [
    ("Reward models & RLHF", "Reward models & RLHF"), ("pass@k and pass@1", "pass@k and pass@1"),
    ("snake_case names", "snake_case names"),
    ("a < b > c", "a < b > c"), ("~50% fewer", "~50% fewer"),
    ("We propose \\oni, a", "We propose oni, a"),
    ("From r to Q^*: models", "From r to Q\u2217: models"), ("a \\mathcal{R} set", "a R set"),
    # ... and where it would make markup, still a backslash
    ("A*B search", "A\\*B search"), ("A*B and C*D", "A\\*B and C\\*D"), ("x* y", "x\\* y"),
    ("_a_", "\\_a\\_"), ("Models~(MLMs)", "Models\\~(MLMs)"),
    ("~~a~~", "\\~~a\\~\\~"), ("a@b.example", "a\\@b.example"), ("&lt;", "\\&lt;"),
    ("<!-- c -->", "&lt;!-- c -->"), ("</p>", "&lt;/p>"), ("with 6.0 <= V-K", "with 6.0 <= V-K"),
])
def test_escape_markdown_leaves_what_is_not_markup_at_its_place(text, escaped):
    """Issue 14: "\\&" in every theme name, "pass\\@k", "\\\\oni" in the raw Markdown."""
    assert escape_markdown(text) == escaped


def escape_markdown_before(text: object) -> str:
    """escape_markdown before its fast path for text no pattern can match (issue 15)."""
    from digest.render import escape as e
    text = e._MD_ALWAYS.sub(r"\\\1", one_line(text))
    text = e._CONTEXT.sub(r"\\\g<0>", text)
    text = e._TAG_OPEN.sub("&lt;", text)
    text = e._AUTOLINK.sub(lambda match: "\\" + match[0], text)
    text = e._ORDERED_LIST_START.sub(r"\1\\\2", text)
    text = e._TRAILING_HASHES.sub(lambda match: "\\#" * len(match[0]), text)
    return e._BLOCK_START.sub(r"\\\1", text)


MARKDOWN_PIECES = st.sampled_from(
    ["a", "Title", " ", "1", "12", "٣", ".", ")", "#", ">", "+", "=", "-", "*", "_", "~", "`", "|",
     "$", "[", "]", "\\", "<", "b>", "&", "amp;", "@", "b.example", "://", "http", "www", "WWW",
     ".", "\n", "\t", "\u202e", "é", "Q^*", "\\oni", "{R}"])


@settings(max_examples=1000, deadline=None)
@given(st.lists(MARKDOWN_PIECES, max_size=12).map("".join) | st.text(max_size=40))
@example("WWW.example")
@example("3) steps")
def test_escape_markdown_gives_what_it_gave_before_its_fast_path(text):
    assert escape_markdown(text) == escape_markdown_before(text)


def test_escape_markdown_gives_what_it_gave_before_on_real_titles_and_abstracts(seeds):
    from digest.ingest import load_sources
    records = load_sources([str(page) for page in sorted(seeds.glob("*"))]).records
    assert len(records) > 50
    for record in records:
        for text in (record.title, record.abstract, *record.abstract.split(". ")):
            assert escape_markdown(text) == escape_markdown_before(text)


# --- HTML --------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", HOSTILE)
def test_html_shows_hostile_text_as_text(text):
    html = Renderer().html(one_of_each(text))
    page = read_html(html)
    shown = one_line(text)
    assert {e.tag for e in page.elements} <= HTML_TAGS, html
    assert not [name for e in page.elements for name in e.attrs if name.startswith("on")]
    hrefs = [e.attrs["href"] for e in page.elements if e.tag == "a"]
    anchor = next(e.attrs["id"] for e in page.elements if e.tag == "h2" and e.attrs.get("id"))
    assert set(hrefs) == {"#" + str(anchor), URL}
    assert [e.text for e in page.elements if e.tag == "a" and e.attrs["href"] == URL] == [shown]
    assert shown in [e.text for e in page.elements if e.tag == "h2"]
    assert not BIDI.search(html)


def test_html_links_only_http_urls_of_ingested_records():
    issue, urls = hostile_issue()
    page = read_html(Renderer().html(issue))
    hrefs = {str(e.attrs["href"]) for e in page.elements if e.tag == "a"}
    allowed = allowed_links(issue, urls)
    assert {h for h in hrefs if not h.startswith("#")} == allowed
    assert not [e for e in page.elements if e.attrs.get("src")]
    links = [e.text for e in page.elements if e.tag == "a" and e.attrs["href"] in allowed]
    assert links == [one_line(p.title) for s in issue.sections for p in s.papers]


def test_autoescape_is_on_for_html_templates_a_user_provides(tmp_path):
    """select_autoescape() would not match *.html.j2; the renderer decides by suffix."""
    (tmp_path / "issue.html.j2").write_text(
        "<p>{{ issue.intro }}</p><p>{{ issue.intro | upper }}</p>{{ issue.sections[0].title }}\n")
    html = Renderer(tmp_path).html(one_of_each("<script>alert(1)</script>"))
    assert "<script>" not in html.lower()
    assert html.count("&lt;script&gt;") == 2 and "&lt;SCRIPT&gt;" in html


def test_plain_markdown_templates_of_a_user_are_escaped_too(tmp_path):
    (tmp_path / "issue.md.j2").write_text("{{ issue.intro }}\n")
    assert Renderer(tmp_path).markdown(one_of_each("# [x](http://e.x)")) == (
        "\\# \\[x\\](http\\://e.x)\n")


def test_the_plain_text_wrap_filter_is_not_a_way_around_markdown_escaping(tmp_path):
    (tmp_path / "issue.md.j2").write_text("{{ issue.intro | wrap }}\n")
    with pytest.raises(TemplateError, match="wrap"):
        Renderer(tmp_path).markdown(one_of_each("# [x](http://e.x)"))


# --- Atom feed ---------------------------------------------------------------------------------

ATOM = "{http://www.w3.org/2005/Atom}"


def test_feed_is_valid_xml_and_its_html_content_has_no_markup_from_titles(tmp_path):
    issue, urls = hostile_issue()
    publish(issue, tmp_path, formats=["md", "html"])
    root = ET.fromstring((tmp_path / "feed.xml").read_bytes())
    entry = root.find(f"{ATOM}entry")
    assert entry is not None
    assert entry.findtext(f"{ATOM}summary") == one_line(issue.intro)
    content = entry.findtext(f"{ATOM}content") or ""
    inner = read_html(content)
    assert {e.tag for e in inner.elements} <= {"p", "ul", "li", "strong", "a", "wbr"}
    assert [e.attrs["href"] for e in inner.elements if e.tag == "a"] == ["2026-W47.html"]
    assert one_line(issue.intro) in "".join(inner.text)
    assert not BIDI.search((tmp_path / "feed.xml").read_text())


def test_text_no_utf8_or_xml_file_may_hold_is_dropped_before_writing(tmp_path):
    """A lone surrogate (valid in a JSON string, e.g. a model's answer) would stop the write."""
    issue = one_of_each("odd \ud800 text \uffff\x00 here")
    publish(issue, tmp_path, formats=["md", "html", "txt"])
    root = ET.parse(tmp_path / "feed.xml").getroot()
    assert root.find(f"{ATOM}entry/{ATOM}summary").text == "odd text here"  # type: ignore[union-attr]
    for suffix in ("md", "html", "txt"):
        assert "odd text here" in (tmp_path / f"2026-W47.{suffix}").read_text(encoding="utf-8")


# --- plain text --------------------------------------------------------------------------------

def test_plain_text_template_adds_no_markup():
    text = Renderer().text(plain_issue())
    assert not re.search(r"\*\*|\]\(|<|>|^#|`", text, re.MULTILINE), text


def test_plain_text_links_only_record_urls_and_shows_hostile_text_as_typed():
    issue, urls = hostile_issue()
    text = Renderer().text(issue)
    assert set(re.findall(r"https?://\S+", text)) == allowed_links(issue, urls)
    assert not RAW_URL.search(re.sub(r"https://arxiv\.org/(abs|search)/\S+", "", text))
    assert not BIDI.search(text)
    assert "<script>alert(1)</script>" in text  # plain text is never markup: shown as typed


def test_plain_text_defangs_url_like_text():
    assert plain_text("see http://a.example and www.b.example, c@d.example") == (
        "see http[:]//a.example and www[.]b.example, c[@]d.example")


# --- links ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("url", "safe"), [
    ("https://arxiv.org/abs/2611.00001", "https://arxiv.org/abs/2611.00001"),
    ("http://x.example/a?b=1&c=2", "http://x.example/a?b=1&c=2"),
    ("https://x.example/a b\"c<d>e)", "https://x.example/a%20b%22c%3Cd%3Ee)"),
    ("javascript:alert(1)", None), ("data:text/html,<b>", None), ("ftp://x.example/f", None),
    ("//x.example/a", None), ("/relative", None), ("", None), (None, None),
])
def test_safe_url_keeps_only_http_and_https(url, safe):
    assert safe_url(url) == safe


# --- what two values on one line make together (found by a probe, stop 28) ------------------

def _emphasis(markdown: str) -> list[str]:
    """The text inside every <em>/<s> a parser makes of ``markdown``."""
    shown, inside = [], None
    for token in md_tokens(markdown):
        if token.type in ("em_open", "s_open"):
            inside = []
        elif token.type in ("em_close", "s_close") and inside is not None:
            shown.append("".join(inside))
            inside = None
        elif inside is not None and token.type == "text":
            inside.append(token.content)
    return shown


def test_a_lone_star_in_two_values_of_one_line_makes_no_emphasis():
    """"A*B" alone in a title left as typed (issue 14) paired with a star of another value on
    the same line: an author "Jo*Ann" with the template's own "*(", or two summary sentences."""
    first = paper(1, "Ranking with A*B tests", url=URL, authors=("Jo*Ann Smith",))
    second = paper(2, "The Q*C index", url=URL, authors=("Ann Lee",))
    gists = {first.id: "We show that A*B testing fails.", second.id: "The Q*C index works."}
    issue = make_issue([SectionSpec(
        "Ranking", "The Q*C index predicts quality. Another shows that A*B testing fails.",
        [first, second], gists, ("ranking",))])
    markdown = Renderer().markdown(issue)
    assert _emphasis(markdown) == ["(Jo*Ann Smith)", "(Ann Lee)"], markdown


def _can_close(text: str, at: int) -> bool:
    """Whether the "~" at ``at`` is right-flanking (CommonMark), the value's start taken as
    punctuation (the worst a template can put before it)."""
    before, after = (text[at - 1] if at else "("), text[at + 1:at + 2]

    def punctuation(char: str) -> bool:
        return not (char.isalnum() or char.isspace())
    return not before.isspace() and (not punctuation(before) or not after or after.isspace()
                                     or punctuation(after))


@pytest.mark.parametrize("text", ["A*B", "*50% fewer", "Jo*", "Models~(MLMs)", "x~y", "50%~",
                                  "~start", "a ~ b", "~~", "1.53×~20.57×", "(~x)", "~ 5", "x ~~y~~",
                                  "z~2.5", "é~ü"])
def test_no_star_and_no_tilde_that_can_close_is_left_for_another_value(text):
    """GFM pairs "~" (one or two) like "*" across the values of a paragraph, and the templates
    make "*" of their own: every "*" is escaped, and every "~" that could close; one that only
    opens ("~50%") or neither ("at most ~ 3800") stays."""
    escaped = escape_markdown(text)
    assert "*" not in escaped.replace("\\*", "")
    bare = [m.start() for m in re.finditer(r"(?<!\\)~", escaped)]
    assert not [at for at in bare if _can_close(escaped, at)], escaped


def test_a_tilde_that_only_opens_or_neither_stays_as_typed():
    assert escape_markdown("about ~50% fewer") == "about ~50% fewer"
    assert escape_markdown("at most ~ 3800 km/s") == "at most ~ 3800 km/s"


@pytest.mark.parametrize("text", ["Foo_www.evil-prize.example/win", "(www.evil.example)",
                                  "*www.evil.example", "~www.evil.example"])
def test_www_after_an_underscore_or_punctuation_is_no_autolink(text):
    """GFM links "www." after a space, "*", "_", "~" or "(": "\\b" saw no word start after "_"."""
    assert "www\\." in escape_markdown(text)
    assert "www[.]" in plain_text(text)
    assert "www.<wbr>" in str(html_text(text))


def test_www_inside_a_word_stays():
    assert escape_markdown("awww.example") == "awww.example"


@pytest.mark.parametrize("text", ["<1admin@intranet>", "<+x@y>", "<.a@b>", "<#x@host>",
                                  "Ann Lee <7ann@corp>"])
def test_an_address_in_angle_brackets_makes_no_mailto_link(text):
    """CommonMark autolinks "<local@host>" whatever the local part starts with; "<" was escaped
    only before a letter, "/", "!" or "?" (a probe, stop 28)."""
    tokens = md_tokens(Renderer().markdown(one_of_each(text)))
    links = [str(t.attrs["href"]) for t in tokens if t.type == "link_open"]
    assert not [link for link in links if link.startswith("mailto:")], links


# --- what a template of yours can do with a value (a probe, stop 29) -------------------------

CONSTRUCT_VALUE = ("www.evil.example/x </h2><script>alert(document.domain)</script> of titles, "
                   "see https://evil.example/y")
SHOWN = "<script>alert(document.domain)</script>"
# Tags the constructs below write themselves; anything else came from the value.
TEMPLATE_TAGS = {"html", "body", "h2", "p", "i", "b", "wbr"}
CONSTRUCTS = [
    "{{ v | safe }}",
    "{{ v | urlize }}",
    "{{ v | urlize | safe }}",
    "{{ v | replace('titles', '<b>' | safe) }}",
    "{{ v | replace('titles', '<b>') }}",
    "{{ ('<i>%s</i>' | safe) | format(v) }}",
    "{% set f %}<i>%s</i>{% endset %}{{ f | format(v) }}",
    "{{ (v | safe) | format() }}",
    "{{ v | safe | indent(2, true) }}",
    "{{ v | indent('<b>' | safe, true) }}",
    "{{ v | safe | wordwrap(60) }}",
    "{{ v | wordwrap(60, wrapstring='<br>' | safe) }}",
    "<p{{ {'title': v} | xmlattr }}>x</p>",
    "<p{{ {'title': v | safe} | xmlattr }}>x</p>",
    "{{ v | tojson }}",
    "<p title=\"{{ v | tojson }}\">x</p>",
    "{{ v | striptags }}",
    "{{ v | e }}",
    "{{ v | safe | e }}",
    "{{ v | forceescape }}",
    "{{ v | safe | title }}",
    "{{ v | safe | trim }}",
    "{{ v | safe | center(200) }}",
    "{{ v | string | safe }}",
    "{{ missing | default(v | safe) }}",
    "{{ [v] | map('safe') | join(', ') }}",
    "{{ [v | safe] | join(', ' | safe) }}",
    "{{ [v | safe] | first }}",
    "{{ (v | safe) ~ '' }}",
    "{{ v | truncate(500) | safe }}",
    "{% macro m(x) %}<b>{{ x | safe }}</b>{% endmacro %}{{ m(v) }}",
    "{% macro m() %}<b>{{ caller() }}</b>{% endmacro %}{% call m() %}{{ v | safe }}{% endcall %}",
    "{% filter safe %}{{ v }}{% endfilter %}",
    "{% filter urlize %}{{ v }}{% endfilter %}",
    "{% filter striptags %}{{ v }}{% endfilter %}",
    "{% filter striptags %}<i>{{ v }}</i>{% endfilter %}",
    "{% filter truncate(500, true) %}{{ v }}{% endfilter %}",
    "{% filter wordwrap(7) %}{{ v }}{% endfilter %}",
    "{% set t %}{{ v }}{% endset %}{{ t[:7] }} {{ t | truncate(7, true, '') }} {{ v }}",
    "{% set t %}{{ v }}{% endset %}{{ t | wordwrap(3) }} {{ v }}",
    "{% set t %}<i>{{ v }}</i>{% endset %}{{ t | reverse }} {{ v }}",
    "{% filter reverse %}<i>{{ v }}</i>{% endfilter %} {{ v }}",
    # a value as the argument of a filter applied to markup the template made (a probe, this
    # stop: jinja2's indent marks its indent string as markup when the text is markup)
    "{% set m %}\nx\n{% endset %}{{ m | indent(v, true, true) }}",
    "{% set m %}<i>x</i>\n<i>y</i>{% endset %}{{ m | indent(v) }}",
    "{% set m %}<i>x x x x</i>{% endset %}{{ m | wordwrap(3, wrapstring=v) }}",
    "{% set m %}<i>x</i>{% endset %}{{ [m, m] | join(v) }}",
    "{% set m %}<i>x</i>{% endset %}{{ m | replace('x', v) }}",
    "{% set m %}<i>%s</i>{% endset %}{{ m | format(v) }}",
    "{% set m %}<i>{{ 'x ' * 150 }}</i>{% endset %}{{ m | truncate(250, true, v) }}",
]
# Constructs a template may not use in HTML or XML: each is a TemplateError naming it.
REFUSED = [
    "{% autoescape false %}{{ v }}{% endautoescape %}",
    "{% autoescape false %}{{ v | safe }}{% endautoescape %}",
    "{% autoescape 1 == 2 %}{{ v }}{% endautoescape %}",
    "{% set t %}{{ v }}{% endset %}{{ t.split('b')[0] }}",
    "{{ (v | e).__class__(v) }}",
    "{{ cycler.__init__.__globals__.markupsafe.Markup(v) }}",
]


def _rendered(tmp_path, kind: str, template: str, title: str) -> str:
    """The issue of one paper titled ``title`` through a template of the user's (``v`` is
    the title)."""
    (tmp_path / f"issue.{kind}.j2").write_text(
        template.replace("{{ SET }}", "{% set v = issue.sections[0].papers[0].title %}"))
    issue = make_issue([SectionSpec("Theme", "A summary.", [paper(1, title)])])
    return Renderer(tmp_path).render(issue, kind)


def _construct_html(construct: str, tmp_path) -> str:
    return _rendered(tmp_path, "html", f"<html><body>{{{{ SET }}}}<h2>{construct}</h2></body>"
                     "</html>\n", CONSTRUCT_VALUE)


def _construct_feed(construct: str, tmp_path) -> tuple[ET.Element, str]:
    """The feed (parsed) with ``construct`` in its title and in its HTML content, and the
    content's HTML."""
    (tmp_path / "feed.xml.j2").write_text(
        '<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">'
        "{% set v = entries[0].intro %}"
        f"<title>{construct}</title>"
        f"{{% set content %}}<p>{construct}</p>{{% endset %}}"
        "<entry><content type=\"html\">{{ content | forceescape }}</content></entry></feed>\n")
    out = tmp_path / "out"
    publish(make_issue([SectionSpec("Theme", "A summary.", [paper(1, "A title")])],
                       intro=CONSTRUCT_VALUE), out, renderer=Renderer(tmp_path))
    root = ET.fromstring((out / "feed.xml").read_bytes())
    return root, root.findtext(f"{ATOM}entry/{ATOM}content") or ""


def _assert_only_text_from_the_value(html: str, shown: str | None) -> None:
    page = read_html(html)
    assert {e.tag for e in page.elements} <= TEMPLATE_TAGS, html
    assert not [name for e in page.elements for name in e.attrs if name.startswith("on")], html
    assert not [e for e in page.elements if "evil" in str(e.attrs.get("href"))], html
    if shown is not None:
        assert shown in "".join(page.text) + "".join(
            str(v) for e in page.elements for v in e.attrs.values()), html


def _shown(construct: str) -> str | None:
    """What of the value a reader sees: the tag as typed, unless the construct changes it."""
    if "wordwrap(" in construct and "60" not in construct:
        return None  # a long word is broken across lines
    if "reverse" in construct:
        return SHOWN[::-1]
    if "| title" in construct:
        return "<Script>alert(Document.domain)</script>"
    if "tojson" in construct:
        return "\\u003cscript\\u003ealert(document.domain)"
    if "striptags" in construct:
        return "alert(document.domain)"
    return SHOWN


@pytest.mark.parametrize("construct", CONSTRUCTS)
def test_no_construct_of_a_template_makes_a_value_markup_in_html(construct, tmp_path):
    """``|safe``, ``|urlize`` and the like passed a title through unescaped, and a filter block
    or a slice could undo digest's escaping (a probe, stop 29)."""
    html = _construct_html(construct, tmp_path)
    assert "<script" not in html.lower()
    _assert_only_text_from_the_value(html, _shown(construct))


@pytest.mark.parametrize("construct", CONSTRUCTS)
def test_no_construct_of_a_template_makes_a_value_markup_in_the_feed(construct, tmp_path):
    """The same for the Atom feed: nothing from an intro becomes an element of the XML, nor
    of the HTML a feed reader makes of the entry's content (a probe, stop 29)."""
    root, content = _construct_feed(construct, tmp_path)
    names = {element.tag.rpartition("}")[2] for element in root.iter()}
    assert names <= {"feed", "title", "entry", "content"} | TEMPLATE_TAGS, names
    title = root.find(f"{ATOM}title")
    assert title is not None
    shown, seen = _shown(construct), "".join(title.itertext()) + "".join(
        value for element in title.iter() for value in element.attrib.values())
    assert shown is None or shown in seen, seen
    assert "<script" not in content.lower()
    _assert_only_text_from_the_value(content, _shown(construct))


def test_a_template_of_yours_gets_only_the_filters_read_for_what_they_make_of_a_value(tmp_path):
    """A jinja2 that brings a new filter must have it read (and added to CONSTRUCTS if it can make
    markup) before a user's template gets it; until then it is missing, not trusted (a probe,
    stop 29)."""
    from digest.render.renderer import REVIEWED_FILTERS, Renderer

    for env in Renderer(tmp_path)._envs.values():  # noqa: SLF001
        assert set(env.filters) <= REVIEWED_FILTERS | {"md", "wrap"}


@pytest.mark.parametrize("construct", REFUSED)
@pytest.mark.parametrize("kind", ["html", "feed"])
def test_turning_autoescape_off_or_reaching_past_the_filters_is_a_template_error(
        construct, kind, tmp_path):
    """``{% autoescape false %}`` made ``|replace`` and filter blocks undo the escaping, and
    methods of markup or Python's internals made markup of any text (a probe, stop 29)."""
    with pytest.raises(TemplateError) as caught:
        if kind == "html":
            _construct_html(construct, tmp_path)
        else:
            _construct_feed(construct, tmp_path)
    assert "\n" not in str(caught.value)



def test_a_markdown_template_of_yours_gets_no_python_internals(tmp_path):
    """The sandbox holds for every template of the user's, not only HTML and the feed: Python's
    internals would let one build ``Trusted`` text of a title by hand."""
    from digest.render.renderer import Renderer
    from tests.render_samples import plain_issue

    (tmp_path / "issue.md.j2").write_text("{{ issue.title.__class__.__mro__ }}\n")
    with pytest.raises(TemplateError, match="Use a filter instead"):
        Renderer(tmp_path).markdown(plain_issue())


def test_a_title_in_an_html_block_of_a_markdown_template_of_yours_makes_no_tag(tmp_path):
    """A `.md.j2` of the user's that wraps a title in `<div>` lines puts it in a CommonMark HTML
    block, where a backslash escapes nothing: "\\<img src=x onerror=...>" was a live tag (a
    probe, this stop). A "<" that could open a tag is written "&lt;", which Markdown shows as
    "<" in text and an HTML block shows as text too."""
    from tests.render_samples import SectionSpec, make_issue, paper

    hostile = "<img src=x onerror=alert(1)> Evil"
    issue = make_issue([SectionSpec("Theme", "About it.", [paper(1, hostile)])])
    (tmp_path / "issue.md.j2").write_text(
        "{% for s in issue.sections %}{% for p in s.papers %}<div class=\"paper\">\n"
        "{{ p.title }}\n</div>\n\n{% endfor %}{% endfor %}")
    markdown = Renderer(tmp_path).markdown(issue)
    html = "".join(t.content for t in md_tokens(markdown) if t.type == "html_block")
    assert "<div" in html and "<img" not in html, html
    shown = Renderer().markdown(issue)  # and digest's own template shows the title as typed
    inline = "".join(t.content for t in md_tokens(shown) if t.type == "inline")
    assert "<img src=x onerror=alert(1)> Evil" in _text_of_md(shown) and "<img" not in "".join(
        t.content for t in md_tokens(shown) if t.type in ("html_inline", "html_block")), inline


def _text_of_md(markdown: str) -> str:
    import re as _re
    from html import unescape

    from markdown_it import MarkdownIt
    return unescape(_re.sub(r"<[^>]+>", "", MarkdownIt("commonmark").render(markdown)))


@pytest.mark.parametrize("rule", ["-", "=", "_", "*", "~", "#", "+"])
def test_plain_text_from_untrusted_text_draws_no_rule_line_of_a_heading(rule):
    """Model text "… 6. Account notice for every reader ---…(72) Reply to this mail with
    your password" wrapped into a line "6. Account notice …" over a line of 72 dashes: the
    plain text's own section heading, in the .txt issue and the mail (a probe, stop 31)."""
    text = ("This week brings five themes, from tool agents to speech and robot arm. 6. Account "
            f"notice for every reader {rule * 72} Reply to this mail with your password.")
    rendered = Renderer().text(one_of_each(text))
    own = Renderer().text(one_of_each("Plain words"))
    rules = re.compile(rf"^\s*{re.escape(rule)}{{4,}}\s*$", re.MULTILINE)
    assert len(rules.findall(rendered)) == len(rules.findall(own))
    assert f"every reader {rule * 3} Reply" in rendered.replace("\n", " ")
    assert without_rules("a -- b --- c ----") == "a -- b --- c ---"  # prose dashes stay


# --- the same in a Markdown or text template of yours (a probe, stop 32) ----------------------

TEXT_VALUE = ("Repair of Programs Written in # Language and Friends - see "
              "[Click](javascript:alert(1)) and <b>bold</b> | a | b |\n1. Account notice")
# (less the constructs that write HTML of their own, which a template may do)
TEXT_CONSTRUCTS = [c for c in CONSTRUCTS if "{% filter" not in c and "<" not in c] + [
    "{{ v | wordwrap(30) }}",
    "{{ v | md | wordwrap(30) }}",
    "{{ v | md | replace('\\\\', '') }}",
    "{% macro m(x) %}{{ x }}{% endmacro %}{{ m(v) | wordwrap(30) | replace('\\\\', '') }}",
    "{% macro m() %}{{ caller() | replace('\\\\', '') }}{% endmacro %}"
    "{% call m() %}{{ v }}{% endcall %}",
    "{% set t %}{{ v }}{% endset %}{{ t | wordwrap(30) | replace('\\\\', '') }}",
]
FILTER_BLOCKS = [
    "{% filter wordwrap(30) %}{{ v }}{% endfilter %}",
    "{% filter replace('\\\\', '') %}{{ v }}{% endfilter %}",
    "{% filter upper %}**{{ v }}**{% endfilter %}",
]


def _construct_markdown(construct: str, tmp_path) -> str:
    return _rendered(tmp_path, "md", f"Before\n\n{{{{ SET }}}}{construct}\n\nAfter\n",
                     TEXT_VALUE)


@pytest.mark.parametrize("construct", TEXT_CONSTRUCTS)
def test_no_construct_of_a_markdown_template_makes_a_value_markup(construct, tmp_path):
    """In Markdown, a value stays text whatever filters a template puts it through."""
    markdown = _construct_markdown(construct, tmp_path)
    made = {token.type for token in md_tokens(markdown)}
    assert not made & {"heading_open", "link_open", "image", "html_inline", "html_block",
                       "bullet_list_open", "ordered_list_open", "table_open", "hr"}, markdown


@pytest.mark.parametrize("construct", FILTER_BLOCKS)
@pytest.mark.parametrize("kind", ["md", "txt"])
def test_a_filter_block_in_a_markdown_or_text_template_is_a_template_error(
        construct, kind, tmp_path):
    """A filter block's output was never escaped again: ``{% filter wordwrap(30) %}`` put a
    title's "# Language" at the start of a line (a heading), and ``replace`` took the escapes
    out of a link (a probe, stop 32). Its filter applied to the value is escaped after it."""
    (tmp_path / f"issue.{kind}.j2").write_text(
        "{% set v = issue.sections[0].papers[0].title %}\n" f"{construct}\n")
    issue = make_issue([SectionSpec("Theme", "A summary.", [paper(1, TEXT_VALUE)])])
    with pytest.raises(TemplateError) as caught:
        getattr(Renderer(tmp_path), {"md": "markdown", "txt": "text"}[kind])(issue)
    message = str(caught.value)
    assert f"issue.{kind}.j2:2: " in message and "\n" not in message
    assert "apply the filter to the value" in message
