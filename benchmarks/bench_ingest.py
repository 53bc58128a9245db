"""Ingest speed and peak memory: the real inputs in ../shared, and a large made-up JSONL listing.

Each row is one `load_sources` call in this process: best wall time of three runs, records per
second, and the peak of Python allocations (tracemalloc) during one more run.
"""

from __future__ import annotations

import json
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from digest.ingest import load_sources

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
            records, seconds, peak = measure(lambda s=sources: len(load_sources(s).records))
            print(f"| {name} | {records:,} | {seconds:.2f} | {records / seconds:,.0f} | "
                  f"{peak:.1f} |")


if __name__ == "__main__":
    main()
