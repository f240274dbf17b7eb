"""The source's `bookkeeping` resource (sources/creator_platform/bookkeeping.py) on its own: each
table's new content keeps what today's rules keep, and a `replace` to an empty content empties
the table (a resource whose last record set aside loads now)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import dlt
import duckdb

from creator_sync.sources.creator_platform import Outcome, RunReport
from creator_sync.sources.creator_platform.bookkeeping import (
    Bookkeeping,
    api_totals_rows,
    rejected_records_rows,
    sync_resources_rows,
)
from creator_sync.sources.creator_platform.run import ApiTotal

T0 = datetime(2026, 2, 1, tzinfo=UTC)
T1 = datetime(2026, 3, 1, tzinfo=UTC)


def test_a_resource_that_did_not_sync_keeps_its_last_completed_run_and_others_their_rows():
    previous = [
        {"resource": "payouts", "status": "synced", "reason": None, "last_attempt_at": T0,
         "last_synced_at": T0, "rows_loaded": 3, "complete_through_at": T0},
        {"resource": "courses", "status": "synced", "reason": None, "last_attempt_at": T0,
         "last_synced_at": T0, "rows_loaded": 1, "complete_through_at": T0},
    ]
    outcomes = {"payouts": Outcome("failed", "404"), "orders": Outcome("synced")}
    rows = {r["resource"]: r for r in sync_resources_rows(
        outcomes, {"orders": 7}, T1, {"orders": T1}, previous)}
    assert rows["courses"] == previous[1]  # not selected: as it was
    assert (rows["payouts"]["status"], rows["payouts"]["reason"]) == ("failed", "404")
    assert rows["payouts"]["last_attempt_at"] == T1
    assert rows["payouts"]["last_synced_at"] == rows["payouts"]["complete_through_at"] == T0
    assert rows["payouts"]["rows_loaded"] == 0
    assert rows["orders"]["last_synced_at"] == rows["orders"]["complete_through_at"] == T1
    assert rows["orders"]["rows_loaded"] == 7
    # never completed, failed now: nulls
    [row] = sync_resources_rows({"me": Outcome("skipped", "scope")}, {}, T1, {}, None)
    assert row["last_synced_at"] is None and row["complete_through_at"] is None


def test_rejected_records_of_each_resource_read_are_replaced_and_unchanged_is_not_written():
    entry = {"field": "amount", "value": "n/a", "reason": "not a number", "at": T0.isoformat()}
    stored = [{"resource": "payouts", "site_id": "s1", "record_id": "p1", "field": "amount",
               "value": "n/a", "reason": "not a number", "rejected_at": T0},
              {"resource": "courses", "site_id": "s1", "record_id": "c1", "field": "price",
               "value": "x", "reason": "not a number", "rejected_at": T0}]
    synced = {"payouts": Outcome("synced")}
    # the same record still set aside: nothing to write
    assert rejected_records_rows({"payouts": {"s1": {"p1": entry}}}, synced, stored) is None
    # it loads now: payouts' rows go, courses' (not read) stay
    assert rejected_records_rows({"payouts": {"s1": {}}}, synced, stored) == [stored[1]]
    # payouts failed: its rows stay
    assert rejected_records_rows({"payouts": {"s1": {}}}, {"payouts": Outcome("failed")},
                                 stored) is None
    # nothing ever set aside: no table
    assert rejected_records_rows({"payouts": {"s1": {}}}, synced, None) is None


def test_api_totals_of_listings_read_whole_are_replaced_per_resource_and_site():
    stored = [{"resource": "sites", "site_id": None, "table_name": "sites", "api_total": 1,
               "first_page_total": 1, "read_at": T0, "listing_started_at": T0,
               "no_total_reason": None},
              {"resource": "courses", "site_id": "s1", "table_name": "courses", "api_total": 4,
               "first_page_total": 4, "read_at": T0, "listing_started_at": T0,
               "no_total_reason": None}]
    assert api_totals_rows({}, stored) is None  # no complete listing: left as it is
    rows = api_totals_rows({("sites", None): ApiTotal("sites", 2, 2, T1, T1)}, stored)
    assert sorted((r["resource"], r["api_total"]) for r in rows) == [("courses", 4), ("sites", 2)]


def test_a_table_emptied_by_the_run_is_emptied_in_the_warehouse_in_the_same_load(tmp_path: Path):
    db = tmp_path / "b.duckdb"
    pipeline = dlt.pipeline("books", destination=dlt.destinations.duckdb(str(db)),
                            dataset_name="raw", pipelines_dir=str(tmp_path / "pipelines"))

    def run(rejected: dict) -> None:
        report = RunReport()
        report.set_outcome("payouts", "synced")
        report.rejected["payouts"] = rejected
        pipeline.run(Bookkeeping(report, datetime.now(UTC)).resource(lambda: ["bookkeeping"]))

    entry = {"field": "amount", "value": "n/a", "reason": "not a number", "at": T0.isoformat()}
    run({"s1": {"p1": entry}})
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("select record_id from raw.rejected_records").fetchall() == [("p1",)]
    run({"s1": {}})  # the record loads now: the table empties
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("select count(*) from raw.rejected_records").fetchall() == [(0,)]
        assert con.execute("select resource, status from raw.sync_resources").fetchall() == [
            ("payouts", "synced")]


def test_a_table_dlt_drops_at_this_load_is_filled_again_unchanged_or_not():
    """`refresh="drop_resources"` drops `bookkeeping`'s tables too: one it would leave as it is
    is yielded whole again."""
    stored = {"api_totals": [{"resource": "courses", "site_id": "s1", "table_name": "courses",
                              "api_total": 4, "first_page_total": 4, "read_at": T0,
                              "listing_started_at": T0, "no_total_reason": None}]}
    books = Bookkeeping(RunReport(), T1)
    assert books._content({}, {}, stored, set()) == {}
    assert books._content({}, {}, stored, {"api_totals"}) == stored
