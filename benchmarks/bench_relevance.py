"""Relevance benchmark: precision@10 and @20 of the learned ranker and the centroid baseline.

    .venv/bin/python benchmarks/bench_relevance.py            # both evaluations and the speed
    .venv/bin/python benchmarks/bench_relevance.py --quick    # 2 seeds per arXiv category

(a) arXiv: the 2,000 real records of ../shared/data. For each top-level category with at
    least 100 papers and each seed, a library of 20 papers of that category; the other
    1,980 papers are ranked; relevant = the same category.
(b) Seed pages: a library from one hand-labelled theme of two pages, the third page ranked
    (tests/fixtures/relevance/evalsets.py says how, and why precision skips unlabelled papers).
"random" is the expected precision of an unranked list (the base rate); "ceiling" the best
possible when a theme has fewer relevant papers than k.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from digest.relevance import Profile, rank  # noqa: E402
from tests.fixtures.relevance.evalsets import (  # noqa: E402
    Task,
    arxiv_categories,
    arxiv_tasks,
    base_rate,
    ceiling,
    precision_at,
    ranked_ids,
    seed_tasks,
)

METHODS = ("learned", "centroid")


def table(title: str, groups: dict[str, list[Task]]) -> None:
    print(f"\n{title}")
    print(f"{'':28} {'learned @10':>11} {'@20':>5} {'centroid @10':>12} {'@20':>5} "
          f"{'random':>6} {'ceiling @10':>11} {'@20':>5}")
    everything: list[tuple[Task, dict[str, list[str]]]] = []
    for name, tasks in groups.items():
        rows = [(t, {m: ranked_ids(t, m) for m in METHODS}) for t in tasks]
        everything += rows
        print(_row(name, rows))
    if len(groups) > 1:
        print(_row("mean", everything))


def _row(name: str, rows: list[tuple[Task, dict[str, list[str]]]]) -> str:
    def mean(values: list[float]) -> float:
        return statistics.mean(values)

    cells = [mean([precision_at(ids[m], t, k) for t, ids in rows])
             for m in METHODS for k in (10, 20)]
    base = mean([base_rate(t) for t, _ in rows])
    ceilings = [mean([ceiling(t, k) for t, _ in rows]) for k in (10, 20)]
    return (f"{name:28} {cells[0]:11.3f} {cells[1]:5.3f} {cells[2]:12.3f} {cells[3]:5.3f} "
            f"{base:6.3f} {ceilings[0]:11.3f} {ceilings[1]:5.3f}")


def speed(tasks: list[Task]) -> None:
    task = tasks[0]
    for method in METHODS:
        started = time.perf_counter()
        rank(task.week, Profile(), library=task.library, method=method)  # type: ignore[arg-type]
        print(f"speed: {method} ranks {len(task.week)} papers against a library of "
              f"{len(task.library)} in {time.perf_counter() - started:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    seeds = range(2) if parser.parse_args().quick else range(5)
    categories = arxiv_categories()
    arxiv = {c: arxiv_tasks([c], seeds) for c in categories}
    table(f"(a) arXiv sample, library of 20 from one category, {len(seeds)} seeds each "
          f"(precision@k; relevant = same category)", arxiv)
    seeds_by_task = {t.name: [t] for t in seed_tasks()}
    table("(b) seed pages, library = one hand-labelled theme of two pages, third page ranked",
          seeds_by_task)
    speed(arxiv[categories[0]])


if __name__ == "__main__":
    main()
