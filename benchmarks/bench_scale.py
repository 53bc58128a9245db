"""The whole pipeline at scale: `digest newsletter` (offline backend) on synthetic Daily Papers
pages of 5k and 50k papers (10% repeats), against the floor measured in the same run.

The floor is what no design can skip: read every page and tiktoken-count each unique abstract
once (a plain ``encode_ordinary`` loop), the least of three tries. Each size's digest runs once
in a fresh process, its bytecode written beforehand as an install writes it; its peak RSS is
that process's ``ru_maxrss``. The growth exponent is log(t50k / t5k) / log(10).

It then runs listings of made-up text (``--made-up``, 20,000 papers: the most a run takes by
default) whose abstracts hold millions of distinct words or terms, where a real week has a few
hundred thousand: each table keyed by a word or term is bounded (tests/test_made_up_text.py).

    python benchmarks/bench_scale.py [--sizes 5000 50000] [--made-up 20000]
                                     [--results benchmarks/results.md]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT.parent / "shared" / "seeds"
ARXIV = ROOT.parent / "shared" / "data" / "arxiv_metadata_sample.csv"
PAPERS_PER_PAGE = 100
REPEAT_SHARE = 0.10
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_HEADER = ("New\n\nGet trending papers in your email inbox!\n\nSubscribe\n\n"
           "byAK and the research community\n\n")


def seed_papers() -> list[tuple[str, str]]:
    """(title, abstract) pairs of the three real pages and the 2,000 arXiv records, through
    digest's own readers."""
    from digest.ingest import load_sources
    records = load_sources([str(SEEDS), str(ARXIV)]).records
    return [(r.title, r.abstract) for r in records if r.abstract]


def synthetic_corpus(count: int, folder: Path, seed: int = 0) -> list[str]:
    """Write ``count`` papers as Daily Papers pages (10% of them repeats of earlier ones):
    each abstract is a real one with a sentence dropped and two borrowed, shuffled; each title a
    real one with a made-up method name. Returns the unique abstracts."""
    base = seed_papers()
    rng = random.Random(seed)
    n_unique = count - int(count * REPEAT_SHARE)
    unique = [_made_up_paper(base, number, rng) for number in range(n_unique)]
    papers = unique + [rng.choice(unique) for _ in range(count - len(unique))]
    rng.shuffle(papers)
    for page, start in enumerate(range(0, len(papers), PAPERS_PER_PAGE)):
        entries = "".join(f"{t}\n\n{a}\n\n" for t, a in papers[start:start + PAPERS_PER_PAGE])
        (folder / f"page_{page:04d}.txt").write_text(_HEADER + "Mar 14\n\n" + entries, "utf-8")
    return [abstract for _, abstract in unique]


def _made_up_paper(base: Sequence[tuple[str, str]], number: int,
                   rng: random.Random) -> tuple[str, str]:
    title, abstract = base[number % len(base)]
    sentences = SENTENCE_END.split(abstract)
    if len(sentences) > 2:
        sentences.pop(rng.randrange(len(sentences)))
    for _ in range(2):
        sentences.append(rng.choice(SENTENCE_END.split(rng.choice(base)[1])))
    rng.shuffle(sentences)
    name = "".join(rng.choice("BCDFGKLMNPRSTVZ") + rng.choice("aeiou") for _ in range(3))
    subtitle = title.split(": ", 1)[-1]
    return f"{name}{number}: {subtitle}", " ".join(sentences)


FLOOR_RUNS = 3


MADE_UP_KINDS = {
    "random words": lambda word, rng: " ".join(
        " ".join(word(rng.randint(4, 12)) for _ in range(14)) + "." for _ in range(40)),
    "words joined by hyphens": lambda word, rng: "-".join(word(3) for _ in range(1200)),
    "two letters joined by apostrophes": lambda word, rng: "'".join(word(2) for _ in range(1600)),
}


def made_up_listing(count: int, kind: str, folder: Path, seed: int = 0) -> None:
    """``count`` papers as JSON lines, 10,000 a file (the most a source gives by default):
    four sentences that read as an abstract, then made-up text, 6,000 characters in all."""
    rng = random.Random(seed)

    def word(n: int) -> str:
        return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(n))

    tail = MADE_UP_KINDS[kind]
    for part, start in enumerate(range(0, count, 10_000)):
        lines = []
        for number in range(start, min(count, start + 10_000)):
            prose = " ".join(f"We study the {word(6)} problem for {word(7)} models and show "
                             f"that {word(5)} improves results." for _ in range(4))
            lines.append(json.dumps({"title": f"Paper {word(8)} {number}",
                                     "abstract": f"{prose} {tail(word, rng)}"[:5990]}))
        (folder / f"made_up_{part}.jsonl").write_text("\n".join(lines) + "\n", "utf-8")


def floor_seconds(folder: Path, abstracts: Sequence[str]) -> tuple[float, float]:
    """Read every page and count each unique abstract's tokens once: wall and CPU seconds, the
    least of FLOOR_RUNS tries (one try moved between 2.7 and 4.1 s at 50k within minutes on a
    shared machine; the least is the floor's own cost, and it makes the ratio no smaller)."""
    from digest.tokens import get_encoding
    encoding = get_encoding()
    tries = []
    for _ in range(FLOOR_RUNS):
        started, cpu = time.perf_counter(), time.process_time()
        for page in sorted(folder.glob("*.txt")):
            page.read_text("utf-8")
        for abstract in abstracts:
            len(encoding.encode_ordinary(abstract))
        tries.append((time.perf_counter() - started, time.process_time() - cpu))
    return min(wall for wall, _ in tries), min(cpu for _, cpu in tries)


def run_digest(pages: Path, workdir: Path) -> tuple[float, float, float, dict]:
    """Wall and CPU seconds, peak RSS (MiB) and the run report of one offline `digest newsletter`.
    CPU time (user + system) is the steadier figure on a shared machine."""
    report = workdir / "report.json"
    config = workdir / "digest.toml"
    config.write_text("[limits]\nmax_records_per_run = 100000\n", "utf-8")
    command = [sys.executable, "-m", "digest", "newsletter", str(pages), "--backend", "offline",
               "--config", str(config),
               "--week", "2026-W47", "--out", str(workdir / "out"),
               "--state", str(workdir / "state.sqlite"), "--report", str(report)]
    env = user_env()
    env["DIGEST_HOME"] = str(workdir / "home")
    started = time.perf_counter()
    # Run outside the checkout: `-m digest` imports from the working directory first, and
    # PYTHONPATH must be able to point the benchmark at another copy of digest.
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, env=env, cwd=workdir)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise SystemExit(f"digest exited {process.returncode} on {pages}")
    cpu = usage.ru_utime + usage.ru_stime
    return wall, cpu, usage.ru_maxrss / 1024, json.loads(report.read_text())


def user_env() -> dict[str, str]:
    """This environment as a user's shell has it: no LLM endpoint, and bytecode written and
    read (a pip install compiles digest's modules; with PYTHONDONTWRITEBYTECODE, as on some
    CI machines, every run would compile them again, about 0.2 s)."""
    drop = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "PYTHONDONTWRITEBYTECODE")
    return {k: v for k, v in os.environ.items() if k not in drop}


def compile_digest() -> None:
    """Write the bytecode of the digest the runs will import (this checkout, or the copy
    PYTHONPATH points at) before the first run, so no run pays for compiling it."""
    where = subprocess.run([sys.executable, "-c", "import digest, os; "
                            "print(os.path.dirname(digest.__file__))"], env=user_env(),
                           capture_output=True, text=True, check=True, cwd=tempfile.gettempdir())
    subprocess.run([sys.executable, "-m", "compileall", "-q", where.stdout.strip()],
                   env=user_env(), check=True, stdout=subprocess.DEVNULL)


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in
                Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")),
               platform.processor() or "unknown CPU")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"{platform.system()} {platform.release()}, load average {load:.1f} at start")


def measure(sizes: Sequence[int]) -> list[dict]:
    compile_digest()
    rows = []
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            pages = Path(tmp) / "pages"
            pages.mkdir()
            abstracts = synthetic_corpus(size, pages)
            floor, floor_cpu = floor_seconds(pages, abstracts)
            wall, cpu, rss, report = run_digest(pages, Path(tmp))
            rows.append({"papers": size, "wall": wall, "floor": floor, "rss": rss,
                         "cpu": cpu, "floor_cpu": floor_cpu,
                         "in_issue": report["counts"]["papers_in_issue"],
                         "themes": report["counts"]["themes"], "stages": report["stages"]})
            print(f"{size:,} papers: {wall:.1f} s ({cpu:.1f} s CPU), floor {floor:.1f} s "
                  f"({floor_cpu:.1f} s CPU), {wall / floor:.1f}x wall, {cpu / floor_cpu:.1f}x CPU, "
                  f"peak RSS {rss:.0f} MiB", flush=True)
    return rows


def measure_made_up(count: int) -> list[dict]:
    rows = []
    for kind in MADE_UP_KINDS:
        with tempfile.TemporaryDirectory() as tmp:
            pages = Path(tmp) / "pages"
            pages.mkdir()
            made_up_listing(count, kind, pages)
            wall, cpu, rss, report = run_digest(pages, Path(tmp))
            rows.append({"kind": kind, "papers": count, "wall": wall, "cpu": cpu, "rss": rss,
                         "in_issue": report["counts"]["papers_in_issue"],
                         "stages": report["stages"]})
            print(f"{count:,} papers of {kind}: {wall:.1f} s ({cpu:.1f} s CPU), "
                  f"peak RSS {rss:.0f} MiB", flush=True)
    return rows


def made_up_table(rows: Sequence[dict]) -> str:
    lines = ["| made-up text | papers | in issue | digest wall | digest CPU | peak RSS |"
             " slowest stage |", "|---" * 7 + "|"]
    for r in rows:
        stage, spent = max(r["stages"].items(), key=lambda item: item[1]["cpu_s"])
        lines.append(f"| {r['kind']} | {r['papers']:,} | {r['in_issue']:,} | {r['wall']:.1f} s | "
                     f"{r['cpu']:.1f} s | {r['rss']:.0f} MiB | {stage} {spent['cpu_s']:.1f} s |")
    return "\n".join(lines)


def table(rows: Sequence[dict]) -> str:
    lines = ["| papers | in issue | themes | digest wall | floor | × floor | digest CPU "
             "| floor CPU | × floor (CPU) | peak RSS |", "|---" * 10 + "|"]
    lines += [f"| {r['papers']:,} | {r['in_issue']:,} | {r['themes']} | {r['wall']:.1f} s | "
              f"{r['floor']:.1f} s | {r['wall'] / r['floor']:.1f}× | {r['cpu']:.1f} s | "
              f"{r['floor_cpu']:.1f} s | {r['cpu'] / r['floor_cpu']:.1f}× | {r['rss']:.0f} MiB |"
              for r in rows]
    if len(rows) >= 2:
        first, last = rows[0], rows[-1]
        sizes = math.log(last["papers"] / first["papers"])
        growth = math.log(last["wall"] / first["wall"]) / sizes
        growth_cpu = math.log(last["cpu"] / first["cpu"]) / sizes
        lines.append(f"\nGrowth exponent {first['papers']:,} → {last['papers']:,}: "
                     f"{growth:.2f} wall, {growth_cpu:.2f} CPU (target ≤ 1.05); "
                     "targets at 50k: ≤ 5× floor, peak RSS ≤ 1 GB.")
    return "\n".join(lines)


def stage_table(rows: Sequence[dict]) -> str:
    """Where each run's CPU seconds went, by the run report's ``stages``; "other" is start-up
    (imports, settings, the store) and what no stage covers."""
    names = list(rows[0]["stages"])
    lines = ["| papers | " + " | ".join(names) + " | other | digest CPU |",
             "|---" * (len(names) + 3) + "|"]
    for row in rows:
        spent = [row["stages"].get(name, {}).get("cpu_s", 0.0) for name in names]
        cells = [f"{seconds:.1f} s ({100 * seconds / row['cpu']:.0f}%)"
                 for seconds in [*spent, row["cpu"] - sum(spent)]]
        lines.append(f"| {row['papers']:,} | " + " | ".join(cells) + f" | {row['cpu']:.1f} s |")
    return "\n".join(lines)


def write_section(path: Path, name: str, text: str) -> None:
    """Put ``text`` between ``<!-- name -->`` and ``<!-- /name -->`` in ``path`` (appended
    when they are not there yet): each benchmark rewrites its own section, not the file."""
    start, end = f"<!-- {name} -->", f"<!-- /{name} -->"
    old = path.read_text("utf-8") if path.exists() else "# Benchmarks (`make bench`)\n"
    block = f"{start}\n{text.rstrip()}\n{end}"
    if start in old and end in old:
        new = old[:old.index(start)] + block + old[old.index(end) + len(end):]
    else:
        new = old.rstrip() + "\n\n" + block + "\n"
    path.write_text(new, "utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[5_000, 50_000])
    parser.add_argument("--made-up", type=int, default=20_000, metavar="PAPERS",
                        help="papers of each kind of made-up text (0: none)")
    parser.add_argument("--results", type=Path, default=ROOT / "benchmarks" / "results.md")
    args = parser.parse_args()
    described = machine()
    compile_digest()
    if args.made_up:
        made_up = made_up_table(measure_made_up(args.made_up))
        print(made_up)
        write_section(args.results, "bench_scale_made_up", (
            "## Made-up text (`bench_scale.py --made-up`)\n\n"
            "One run per kind, offline backend, default limits: abstracts of made-up words "
            "(millions of distinct words or terms, where the 50,000 papers above have 60,000 "
            f"words and 115,000 terms). Machine: {described}.\n\n" + made_up + "\n"))
    if not args.sizes:
        return 0
    rows = measure(args.sizes)
    text = (table(rows) + "\n\nCPU seconds by stage (the run report's `stages`):\n\n"
            + stage_table(rows))
    print(text)
    write_section(args.results, "bench_scale", (
        "## Whole pipeline at scale (`bench_scale.py`)\n\n"
        "One run per size, offline backend, synthetic Daily Papers pages with 10% repeats.\n"
        f"Machine: {described}.\nThe floor (read every page, tiktoken-count each unique abstract "
        "once; the least of three tries) is measured in the same run; compare ratios, not seconds. "
        "digest's bytecode is written before the runs, as an install writes it.\n\n" + text + "\n"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
