"""The run report's ``stages``: wall and CPU seconds of each pipeline stage."""

from __future__ import annotations

import time

import pytest

from digest.report import RunReport


def _busy(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_a_stage_adds_the_wall_and_cpu_seconds_of_its_blocks():
    report = RunReport()
    with report.stage("dedup"):
        time.sleep(0.05)
    with report.stage("themes"):
        _busy(0.05)
    with report.stage("dedup"):
        time.sleep(0.05)
    spent = report.as_dict()["stages"]
    assert list(spent) == ["dedup", "themes"]
    assert spent["dedup"]["wall_s"] >= 0.1
    assert spent["dedup"]["cpu_s"] < spent["dedup"]["wall_s"]  # asleep, not working
    assert spent["themes"]["cpu_s"] >= 0.05


def test_a_stage_that_fails_is_still_counted():
    report = RunReport()
    with pytest.raises(ValueError), report.stage("ingest"):
        time.sleep(0.02)
        raise ValueError("bad page")
    assert report.stages["ingest"]["wall_s"] >= 0.02
