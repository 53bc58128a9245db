"""The visible text of an HTML e-mail part, with block elements as paragraph breaks.

Only text comes out: tags, attributes, links and images are dropped, entities are decoded,
and what a reader never sees (``<script>``, ``<style>``, ``<head>``, elements styled
``display:none``, such as a mail's preheader) is left out. Block elements become
blank lines, so a title and its abstract in separate elements stay separate
paragraphs for the Daily Papers parser; ``<br>`` is a line break inside one paragraph,
and ``<pre>`` keeps its lines (an arXiv listing wrapped in HTML).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

__all__ = ["html_to_text"]

_HIDDEN_TAGS = {"script", "style", "head", "title", "template", "noscript", "svg", "math"}
_BLOCK_TAGS = {"p", "div", "li", "ul", "ol", "tr", "table", "tbody", "thead", "section",
               "article", "header", "footer", "blockquote", "pre", "hr", "h1", "h2", "h3", "h4",
               "h5", "h6", "dd", "dt", "dl", "center", "main", "aside", "nav", "td", "th"}
_VOID_TAGS = {"br", "img", "hr", "meta", "link", "input", "area", "base", "col", "embed",
              "source", "track", "wbr"}
_DISPLAY_NONE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_BLANKS = re.compile(r"\n[ \t\n]*\n")
_SPACES = re.compile(r"\s+")


def html_to_text(markup: str) -> str:
    """Visible text; paragraphs separated by blank lines."""
    parser = _TextParser()
    parser.feed(markup)
    parser.close()
    lines = (line.rstrip() for line in "".join(parser.parts).split("\n"))
    return _BLANKS.sub("\n\n", "\n".join(lines)).strip("\n") + "\n"


class _TextParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden: list[str] = []  # the open elements whose content is not shown
        self.pre = 0  # inside <pre>, line breaks are kept

    def close(self) -> None:
        if self.rawdata.lstrip().startswith("<"):  # an unfinished tag or comment is not text
            self.rawdata = ""
        super().close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _VOID_TAGS:
            self._void(tag, attrs)
            return
        if self.hidden or tag in _HIDDEN_TAGS or _is_hidden(attrs):
            self.hidden.append(tag)
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n\n")
            self.pre += tag == "pre"

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _VOID_TAGS:
            self._void(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if self.hidden:
            if tag in self.hidden:  # close it, and any element left open inside it
                del self.hidden[len(self.hidden) - 1 - self.hidden[::-1].index(tag):]
            return
        if tag in _BLOCK_TAGS:
            self.parts.append("\n\n")
            self.pre -= tag == "pre" and self.pre > 0

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.parts.append(data if self.pre else self._flowed(data))

    def _flowed(self, data: str) -> str:
        """Outside <pre>, white space is one space, and none at the start of a line."""
        text = _SPACES.sub(" ", data)
        return text.lstrip() if not self.parts or self.parts[-1].endswith("\n") else text

    def _void(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        del attrs  # images' alt text and other attributes are not shown as text
        if self.hidden:
            return
        if tag == "br":
            self.parts.append("\n")
        elif tag == "hr":
            self.parts.append("\n\n")


def _is_hidden(attrs: list[tuple[str, str | None]]) -> bool:
    values = dict(attrs)
    return "hidden" in values or bool(_DISPLAY_NONE.search(values.get("style") or ""))
