"""Run every benchmarks/bench_*.py script in turn (``make bench``); each prints its own table."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent


def main() -> int:
    failed = []
    for script in sorted(HERE.glob("bench_*.py")):
        print(f"\n=== {script.name} ===", flush=True)
        started = time.monotonic()
        code = subprocess.call([sys.executable, str(script)], cwd=HERE.parent)
        print(f"({script.name}: {time.monotonic() - started:.1f} s, exit {code})", flush=True)
        if code:
            failed.append(script.name)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
