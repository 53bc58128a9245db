"""Start-up: `digest --version` and `digest ingest -` of one listing e-mail against
`python -c "import typer"` (the floor of any typer CLI). Median of 5 runs each.

Targets (issue 15 point 4): `digest --version` ≤ 3×, `digest ingest -` ≤ 5× the typer import.

    python benchmarks/bench_startup.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAIL = ROOT / "tests" / "fixtures" / "ingest" / "arxiv_listing_mail.eml"
TARGETS = {"digest --version": 3.0, "digest ingest - (one mail)": 5.0}


def median_seconds(command: Sequence[str], runs: int, env: dict[str, str],
                   stdin: Path | None = None) -> float:
    times = []
    for _ in range(runs + 1):
        with open(stdin or os.devnull, "rb") as given:
            started = time.perf_counter()
            # outside the checkout: `python -c` imports from the working directory first,
            # and PYTHONPATH must be able to point the benchmark at another copy of digest
            subprocess.run(command, stdin=given, stdout=subprocess.DEVNULL, env=env,
                           check=True, timeout=120, cwd=env["DIGEST_HOME"])
            times.append(time.perf_counter() - started)
    return statistics.median(times[1:])


def measure(runs: int) -> dict[str, float]:
    python = sys.executable
    digest = [python, "-c", "import sys; from digest.cli import main; sys.argv[0] = 'digest'; "
                            "sys.exit(main())"]
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "DIGEST_HOME": home}
        env.pop("OPENAI_API_KEY", None)
        env.pop("OPENAI_BASE_URL", None)
        # A user's install has its bytecode; with PYTHONDONTWRITEBYTECODE every run would
        # compile digest's modules again (typer's come compiled from pip). The first run
        # writes them; the median is of the rest.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        store = str(Path(home) / "state.sqlite")
        return {
            'python -c "import typer"': median_seconds([python, "-c", "import typer"], runs, env),
            "digest --version": median_seconds([*digest, "--version"], runs, env),
            "digest ingest - (one mail)": median_seconds(
                [*digest, "ingest", "-", "--state", store], runs, env, stdin=MAIL),
        }


def table(seconds: dict[str, float]) -> str:
    floor = seconds['python -c "import typer"']
    lines = ["| command | median | × import typer | target |", "|---|---|---|---|"]
    for name, value in seconds.items():
        target = f"≤ {TARGETS[name]:g}×" if name in TARGETS else ""
        lines.append(f"| `{name}` | {value * 1000:.0f} ms | {value / floor:.1f}× | {target} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(table(measure(args.runs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
