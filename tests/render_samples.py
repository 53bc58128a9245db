"""Made-up issues for the render tests, and parsers that read a rendering back.

Nothing here comes from real listings: every paper, author and URL is invented.
The parsers are real ones (markdown-it-py for CommonMark + GFM tables, the standard
library's HTML parser), so the tests check what a reader's software would see.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

from markdown_it import MarkdownIt
from markdown_it.token import Token

from digest.links import paper_link
from digest.models import Issue, IssueSection, Paper, Sighting, Stats, Theme, ThemeSummary
from digest.render import safe_url
from digest.weeks import parse_week

# Text that would make markup, links, images, raw HTML or a reordered line if printed as is.
HOSTILE = [
    "# Heading injection",
    "> a quote",
    "- a list item",
    "+ another list item",
    "* a star item",
    "1. an ordered item",
    "1986) a year",
    "| a | table |",
    "=== setext",
    "--- rule",
    "***",
    "[click me](http://evil.example/x)",
    "![img](http://evil.example/pixel.png)",
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "<http://evil.example/autolink>",
    "see http://evil.example/bare and https://evil.example/s and www.evil.example",
    "mail me: someone@evil.example",
    "`code` and ```fence```",
    "&lt;b&gt; &amp; &#60;i&#62; entities",
    "bidi \u202eevil\u202c and \u2066isolate\u2069 marks",
    "trailing hashes ##",
    "*emph* _under_ ~~strike~~ $x$ back\\slash",
    "javascript:alert(1)",
    '"><svg onload=alert(1)>',
    "[ref]: http://evil.example/ref",
    # what escapes only where it would make markup must still make none
    "in*word*emph and in_word_under and a*b",
    "single ~tilde~ and ~~double~~",
    "&#x3C;b&#x3E; hex and & bare and AT&T;",
    "pass@k and a.b@evil.example",
    "<!-- comment --> and </p> and a < b",
    "Q^* and \\oni and \\textbf{bold} left by LaTeX",
]
EVIL_HOST = "evil.example"


def sighting(source: str = "listing.json", position: int = 1) -> Sighting:
    return Sighting(source=source, position=position)


def paper(n: int, title: str, *, url: str | None = None, authors: tuple[str, ...] = (),
          seen: int = 1) -> Paper:
    sightings = tuple(sighting(f"listing-{i}.json", n) for i in range(seen))
    return Paper(id=f"2611.{n:05d}", title=title, abstract=f"Abstract of paper {n}.",
                 url=url, authors=authors, sightings=sightings)


@dataclass
class SectionSpec:
    title: str
    summary: str
    papers: list[Paper]
    gists: dict[str, str] = field(default_factory=dict)
    keywords: tuple[str, ...] = ()


def make_issue(specs: list[SectionSpec], *, week: str = "2026-W47", intro: str = "An intro.",
               backend: str = "offline", model: str | None = None, cost: float = 0.0,
               stats: Stats | None = None) -> Issue:
    start, end = parse_week(week)
    sections = tuple(
        IssueSection(Theme(s.title, s.keywords, tuple(p.id for p in s.papers)),
                     ThemeSummary(summary=s.summary, gists=s.gists), tuple(s.papers))
        for s in specs)
    n = sum(len(s.papers) for s in specs)
    stats = stats or Stats(records_read=n + 2, papers_unique=n, duplicates_merged=2,
                           papers_in_issue=n, themes=len(specs), batches=len(specs))
    return Issue(week=week, start=start, end=end, intro=intro, sections=sections, stats=stats,
                 backend=backend, model=model, cost_usd=cost)


def hostile_issue() -> tuple[Issue, set[str]]:
    """Three themes whose every untrusted field is hostile; returns the issue and the
    paper URLs that may become links."""
    urls = {f"https://arxiv.org/abs/2611.{n:05d}" for n in range(1, 4)}
    papers = [
        paper(1, "[click me](http://evil.example/x) <script>alert(1)</script>",
              url="https://arxiv.org/abs/2611.00001",
              authors=("# Ann Author", "<b>Bob</b>", "[C](http://evil.example)"), seen=3),
        paper(2, "1. | ![img](http://evil.example/pixel.png) |",
              url="https://arxiv.org/abs/2611.00002"),
        paper(3, "> <http://evil.example/autolink> www.evil.example",
              url="https://arxiv.org/abs/2611.00003", seen=2),
        paper(4, "- `tick` &amp; \u202eevil", url="javascript:alert(1)"),
        paper(5, '<img src=x onerror="alert(1)">', url="ftp://evil.example/file"),
        paper(6, "Plain title with no link"),
    ]
    gists = {p.id: text for p, text in zip(papers, HOSTILE, strict=False)}
    specs = [
        SectionSpec("# Injected | theme ##", HOSTILE[0] + " " + HOSTILE[12], papers[:2], gists,
                    ("injected", "theme")),
        SectionSpec("<script>alert(1)</script>", "> quoted summary http://evil.example/s",
                    papers[2:4], gists, ("script", "alert")),
        SectionSpec("1. [x](http://evil.example)", "- listed summary @evil", papers[4:], gists,
                    ("listed",)),
    ]
    return make_issue(specs, intro="# intro <b>bold</b> [x](http://evil.example)"), urls


def plain_issue(week: str = "2026-W47") -> Issue:
    """A small ordinary issue with links, authors and repeated sightings."""
    agents = [paper(11, "Graph Planning for Tool Agents", url="https://arxiv.org/abs/2611.00011",
                    authors=("Ada Lovelace", "Alan Turing"), seen=2),
              paper(12, "Verifying Function Calls", url="https://arxiv.org/abs/2611.00012",
                    authors=("Grace Hopper", "Edsger Dijkstra", "Barbara Liskov", "Ken Thompson"))]
    robots = [paper(21, "Folding Towels with Two Arms", url="https://arxiv.org/abs/2611.00021"),
              paper(22, "Tactile Insertion", url="https://arxiv.org/abs/2611.00022", seen=3),
              paper(23, "Cheap Teleoperation", url="https://arxiv.org/abs/2611.00023")]
    audio = [paper(31, "Streaming Speech Translation", url="https://arxiv.org/abs/2611.00031")]
    gists = {p.id: f"The gist of {p.title.lower()}." for p in agents + robots + audio}
    return make_issue([
        SectionSpec("Robot manipulation", "Robots fold and insert.", robots, gists,
                    ("robot", "manipulation")),
        SectionSpec("Tool agents", "Agents plan tool calls.", agents, gists, ("agents", "tool")),
        SectionSpec("Speech translation", "Speech is translated.", audio, gists,
                    ("speech", "translation")),
    ], week=week, backend="openai", model="gpt-4o-mini", cost=0.0123)


# --- reading a Markdown rendering back -------------------------------------------------------

MARKDOWN = MarkdownIt("commonmark").enable(["table", "strikethrough"])


def md_tokens(markdown: str) -> list[Token]:
    """Block tokens and, flattened after each inline token, its children."""
    flat: list[Token] = []
    for token in MARKDOWN.parse(markdown):
        flat.append(token)
        flat.extend(token.children or [])
    return flat


def inline_text(token: Token) -> str:
    """What a reader sees of an inline token: its text and code spans, nothing else."""
    return "".join(child.content for child in token.children or []
                   if child.type in ("text", "code_inline"))


def md_headings(markdown: str) -> list[tuple[int, str]]:
    tokens = MARKDOWN.parse(markdown)
    return [(int(tok.tag[1]), inline_text(tokens[i + 1]))
            for i, tok in enumerate(tokens) if tok.type == "heading_open"]


# --- reading an HTML rendering back -----------------------------------------------------------

@dataclass
class Element:
    tag: str
    attrs: dict[str, str | None]
    text: str = ""


class HtmlReader(HTMLParser):
    """Every start tag with its attributes, and the text inside each <a>, <h1>, <h2>."""

    TEXT_OF = {"a", "h1", "h2", "title", "strong", "li"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[Element] = []
        self.open: list[Element] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, dict(attrs))
        self.elements.append(element)
        if tag in self.TEXT_OF:
            self.open.append(element)

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.open) - 1, -1, -1):
            if self.open[i].tag == tag:
                del self.open[i]
                break

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        for element in self.open:
            element.text += data


def read_html(html: str) -> HtmlReader:
    reader = HtmlReader()
    reader.feed(html)
    reader.close()
    return reader


def earlier_issue(week: str) -> Issue:
    """An earlier week with robots and speech, and no tool agents (rising themes match themes
    by what their papers say: these robot papers are about what plain_issue's are about)."""
    robot_titles = ["Folding Towels with a Robot", "Tactile Insertion for Robot Arms",
                    "Cheap Teleoperation of Two Arms", "Robot Arms that Fold Cloth"]
    robots = [paper(40 + n, title, url=f"https://arxiv.org/abs/2611.{40 + n:05d}")
              for n, title in enumerate(robot_titles)]
    audio = [paper(50 + n, f"Speech paper {n}", url=f"https://arxiv.org/abs/2611.{50 + n:05d}")
             for n in range(4)]
    return make_issue([
        SectionSpec("Robot manipulation", "Robots.", robots, {}, ("robot", "manipulation")),
        SectionSpec("Speech translation", "Speech.", audio, {}, ("speech", "translation")),
    ], week=week)


# What digest may link a paper to when its record has no http(s) URL: a fixed host, the id or
# the title only ever percent-encoded (digest.links).
DIGEST_LINK = re.compile(r"^https://arxiv\.org/(?:abs/[\w./-]+"
                         r"|search/\?query=[A-Za-z0-9%._~-]*&searchtype=title)$")


def allowed_links(issue: Issue, urls: set[str]) -> set[str]:
    """Every link an issue's papers may carry: their records' URLs, else digest's own."""
    made = {safe_url(paper_link(p).url) for s in issue.sections for p in s.papers
            if p.url not in urls}
    assert all(link and DIGEST_LINK.match(link) for link in made), made
    return urls | {link for link in made if link}
