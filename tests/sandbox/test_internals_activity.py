"""Activity is deterministic, keeps the invariants, and moves the clock."""

from __future__ import annotations

import numpy as np

from creator_sync.sandbox import virtuals
from creator_sync.sandbox.activity import Activity
from creator_sync.sandbox.generate import generate
from creator_sync.sandbox.options import parse_now
from creator_sync.sandbox.payouts import PENDING

NOW = parse_now("2026-03-01T12:00:00Z")


def advanced(seed: int, calls: list[int]):
    store = generate(seed, "tiny", 2, NOW)
    virtuals.install(store)
    activity = Activity(store, seed, seconds_per_event=3600)
    results = [activity.run(count) for count in calls]
    return store, results


def test_same_seed_and_calls_same_data():
    a, ra = advanced(5, [20, 7, 30])
    b, rb = advanced(5, [20, 7, 30])
    assert [r[0] for r in ra] == [r[0] for r in rb]
    assert [r[1] for r in ra] == [r[1] for r in rb]
    for name, table in a.tables.items():
        for col, values in table.cols.items():
            assert np.array_equal(values, b.tables[name].cols[col]), (name, col)
    for name, link in a.links.items():
        assert np.array_equal(link.parent, b.links[name].parent), name
        assert np.array_equal(link.child, b.links[name].child), name


def test_activity_adds_records_in_creation_order_and_moves_the_clock():
    store = generate(6, "tiny", 2, NOW)
    virtuals.install(store)
    before = {n: t.n for n, t in store.tables.items()}
    summary, events = Activity(store, 6, 3600).run(50)
    assert store.now == NOW + 50 * 3600 == summary["now"]
    for name in ("contacts", "purchases", "transactions", "form_submissions"):
        table = store.tables[name]
        assert table.n > before[name], name
        assert np.all(np.diff(table.cols["created_at"]) >= 0), name
    assert {e[0] for e in events} >= {"purchase", "payment_succeeded", "tag_added",
                                      "form_submission"}


def test_invariants_hold_after_activity():
    store, _ = advanced(9, [40, 40])
    txn, customers = store.tables["transactions"].cols, store.tables["customers"]
    total = np.zeros(customers.n, np.int64)
    np.add.at(total, txn["customer"][txn["listed"]], txn["amount_in_cents"][txn["listed"]])
    assert np.array_equal(total, customers.cols["net_revenue_cents"])
    rows = np.arange(customers.n)
    assert customers.values("email", rows) == store.tables["contacts"].values(
        "email", customers.cols["contact"])
    payouts = store.tables["payouts"].cols
    today = store.now // 86_400
    assert set(payouts["status"][payouts["day"] == today].tolist()) <= {PENDING}
    assert (payouts["day"] <= today).all()


def test_subscriptions_renew_on_schedule_as_the_clock_moves():
    store = generate(12, "tiny", 2, NOW)
    virtuals.install(store)
    summary, events = Activity(store, 12, 3600).run(20, advance_seconds=70 * 86_400)
    assert summary.get("renewal", 0) > 0
    assert sum(e[0] == "payment_succeeded" for e in events) >= summary["renewal"]
    p, t = store.tables["purchases"].cols, store.tables["transactions"].cols
    charged = (t["action"] == 3) & (t["state"] == 1)
    for row in np.flatnonzero(np.isin(p["ptype"], (1, 2)) & (p["deactivated_at"] == -1)):
        times = np.sort(t["created_at"][charged & (t["purchase"] == row)])
        period = (30 if p["ptype"][row] == 1 else 365) * 86_400
        assert times[-1] + period > store.now, f"purchase {row} is overdue"
        assert np.all(np.diff(times) >= period), f"purchase {row} charged early"
