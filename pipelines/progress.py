"""Progress while extracting: a rich bar on a TTY, a plain log line every few seconds otherwise.

The bar's total is the sum of the pages the API announced so far, so it grows as resources start.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

from creator_sync.common.repeating import every
from creator_sync.sources.creator_platform import RunStats


def _line(stats: RunStats) -> str:
    rows = sum(stats.rows.values())
    pages = sum(stats.pages.values())
    return (
        f"extracting: {rows} rows, {pages} pages, {stats.requests} requests, "
        f"{stats.retries} retries, {stats.throttled} x 429, {stats.elapsed:.0f}s"
    )


@contextlib.contextmanager
def progress_reporter(
    stats: RunStats, *, enabled: bool | None = None, interval: float = 10.0
) -> Iterator[None]:
    """Report `stats` until the block ends. enabled=None: bar on a TTY, log lines otherwise."""
    if enabled is False:
        yield
        return
    if enabled or sys.stderr.isatty():
        from rich.console import Console
        from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]syncing"),
            BarColumn(),
            TextColumn("{task.completed}/{task.total} pages"),
            TextColumn("{task.fields[detail]}"),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
        )

        with progress:
            task = progress.add_task("sync", total=None, detail="")

            def tick() -> None:
                progress.update(
                    task,
                    completed=sum(stats.pages.values()),
                    total=max(1, sum(stats.announced.values())),
                    detail=f"{sum(stats.rows.values())} rows, {stats.requests} requests, "
                    f"{stats.retries} retries",
                )

            with every(0.25, tick, name="creator-sync-progress"):
                yield
        return

    with every(interval, lambda: print(_line(stats), file=sys.stderr, flush=True),
               name="creator-sync-progress"):
        yield
