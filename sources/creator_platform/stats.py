"""Run counters (requests, retries, 429s, rows) shared by threads, for the summary and progress."""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field

from .ratelimit import RateReport


@dataclass
class RunStats:
    started: float = field(default_factory=time.monotonic)
    requests: int = 0
    retries: int = 0
    throttled: int = 0  # 429 responses
    bytes: int = 0
    rows: Counter[str] = field(default_factory=Counter)  # table -> rows extracted
    pages: Counter[str] = field(default_factory=Counter)  # resource -> pages read
    announced: Counter[str] = field(default_factory=Counter)  # resource -> pages announced
    rate: RateReport | None = None  # what the rate limiter found, set when the client closes
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, name: str, amount: int = 1) -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + amount)

    def add_rows(self, table: str, count: int) -> None:
        with self._lock:
            self.rows[table] += count

    def add_page(self, resource: str) -> None:
        with self._lock:
            self.pages[resource] += 1

    def add_announced(self, resource: str, pages: int) -> None:
        with self._lock:
            self.announced[resource] += pages

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started
