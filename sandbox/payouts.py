"""The documented payout rule, recomputed from transactions whenever data or the clock moves.

Net settlement of a platform_payments transaction (`settlement_amount - settlement_fee`) becomes
payable on its UTC creation date + `settlement_delay_days`. Each site gets at most one payout per
UTC day (settlement currency USD) carrying the whole balance payable on or before that day that no
earlier non-failed, non-canceled payout carried, and only when that balance is positive.

A payout's lines (its detail, addendum A3) are the transactions payable after the day of the
site's previous carried payout and on or before its own day: their nets add up to its amount. With
`store.payout_corrections` (`--quirks`) some payouts also carry a fee correction no transaction
stands behind, included in their amount.
"""

from __future__ import annotations

import hashlib

import numpy as np

from creator_sync.sandbox.dataset import DAY, Store
from creator_sync.sandbox.rollups import NULL_INT

INITIATED_HOUR = 0  # payouts are initiated at 00:00 UTC of their day
ARRIVAL_DAYS = 2
FAILED_RATE = 0.02
CANCELED_RATE = 0.01
CORRECTION_RATE = 0.12  # share of payouts with a fee correction line under --quirks
CORRECTION_MAX_CENTS = 900
FORCED_CORRECTION = 2  # ... plus the 3rd payout of each site, so that `tiny` shows one
EPOCH_2000_DAY = 10_957  # 2000-01-01 as days since 1970-01-01, for compact payout ids
KEY_SPAN = 1 << 22  # site * KEY_SPAN + day orders payable transactions by (site, day)
NO_DAY = -1  # a payout with no earlier carried payout takes every payable day before its own
# status codes index sandbox.vocab.PAYOUT_STATUS
PENDING, IN_TRANSIT, PAID, FAILED, CANCELED = range(5)


def _unit(seed: int, site: int, day: int, salt: str = "") -> float:
    """A stable uniform draw per (seed, site, day): statuses must not change on a rebuild."""
    digest = hashlib.blake2b(f"{seed}:{site}:{day}{salt}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def payable(store: Store) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(site, payable day, net cents, transaction row) of every settled platform_payments
    transaction."""
    txn, customers = store.table("transactions"), store.table("customers")
    rows = np.flatnonzero(txn.cols["settlement_amount"] != NULL_INT)
    net = txn.cols["settlement_amount"][rows] - txn.cols["settlement_fee"][rows]
    day = txn.cols["created_at"][rows] // DAY + store.settlement_delay_days
    site = customers.cols["site"][txn.cols["customer"][rows]]
    return site, day, net, rows


def payable_index(store: Store) -> tuple[np.ndarray, np.ndarray]:
    """(sorted site*KEY_SPAN + payable day, transaction rows in that order), cached until the
    transactions change; ties keep creation order."""
    txn = store.table("transactions")

    def build() -> tuple[np.ndarray, np.ndarray]:
        site, day, _, rows = payable(store)
        key = site * KEY_SPAN + day
        order = np.argsort(key, kind="stable")
        return key[order], rows[order]

    return txn.cached(("payable", store.settlement_delay_days), build)  # type: ignore[return-value]


def line_rows(store: Store, payout_row: int) -> np.ndarray:
    """Transaction rows of a payout's lines: payable after `after_day`, on or before `day`."""
    cols = store.table("payouts").cols
    site = int(cols["site"][payout_row])
    keys, rows = payable_index(store)
    lo = np.searchsorted(keys, site * KEY_SPAN + int(cols["after_day"][payout_row]), "right")
    hi = np.searchsorted(keys, site * KEY_SPAN + int(cols["day"][payout_row]), "right")
    return rows[lo:hi]


def _correction(store: Store, site: int, day: int, made: int, balance: int) -> int:
    """Cents of the fee correction on this payout (0: none); never makes the amount <= 0."""
    if not store.payout_corrections:
        return 0
    if made != FORCED_CORRECTION and _unit(store.seed, site, day, ":fee") >= CORRECTION_RATE:
        return 0
    u = _unit(store.seed, site, day, ":fee-amount")
    cents = 1 + int(u * 2 * CORRECTION_MAX_CENTS) - CORRECTION_MAX_CENTS
    cents = cents if cents != 0 else 1
    return cents if balance + cents > 0 else 0


def compute_payouts(store: Store) -> dict[str, np.ndarray]:
    """Apply the rule day by day per site; returns the payout table's columns."""
    today = store.now // DAY
    site, day, net, _ = payable(store)
    rows: dict[str, list] = {"site": [], "day": [], "after_day": [], "amount_cents": [],
                             "correction_cents": [], "status": []}
    n_sites = store.table("sites").n
    for s in range(n_sites):
        mine = site == s
        if not mine.any():
            continue
        days, per_day = np.unique(day[mine], return_inverse=True)
        due = np.bincount(per_day, weights=net[mine]).astype(np.int64)  # exact below 2^53 cents
        first = int(days[0])
        made = 0  # the 5th payout of each site fails and the 9th is canceled (plus seeded ones)
        cumulative = 0
        carried = 0
        carried_day = NO_DAY
        pos = 0
        for d in range(first, today + 1):
            while pos < len(days) and days[pos] <= d:
                cumulative += int(due[pos])
                pos += 1
            balance = cumulative - carried
            if balance <= 0:
                continue
            status = _status(store, s, d, today)
            if d != today and made in (4, 8):
                status = FAILED if made == 4 else CANCELED
            rolled = status in (FAILED, CANCELED)
            correction = 0 if rolled else _correction(store, s, d, made, balance)
            made += 1
            rows["site"].append(s)
            rows["day"].append(d)
            rows["after_day"].append(carried_day)
            rows["amount_cents"].append(balance + correction)
            rows["correction_cents"].append(correction)
            rows["status"].append(status)
            if not rolled:
                carried += balance
                carried_day = d
    site_arr = np.asarray(rows["site"], np.int64)
    day_arr = np.asarray(rows["day"], np.int64)
    order = np.lexsort((site_arr, day_arr))
    ids = store.table("payouts").id_base + (day_arr - EPOCH_2000_DAY) * 1000 + site_arr
    return {
        "_id": ids[order],
        "site": site_arr[order],
        "day": day_arr[order],
        "after_day": np.asarray(rows["after_day"], np.int64)[order],
        "amount_cents": np.asarray(rows["amount_cents"], np.int64)[order],
        "correction_cents": np.asarray(rows["correction_cents"], np.int64)[order],
        "status": np.asarray(rows["status"], np.int8)[order],
        "initiated_at": (day_arr * DAY + INITIATED_HOUR * 3600)[order],
        "arrival_at": ((day_arr + ARRIVAL_DAYS) * DAY + INITIATED_HOUR * 3600)[order],
    }


def _status(store: Store, site: int, day: int, today: int) -> int:
    if day == today:
        return PENDING
    u = _unit(store.seed, site, day)
    if u < FAILED_RATE:
        return FAILED
    if u < FAILED_RATE + CANCELED_RATE:
        return CANCELED
    arrival = (day + ARRIVAL_DAYS) * DAY + INITIATED_HOUR * 3600
    return PAID if arrival <= store.now else IN_TRANSIT


def rebuild_payouts(store: Store) -> None:
    if "payouts" not in store.tables:
        store.new_table("payouts")
    store.table("payouts").set_columns(compute_payouts(store))
