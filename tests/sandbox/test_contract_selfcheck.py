"""The suite's own checkers must be able to fail: each is fed a small wrong input and must raise.
(A contract check that cannot fail proves nothing about the sandbox.)"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sandbox_contract_helpers import assert_sorted, cents, check_payout_rule, pick_needle


def _rec(rid: int, **attributes) -> dict:
    return {"id": str(rid), "type": "x", "attributes": attributes, "relationships": {}}


def test_assert_sorted_catches_disorder_and_bad_ties():
    ok = [_rec(3_000_000_001, n=1), _rec(3_000_000_002, n=1), _rec(3_000_000_000, n=2)]
    assert_sorted(ok, "n", descending=False)
    with pytest.raises(AssertionError):
        assert_sorted(list(reversed(ok)), "n", descending=False)
    mixed = [_rec(3_000_000_002, n=1), _rec(3_000_000_001, n=1), _rec(3_000_000_003, n=2),
             _rec(3_000_000_004, n=2)]
    with pytest.raises(AssertionError, match="ties"):
        assert_sorted(mixed, "n", descending=False)
    with pytest.raises(AssertionError, match="nulls"):
        assert_sorted([_rec(3_000_000_001, n=1), _rec(3_000_000_002, n=None), _rec(3_000_000_003, n=2)],
                      "n", descending=False)
    nulls_first = [_rec(3_000_000_001, n=None), _rec(3_000_000_002, n=1)]
    assert_sorted(nulls_first, "n", descending=True)
    with pytest.raises(AssertionError, match="wrong end"):
        assert_sorted(nulls_first, "n", descending=False)


def _tx(day: str, settle: int, fee: int) -> dict:
    return _rec(3_100_000_000, provider="platform_payments", created_at=f"{day}T10:00:00Z",
                settlement_amount_in_cents=settle, settlement_fee_amount_in_cents=fee,
                settlement_currency="USD")


def _payout(day: str, amount: str, status: str) -> dict:
    return _rec(3_200_000_000 + int(day[-2:]), status=status, amount=amount, currency="USD",
                initiated_date=f"{day}T09:00:00Z", estimated_arrival_date=f"{day[:-2]}{int(day[-2:]) + 2:02d}T09:00:00Z")


NOW = datetime(2025, 1, 20, 12, tzinfo=UTC)


def test_payout_rule_checker():
    txs = [_tx("2025-01-01", 10_000, 300), _tx("2025-01-05", 5_000, 150)]
    good = [_payout("2025-01-03", "97.00", "failed"), _payout("2025-01-07", "145.50", "paid")]
    assert check_payout_rule(txs, good, NOW)["paid"] == 1
    for wrong in (
        [_payout("2025-01-03", "97.00", "paid"), _payout("2025-01-07", "145.50", "paid")],  # no roll
        [_payout("2025-01-03", "97.01", "paid")],  # a cent off
        [_payout("2025-01-02", "97.00", "paid")],  # before payable
        [_payout("2025-01-03", "97.00", "in_transit")],  # status against the clock
    ):
        with pytest.raises(AssertionError):
            check_payout_rule(txs, wrong, NOW)


def test_cents_rejects_sub_cent_amounts():
    from decimal import Decimal

    assert cents(Decimal("12.30")) == 1230
    with pytest.raises(AssertionError):
        cents(Decimal("12.305"))


def test_pick_needle_discriminates():
    values = ["Alpha", "beta", "Gamma", None]
    needle = pick_needle(values)
    hits = [v for v in values if v and needle.lower() in v.lower()]
    assert 0 < len(hits) < 3
