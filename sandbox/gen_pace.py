"""The account's pace of business: when, over its history, sign-ups, sales and orders happen.

A healthy small business grows smoothly, sells more on weekdays than at weekends, and shows no
burst on the day it is looked at. Sign-ups follow one intensity curve (`GROWTH_PER_MONTH`
compound growth times a UTC weekday factor), spread evenly along it. An event that follows an
earlier one (a customer's later purchase, an order, a form submission, a note) comes some days
after it, and one that would fall after the clock has not happened yet: a recent customer has
had less time, so has fewer. Nothing is squeezed into the hours before the clock, as clamping
late events to it did (a spike of ~100 transactions on the as-of day, February at 1.7x January).
"""

from __future__ import annotations

import numpy as np

from creator_sync.sandbox.dataset import DAY

GROWTH_PER_MONTH = 0.04  # about 2x over the 18 months of history
WEEKDAY_FACTORS = (1.15, 1.18, 1.12, 1.06, 0.95, 0.74, 0.80)  # Monday .. Sunday, UTC days
MONTH = 30.44 * DAY
SPREAD_BLOCK = 20  # rows over which `spread_choice` holds each option to its share
BIN = 3600  # the curve is flat within an hour
AFTER_ROUNDS = 64  # draws of `Pace.after` before the few events left are placed by the curve


class Pace:
    """The intensity curve over [start, end) and draws from it (epoch seconds, int64)."""

    def __init__(self, start: int, end: int):
        edges = np.append(np.arange(start, end, BIN, dtype=np.int64), np.int64(end))
        left = edges[:-1]
        weekday = (left // DAY + 3) % 7  # 1970-01-01 was a Thursday
        rate = (np.exp(np.log1p(GROWTH_PER_MONTH) * (left - start) / MONTH)
                * np.asarray(WEEKDAY_FACTORS)[weekday] * np.diff(edges) / BIN)
        self.start, self.end = start, end
        self._edges = edges.astype(np.float64)
        self._cum = np.concatenate([[0.0], np.cumsum(rate)])

    def mass(self, at: np.ndarray) -> np.ndarray:
        """The curve's integral from `start` to each of `at`: the business up to then."""
        return np.interp(np.asarray(at, np.float64), self._edges, self._cum)

    def draw(self, rng: np.random.Generator, lo: np.ndarray, hi: int) -> np.ndarray:
        """One time per element of `lo` in [lo, hi), following the curve."""
        lo = np.asarray(lo, np.int64)
        a, b = self.mass(lo), self.mass(np.int64(hi))
        at = np.interp(a + rng.random(len(lo)) * (b - a), self._cum, self._edges)
        return np.clip(np.floor(at).astype(np.int64), lo, np.maximum(hi - 1, lo))

    def spread(self, rng: np.random.Generator, lo: int, hi: int, n: int) -> np.ndarray:
        """`n` ascending times in [lo, hi) following the curve, one in each of `n` equal shares
        of it (stratified): a month holds its share of them give or take one, where independent
        draws would swing it by a few per cent from chance alone."""
        a, b = self.mass(np.int64(lo)), self.mass(np.int64(hi))
        u = a + (np.arange(n) + rng.random(n)) / max(n, 1) * (b - a)
        at = np.floor(np.interp(u, self._cum, self._edges)).astype(np.int64)
        return np.clip(at, lo, max(hi - 1, lo))

    @staticmethod
    def weekday_factor(at: np.ndarray) -> np.ndarray:
        """The curve's factor on the UTC weekday of each of `at`."""
        return np.asarray(WEEKDAY_FACTORS)[(np.asarray(at, np.int64) // DAY + 3) % 7]

    def after(self, rng: np.random.Generator, since: np.ndarray, until: int, count: int,
              mean_days: float) -> tuple[np.ndarray, np.ndarray]:
        """`count` events that follow one of `since` (the rows, with repeats, and the times):
        each some days after its row's time (exponential, `mean_days` on average) and before
        `until`, on the weekday rhythm. Rows are drawn alike and an event that would fall at or
        after `until` is drawn again: a recent row has had less time and so has fewer events,
        and the events are spread smoothly up to `until`, never piled up before it."""
        since = np.asarray(since, np.int64)
        rows, times = [np.empty(0, np.int64)], [np.empty(0, np.int64)]
        need, top = count, max(WEEKDAY_FACTORS)
        for _ in range(AFTER_ROUNDS):
            if need <= 0 or not len(since):
                break
            draw = 2 * need + 16
            row = rng.integers(0, len(since), draw)
            at = since[row] + (rng.exponential(mean_days, draw) * DAY).astype(np.int64)
            keep = (at < until) & (rng.random(draw) * top < self.weekday_factor(at))
            rows.append(row[keep][:need])
            times.append(at[keep][:need])
            need -= len(rows[-1])
        row, at = np.concatenate(rows), np.concatenate(times)
        if need > 0 and len(since):  # rows with no time left (not met in practice): up to `until`
            extra = rng.integers(0, len(since), need)
            row = np.concatenate([row, extra])
            at = np.concatenate([at, self.draw(rng, since[extra], until)])
        return row, at


def spread_choice(rng: np.random.Generator, n: int, shares: tuple[float, ...]) -> np.ndarray:
    """`n` choices among `len(shares)` options in those shares, spread evenly along the rows:
    each block of `SPREAD_BLOCK` consecutive rows (more when there are more options) holds each
    option its share, in a random order. Any run of rows, such as the customers of one month,
    then holds each option close to its share, where independent draws let a 10 % option's
    month swing by half from chance alone, which the headline reads as growth. Each call
    shuffles on its own, so two spread choices over the same rows are independent."""
    k = len(shares)
    block = max(SPREAD_BLOCK, k)
    exact = np.asarray(shares, np.float64) / sum(shares) * block
    counts = np.floor(exact).astype(np.int64)
    extra, blocks = block - int(counts.sum()), -(-n // block)
    labels = np.empty((blocks, block), np.int64)
    labels[:, :block - extra] = np.repeat(np.arange(k), counts)
    if extra:  # shares that do not divide the block: its last slots drawn by what is left over
        left = exact - counts
        labels[:, block - extra:] = rng.choice(k, (blocks, extra), p=left / left.sum())
    order = np.argsort(rng.random((blocks, block)), axis=1)
    return np.take_along_axis(labels, order, axis=1).ravel()[:n]
