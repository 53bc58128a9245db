"""A progress bar for the LLM calls on a terminal; nothing at all under cron or in a pipe."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def progress_bar(enabled: bool | None, counts: Callable[[], tuple[int, int]]
                 ) -> Iterator[Callable[[], None]]:
    """Yields ``update()``; ``counts()`` says (settled, submitted)."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        yield lambda: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    with Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("LLM calls", total=None)

        def update() -> None:
            done, total = counts()
            bar.update(task, completed=done, total=total)

        yield update
