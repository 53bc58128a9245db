"""End-to-end time of `digest newsletter` (offline backend) on the seeds and on the arXiv sample."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"


def arxiv_sample_as_jsonl(target: Path) -> Path:
    with open(SHARED / "data" / "arxiv_metadata_sample.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    path = target / "arxiv.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps({"id": row["id"], "title": row["title"],
                                  "abstract": row["abstract"]}) + "\n")
    return path


def run(sources: list[str], workdir: Path) -> tuple[float, dict]:
    report = workdir / "report.json"
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "digest", "newsletter", *sources, "--backend", "offline",
                    "--week", "2026-W47", "--out", str(workdir / "out"),
                    "--state", str(workdir / "state.sqlite"), "--report", str(report)],
                   check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - started, json.loads(report.read_text())


def main() -> None:
    print("| input | records | papers | themes | wall time (s) |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        inputs = {"seeds (3 pages)": [str(SHARED / "seeds")],
                  "arXiv sample (2,000)": [str(arxiv_sample_as_jsonl(workdir))]}
        for name, sources in inputs.items():
            seconds, report = run(sources, workdir / name.split()[0])
            counts = report["counts"]
            print(f"| {name} | {counts['records_read']} | {counts['papers_in_issue']} | "
                  f"{counts['themes']} | {seconds:.1f} |")


if __name__ == "__main__":
    main()
