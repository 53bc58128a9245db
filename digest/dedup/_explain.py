"""Plain-text account of a dedup run: the counts, and each merged group with its reasons."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..models import Paper, Record

if TYPE_CHECKING:
    from . import DedupResult, MergedGroup


def explain(result: DedupResult, *, groups: bool = True) -> str:
    """Counts (records, unique papers, merged), then, if ``groups``, why each group merged."""
    lines = [f"records: {result.records_read}",
             f"unique papers: {len(result.papers)}",
             f"duplicates merged: {result.duplicates_merged}"]
    by_rule: dict[str, int] = {}
    for group in result.groups:
        by_rule[group.rule] = by_rule.get(group.rule, 0) + 1
    if by_rule:
        lines.append("groups by weakest rule: " + ", ".join(
            f"{rule} {count}" for rule, count in sorted(by_rule.items())))
    if groups:
        kept = {paper.id: paper for paper in result.papers}
        for number, group in enumerate(result.groups, start=1):
            lines += ["", *_group_lines(number, group, kept[group.paper_id])]
    return "\n".join(lines) + "\n"


def _group_lines(number: int, group: MergedGroup, paper: Paper) -> list[str]:
    lines = [f"[{number}] {_printable(paper.title)}"]
    if paper.also_listed_as:
        lines.append("    also listed as: " + " | ".join(map(_printable, paper.also_listed_as)))
    lines.append(f"    paper {group.paper_id}: {len(group.records)} records, "
                 f"rule {group.rule}, score {group.score:.2f}")
    joined = {link.record: link for link in group.links}
    for index, record in enumerate(group.records):
        reason = "first seen"
        if index in joined:
            link = joined[index]
            reason = f"{link.rule} {link.score:.2f} with #{link.matched + 1}"
            if link.detail:
                reason += f" ({link.detail})"
        lines.append(f"    #{index + 1} {_where(record)}  {_printable(record.title)}")
        lines.append(f"        {reason}")
    return lines


def _where(record: Record) -> str:
    sighting = record.sighting
    if sighting.line is not None:
        return f"{sighting.source}:{sighting.line}"
    return f"{sighting.source}#{sighting.position}"


def _printable(text: str) -> str:
    """Untrusted text for a terminal: control and invisible characters shown as escapes."""
    return "".join(ch if ch.isprintable() else f"\\u{ord(ch):04x}" for ch in text)
