"""Per-client rate limit: N requests per window, the window sliding or fixed.

- sliding: at most N requests in any `window` seconds; a refused request waits for the oldest
  of those N to leave the window.
- fixed: at most N requests per clock-aligned window (`[k * window, (k + 1) * window)`), all of
  them free again when the next window starts (the burst-at-the-boundary kind).

Refused requests are not counted. `check` returns the whole seconds until a request would be
allowed, which the app sends as `Retry-After` unless told not to.
"""

from __future__ import annotations

import math
import threading
import time
from collections import defaultdict, deque

WINDOW_KINDS = ("sliding", "fixed")


class RateLimiter:
    def __init__(self, per_window: int, window: float = 60.0, kind: str = "sliding",
                 clock=time.monotonic):
        if kind not in WINDOW_KINDS:
            raise ValueError(f"rate window kind must be one of {', '.join(WINDOW_KINDS)}, got {kind!r}")
        if window <= 0:
            raise ValueError(f"rate window must be positive seconds, got {window}")
        self.per_window = per_window
        self.window = window
        self.kind = kind
        self._clock = clock
        self._hits: defaultdict[str, deque[float]] = defaultdict(deque)
        self._fixed: dict[str, tuple[int, int]] = {}  # key -> (window number, requests in it)
        self._lock = threading.Lock()

    def check(self, key: str) -> int | None:
        """Record a request; return None when allowed, else seconds until a slot frees."""
        if self.per_window <= 0:
            return None
        now = self._clock()
        with self._lock:
            if self.kind == "fixed":
                return self._check_fixed(key, now)
            hits = self._hits[key]
            while hits and hits[0] <= now - self.window:
                hits.popleft()
            if len(hits) >= self.per_window:
                return max(1, math.ceil(hits[0] + self.window - now))
            hits.append(now)
        return None

    def _check_fixed(self, key: str, now: float) -> int | None:
        number = math.floor(now / self.window)
        seen_in, count = self._fixed.get(key, (number, 0))
        if seen_in != number:
            count = 0
        if count >= self.per_window:
            return max(1, math.ceil((number + 1) * self.window - now))
        self._fixed[key] = (number, count + 1)
        return None
