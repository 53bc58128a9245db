"""A week's Batch API job across weeks: a weekly `--week last` must come back to it, and the
e-mail must not go out before its issue is published (a probe, stop 31)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from digest.cli import app
from tests.fake_batch import FakeBatch
from tests.opsrun import published, week_listing

runner = CliRunner()


@pytest.fixture
def fake() -> Iterator[FakeBatch]:
    with FakeBatch() as server:
        yield server


def newsletter(fake: FakeBatch, home: Path, week: str, *extra: str,
               folder: str = "") -> tuple[int, str]:
    result = runner.invoke(app, [
        "newsletter", str(home / "in" / folder), "--week", week, "--backend", "openai", "--model",
        "gpt-4o-mini", "--base-url", fake.url, "--out", str(home / "out"), "--state",
        str(home / "state.sqlite"), *extra])
    return result.exit_code, result.output


def test_a_later_weeks_run_says_an_earlier_weeks_job_is_not_collected(fake, tmp_path, caplog):
    """W47's job is collected only by a run of W47: the next Monday's `--week last` (W48)
    said nothing of it, and W47's papers were never published. It says so now (stderr and
    the report's errors), and leaves the job alone: collecting it with W48's listings published
    W47 empty, and W48's settings may name another server (the re-probe of this stop)."""
    for week in ("2026-W47", "2026-W48"):
        week_listing(tmp_path / "in" / week, week, 8)
    code, output = newsletter(fake, tmp_path, "2026-W47", "--batch-api", folder="2026-W47")
    assert code == 0 and "2026-W47: submitted" in output, output
    assert "(the next run of 2026-W47 collects it)" in output  # not a later week's
    job = next(iter(fake.jobs.values()))
    polls = job.step
    report = tmp_path / "r.json"
    code, output = newsletter(fake, tmp_path, "2026-W48", "--report", str(report),
                              folder="2026-W48")
    assert code == 0 and (tmp_path / "out" / "2026-W48.md").exists(), output
    said = (f"2026-W47: Batch API job {job.id} (submitted ", "is not collected, "
            "so that week is not published: run the newsletter of 2026-W47")
    assert all(part in caplog.text for part in said)
    assert any(all(part in error for part in said) for error in json.loads(
        report.read_text())["errors"])
    assert job.step == polls and not (tmp_path / "out" / "2026-W47.md").exists()
    for _ in range(6):  # bounded: the week's own run collects it
        code, output = newsletter(fake, tmp_path, "2026-W47", folder="2026-W47")
        assert code == 0, output
        if (tmp_path / "out" / "2026-W47.md").exists():
            break
    weeks = published(tmp_path / "state.sqlite")
    assert sorted(weeks) == ["2026-W47", "2026-W48"]
    assert all(len(ids) == 8 for ids in weeks.values())


def test_the_email_of_a_week_whose_job_is_not_collected_waits_exit_75(fake, tmp_path):
    """A new store with W47's job submitted was taken for a mail-only store: `email --state`
    built the week with six direct calls at full price, mailed it and recorded it as sent,
    though the newsletter had published nothing; the issue it later published could differ."""
    week_listing(tmp_path / "in", "2026-W47", 8)
    code, output = newsletter(fake, tmp_path, "2026-W47", "--batch-api")
    assert code == 0 and "submitted" in output, output
    result = runner.invoke(app, ["email", "--week", "2026-W47", "--state",
                                 str(tmp_path / "state.sqlite"), "--eml", "--backend", "openai",
                                 "--model", "gpt-4o-mini", "--base-url", fake.url,
                                 "--to", "reader@example.org", "--from", "digest@example.org"])
    assert result.exit_code == 75, result.output
    assert "still has to collect its Batch API job batch_" in result.output
    assert "Subject:" not in result.output and fake.chat_requests == []
