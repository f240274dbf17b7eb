"""The payout rule, re-derived here in plain Python from the transactions."""

from __future__ import annotations

from collections import defaultdict

import pytest

from creator_sync.sandbox.generate import NULL_INT, generate
from creator_sync.sandbox.options import parse_now
from creator_sync.sandbox.payouts import (
    CANCELED,
    FAILED,
    IN_TRANSIT,
    PAID,
    PENDING,
    compute_payouts,
)

NOW = parse_now("2026-03-01T12:00:00Z")
DAY = 86_400


def reference(store, delay: int) -> dict[int, list[tuple[int, int]]]:
    """site -> [(day, balance)] of every payout the rule makes, statuses taken as given."""
    t, customers = store.tables["transactions"].cols, store.tables["customers"].cols
    due: dict[int, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    for k in range(len(t["created_at"])):
        if t["settlement_amount"][k] == NULL_INT:
            continue
        site = int(customers["site"][t["customer"][k]])
        day = int(t["created_at"][k]) // DAY + delay
        due[site][day] += int(t["settlement_amount"][k] - t["settlement_fee"][k])
    return due


@pytest.mark.parametrize("delay", [2, 0, 5])
def test_each_payout_carries_the_uncarried_payable_balance(delay):
    store = generate(42, "tiny", 2, NOW, settlement_delay_days=delay)
    got = compute_payouts(store)
    due = reference(store, delay)
    today = NOW // DAY
    for site, per_day in due.items():
        mine = got["site"] == site
        days = got["day"][mine].tolist()
        amounts = got["amount_cents"][mine].tolist()
        statuses = got["status"][mine].tolist()
        assert days == sorted(set(days)), "at most one payout per site per day"
        payable = carried = 0
        expected = []
        for day in range(min(per_day), today + 1):
            payable += per_day.get(day, 0)
            if payable - carried > 0:
                expected.append((day, payable - carried))
                status = statuses[len(expected) - 1]
                if status not in (FAILED, CANCELED):
                    carried += payable - carried
        assert list(zip(days, amounts, strict=True)) == expected


def test_statuses_follow_the_clock():
    store = generate(42, "tiny", 2, NOW)
    got = compute_payouts(store)
    today = NOW // DAY
    for day, arrival, status in zip(got["day"].tolist(), got["arrival_at"].tolist(),
                                    got["status"].tolist(), strict=True):
        if day == today:
            assert status == PENDING
        elif status not in (FAILED, CANCELED):
            assert status == (PAID if arrival <= NOW else IN_TRANSIT)
    assert {PENDING, IN_TRANSIT, PAID, FAILED, CANCELED} <= set(got["status"].tolist())


def test_failed_funds_roll_into_the_next_payout():
    store = generate(42, "tiny", 2, NOW)
    got = compute_payouts(store)
    for site in set(got["site"].tolist()):
        mine = got["site"] == site
        amounts, statuses = got["amount_cents"][mine], got["status"][mine]
        for k in range(len(amounts) - 1):
            if statuses[k] in (FAILED, CANCELED):
                assert amounts[k + 1] >= amounts[k]


def test_a_later_clock_settles_pending_payouts():
    early = compute_payouts(generate(42, "tiny", 2, NOW))
    store = generate(42, "tiny", 2, NOW)
    store.now = NOW + 5 * DAY
    late = compute_payouts(store)
    pending_ids = set(early["_id"][early["status"] == PENDING].tolist())
    late_status = dict(zip(late["_id"].tolist(), late["status"].tolist(), strict=True))
    assert pending_ids
    assert all(late_status[i] in (PAID, FAILED, CANCELED) for i in pending_ids)


@pytest.mark.parametrize("delay", [2, 0])
@pytest.mark.parametrize("corrections", [False, True])
def test_line_rows_net_to_each_payout_amount(delay, corrections):
    from creator_sync.sandbox.payouts import line_rows, rebuild_payouts

    store = generate(42, "demo", 2, NOW, settlement_delay_days=delay,
                     payout_corrections=corrections)
    rebuild_payouts(store)
    cols = store.tables["payouts"].cols
    t = store.tables["transactions"].cols
    for row in range(len(cols["_id"])):
        rows = line_rows(store, row)
        net = int((t["settlement_amount"][rows] - t["settlement_fee"][rows]).sum())
        assert net + int(cols["correction_cents"][row]) == int(cols["amount_cents"][row])
        if cols["status"][row] in (FAILED, CANCELED):
            assert cols["correction_cents"][row] == 0
    assert bool(cols["correction_cents"].any()) == corrections
