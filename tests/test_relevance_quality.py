"""Ranking quality against labels, with floors a real regression breaks.

Measured (benchmarks/bench_relevance.py has the full tables): on the arXiv subset below the
learned ranker gives precision@10 / @20 of 0.80 / 0.70 and the centroid baseline 0.73 / 0.58,
where an unranked list gives the base rate (~0.1); on the nine seed-page tasks, 0.64 / 0.41
against 0.57 / 0.41 (base rate 0.24, ceiling 0.80 / 0.48). A ranker that ignored the library,
scored with the wrong sign or lost the abstracts falls far below the floors.
"""

from __future__ import annotations

import pytest

from tests.fixtures.relevance.evalsets import arxiv_tasks, base_rate, mean_precision, seed_tasks

pytestmark = pytest.mark.slow


def test_arxiv_library_of_20_finds_its_category() -> None:
    tasks = arxiv_tasks(["math", "physics", "quant-ph"], seeds=[0])
    learned, centroid = mean_precision(tasks, "learned"), mean_precision(tasks, "centroid")
    assert learned[10] >= 0.70 and learned[20] >= 0.60
    assert learned[10] >= centroid[10] and learned[20] >= centroid[20]
    assert max(base_rate(t) for t in tasks) < 0.2


def test_seed_pages_library_of_one_theme_finds_it_on_the_third_page() -> None:
    tasks = seed_tasks()
    assert len(tasks) == 9
    learned, centroid = mean_precision(tasks, "learned"), mean_precision(tasks, "centroid")
    assert learned[10] >= 0.55 and learned[20] >= 0.35
    assert learned[10] > centroid[10]
    assert sum(base_rate(t) for t in tasks) / len(tasks) < 0.3
