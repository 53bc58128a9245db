"""The LLM stage on all of ../shared/seeds against a local OpenAI-compatible server.

The server is tests/fake_openai.py: real HTTP on 127.0.0.1, a fixed 0.5 s per answer,
valid answers that never copy an abstract. ``digest newsletter`` runs as a subprocess at
default settings with ``--backend openai`` pointed at it, twice on the same state store.
Measured: token overhead (prompt_tokens / abstract_tokens from the run report), LLM calls
per 100 papers, the LLM stage's wall time against the ideal ceil(calls / concurrency) x
latency, and the calls a second run makes (target: none).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
sys.path.insert(0, str(ROOT))

from tests.fake_openai import FakeOpenAI  # noqa: E402 - after the path is set

LATENCY_S = 0.5
CONCURRENCY = 4  # the default of --concurrency


def run(url: str, workdir: Path, name: str) -> dict[str, Any]:
    report = workdir / f"{name}.json"
    env = {**os.environ, "OPENAI_API_KEY": "sk-bench-not-a-secret"}
    env.pop("OPENAI_BASE_URL", None)
    env.pop("DIGEST_MODEL", None)
    subprocess.run([sys.executable, "-m", "digest", "newsletter", str(SHARED / "seeds"),
                    "--backend", "openai", "--base-url", url, "--model", "gpt-4o-mini",
                    "--week", "2026-W47", "--include-published",
                    "--out", str(workdir / "out"), "--state", str(workdir / "state.sqlite"),
                    "--report", str(report)],
                   check=True, stdout=subprocess.DEVNULL, env=env, cwd=workdir)
    return json.loads(report.read_text())


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI(latency=LATENCY_S) as server:
        issue = Path(tmp) / "out" / "2026-W47.md"
        first = run(server.url, Path(tmp), "first")
        served_first, first_bytes = len(server.chat_requests), issue.read_bytes()
        second = run(server.url, Path(tmp), "second")
        served_second = len(server.chat_requests) - served_first
        same = "identical" if issue.read_bytes() == first_bytes else "DIFFERENT"
    llm, papers = first["llm"], first["counts"]["papers_in_issue"]
    ideal = math.ceil(llm["calls"] / CONCURRENCY) * LATENCY_S
    overhead = llm["prompt_tokens"] / llm["abstract_tokens"]
    print(f"Seeds: {papers} papers, {first['counts']['themes']} themes, "
          f"{first['counts']['batches']} batches; fallbacks {llm['fallbacks']}, "
          f"repairs {llm['repairs']}, retries {llm['retries']}.\n")
    print("| measure | value | target |")
    print("|---|---|---|")
    print(f"| token overhead (prompt / abstract tokens) | {overhead:.3f} "
          f"({llm['prompt_tokens']} / {llm['abstract_tokens']}) | ≤ 1.10 |")
    print(f"| LLM calls per 100 papers | {100 * llm['calls'] / papers:.1f} "
          f"({llm['calls']} calls) | ≤ 6 |")
    print(f"| LLM stage wall time vs ideal ceil(calls/{CONCURRENCY}) × {LATENCY_S} s | "
          f"{llm['wall_s']:.2f} s / {ideal:.2f} s = {llm['wall_s'] / ideal:.2f}× | ≤ 1.25× |")
    print(f"| second run on the same store: calls (server saw) | {second['llm']['calls']} "
          f"({served_second}); cache hits {second['llm']['cache_hits']}; issue bytes {same} | 0 |")


if __name__ == "__main__":
    main()
