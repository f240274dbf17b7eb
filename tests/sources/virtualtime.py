"""Virtual time for threads: `sleep` blocks until a scheduler moves the clock, never the wall.

Threads that share a `VirtualTime` run one burst at a time: when every thread is asleep, the
clock jumps to the earliest wake-up and that thread runs alone until it sleeps again. Minutes of
a rate-limited sync's timing then take a fraction of a second, deterministically enough to
assert the rate a limiter rides and how many 429s it draws.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Callable


class VirtualTime:
    def __init__(self) -> None:
        self.now = 0.0
        self._cond = threading.Condition()
        self._wakeups: list[tuple[float, int, threading.Event]] = []
        self._running = 0
        self._order = itertools.count()

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        woken = threading.Event()
        with self._cond:
            heapq.heappush(self._wakeups, (self.now + max(0.0, seconds), next(self._order), woken))
            self._running -= 1
            self._cond.notify_all()
        woken.wait()

    def run(self, workers: list[Callable[[], None]]) -> None:
        """Run `workers` (one thread each) until all of them return."""
        with self._cond:
            self._running = len(workers)

        def body(work: Callable[[], None]) -> None:
            try:
                work()
            finally:
                with self._cond:
                    self._running -= 1
                    self._cond.notify_all()

        threads = [threading.Thread(target=body, args=(w,), daemon=True) for w in workers]
        for thread in threads:
            thread.start()
        while True:
            with self._cond:
                while self._running > 0:
                    self._cond.wait()
                if not self._wakeups:
                    break
                at, _, woken = heapq.heappop(self._wakeups)
                self.now = max(self.now, at)
                self._running += 1
            woken.set()
        for thread in threads:
            thread.join()
