"""The run report (``--report PATH``): JSON, written atomically, also when a run fails."""

from __future__ import annotations

import json
import os
import stat
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .models import Stats


def _read_umask() -> int:
    mask = os.umask(0o022)  # the only way to read it; set back at once, at import time
    os.umask(mask)
    return mask


_UMASK = _read_umask()


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


def write_atomic(path: Path, text: str) -> None:
    """Write via a temp file in the same folder, fsync, then rename: never half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, _mode_for(path))  # mkstemp's 0600 would hide a published page
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_folder(path.parent)


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable (POSIX); a no-op where folders cannot be opened."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _mode_for(path: Path) -> int:
    """The mode of the file being replaced, or rw-r--r-- less the umask for a new one."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return 0o644 & ~_UMASK


def report_json(report: RunReport) -> str:
    return json.dumps(report.as_dict(), indent=2, ensure_ascii=False) + "\n"


def write_report(path: Path, report: RunReport) -> None:
    write_atomic(path, report_json(report))
