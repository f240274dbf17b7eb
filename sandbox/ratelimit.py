"""Sliding-window rate limit per client: N requests in any 60 s window (wall clock)."""

from __future__ import annotations

import math
import threading
import time
from collections import defaultdict, deque

WINDOW = 60.0


class RateLimiter:
    def __init__(self, per_minute: int, clock=time.monotonic):
        self.per_minute = per_minute
        self._clock = clock
        self._hits: defaultdict[str, deque[float]] = defaultdict(deque)
        self._lock = threading.Lock()

    def check(self, key: str) -> int | None:
        """Record a request; return None when allowed, else seconds until a slot frees."""
        if self.per_minute <= 0:
            return None
        now = self._clock()
        with self._lock:
            hits = self._hits[key]
            while hits and hits[0] <= now - WINDOW:
                hits.popleft()
            if len(hits) >= self.per_minute:
                return max(1, math.ceil(hits[0] + WINDOW - now))
            hits.append(now)
        return None
