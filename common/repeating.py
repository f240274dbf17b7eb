"""Run a small task every few seconds on a daemon thread while a block of code runs.

The progress bar, the progress log lines and the heap trimming during extraction all need
the same loop: wait on a stop event, act, and stop and join when the block ends, however it ends.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator


@contextlib.contextmanager
def every(seconds: float, task: Callable[[], object], *, name: str | None = None) -> Iterator[None]:
    """Call `task` every `seconds` until the block ends (not at its start or its end)."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(seconds):
            task()

    thread = threading.Thread(target=loop, name=name, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
