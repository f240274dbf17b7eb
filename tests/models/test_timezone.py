"""The reporting day is the local day in --timezone, converted from UTC across DST changes."""

from __future__ import annotations

import datetime as dt

from models_helpers import fetch_dicts, ts

from creator_sync.models.runner import run_models

SITE = "3000000001"


def _txn(tid: str, created: str, amount: int) -> dict:
    return {"id": tid, "site_id": SITE, "created_at": ts(created), "action": "charge",
            "amount_in_cents": amount, "currency": "USD"}


ROWS = {
    "transactions": [
        # 03:00 UTC on Mar 10 is 22:00 EST on Mar 9 (UTC-5).
        _txn("T1", "2024-03-10T03:00:00+00:00", 100),
        # DST starts Mar 10 at 02:00 local: 03:00 UTC on Mar 11 is 23:00 EDT on Mar 10 (UTC-4).
        _txn("T2", "2024-03-11T03:00:00+00:00", 200),
        # 05:00 UTC on Mar 11 is 01:00 EDT on Mar 11.
        _txn("T3", "2024-03-11T05:00:00+00:00", 400),
        # An offset other than UTC in the source is the same instant: 2024-03-11T00:30-04:00.
        _txn("T4", "2024-03-11T00:30:00-04:00", 800),
    ],
}


def _daily(path: str) -> dict[dt.date, int]:
    rows = fetch_dicts(path, "select date_day, net_in_cents from analytics.revenue_daily")
    return {r["date_day"]: r["net_in_cents"] for r in rows}


def test_0300_utc_lands_on_the_previous_day_in_new_york(raw_db) -> None:
    path = raw_db(ROWS)
    run_models(path, timezone="America/New_York")
    daily = _daily(path)
    assert daily[dt.date(2024, 3, 9)] == 100
    assert daily[dt.date(2024, 3, 10)] == 200
    assert daily[dt.date(2024, 3, 11)] == 400 + 800
    # the spine ends at the latest transaction's local day, Mar 11
    assert sorted(daily) == [dt.date(2024, 3, 9), dt.date(2024, 3, 10), dt.date(2024, 3, 11)]


def test_same_data_in_utc_uses_utc_days(raw_db) -> None:
    path = raw_db(ROWS)
    run_models(path, timezone="UTC")
    daily = _daily(path)
    assert daily == {dt.date(2024, 3, 10): 100, dt.date(2024, 3, 11): 200 + 400 + 800}


def test_month_boundary_follows_the_zone(raw_db) -> None:
    # 02:00 UTC on Apr 1 is 22:00 EDT on Mar 31: March revenue in New York, April in UTC.
    path = raw_db({"transactions": [_txn("T1", "2024-04-01T02:00:00+00:00", 500)]})
    run_models(path, timezone="America/New_York")
    assert _daily(path) == {dt.date(2024, 3, 31): 500}
