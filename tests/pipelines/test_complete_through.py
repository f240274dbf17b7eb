"""Issue 16 point 5: `sync_resources.complete_through_at` is the platform's clock when the
listing of the last completed run began, so the models judge the last day and staleness on
the platform's clock (a sandbox with a fixed clock is neither stale nor complete past it)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import duckdb
import pytest
from sandbox_helpers import query, sync

from creator_sync.sandbox.testing import start_sandbox

PLATFORM_NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def sandbox():
    handle = start_sandbox(scale="tiny", sites=2, seed=5, now=PLATFORM_NOW.isoformat())
    yield handle
    handle.stop()


def through(db, resource: str) -> datetime | None:
    [(value,)] = query(db, "select complete_through_at from wh.creator_platform.sync_resources "
                           "where resource = ?", resource)
    return value.astimezone(UTC) if value is not None else None


def test_platform_clock_recorded_and_kept_when_a_resource_fails(sandbox, tmp_path):
    db = tmp_path / "wh.duckdb"
    sync(sandbox, db, resources=("transactions", "payouts"))
    first = through(db, "transactions")
    # the sandbox's clock (its `Date` header), not this machine's, and before the listing ended
    assert first is not None and abs(first - PLATFORM_NOW) < timedelta(minutes=10)
    assert abs(datetime.now(UTC) - first) > timedelta(days=1)
    payouts = through(db, "payouts")
    assert payouts is not None

    # payouts fail (wrong path): they keep the instant of their last completed run
    result = sync(sandbox, db, resources=("transactions", "payouts"), payouts_path="/nope_payouts")
    assert "payouts" in result.failed
    assert through(db, "payouts") == payouts
    assert through(db, "transactions") >= first


def test_a_table_from_before_the_column_gains_it(sandbox, tmp_path):
    db = tmp_path / "wh.duckdb"
    sync(sandbox, db, resources=("products",))
    with duckdb.connect(str(db)) as con:
        con.execute("alter table wh.creator_platform.sync_resources drop column complete_through_at")
    sync(sandbox, db, resources=("products",))
    assert through(db, "products") is not None
