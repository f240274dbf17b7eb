"""The API's totals in `data_coverage` (issue 40, point 6): raw `api_totals` summed over sites
beside the records loaded; equal is matched, a difference is flagged with its reason, and a
warehouse without the table (synced before it existed) has no total, not a faked match."""

from __future__ import annotations

import datetime as dt

from models_helpers import fetch_dicts
from test_coverage import AS_OF, SYNCED, rows_with, sync_row
from test_rejected_coverage import _rejected

from creator_sync.models.runner import run_models


def _total(resource: str, site: str, total: int | None, first: int | None = None) -> dict:
    return {"resource": resource, "site_id": site, "table_name": resource, "api_total": total,
            "first_page_total": total if first is None else first, "read_at": SYNCED,
            "listing_started_at": SYNCED, "no_total_reason": None}


def _coverage(raw_db, rows, name: str = "raw.duckdb") -> dict[str, dict]:
    path = raw_db(rows, name)
    run_models(path, as_of=AS_OF)
    return {r["resource"]: r for r in fetch_dicts(path, "select * from analytics.data_coverage")}


def _synced():
    return rows_with(sync_row("transactions"), sync_row("purchases"), sync_row("payouts"))


def test_totals_equal_to_the_records_match_and_a_difference_says_why(raw_db) -> None:
    rows = _synced()
    counts = {name: c["records_count"] for name, c in _coverage(raw_db, rows).items()}
    rows["api_totals"] = [
        _total("transactions", "1", counts["transactions"] - 1), _total("transactions", "2", 1),
        _total("purchases", "1", counts["purchases"] + 3, first=counts["purchases"]),
        _total("payouts", "1", counts["payouts"] + 1),
    ]
    rows["rejected_records"] = [_rejected()]
    coverage = _coverage(raw_db, rows, "with_totals.duckdb")
    transactions = coverage["transactions"]
    assert (transactions["api_total"], transactions["is_total_matched"]) == (counts["transactions"], True)
    assert transactions["total_mismatch_reason"] is None and transactions["api_total_read_at"]
    purchases = coverage["purchases"]
    assert purchases["is_total_matched"] is False
    assert purchases["total_mismatch_reason"] == (
        "3 fewer record(s) than the API's total: the listing changed while it was read")
    payouts = coverage["payouts"]
    assert payouts["is_total_matched"] is False
    assert payouts["total_mismatch_reason"] == (
        "1 fewer record(s) than the API's total: 1 set aside in rejected_records")


def test_no_totals_recorded_is_no_total_not_a_match(raw_db) -> None:
    rows = _synced()
    rows["api_totals"] = [_total("payouts", "1", 1), _total("payouts", "2", None)]
    coverage = _coverage(raw_db, rows)
    assert coverage["payouts"]["api_total"] is None  # a site without one: the sum is unknown
    assert all(c["is_total_matched"] is None and c["total_mismatch_reason"] is None
               for c in coverage.values())


def test_records_created_since_the_total_was_read_are_beside_it_not_against_it(raw_db) -> None:
    """An incremental sync after the full listing lands records the total predates: the total
    is compared with the records created by the time it was read (payouts by their day), as
    `creator-sync status` does; one missing among those still mismatches."""
    rows = _synced()
    created = sorted({t["id"]: t["created_at"] for t in rows["transactions"]}.values())
    read_at = created[-4] + dt.timedelta(hours=1)  # some created after the total was read
    since = sum(c > read_at for c in created)
    days = sorted({p["id"]: p["initiated_date"] for p in rows["payouts"]}.values())
    payouts_read = days[-3].replace(hour=23)  # payouts of later days
    payouts_since = sum(d.date() > payouts_read.date() for d in days)
    assert since and payouts_since
    rows["api_totals"] = [
        {**_total("transactions", "1", len(created) - since), "read_at": read_at},
        {**_total("payouts", "1", len(days) - payouts_since), "read_at": payouts_read},
        {**_total("purchases", "1", len(rows["purchases"]) + 1),
         "read_at": max(p["created_at"] for p in rows["purchases"])},
    ]
    coverage = _coverage(raw_db, rows, "since.duckdb")
    for name in ("transactions", "payouts"):
        assert coverage[name]["is_total_matched"] is True, coverage[name]
        assert coverage[name]["total_mismatch_reason"] is None
    assert coverage["purchases"]["is_total_matched"] is False  # one the API counts is missing
    assert coverage["purchases"]["total_mismatch_reason"] == (
        "1 fewer record(s) than the API's total: unexplained")
    rows["api_totals"][0].update(api_total=len(created) - since - 1,  # one extra it counts
                                 first_page_total=len(created) - since - 1)
    transactions = _coverage(raw_db, rows, "extra.duckdb")["transactions"]
    assert transactions["is_total_matched"] is False
    assert transactions["total_mismatch_reason"] == ("1 more record(s) than the API's total "
                                                     f"(not counting {since} created since it "
                                                     "was read): "
                                                     "unexplained")
