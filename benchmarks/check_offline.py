"""Check and time the offline summarizer against another version of it (a check, not a test).

    python benchmarks/check_offline.py PAGES [--against REV] [--theme-size N] [--only new|old]

Loads the pages like the pipeline (``load_sources`` then ``deduplicate``; the papers are cached
in /tmp by folder), cuts them into themes of ``--theme-size`` papers (shuffled with a fixed seed,
like a theme mixes pages), and runs, theme by theme as the pipeline does, ``paper_gists`` on its
papers and then ``theme_summary``, with this checkout's ``digest/offline.py`` and with the one
at ``REV`` (default ``main``, read with ``git show``). Prints each side's CPU seconds and whether
every gist and summary is identical; exits 1 on any difference.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import pickle
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

KEYWORDS = ["language models", "reinforcement learning", "robot"]


def load_papers(pages: Path) -> list:
    cache = Path(tempfile.gettempdir()) / (
        "check_offline2_" + hashlib.sha1(str(pages.resolve()).encode()).hexdigest()[:12] + ".pkl")
    if cache.exists():
        return pickle.loads(cache.read_bytes())
    from digest.dedup import deduplicate
    from digest.ingest import load_sources
    from digest.ingest.limits import IngestLimits

    records = load_sources([str(pages)], limits=IngestLimits(max_records_per_run=100_000)).records
    papers = deduplicate(records).papers
    cache.write_bytes(pickle.dumps(papers))
    return papers


def version_at(rev: str) -> ModuleType:
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:digest/offline.py"],
                            check=True, capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "offline_at_rev.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("digest._offline_at_rev", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def themes_of(papers: list, size: int) -> list[list]:
    order = papers[:]
    random.Random(0).shuffle(order)
    return [order[i:i + size] for i in range(0, len(order), size)]


def run(module: ModuleType, themes: list[list]) -> tuple[float, float, dict, list]:
    """Like the pipeline: a theme's gists (its batches), then its summary."""
    gists: dict[str, str] = {}
    summaries, gist_cpu, summary_cpu = [], 0.0, 0.0
    for theme in themes:
        start = time.process_time()
        gists.update(module.paper_gists(theme))
        middle = time.process_time()
        summaries.append(repr(module.theme_summary(theme, keywords=KEYWORDS)))
        gist_cpu += middle - start
        summary_cpu += time.process_time() - middle
    return gist_cpu, summary_cpu, gists, summaries


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("pages", type=Path)
    parser.add_argument("--against", default="main")
    parser.add_argument("--theme-size", type=int, default=700)
    parser.add_argument("--only", choices=("new", "old"))
    args = parser.parse_args()
    papers = load_papers(args.pages)
    themes = themes_of(papers, args.theme_size)
    print(f"{len(papers)} papers, {len(themes)} themes of <= {args.theme_size}")
    from digest import offline

    sides = {"new": offline} if args.only == "new" else {}
    if args.only != "new":
        sides["old"] = version_at(args.against)
    if args.only is None:
        sides["new"] = offline
    results = {}
    for label, module in sides.items():
        gist_cpu, summary_cpu, gists, summaries = run(module, themes)
        results[label] = (gists, summaries)
        print(f"{label}: gists {gist_cpu:.2f} s CPU, theme summaries {summary_cpu:.2f} s CPU, "
              f"total {gist_cpu + summary_cpu:.2f} s")
    if len(results) < 2:
        return 0
    (old_gists, old_sums), (new_gists, new_sums) = results["old"], results["new"]
    gist_diff = [pid for pid in old_gists if old_gists[pid] != new_gists.get(pid)]
    sum_diff = [i for i, (a, b) in enumerate(zip(old_sums, new_sums, strict=True)) if a != b]
    print(f"gists differing: {len(gist_diff)} of {len(old_gists)}; "
          f"theme summaries differing: {len(sum_diff)} of {len(old_sums)}")
    for pid in gist_diff[:5]:
        print(f"  {pid}:\n    old {old_gists[pid]!r}\n    new {new_gists[pid]!r}")
    return 1 if gist_diff or sum_diff else 0


if __name__ == "__main__":
    sys.exit(main())
