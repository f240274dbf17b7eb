"""MRR against an independent Python computation of the same definitions on random data."""

from __future__ import annotations

import datetime as dt
import random
from collections import defaultdict

import pytest
from models_helpers import fetch_dicts

from creator_sync.models.runner import run_models

UTC = dt.UTC
SITE = "3000000001"
AS_OF = dt.date(2024, 12, 31)


def _month_starts(first: dt.date, last: dt.date) -> list[dt.date]:
    months, current = [], first.replace(day=1)
    while current <= last:
        months.append(current)
        current = (current + dt.timedelta(days=32)).replace(day=1)
    return months


def _random_book(seed: int):
    rnd = random.Random(seed)
    purchases, transactions, links = [], [], []
    for c in range(40):
        customer = f"C{c}"
        start = dt.datetime(2024, 1, 1, tzinfo=UTC) + dt.timedelta(hours=rnd.randrange(0, 24 * 300))
        for p in range(rnd.choice([1, 1, 2])):
            pid = f"P{c}_{p}"
            annual = rnd.random() < 0.3
            price = rnd.choice([990, 1000, 1999, 2500, 12000 if annual else 4900, 10001])
            begin = start + dt.timedelta(days=120 * p + rnd.randrange(0, 20))
            end = begin + dt.timedelta(days=rnd.randrange(5, 400)) if rnd.random() < 0.6 else None
            purchases.append({
                "id": pid, "site_id": SITE, "customer_id": customer, "currency": "USD",
                "payment_type": "subscription_annual" if annual else "subscription_monthly",
                "amount_in_cents": price, "created_at": begin, "deactivated_at": end,
            })
            step = dt.timedelta(days=365 if annual else 30)
            when, k = begin, 0
            while when < dt.datetime(2025, 1, 1, tzinfo=UTC) and (end is None or when < end):
                if rnd.random() < 0.15:
                    price = rnd.choice([990, 1500, 2500, 3000])
                tid = f"T{pid}_{k}"
                transactions.append({
                    "id": tid, "site_id": SITE, "customer_id": customer, "created_at": when,
                    "action": "subscription_charge", "amount_in_cents": price, "currency": "USD",
                })
                links.append({"purchase_id": pid, "transaction_id": tid, "site_id": SITE})
                when, k = when + step, k + 1
    return purchases, transactions, links


def _customer_mrr(purchases, transactions, links):
    """The reporting months, each customer's MRR per month and the active subscriptions per month,
    at each month's snapshot (also read by test_saas_metrics.py)."""
    charges = defaultdict(list)
    by_id = {t["id"]: t for t in transactions}
    for link in links:
        t = by_id[link["transaction_id"]]
        charges[link["purchase_id"]].append((t["created_at"], t["id"], t["amount_in_cents"]))
    first_day = min(min(p["created_at"] for p in purchases), min(t["created_at"] for t in transactions)).date()
    months = _month_starts(first_day, AS_OF)
    customer_mrr: dict[str, dict[dt.date, int]] = defaultdict(lambda: defaultdict(int))
    subs_count: dict[dt.date, int] = defaultdict(int)
    for month in months:
        nxt = (month + dt.timedelta(days=32)).replace(day=1)
        end_day = min(nxt, AS_OF + dt.timedelta(days=1))
        snapshot = dt.datetime.combine(end_day, dt.time(), UTC)
        for p in purchases:
            if not (p["created_at"] < snapshot and (p["deactivated_at"] is None or p["deactivated_at"] >= snapshot)):
                continue
            before = sorted(c for c in charges[p["id"]] if c[0] < snapshot)
            amount = before[-1][2] if before else p["amount_in_cents"]
            mrr = (amount * 2 + 12) // 24 if p["payment_type"] == "subscription_annual" else amount
            customer_mrr[p["customer_id"]][month] += mrr
            subs_count[month] += 1
    return months, customer_mrr, subs_count


def _expected(purchases, transactions, links):
    months, customer_mrr, subs_count = _customer_mrr(purchases, transactions, links)
    out: dict[dt.date, dict[str, int]] = {}
    first_paying = {c: min((m for m, v in ms.items() if v > 0), default=None) for c, ms in customer_mrr.items()}
    start = min(m for m in first_paying.values() if m is not None)
    for i, month in enumerate(months):
        if month < start:
            continue
        row = dict.fromkeys(("mrr", "new", "expansion", "contraction", "churned", "reactivation"), 0)
        for customer, first in first_paying.items():
            if first is None or month < first:
                continue
            cur = customer_mrr[customer].get(month, 0)
            prev = customer_mrr[customer].get(months[i - 1], 0) if i else 0
            row["mrr"] += cur
            if prev == 0 and cur > 0:
                row["new" if month == first else "reactivation"] += cur
            elif prev > 0 and cur == 0:
                row["churned"] -= prev
            elif prev > 0 and cur > prev:
                row["expansion"] += cur - prev
            elif prev > 0 and cur < prev:
                row["contraction"] += cur - prev
        row["active_subscriptions"] = subs_count[month]
        out[month] = row
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_mrr_matches_an_independent_computation(raw_db, seed: int) -> None:
    purchases, transactions, links = _random_book(seed)
    path = raw_db({"purchases": purchases, "transactions": transactions,
                   "purchases_transactions": links})
    result = run_models(path, as_of=AS_OF)
    assert not result.failed_tests
    rows = fetch_dicts(path, "select * from analytics.mrr_monthly order by date_month")
    got = {
        r["date_month"]: {
            "mrr": r["mrr_in_cents"], "new": r["new_mrr_in_cents"],
            "expansion": r["expansion_mrr_in_cents"], "contraction": r["contraction_mrr_in_cents"],
            "churned": r["churned_mrr_in_cents"], "reactivation": r["reactivation_mrr_in_cents"],
            "active_subscriptions": r["active_subscriptions"],
        }
        for r in rows
    }
    expected = _expected(purchases, transactions, links)
    assert got == expected
    # the movements are all exercised by this book
    assert all(any(m[k] for m in got.values()) for k in ("expansion", "contraction", "churned", "reactivation"))


def test_annual_normalisation_rounds_half_up_and_same_month_cancel_never_counts(raw_db) -> None:
    t0 = dt.datetime(2024, 1, 5, 12, tzinfo=UTC)
    path = raw_db({
        "purchases": [
            # 1818 / 12 = 151.5 -> 152 cents
            {"id": "A", "site_id": SITE, "customer_id": "C1", "payment_type": "subscription_annual",
             "amount_in_cents": 1818, "currency": "USD", "created_at": t0},
            # started and cancelled in January: no MRR (month-end snapshot)
            {"id": "B", "site_id": SITE, "customer_id": "C2", "payment_type": "subscription_monthly",
             "amount_in_cents": 5000, "currency": "USD", "created_at": t0,
             "deactivated_at": t0 + dt.timedelta(days=3)},
        ],
        "transactions": [{"id": "T", "site_id": SITE, "customer_id": "C1", "created_at": t0,
                          "action": "subscription_charge", "amount_in_cents": 1818, "currency": "USD"}],
        "purchases_transactions": [{"purchase_id": "A", "transaction_id": "T", "site_id": SITE}],
    })
    run_models(path, as_of=dt.date(2024, 1, 31))
    (row,) = fetch_dicts(path, "select * from analytics.mrr_monthly")
    assert (row["mrr_in_cents"], row["active_subscriptions"], row["active_customers"]) == (152, 1, 1)
