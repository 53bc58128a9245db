"""The real Daily Papers pages in ../shared/seeds, end to end with the offline backend."""

from __future__ import annotations

import json
import re

from typer.testing import CliRunner

from digest.cli import app
from digest.dedup import deduplicate
from digest.ingest import load_sources
from digest.links import title_search_url
from digest.normalize import title_key
from digest.render import escape_markdown


def test_seeds_hold_226_records_of_179_papers(seeds):
    ingested = load_sources([str(seeds)])
    assert ingested.errors == []
    assert len(ingested.records) == 226
    deduped = deduplicate(ingested.records)
    assert len(deduped.papers) == 179
    assert deduped.duplicates_merged == 47
    assert len({title_key(p.title) for p in deduped.papers}) == 179


def test_every_seed_paper_appears_exactly_once_in_the_issue(seeds, tmp_path):
    report = tmp_path / "report.json"
    result = CliRunner().invoke(app, [
        "newsletter", str(seeds), "--out", str(tmp_path / "out"), "--week", "2026-W47",
        "--backend", "offline", "--state", str(tmp_path / "state.sqlite"),
        "--report", str(report)])
    assert result.exit_code == 0, result.output
    markdown = (tmp_path / "out" / "2026-W47.md").read_text(encoding="utf-8")
    titles = {p.title for p in deduplicate(load_sources([str(seeds)]).records).papers}
    paper_lines = [line for line in markdown.splitlines() if line.startswith("- **")]
    assert len(paper_lines) == 179
    for title in titles:
        # Daily Papers pages carry no link: each title links to digest's arXiv title search
        linked = f"- **[{escape_markdown(title)}](<{title_search_url(title)}>)**"
        occurrences = sum(line.startswith(linked) for line in paper_lines)
        assert occurrences == 1, title

    counts = json.loads(report.read_text())["counts"]
    assert counts["records_read"] == 226
    assert counts["papers_unique"] == 179
    assert counts["duplicates_merged"] == 47
    assert counts["papers_in_issue"] == 179
    assert 3 <= counts["themes"] <= 10


def test_seed_issue_has_no_link_or_html_from_the_abstracts(seeds, tmp_path):
    """The seed abstracts carry URLs (github.com, project pages); none may become a link."""
    result = CliRunner().invoke(app, ["summarize", str(seeds), "--backend", "offline",
                                      "--week", "2026-W47"])
    assert result.exit_code == 0, result.output
    own_links = re.compile(r"\]\(<https://arxiv\.org/search/\?query=[A-Za-z0-9%._~-]*"
                           r"&searchtype=title>\)")
    assert len(own_links.findall(result.stdout)) == 179  # digest's own: one per paper
    rest = own_links.sub("", result.stdout)
    assert not re.search(r"(?<!\\)https?://|\](?!\(#)\(|<(?!a id=\"paper-\d+-\d+\"></a>)[a-z]",
                         rest)  # the one HTML: digest's anchor on each paper entry
