"""Ingest speed and peak memory: the real inputs in ../shared, and a large made-up JSONL listing.

Each row is one `load_sources` call in this process: best wall time of three runs, records per
second, and the peak of Python allocations (tracemalloc) during one more run.

Then the bounded-work table: a JSON file of one million tiny records, read with the default
limits in a fresh process each, whose peak RSS (``ru_maxrss``: everything, not only Python
objects) is the figure; before the caps this file took RSS to 1 GiB in ingest alone, and the
whole run to 14 GB and an OOM kill.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from digest.ingest import IngestLimits, load_sources

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
EXAMPLES = ROOT / "examples"
FIXTURES = ROOT / "tests" / "fixtures" / "ingest"


def synthetic_jsonl(folder: Path, count: int) -> Path:
    """``count`` made-up papers with arXiv-style LaTeX, so clean-up has work to do."""
    path = folder / "synthetic.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for i in range(count):
            out.write(json.dumps({
                "id": f"2611.{i:05d}v2", "title": f"Made-Up Paper {i}: $\\alpha$-Scaling of Toys",
                "abstract": "We study \\emph{toy} models with $O(n \\log n)$ cost. " * 12,
                "authors": "A. One, B. Two and C. Three", "date": "2026-11-13"}) + "\n")
    return path


def measure(load: Callable[[], int]) -> tuple[int, float, float]:
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        records = load()
        best = min(best, time.perf_counter() - started)
    tracemalloc.start()
    load()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return records, best, peak / 2**20


def main() -> None:
    print("| ingest input | records | best of 3 (s) | records/s | peak Python memory (MiB) |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        inputs = {
            "seeds (3 Daily Papers pages)": [str(SHARED / "seeds")],
            "arXiv metadata sample (CSV, 2,000)": [str(SHARED / "data" /
                                                       "arxiv_metadata_sample.csv")],
            "examples/ + e-mail fixtures": [str(EXAMPLES), str(FIXTURES / "*.eml")],
            "synthetic JSONL (20,000)": [str(synthetic_jsonl(Path(tmp), 20_000))],
        }
        for name, sources in inputs.items():
            records, seconds, peak = measure(lambda s=sources: len(load_sources(
                s, limits=IngestLimits(max_records_per_source=20_000)).records))
            print(f"| {name} | {records:,} | {seconds:.2f} | {records / seconds:,.0f} | "
                  f"{peak:.1f} |")


MILLION = {  # 1,000,000 records each; the first is the 35 MB file of the issue
    "1M tiny junk records (35 MB JSON)": lambda i: {"title": f"P{i}", "abstract": "a"},
    "1M tiny papers (JSON)": lambda i: {"title": f"Paper {i}",
                                        "abstract": f"We study toy {i} here."},
}
_CHILD = """
import resource, sys, time
from digest.ingest import IngestLimits, load_sources
started = time.perf_counter()
result = load_sources([sys.argv[1]])
seconds = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(len(result.records), f"{seconds:.1f}", f"{peak:.0f}", str(result.errors[0])[:400]
      if result.errors else "", sep="\t")
"""


def million_json(folder: Path, name: str, make: Callable[[int], dict[str, str]]) -> Path:
    path = folder / f"{len(list(folder.iterdir()))}.json"
    with path.open("w", encoding="utf-8") as out:
        out.write("[" + ",".join(json.dumps(make(i), separators=(",", ":"))
                                 for i in range(1_000_000)) + "]")
    return path


def bounded() -> None:
    print("\n| 1M-record file, default limits | size (MB) | records kept | seconds | "
          "peak RSS (MiB) | message |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, make in MILLION.items():
            path = million_json(Path(tmp), name, make)
            out = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True,
                                 text=True, timeout=600, check=True).stdout.strip()
            kept, seconds, peak, message = out.split("\t")
            shown = message.replace(str(path), "FILE")
            print(f"| {name} | {path.stat().st_size / 1e6:.0f} | {int(kept):,} | {seconds} | "
                  f"{peak} | {shown} |")


if __name__ == "__main__":
    main()
    bounded()
