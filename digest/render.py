"""Render: an ``Issue`` to Markdown through a jinja2 template.

Every piece of untrusted text (titles, abstracts, model output) passes through
``escape_markdown`` so it can never become a heading, list, quote, table, link,
image or raw HTML. Links come only from ingested records' http(s) URLs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlsplit

import jinja2

from .errors import TemplateError
from .models import Issue, Paper
from .weeks import date_range

TEMPLATES_DIR = Path(__file__).with_name("templates")

# Characters with inline meaning in CommonMark/GFM (emphasis, code, links, HTML,
# tables, strike-through, math on GitHub); a backslash makes each literal.
_MD_INLINE = re.compile(r"([\\`*_\[\]<>|~&$])")
# What would start a block (heading, quote, list, setext underline) at a line's start.
_BLOCK_START = re.compile(r"^([#>+=\-])")
_ORDERED_LIST_START = re.compile(r"^(\d+)([.)])")
# GFM turns bare URLs, www. names and e-mail addresses into links.
_AUTOLINK = re.compile(r"(?i)(?<=\w)://|(?<=\bwww)\.|(?<=\w)@(?=\w)")
_SLUG_DROP = re.compile(r"[^\w\- ]", re.UNICODE)


def escape_markdown(text: object) -> str:
    """Plain text that Markdown shows as typed: one line, nothing that makes markup or links."""
    text = _MD_INLINE.sub(r"\\\1", " ".join(str(text).split()))
    text = _AUTOLINK.sub(lambda match: "\\" + match[0], text)
    text = _ORDERED_LIST_START.sub(r"\1\\\2", text)
    return _BLOCK_START.sub(r"\\\1", text)


def safe_url(url: str | None) -> str | None:
    """An http(s) URL fit for ``[text](<url>)``, or None."""
    if not url:
        return None
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    return quote(url.strip(), safe=":/?#[]@!$&'()*+,;=%~.-_")


def github_slug(title: str, taken: set[str]) -> str:
    """The anchor GitHub gives a heading, made unique like GitHub does (-1, -2...)."""
    base = _SLUG_DROP.sub("", title.lower()).replace(" ", "-")
    slug, n = base, 0
    while slug in taken:
        n += 1
        slug = f"{base}-{n}"
    taken.add(slug)
    return slug


@dataclass(frozen=True)
class _PaperView:
    title: str
    url: str | None
    seen: int
    gist: str


@dataclass(frozen=True)
class _SectionView:
    title: str
    anchor: str
    summary: str
    offline_note: bool
    papers: tuple[_PaperView, ...]


class Renderer:
    """Renders issues with the shipped templates, or a user's directory of them first."""

    def __init__(self, templates_dir: Path | None = None):
        search = [str(TEMPLATES_DIR)] if templates_dir is None else [str(templates_dir),
                                                                     str(TEMPLATES_DIR)]
        self._env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(search), undefined=jinja2.StrictUndefined,
            autoescape=False, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
        self._env.filters["md"] = escape_markdown

    def markdown(self, issue: Issue) -> str:
        try:
            text = self._env.get_template("issue.md.j2").render(
                issue=issue, dates=date_range(issue.start, issue.end),
                sections=_sections(issue))
        except jinja2.TemplateError as exc:
            raise TemplateError(f"issue template: {exc}") from None
        return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def _sections(issue: Issue) -> list[_SectionView]:
    taken: set[str] = set()
    views = []
    for section in issue.sections:
        summary = section.summary
        views.append(_SectionView(
            title=summary.title or section.theme.title,
            anchor=github_slug(summary.title or section.theme.title, taken),
            summary=summary.summary,
            offline_note=summary.offline and issue.backend != "offline",
            papers=tuple(_paper_view(p, summary.gists.get(p.id, "")) for p in section.papers)))
    return views


def _paper_view(paper: Paper, gist: str) -> _PaperView:
    return _PaperView(paper.title, safe_url(paper.url), paper.times_seen, gist)
