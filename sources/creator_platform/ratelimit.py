"""Client-side pacing shared by all threads of a run.

Requests are spaced evenly at `per_minute * headroom`, so any 60-second window the server looks
at holds fewer requests than its limit: we use the allowance instead of bouncing off it (429s).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class RateLimiter:
    def __init__(
        self,
        per_minute: float | None,
        *,
        headroom: float = 0.97,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if per_minute is not None and per_minute <= 0:
            raise ValueError(f"rate limit must be positive requests/minute, got {per_minute}")
        self.per_minute = per_minute
        self._interval = 0.0 if not per_minute else 60.0 / (per_minute * headroom)
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._next = 0.0

    def acquire(self) -> float:
        """Block until this caller's slot; returns the seconds waited."""
        if not self._interval:
            return 0.0
        with self._lock:
            now = self._clock()
            slot = max(now, self._next)
            self._next = slot + self._interval
        wait = slot - now
        if wait > 0:
            self._sleep(wait)
        return wait

    def penalise(self, seconds: float) -> None:
        """After a 429, push every thread's next slot back (the server asked us to slow down)."""
        with self._lock:
            self._next = max(self._next, self._clock() + seconds)
