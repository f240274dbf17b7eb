"""The documented payout rule, recomputed from transactions whenever data or the clock moves.

Net settlement of a platform_payments transaction (`settlement_amount - settlement_fee`) becomes
payable on its UTC creation date + `settlement_delay_days`. Each site gets at most one payout per
UTC day (settlement currency USD) carrying the whole balance payable on or before that day that no
earlier non-failed, non-canceled payout carried, and only when that balance is positive.
"""

from __future__ import annotations

import hashlib

import numpy as np

from sandbox.dataset import DAY, Store
from sandbox.rollups import NULL_INT

INITIATED_HOUR = 0  # payouts are initiated at 00:00 UTC of their day
ARRIVAL_DAYS = 2
FAILED_RATE = 0.02
CANCELED_RATE = 0.01
EPOCH_2000_DAY = 10_957  # 2000-01-01 as days since 1970-01-01, for compact payout ids
# status codes index sandbox.vocab.PAYOUT_STATUS
PENDING, IN_TRANSIT, PAID, FAILED, CANCELED = range(5)


def _unit(seed: int, site: int, day: int) -> float:
    """A stable uniform draw per (seed, site, day): statuses must not change on a rebuild."""
    digest = hashlib.blake2b(f"{seed}:{site}:{day}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def payable(store: Store) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(site, payable day, net cents) of every settled platform_payments transaction."""
    txn, customers = store.table("transactions"), store.table("customers")
    settled = txn.cols["settlement_amount"] != NULL_INT
    net = txn.cols["settlement_amount"][settled] - txn.cols["settlement_fee"][settled]
    day = txn.cols["created_at"][settled] // DAY + store.settlement_delay_days
    site = customers.cols["site"][txn.cols["customer"][settled]]
    return site, day, net


def compute_payouts(store: Store) -> dict[str, np.ndarray]:
    """Apply the rule day by day per site; returns the payout table's columns."""
    today = store.now // DAY
    site, day, net = payable(store)
    rows: dict[str, list] = {"site": [], "day": [], "amount_cents": [], "status": []}
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
            made += 1
            rows["site"].append(s)
            rows["day"].append(d)
            rows["amount_cents"].append(balance)
            rows["status"].append(status)
            if status not in (FAILED, CANCELED):
                carried += balance
    site_arr = np.asarray(rows["site"], np.int64)
    day_arr = np.asarray(rows["day"], np.int64)
    order = np.lexsort((site_arr, day_arr))
    ids = store.table("platform_payments_payouts").id_base + (day_arr - EPOCH_2000_DAY) * 1000 + site_arr
    return {
        "_id": ids[order],
        "site": site_arr[order],
        "day": day_arr[order],
        "amount_cents": np.asarray(rows["amount_cents"], np.int64)[order],
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
    if "platform_payments_payouts" not in store.tables:
        store.new_table("platform_payments_payouts")
    store.table("platform_payments_payouts").set_columns(compute_payouts(store))
