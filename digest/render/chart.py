"""The picture of the week: theme sizes as bars, for a text table and for inline SVG."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..textsafety import cut_at_word
from .escape import plain_text

BLOCKS = 20  # width of the longest bar in text, in block characters
SVG_WIDTH = 400  # viewBox width; the SVG scales down to a phone's width
SVG_BAR_MAX = 330  # leaves room for the count after the longest bar
SVG_ROW = 44  # label line + bar
SVG_LABEL = 50  # characters of a theme title above its bar
TEXT_LABEL = 40  # characters of a theme title in the plain-text contents (with its bar: 72 columns)


@dataclass(frozen=True)
class Bar:
    label: str
    short: str  # the label cut to fit the SVG's width
    count: int
    percent: int
    blocks: str  # "████████" for Markdown and text
    width: float  # SVG bar length
    y: int  # SVG row top


@dataclass(frozen=True)
class Chart:
    bars: tuple[Bar, ...]
    width: int
    height: int

    def text_lines(self) -> list[str]:
        """Aligned ``label  ████ 8`` lines for a monospaced plain-text chart."""
        labels = [shorten(plain_text(bar.label), TEXT_LABEL) for bar in self.bars]
        pad = max((len(label) for label in labels), default=0)
        return [f"{label.ljust(pad)}  {bar.blocks} {bar.count}"
                for label, bar in zip(labels, self.bars, strict=True)]


def bar_chart(sizes: Sequence[tuple[str, int]]) -> Chart:
    """Bars for (label, count) pairs, longest bar = largest count."""
    total = sum(count for _, count in sizes) or 1
    largest = max((count for _, count in sizes), default=1) or 1
    bars = tuple(
        Bar(label=label, short=shorten(label, SVG_LABEL), count=count,
            percent=round(100 * count / total),
            blocks="█" * max(1, round(BLOCKS * count / largest)),
            width=round(max(2.0, SVG_BAR_MAX * count / largest), 1), y=8 + i * SVG_ROW)
        for i, (label, count) in enumerate(sizes))
    return Chart(bars=bars, width=SVG_WIDTH, height=8 + len(bars) * SVG_ROW)


def shorten(text: str, limit: int) -> str:
    """``text`` cut at a word boundary to at most ``limit`` characters, with an ellipsis."""
    return cut_at_word(text, limit, strip=" ·,;:")
