"""--resolve-ids through the CLI, against a fake arXiv API on 127.0.0.1 (config arxiv_api)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from digest.cli import app
from digest.normalize import title_key

from .fake_arxiv import FakeArxiv, fake_arxiv

TITLE = "Learning World Models for Robot Control from Few Demonstrations"
ABSTRACT = ("We learn a world model of a robot arm from twenty demonstrations and plan with it, "
            "reaching new goals without further data.")


def _week_and_config(tmp_path: Path, fake: FakeArxiv) -> tuple[Path, Path]:
    """A listing of the one paper, dated in 2026-W47, and a config that asks ``fake``."""
    source = tmp_path / "week.json"
    source.write_text(json.dumps([{"title": TITLE, "abstract": ABSTRACT,
                                   "date": "2026-11-18"}]), encoding="utf-8")
    config = tmp_path / "digest.toml"
    config.write_text(f'arxiv_api = "{fake.base_url}"\n', encoding="utf-8")
    return source, config


def test_resolve_ids_links_each_paper_to_its_page_and_asks_once(tmp_path):
    with fake_arxiv(FakeArxiv(papers={title_key(TITLE): (TITLE, "2611.01234")})) as fake:
        source, config = _week_and_config(tmp_path, fake)
        args = ["newsletter", str(source), "--config", str(config), "--resolve-ids",
                "--week", "2026-W47", "--backend", "offline", "--state", str(tmp_path / "s.db")]
        first = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "a")])
        asked = len(fake.requests)
        second = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "b"),
                                          "--include-published"])
    assert first.exit_code == 0 and second.exit_code == 0, first.output + second.output
    markdown = (tmp_path / "a" / "2026-W47.md").read_text()
    assert f"- **[{TITLE}](<https://arxiv.org/abs/2611.01234>)**" in markdown
    assert asked == 1 and len(fake.requests) == 1  # the second run read the store's cache


def test_without_the_flag_nothing_is_asked_and_the_title_search_is_the_link(tmp_path):
    source = tmp_path / "week.json"
    source.write_text(json.dumps([{"title": TITLE, "abstract": ABSTRACT}]), encoding="utf-8")
    with fake_arxiv(FakeArxiv(papers={title_key(TITLE): (TITLE, "2611.01234")})) as fake:
        config = tmp_path / "digest.toml"
        config.write_text(f'arxiv_api = "{fake.base_url}"\n', encoding="utf-8")
        result = CliRunner().invoke(app, ["summarize", str(source), "--config", str(config),
                                          "--backend", "offline"])
    assert result.exit_code == 0, result.output
    assert fake.requests == [] and "https://arxiv.org/search/?query=" in result.stdout


@pytest.mark.parametrize("url", ["ftp://x", "http://[::1", "http://host:0", "http://a b"])
def test_a_bad_arxiv_api_is_a_usage_error(tmp_path, url):
    config = tmp_path / "digest.toml"
    config.write_text(f'arxiv_api = "{url}"\n', encoding="utf-8")
    result = CliRunner().invoke(app, ["summarize", "x.json", "--config", str(config)])
    assert result.exit_code == 2 and "arxiv_api" in result.output, result.output


def test_a_dry_run_asks_arxiv_nothing(tmp_path):
    """`--resolve-ids --dry-run` sent a lookup a paper, though a dry run "calls and writes
    nothing" (a probe, stop 28)."""
    with fake_arxiv(FakeArxiv(papers={title_key(TITLE): (TITLE, "2611.01234")})) as fake:
        source, config = _week_and_config(tmp_path, fake)
        result = CliRunner().invoke(app, [
            "newsletter", str(source), "--config", str(config), "--resolve-ids", "--dry-run",
            "--week", "2026-W47", "--backend", "offline", "--state", str(tmp_path / "s.db"),
            "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert fake.requests == []
