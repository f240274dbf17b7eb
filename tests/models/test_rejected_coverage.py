"""Records set aside (issue 40, point 4): `data_coverage` counts raw `rejected_records`, a
resource with one is not complete, and the marts built on it carry the reason as for a failed
resource; amounts a loader rounded to the cent (`*_raw` kept) are not whole cents."""

from __future__ import annotations

from decimal import Decimal

from models_helpers import fetch_dicts
from test_coverage import NOW, SYNCED, built, rows_with, sync_row

from creator_sync.models.headline import format_headline, headline_figures

REASON = "payouts: 1 record(s) set aside, a value that cannot be read (rejected_records)"


def _rejected(resource: str = "payouts") -> dict:
    return {"resource": resource, "site_id": "1", "record_id": "p-bad", "field": "amount",
            "value": "n/a", "reason": "bad decimal value 'n/a': not a number",
            "rejected_at": SYNCED}


def _synced() -> tuple[dict, ...]:
    return sync_row("transactions"), sync_row("purchases"), sync_row("payouts")


def test_a_record_set_aside_makes_its_resource_incomplete(raw_db) -> None:
    rows = rows_with(*_synced())
    rows["rejected_records"] = [_rejected()]
    path = built(raw_db, rows)
    coverage = {r["resource"]: r for r in fetch_dicts(path, "select * from analytics.data_coverage")}
    payouts = coverage["payouts"]
    assert (payouts["rejected_count"], payouts["is_complete"]) == (1, False)
    assert payouts["incomplete_reason"] == REASON
    assert coverage["transactions"]["rejected_count"] == 0 and coverage["transactions"]["is_complete"]
    (reconciliation, *_) = fetch_dicts(
        path, "select * from analytics.payout_reconciliation limit 1")
    assert reconciliation["verdict_unavailable_reason"] == REASON
    figures = headline_figures(path, now=NOW)
    assert figures["unreconciled_payouts"] is None
    assert figures["unavailable"]["unreconciled_payouts"] == REASON
    assert figures["net_revenue_last_30_days_in_cents"] is not None  # transactions are complete
    lines = format_headline(figures)
    assert any(line.startswith("Payouts:") and "1 record(s) set aside in rejected_records" in line
               for line in lines), lines


def test_without_records_set_aside_the_resource_stays_complete(raw_db) -> None:
    rows = rows_with(*_synced())
    rows["rejected_records"] = [_rejected("customers")]  # not a resource the figures read
    path = built(raw_db, rows)
    (payouts,) = fetch_dicts(path, "select * from analytics.data_coverage where resource = 'payouts'")
    assert (payouts["rejected_count"], payouts["is_complete"], payouts["incomplete_reason"]) == \
        (0, True, None)


def test_an_amount_rounded_by_the_loader_is_not_whole_cents(raw_db) -> None:
    rows = rows_with(*_synced())
    first = dict(rows["payouts"][0])
    first.update(amount=Decimal("3.30"), amount_raw="3.3000000000000003")
    rows["payouts"] = [first, *rows["payouts"][1:]]
    path = built(raw_db, rows)
    got = {r["payout_id"]: r for r in fetch_dicts(
        path, "select payout_id, amount_in_cents, is_whole_cents from analytics.fct_payouts")}
    assert got[str(first["id"])]["amount_in_cents"] == 330
    assert got[str(first["id"])]["is_whole_cents"] is False
    assert sum(not r["is_whole_cents"] for r in got.values()) == 1
