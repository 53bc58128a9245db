"""The run report (``--report PATH``): JSON, written atomically, also when a run fails."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .files import write_atomic
from .models import Stats


@dataclass
class RunReport:
    week: str | None = None
    outputs: dict[str, str] = field(default_factory=dict)
    counts: Stats = field(default_factory=Stats)
    themes: list[dict[str, Any]] = field(default_factory=list)
    llm: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    duration_s: float = 0.0
    records_other_weeks: int = 0  # records read but dated in another week than the issue's
    batch: dict[str, Any] = field(default_factory=dict)  # Batch API answers collected (batchjobs)
    relevance: dict[str, Any] = field(default_factory=dict)  # the reader's profile: what it chose
    # Every issue the run wrote (several with --catch-up; the fields above describe the last).
    issues: list[dict[str, Any]] = field(default_factory=list)

    def add_issue(self) -> None:
        """Keep what the report says of the issue just written, before the next week's."""
        self.issues.append({"week": self.week, "outputs": dict(self.outputs),
                            "counts": asdict(self.counts),
                            "cost_usd": self.llm.get("cost_usd", 0.0)})

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["duration_s"] = round(self.duration_s, 3)
        if not self.batch:  # only a run that collected a Batch API job has this block
            del data["batch"]
        return data


def report_json(report: RunReport) -> str:
    return json.dumps(report.as_dict(), indent=2, ensure_ascii=False) + "\n"


def write_report(path: Path, report: RunReport) -> None:
    write_atomic(path, report_json(report))
