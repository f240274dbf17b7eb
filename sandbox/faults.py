"""Deterministic fault injection for the reliability drills.

Whether a request fails, and how, is a pure function of (seed, method, path + sorted query, how
many times this same request was seen before): concurrent clients see the same faults for the
same requests, and a retry (the next sighting) can succeed.
"""

from __future__ import annotations

import hashlib
import threading
from collections import Counter

KINDS: tuple[str, ...] = ("500", "502", "503", "reset", "truncated", "html", "slow")


class FaultPlan:
    def __init__(self, seed: int, rate: float):
        self.seed = seed
        self.rate = rate
        self._seen: Counter[str] = Counter()
        self._lock = threading.Lock()

    @staticmethod
    def request_key(method: str, path: str, query: list[tuple[str, str]]) -> str:
        pairs = "&".join(f"{k}={v}" for k, v in sorted(query))
        return f"{method.upper()} {path}?{pairs}"

    def draw(self, key: str, sighting: int) -> str | None:
        """The fault for the `sighting`-th time (0-based) `key` is seen, or None."""
        if self.rate <= 0:
            return None
        digest = hashlib.blake2b(f"{self.seed}|{key}|{sighting}".encode(), digest_size=16).digest()
        u = int.from_bytes(digest[:8], "big") / 2**64
        if u >= self.rate:
            return None
        return KINDS[int.from_bytes(digest[8:], "big") % len(KINDS)]

    def decide(self, method: str, path: str, query: list[tuple[str, str]]) -> str | None:
        if self.rate <= 0:
            return None
        key = self.request_key(method, path, query)
        with self._lock:
            sighting = self._seen[key]
            self._seen[key] += 1
        return self.draw(key, sighting)
