"""Dedup benchmark: speed at 1k-100k records, and quality on the evaluation sets.

    .venv/bin/python benchmarks/bench_dedup.py    # quality; speed: 10k-100k, templated, one title
    .venv/bin/python benchmarks/bench_dedup.py --sizes 1000 10000 --templated 2000 --skip-quality

Speed: synthetic listings (titles and abstracts from word-bigram chains over the 2,000
real arXiv papers in ../shared/data, so distinct papers share words and phrases the way
real ones do), 5% of them variants of earlier records (re-cased, re-typeset or renamed
titles, Unicode tricks, revised or missing abstracts: the evaluation set's variants).
The growth from 10k to 100k should stay near 10x: no pass over all pairs.

Quality: pairwise precision and recall on the near-duplicate evaluation set
(tests/fixtures/dedup/evalset.py) for the seeds the thresholds were tuned on (1-6)
and for fresh ones (7-12), the same built from arXiv papers, and the false merges
among the 2,000 distinct arXiv papers when their ids are ignored.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from digest.dedup import deduplicate  # noqa: E402
from digest.ingest import load_sources  # noqa: E402
from digest.models import Record, Sighting  # noqa: E402
from digest.normalize import clean_text  # noqa: E402
from tests.fixtures.dedup.evalset import (  # noqa: E402
    VARIANTS,
    boilerplate_set,
    build_evalset,
    pairwise_scores,
)

SHARED = ROOT.parent / "shared"
ARXIV = SHARED / "data" / "arxiv_metadata_sample.csv"
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def arxiv_records() -> list[Record]:
    with ARXIV.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return [Record(title=clean_text(row["title"]), abstract=clean_text(row["abstract"]),
                   sighting=Sighting(str(ARXIV), number))
            for number, row in enumerate(rows, start=1)]


# Synthetic listings ----------------------------------------------------------------------

class Corpus:
    """Word-bigram chains over the real titles and abstracts: distinct papers share words
    and phrases the way real ones do, but not whole sentences (sampling real sentences
    made random pairs of synthetic abstracts 20x more alike than real pairs: 1,041 LSH
    candidates among 2,000 synthetic records against 52 among the 2,000 real ones)."""

    def __init__(self, papers: list[Record], seed: int):
        self.rng = random.Random(seed)
        self.title_words = _chain(p.title for p in papers)
        self.abstract_words = _chain(s for p in papers for s in SENTENCE_END.split(p.abstract))

    def _walk(self, chain: dict[str, list[str]], least: int, most: int) -> list[str]:
        words, word = [], "<s>"
        while len(words) < most:
            word = self.rng.choice(chain[word])
            if word == "</s>":
                if len(words) >= least:
                    break
                word = "<s>"
                continue
            words.append(word)
        return words

    def title(self) -> str:
        return " ".join(self._walk(self.title_words, 4, 16))

    def abstract(self) -> str:
        sentences = [" ".join(self._walk(self.abstract_words, 8, 35))
                     for _ in range(self.rng.randint(4, 8))]
        return " ".join(s if s.endswith(".") else s + "." for s in sentences)

    def record(self, number: int) -> Record:
        return Record(title=self.title(), abstract=self.abstract(),
                      sighting=Sighting("bench", number))


def _chain(texts) -> dict[str, list[str]]:
    next_words: dict[str, list[str]] = defaultdict(list)
    for text in texts:
        words = ["<s>", *text.split(), "</s>"]
        for a, b in zip(words, words[1:], strict=False):
            next_words[a].append(b)
    return next_words


VARIANT_SHARE = 0.05


def synthetic(n: int, papers: list[Record], seed: int = 7) -> tuple[list[Record], int]:
    """``n`` records, 5% of them variants of earlier ones; also the number of variants."""
    corpus = Corpus(papers, seed)
    kinds = sorted(VARIANTS)
    records: list[Record] = []
    variants = 0
    for number in range(n):
        if records and corpus.rng.random() < VARIANT_SHARE:
            source = corpus.rng.choice(records)
            variant = VARIANTS[corpus.rng.choice(kinds)](corpus.rng, source)
            records.append(Record(variant.title, variant.abstract, Sighting("bench", number)))
            variants += 1
        else:
            records.append(corpus.record(number))
    return records, variants


def templated(n: int, seed: int = 11) -> list[Record]:
    """``n`` short records from one template with a few slots, as a listing of workshop
    abstracts or an auto-generated feed carries them: every title and abstract shares most
    of its words with thousands of others, so LSH buckets hold thousands of records."""
    rng = random.Random(seed)
    words = sorted({w.lower() for w in " ".join(TEMPLATE_WORDS).split()})
    records = []
    for number in range(n):
        a, b, c, d = (rng.choice(words) for _ in range(4))
        title = f"A Study of {a.title()} {b.title()} for {c.title()} {d.title()}"
        abstract = (f"This paper studies {a} {b} for {c} {d}. We propose a simple method and "
                    f"evaluate it on standard benchmarks, where it improves over strong baselines. "
                    f"Code and data are available.")
        records.append(Record(title, abstract, Sighting("templated", number)))
    return records


def one_title(n: int, seed: int = 13) -> list[Record]:
    """``n`` different papers under one title, as a generic title ("Editorial") or a hostile
    listing gives them: each was compared with every paper before it under that title."""
    rng = random.Random(seed)
    vocabulary = [f"term{number}" for number in range(3000)]
    return [Record("Editorial", " ".join(rng.choice(vocabulary) for _ in range(80)) + ".",
                   Sighting("one-title", number)) for number in range(n)]


TEMPLATE_WORDS = ("graph neural network language model image segmentation speech recognition "
                  "reinforcement learning robot control protein folding time series forecasting "
                  "code generation question answering machine translation object detection",)


def _one_run(kind: str, n: int) -> dict[str, float]:
    """Build the records, then time ``deduplicate`` alone; RSS in MB (peak over the process)."""
    import logging
    import resource
    candidates: list[int] = []

    class Counting(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "candidate pairs" in record.getMessage():
                candidates.append(int(record.getMessage().split(":")[1].split()[0]))

    logger = logging.getLogger("digest")
    logger.setLevel(logging.DEBUG)
    logger.addHandler(Counting())
    records = (templated(n) if kind == "templated" else one_title(n) if kind == "one-title"
               else synthetic(n, arxiv_records())[0])
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started = time.perf_counter()
    result = deduplicate(records)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"seconds": seconds, "rss_before": before, "rss_peak": peak,
            "papers": len(result.papers), "merged": result.duplicates_merged,
            "candidates": sum(candidates)}


def speed(runs: list[tuple[str, int]]) -> None:
    """One subprocess per run, so each peak RSS is its own."""
    print("## Speed and memory (one run each, one process per run)\n")
    print("| input | records | seconds | µs/record | peak RSS MB | RSS before dedup MB "
          "| candidate pairs | papers | merged |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    timings: dict[tuple[str, int], float] = {}
    for kind, n in runs:
        out = subprocess.run([sys.executable, __file__, "--one-run", kind, str(n)],
                             capture_output=True, text=True, check=True).stdout
        row = json.loads(out.splitlines()[-1])
        timings[kind, n] = row["seconds"]
        print(f"| {kind} | {n:,} | {row['seconds']:.1f} | {row['seconds'] / n * 1e6:,.0f} "
              f"| {row['rss_peak']:,.0f} | {row['rss_before']:,.0f} | {row['candidates']:,} "
              f"| {row['papers']:,} | {row['merged']:,} |", flush=True)
    sizes = sorted(n for kind, n in timings if kind == "synthetic")
    if len(sizes) >= 2:
        first, last = sizes[0], sizes[-1]
        ratio = timings["synthetic", last] / timings["synthetic", first]
        print(f"\ngrowth {first:,} -> {last:,}: {ratio:.1f}x time for {last / first:.0f}x "
              "records (linear is the same factor; all pairs its square)")


# Quality ------------------------------------------------------------------------------------

def quality(papers: list[Record], seeds: list[int], label: str,
            build=build_evalset) -> Counter[str]:
    totals: Counter[str] = Counter()
    per_kind: Counter[str] = Counter()
    for seed in seeds:
        items = build(papers, seed=seed)
        result = deduplicate([item.record for item in items])
        paper_of = {s: p.id for p in result.papers for s in p.sightings}
        predicted = [paper_of[item.record.sighting] for item in items]
        scores = pairwise_scores(items, predicted)
        totals.update(tp=scores.true_pairs, fp=scores.false_pairs, fn=scores.missed_pairs)
        original = {i.label: paper_of[i.record.sighting] for i in items if i.kind == "original"}
        for item in items:
            if item.kind not in ("original", "hard") and item.label in original:
                per_kind[item.kind] += 1
                per_kind[item.kind + ":found"] += paper_of[item.record.sighting] == original[
                    item.label]
    precision = totals["tp"] / max(1, totals["tp"] + totals["fp"])
    recall = totals["tp"] / max(1, totals["tp"] + totals["fn"])
    print(f"| {label} | {precision:.4f} | {recall:.4f} | {totals['tp']} | {totals['fp']} "
          f"| {totals['fn']} |")
    return per_kind


def arxiv_false_merges(papers: list[Record]) -> None:
    for name, records in (("titles + abstracts", papers),
                          ("titles only", [Record(p.title, "", p.sighting) for p in papers])):
        result = deduplicate(records)
        print(f"- arXiv sample, ids ignored, {name}: {len(records):,} distinct papers -> "
              f"{len(result.papers):,} ({result.duplicates_merged} merged)")
        for group in result.groups:
            print(f"  - {group.rule} {group.score:.2f}: "
                  + " / ".join(repr(r.title[:70]) for r in group.records))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 50_000, 100_000])
    parser.add_argument("--templated", type=int, nargs="*", default=[20_000])
    parser.add_argument("--one-title", type=int, nargs="*", default=[5_000, 20_000])
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--one-run", nargs=2, metavar=("KIND", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one_run:
        print(json.dumps(_one_run(args.one_run[0], int(args.one_run[1]))))
        return
    papers = arxiv_records()
    if not args.skip_quality:
        quality_tables(papers)
    if not args.skip_speed:
        speed([("synthetic", n) for n in args.sizes] + [("templated", n) for n in args.templated]
              + [("one-title", n) for n in args.one_title])


def quality_tables(papers: list[Record]) -> None:
    seeds = load_sources([str(SHARED / "seeds")]).records
    print("## Near-duplicate evaluation (pairwise)\n")
    print("| set | precision | recall | true pairs | false pairs | missed pairs |")
    print("|---|---:|---:|---:|---:|---:|")
    tuned = quality(seeds, list(range(1, 7)), "seed papers, seeds 1-6 (tuned on)")
    quality(seeds, list(range(7, 13)), "seed papers, seeds 7-12 (held out)")
    quality(random.Random(1).sample(papers, 600), [21, 22], "600 arXiv papers, seeds 21-22")
    quality(seeds, [1, 2, 3], "boilerplate set (seed papers), seeds 1-3", boilerplate_set)
    quality(papers, [31, 32, 33], "boilerplate set (arXiv papers), seeds 31-33", boilerplate_set)
    print("\nvariants found with their original (seed papers, seeds 1-6):")
    for kind in sorted(k for k in tuned if ":" not in k):
        print(f"- {kind}: {tuned[kind + ':found']}/{tuned[kind]}")
    print()
    arxiv_false_merges(papers)
    print()


if __name__ == "__main__":
    main()
