"""Themes benchmark: quality against labels, stability, balance, and speed at 10k papers.

    .venv/bin/python benchmarks/bench_themes.py                 # everything
    .venv/bin/python benchmarks/bench_themes.py --skip-speed    # quality tables only

Quality: ARI and NMI of our grouping against the top-level arXiv category of the 2,000
real arXiv records in ../shared/data, next to a plain TF-IDF + k-means baseline with k =
the number of true classes; and against the hand labels of 150 seed papers
(tests/fixtures/themes/seed_labels.tsv). Stability: mean ARI between groupings of 90%
subsamples, on the papers they share. Balance: the largest theme's share of the papers.
Speed: 10,000 papers synthesised from the arXiv records (each abstract's sentences
shuffled, one dropped, one borrowed from another paper of the same category).
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from digest.models import Paper, Theme  # noqa: E402
from digest.themes import group_papers  # noqa: E402
from tests.fixtures.themes.evalsets import (  # noqa: E402
    agreement,
    arxiv_papers,
    assignment,
    baseline_labels,
    largest_share,
    seed_labels,
    seed_papers,
    stability,
)

SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def quality_table() -> None:
    papers, truth = arxiv_papers()
    k = len(set(truth.values()))
    seeds = seed_papers()
    hand = seed_labels(seeds)
    rows = []
    for name, data, labels, max_themes in (
        (f"arXiv 2,000 ({k} classes), max themes {k}", papers, truth, k),
        (f"arXiv 2,000 ({k} classes), max themes 10 (default)", papers, truth, 10),
        (f"seeds, hand-labelled {len(hand)} ({len(set(hand.values()))} classes)",
         seeds, hand, 10),
    ):
        started = time.monotonic()
        themes = group_papers(data, max_themes=max_themes)
        elapsed = time.monotonic() - started
        ari, nmi = agreement(assignment(themes), labels)
        n_true = len(set(labels.values()))
        base_ari, base_nmi = agreement(baseline_labels(data, n_true), labels)
        same_ari, same_nmi = agreement(baseline_labels(data, len(themes)), labels)
        rows.append(f"| {name} | {len(themes)} | {ari:.3f} | {nmi:.3f} | {base_ari:.3f} | "
                    f"{base_nmi:.3f} | {same_ari:.3f} | {same_nmi:.3f} | "
                    f"{largest_share(themes):.0%} | {elapsed:.1f} s |")
    print("| data | themes | ARI | NMI | baseline ARI (k = classes) | baseline NMI | "
          "baseline ARI (k = our themes) | baseline NMI | largest theme | time |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


def stability_table() -> None:
    arxiv, _ = arxiv_papers()
    print("\n| data | runs on 90% subsamples | mean ARI between runs |")
    print("|---|---|---|")
    for name, data, max_themes in (("arXiv 2,000", arxiv, 14), ("seeds 179", seed_papers(), 10)):
        score = stability(data, lambda ps, m=max_themes: group_papers(ps, max_themes=m))
        print(f"| {name} | 4 | {score:.3f} |")


def seed_themes_table(themes: Sequence[Theme], papers: Sequence[Paper]) -> None:
    by_id = {p.id: p for p in papers}
    print("\n| theme (seeds, default settings) | size | sample titles |")
    print("|---|---|---|")
    for theme in themes:
        titles = " / ".join(by_id[pid].title.replace("|", "/") for pid in theme.paper_ids[:3])
        print(f"| {theme.title} | {len(theme.paper_ids)} | {titles} |")


def synthetic_papers(count: int, seed: int = 0) -> list[Paper]:
    """``count`` papers made from the arXiv records: sentences shuffled, one dropped, one
    borrowed from another paper of the same category; titles with one word dropped."""
    base, truth = arxiv_papers()
    by_class: dict[str, list[Paper]] = defaultdict(list)
    for paper in base:
        by_class[truth[paper.id]].append(paper)
    rng = random.Random(seed)
    papers = []
    for number in range(count):
        original = base[number % len(base)]
        sentences = SENTENCE_END.split(original.abstract)
        if len(sentences) > 2:
            sentences.pop(rng.randrange(len(sentences)))
        donor = rng.choice(by_class[truth[original.id]])
        sentences.append(rng.choice(SENTENCE_END.split(donor.abstract)))
        rng.shuffle(sentences)
        words = original.title.split()
        if len(words) > 3:
            words.pop(rng.randrange(len(words)))
        papers.append(Paper(id=f"syn{number:05d}", title=" ".join(words),
                            abstract=" ".join(sentences)))
    return papers


def speed_table(sizes: Sequence[int]) -> None:
    print("\n| papers | themes | time | target |")
    print("|---|---|---|---|")
    for size in sizes:
        papers = synthetic_papers(size)
        started = time.monotonic()
        themes = group_papers(papers, max_themes=10)
        elapsed = time.monotonic() - started
        print(f"| {size:,} | {len(themes)} | {elapsed:.1f} s | < 30 s at 10,000 |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000])
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--skip-stability", action="store_true")
    args = parser.parse_args()
    quality_table()
    if not args.skip_stability:
        stability_table()
    seeds = seed_papers()
    seed_themes_table(group_papers(seeds), seeds)
    if not args.skip_speed:
        speed_table(args.sizes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
