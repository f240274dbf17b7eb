"""Generator invariants checked against the columns themselves (no server)."""

from __future__ import annotations

import numpy as np
import pytest

from creator_sync.sandbox import virtuals
from creator_sync.sandbox.dataset import TYPES
from creator_sync.sandbox.generate import NULL_INT, generate
from creator_sync.sandbox.options import parse_now
from creator_sync.sandbox.store import NULL

NOW = parse_now("2026-03-01T12:00:00Z")


@pytest.fixture(scope="module")
def store():
    built = generate(42, "tiny", 2, NOW)
    virtuals.install(built)
    return built


def test_same_seed_same_columns_other_seed_differs():
    a, b, c = (generate(seed, "tiny", 2, NOW) for seed in (7, 7, 8))
    for name, table in a.tables.items():
        assert table.n == b.tables[name].n, name
        for col, values in table.cols.items():
            assert np.array_equal(values, b.tables[name].cols[col]), (name, col)
    assert not np.array_equal(a.tables["contacts"].cols["first"][:50],
                              c.tables["contacts"].cols["first"][:50])


def test_sizes_follow_the_scale():
    tiny = generate(1, "tiny", 2, NOW).total_records()
    demo = generate(1, "demo", 2, NOW).total_records()
    assert 350 <= tiny <= 900, tiny
    assert 7_000 <= demo <= 14_000, demo


def test_ids_are_ten_digit_and_unique_across_types(store):
    seen: set[str] = set()
    for name in TYPES:
        if name == "users":  # /v1/me's users are fixed (sandbox.account), not a table
            continue
        table = store.tables[name]
        ids = table.ids(np.arange(table.n))
        assert all(len(i) == 10 and int(i) > 2**31 for i in ids), name
        assert not seen & set(ids), name
        seen |= set(ids)


def test_timestamps_stay_before_the_clock_and_rows_are_in_creation_order(store):
    for name in ("contacts", "customers", "purchases", "transactions", "orders",
                 "form_submissions"):
        created = store.tables[name].cols["created_at"]
        assert created.max() <= NOW, name
        assert np.all(np.diff(created) >= 0), f"{name}: ids are not in creation order"
        assert created.min() >= NOW - 560 * 86400, name


def test_customer_has_contact_with_same_email(store):
    customers, contacts = store.tables["customers"], store.tables["contacts"]
    rows = np.arange(customers.n)
    assert customers.values("email", rows) == contacts.values(
        "email", customers.cols["contact"])
    assert np.array_equal(contacts.cols["customer"][customers.cols["contact"]], rows)


def test_net_revenue_is_the_sum_of_listed_transactions(store):
    txn, customers = store.tables["transactions"], store.tables["customers"]
    expected = {}
    for c, amount, listed in zip(txn.cols["customer"].tolist(),
                                 txn.cols["amount_in_cents"].tolist(),
                                 txn.cols["listed"].tolist(), strict=True):
        if listed:
            expected[c] = expected.get(c, 0) + amount
    got = customers.cols["net_revenue_cents"].tolist()
    assert got == [expected.get(c, 0) for c in range(customers.n)]


def test_transaction_classes_and_settlement_fields(store):
    t = store.tables["transactions"].cols
    listed = t["listed"]
    # refunds and disputes are negative; every hidden class exists internally
    assert (t["amount_in_cents"][listed & np.isin(t["action"], (1, 6))] < 0).all()
    assert (~listed & (t["action"] == 5)).any(), "test transactions"
    assert (~listed & (t["state"] == 2)).any(), "failed transactions"
    assert (~listed & (t["state"] == 0)).any(), "pending transactions"
    settled = t["settlement_amount"] != NULL_INT
    assert np.array_equal(settled, listed & (t["provider"] == 0))
    assert (t["payment_fee"][~settled] == NULL_INT).all()


def test_subscription_charges_stop_at_deactivation(store):
    p, t = store.tables["purchases"].cols, store.tables["transactions"].cols
    charges = (t["action"] == 3) & (t["state"] == 1)
    for row in np.flatnonzero(np.isin(p["ptype"], (1, 2))).tolist():
        times = t["created_at"][charges & (t["purchase"] == row)]
        assert len(times) >= 1
        period = 30 if p["ptype"][row] == 1 else 365
        assert np.all(np.diff(np.sort(times)) == period * 86400)
        if p["deactivated_at"][row] != NULL:
            assert times.max() <= p["deactivated_at"][row]


def test_orders_add_up(store):
    o, i = store.tables["orders"].cols, store.tables["order_items"].cols
    for name in ("subtotal", "discount", "tax", "total"):
        sums = np.bincount(i["order"], weights=i[name], minlength=len(o["total"]))
        assert np.array_equal(sums.astype(np.int64), o[name]), name
    assert np.array_equal(o["total"], o["subtotal"] - o["discount"] + o["tax"])


def test_offers_in_three_currencies_and_each_site_has_a_default_form(store):
    assert set(store.tables["offers"].cols["currency"].tolist()) == {0, 1, 2}
    forms = store.tables["forms"].cols
    for site in range(store.tables["sites"].n):
        assert forms["default"][forms["site"] == site].sum() == 1


def test_a_large_course_exists_for_the_quirk(store):
    lessons = np.bincount(store.tables["lessons"].cols["course"])
    assert lessons.max() > 30
