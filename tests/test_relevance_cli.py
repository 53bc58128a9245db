"""The reader's profile through the CLI: `[profile]` in --config and --max-papers N."""

from __future__ import annotations

import json
import re

from typer.testing import CliRunner

from digest.cli import app

runner = CliRunner()
PAPER_LINE = re.compile(r"^- \*\*", re.MULTILINE)
PAPER_LINE_TEXT = re.compile(r"^- \*\*.*$", re.MULTILINE)


def config(tmp_path) -> str:
    (tmp_path / "liked.json").write_text(json.dumps([
        {"title": "Learning World Models for Robot Control"},
        {"title": "Dreaming of Trajectories: Model-Based Reinforcement Learning from Pixels"}]))
    path = tmp_path / "digest.toml"
    path.write_text('max_papers = 25\n[profile]\nlibrary = ["liked.json"]\n'
                    'keywords = ["world model"]\nexclude = ["survey"]\n', encoding="utf-8")
    return str(path)


def test_newsletter_ranks_cuts_and_lists_the_rest(seeds, tmp_path):
    out = tmp_path / "out"
    result = runner.invoke(app, ["newsletter", str(seeds), "--config", config(tmp_path),
                                 "--week", "2026-W47", "--backend", "offline", "--out", str(out),
                                 "--state", str(tmp_path / "s.sqlite"),
                                 "--report", str(tmp_path / "r.json")])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "r.json").read_text())
    relevance = report["relevance"]
    markdown = (out / "2026-W47.md").read_text()
    main, also = markdown.split("\n## Also this week\n", 1)
    assert len(PAPER_LINE.findall(main)) == 25 == report["counts"]["papers_in_issue"]
    listed = [line for line in also.splitlines() if line.startswith("- [")]
    assert len(listed) == relevance["papers_also"] == 179 - 25 - relevance["papers_excluded"]
    assert relevance["papers_excluded"] >= 1 and relevance["method"] == "learned"
    assert "matches: world model" in main  # a reason shown on the chosen papers
    titles = [line.split("**")[1] for line in PAPER_LINE_TEXT.findall(markdown)]
    assert len(titles) == 25 and not any("survey" in t.lower() for t in titles)  # exclude: titles


def test_max_papers_flag_wins_over_the_config_and_no_rest_leaves_the_rest_out(seeds, tmp_path):
    result = runner.invoke(app, ["summarize", str(seeds), "--config", config(tmp_path),
                                 "--max-papers", "10", "--no-rest", "--backend", "offline",
                                 "--report", str(tmp_path / "r.json")])
    assert result.exit_code == 0, result.output
    assert len(PAPER_LINE.findall(result.stdout)) == 10
    assert "Also this week" not in result.stdout
    relevance = json.loads((tmp_path / "r.json").read_text())["relevance"]
    assert relevance["papers_left_out"] == 179 - 10 - relevance["papers_excluded"]


def test_a_bad_profile_is_a_usage_error_naming_the_file(tmp_path):
    path = tmp_path / "digest.toml"
    path.write_text('[profile]\nkeywords = 3\n', encoding="utf-8")
    result = runner.invoke(app, ["summarize", "x.json", "--config", str(path)])
    assert result.exit_code == 2
    assert "digest.toml" in result.output and "keywords" in result.output


def test_papers_listed_under_also_this_week_count_as_published(seeds, tmp_path):
    from digest.state import Store

    result = runner.invoke(app, ["newsletter", str(seeds), "--config", config(tmp_path),
                                 "--week", "2026-W47", "--backend", "offline",
                                 "--out", str(tmp_path / "out"),
                                 "--state", str(tmp_path / "s.sqlite"),
                                 "--report", str(tmp_path / "r.json")])
    assert result.exit_code == 0, result.output
    relevance = json.loads((tmp_path / "r.json").read_text())["relevance"]
    with Store(tmp_path / "s.sqlite") as store:
        published = store.published_before("2026-W48")
    ids = {paper_id for paper_id in published if not paper_id.startswith("~")}
    assert len(ids) == 25 + relevance["papers_also"]  # no later issue repeats them


def test_the_library_keeps_to_the_config_limits_and_the_run_report_counts_the_cut(seeds,
                                                                                 tmp_path):
    """max_records_per_source = 3 and a 10-entry library used all 10 with `errors: []` in
    the run report (a probe): now 3 are used and the cut is one of the report's errors."""
    (tmp_path / "lib.bib").write_text("".join(
        f"@misc{{k{i}, title = {{Learning World Models {i}}}}}\n" for i in range(10)),
        encoding="utf-8")
    path = tmp_path / "digest.toml"
    path.write_text('[profile]\nlibrary = ["lib.bib"]\n[limits]\nmax_records_per_source = 3\n'
                    "max_records_per_run = 1000\n", encoding="utf-8")
    result = runner.invoke(app, ["summarize", str(seeds / "daily_papers_a.txt"),
                                 "--config", str(path), "--backend", "offline",
                                 "--week", "2026-W47", "--report", str(tmp_path / "r.json")])
    assert result.exit_code == 0, result.output
    errors = json.loads((tmp_path / "r.json").read_text())["errors"]  # the listing's cut too
    (error,) = [e for e in errors if e.startswith(str(tmp_path / "lib.bib"))]
    assert "7 of its 10 records were left out (kept 3)" in error
    assert "max_records_per_source" in error and "7 of its 10 records" in result.stderr


def test_a_merged_paper_past_max_papers_shows_its_other_titles_in_every_format(tmp_path):
    """A paper listed under two titles and cut by --max-papers showed only its first title
    under "Also this week": the other one was in none of the .md, .html and .txt (a probe,
    stop 32)."""
    week = "2026-11-17"
    records = [
        {"id": "2611.10001", "title": "Tactile Sensing for Dexterous Robot Hands", "date": week,
         "abstract": "We study tactile sensing for dexterous robot hands in cluttered scenes."},
        {"id": "2611.10002", "title": "Marrow: Retrieval-Augmented Planning for Agents",
         "date": week, "abstract": "Marrow retrieves past plans to guide long-horizon agents."},
        {"id": "2611.10002", "title": "Retrieval-Augmented Planning with Marrow", "date": week,
         "abstract": "Marrow retrieves past plans to guide long-horizon agents."}]
    listing = tmp_path / "week.jsonl"
    listing.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    out = tmp_path / "out"
    result = runner.invoke(app, ["newsletter", str(listing), "--week", "2026-W47",
                                 "--backend", "offline", "--max-papers", "1", "--out", str(out),
                                 "--formats", "md,html,txt",
                                 "--state", str(tmp_path / "s.sqlite")])
    assert result.exit_code == 0, result.output
    rest = {suffix: (out / f"2026-W47.{suffix}").read_text(encoding="utf-8")
            .split("Also this week", 1)[1] for suffix in ("md", "html", "txt")}
    shown, other = sorted(records[1:], key=lambda r: r["title"] not in rest["md"])
    assert all(shown["title"] in part for part in rest.values())
    assert all("also listed as: " + other["title"] in " ".join(part.split())
               for part in rest.values())
