"""The Batch API path at a realistic size: a 5,000-paper week against the fake Files/Batches server.

Three `digest newsletter` runs, each in a fresh process on the same synthetic corpus as
``bench_scale.py`` (openai backend, gpt-4o-mini, fake server on 127.0.0.1 answering at once):
submit (``--batch-api``), collect (the next run: the fake job is completed by then), and, for
comparison, the direct path in a store of its own. Reported: requests in the batch, direct calls
each path made, wall time, peak RSS, and whether the two issues have the same bytes.

    python benchmarks/bench_batch.py [--papers 5000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_scale import synthetic_corpus  # noqa: E402
from tests.fake_batch import FakeBatch  # noqa: E402
from tests.test_batch import without_cost  # noqa: E402  (the footer says what answers cost)


def run(pages: Path, home: Path, url: str, *extra: str) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MiB) and stdout of one `digest newsletter`."""
    config = home / "digest.toml"
    home.mkdir(parents=True, exist_ok=True)
    config.write_text("[limits]\nmax_records_per_run = 100000\n", "utf-8")
    command = [sys.executable, "-m", "digest", "newsletter", str(pages), "--backend", "openai",
               "--model", "gpt-4o-mini", "--base-url", url, "--config", str(config),
               "--week", "2026-W47", "--out", str(home / "out"), "--state",
               str(home / "state.sqlite"), "--report", str(home / "report.json"), "-q", *extra]
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env["DIGEST_HOME"] = str(home / "home")
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, env=env, cwd=home, text=True)
    stdout = process.stdout.read() if process.stdout else ""
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"digest exited {os.waitstatus_to_exitcode(status)}: {stdout}")
    return time.perf_counter() - started, usage.ru_maxrss / 1024, stdout.strip()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--papers", type=int, default=5000)
    papers = parser.parse_args().papers
    with tempfile.TemporaryDirectory() as tmp, \
            FakeBatch(statuses=("in_progress", "completed")) as fake:
        pages = Path(tmp) / "pages"
        pages.mkdir()
        synthetic_corpus(papers, pages)
        submit = run(pages, Path(tmp) / "batch", fake.url, "--batch-api")
        requests = sum(len(job.lines) for job in fake.jobs.values())
        upload = sum(len(fake.files[job.input_file_id]) for job in fake.jobs.values())
        collect = run(pages, Path(tmp) / "batch", fake.url)
        batch_direct = len(fake.chat_requests)
        direct = run(pages, Path(tmp) / "direct", fake.url)
        direct_calls = len(fake.chat_requests) - batch_direct
        same = (without_cost((Path(tmp) / "batch/out/2026-W47.md").read_bytes())
                == without_cost((Path(tmp) / "direct/out/2026-W47.md").read_bytes()))
        report = json.loads((Path(tmp) / "batch/report.json").read_text())
    print(f"{papers:,} papers: {requests} batch requests ({upload / 1e6:.1f} MB JSONL), "
          f"{batch_direct} direct calls after collecting (merges), "
          f"direct path {direct_calls} calls")
    print("| step | wall | peak RSS |\n|---|---|---|")
    for name, (wall, rss, _) in (("submit", submit), ("collect + publish", collect),
                                 ("direct path (same fake)", direct)):
        print(f"| {name} | {wall:.1f} s | {rss:.0f} MiB |")
    print(f"batch cost in the report: {report.get('batch', {}).get('cost_usd')} USD; "
          f"same issue bytes as the direct path but the footer's cost: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
