"""Progress while extracting: a rich live line on a TTY, a plain log line every few seconds otherwise."""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator

from sources.creator_platform.stats import RunStats


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
    tty = sys.stderr.isatty()
    if enabled is False:
        yield
        return
    if tty:
        from rich.console import Console
        from rich.live import Live
        from rich.text import Text

        console = Console(stderr=True)
        with Live(Text(_line(stats)), console=console, refresh_per_second=4, transient=True) as live:
            stop = threading.Event()

            def tick() -> None:
                while not stop.wait(0.25):
                    live.update(Text(_line(stats)))

            thread = threading.Thread(target=tick, daemon=True)
            thread.start()
            try:
                yield
            finally:
                stop.set()
                thread.join()
        return
    stop = threading.Event()

    def log_lines() -> None:
        while not stop.wait(interval):
            print(_line(stats), file=sys.stderr, flush=True)

    thread = threading.Thread(target=log_lines, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
