"""The run report (``--report PATH``): JSON, written atomically, also when a run fails."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .files import write_atomic
from .models import Issue, Stats


@dataclass
class RunReport:
    week: str | None = None
    outputs: dict[str, str] = field(default_factory=dict)
    counts: Stats = field(default_factory=Stats)
    themes: list[dict[str, Any]] = field(default_factory=list)
    llm: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # what the log warned of (-q too)
    duration_s: float = 0.0
    records_other_weeks: int = 0  # records read but dated in another week than the issue's
    # The Batch API job (batchjobs): submitted or polled (its id, status, requests), or the
    # answers collected from it.
    batch: dict[str, Any] = field(default_factory=dict)
    relevance: dict[str, Any] = field(default_factory=dict)  # the reader's profile: what it chose
    # Every issue the run wrote (several with --catch-up; the fields above describe the last).
    issues: list[dict[str, Any]] = field(default_factory=list)
    # Wall and CPU seconds of each pipeline stage of the last issue, in pipeline order.
    stages: dict[str, dict[str, float]] = field(default_factory=dict)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Add the wall and CPU (the whole process's) seconds of the block to stage ``name``."""
        wall, cpu = time.monotonic(), time.process_time()
        try:
            yield
        finally:
            spent = self.stages.setdefault(name, {"wall_s": 0.0, "cpu_s": 0.0})
            spent["wall_s"] += time.monotonic() - wall
            spent["cpu_s"] += time.process_time() - cpu

    def describe(self, issue: Issue) -> None:
        """What the report says of ``issue``: its counts and its themes."""
        self.counts = issue.stats
        self.themes = [{"title": section.summary.title or section.theme.title,
                        "paper_ids": list(section.theme.paper_ids)}
                       for section in issue.sections]

    def add_issue(self) -> None:
        """Keep what the report says of the issue just written, before the next week's."""
        self.issues.append({"week": self.week, "outputs": dict(self.outputs),
                            "counts": asdict(self.counts),
                            "cost_usd": self.llm.get("cost_usd", 0.0),
                            "llm": {key: self.llm.get(key, default) for key, default in
                                    (("degraded", False), ("fallback_themes", []),
                                     ("stopped", None))},
                            "relevance": dict(self.relevance),
                            "stages": _rounded(self.stages)})

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["duration_s"] = round(self.duration_s, 3)
        data["stages"] = _rounded(self.stages)
        if not self.batch:  # only a run that submitted, polled or collected a Batch API job
            del data["batch"]
        return data


def _rounded(stages: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    return {name: {key: round(seconds, 3) for key, seconds in spent.items()}
            for name, spent in stages.items()}


def report_json(report: RunReport) -> str:
    return json.dumps(report.as_dict(), indent=2, ensure_ascii=False) + "\n"


def write_report(path: Path, report: RunReport) -> None:
    """The report in ``path``: a file is replaced whole (a reader never sees half of it), a
    link's target rather than the link; a stream (a FIFO, a terminal, ``/dev/stderr``, which
    may be a log file) is appended to, never replaced by a file."""
    if is_stream(path):
        with open(path, "a", encoding="utf-8") as stream:
            stream.write(report_json(report))
        return
    write_atomic(path.resolve() if path.is_symlink() else path, report_json(report))


def is_stream(path: Path) -> bool:
    """A path that names a stream, not a file of its own: under /dev or /proc, or no regular
    file (a FIFO, a terminal)."""
    return str(path).startswith(("/dev/", "/proc/")) or (path.exists() and not path.is_file())
