"""The [limits] table of the config file reaches every command that reads sources."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from digest.cli import app

runner = CliRunner()


def listing(tmp_path, count: int) -> str:
    rows = [{"title": f"Made-Up Paper Number {i}", "date": "2026-11-18",
             "abstract": f"We study made-up problem number {i} and solve it in a made-up way."}
            for i in range(count)]
    path = tmp_path / "week.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    return str(path)


def config(tmp_path) -> str:
    path = tmp_path / "digest.toml"
    path.write_text("[limits]\nmax_records_per_source = 3\n", encoding="utf-8")
    return str(path)


def test_newsletter_takes_the_cap_from_the_config_and_reports_the_cut(tmp_path):
    result = runner.invoke(app, ["newsletter", listing(tmp_path, 7), "--config", config(tmp_path),
                                 "--week", "2026-W47", "--backend", "offline",
                                 "--out", str(tmp_path / "out"),
                                 "--state", str(tmp_path / "s.sqlite"),
                                 "--report", str(tmp_path / "r.json")])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["counts"]["papers_in_issue"] == 3
    assert any("4 of its 7 records were left out" in error for error in report["errors"])


def test_dedup_and_ingest_take_the_cap_from_the_config(tmp_path):
    source, settings = listing(tmp_path, 7), config(tmp_path)
    dedup = runner.invoke(app, ["dedup", source, "--config", settings])
    assert dedup.exit_code == 0 and "3 records" in dedup.output.replace("\n", " "), dedup.output
    ingest = runner.invoke(app, ["ingest", source, "--config", settings,
                                 "--state", str(tmp_path / "s.sqlite")])
    assert ingest.exit_code == 0, ingest.output
    assert "3 new records kept" in ingest.output
    assert "4 of its 7 records were left out" in ingest.output  # the cut is said, not silent
