"""Incremental plans: filters per strategy, look-backs, periodic full refresh, cursor advance."""

from __future__ import annotations

from datetime import UTC, datetime

from creator_sync.sources.creator_platform.endpoints import DAY_S, RESOURCES
from creator_sync.sources.creator_platform.incremental import advance, plan

NOW = datetime(2025, 6, 10, 12, 0, tzinfo=UTC)


def state(cursor="2025-06-09T08:00:00Z", last_full="2025-06-08T00:00:00Z"):
    return {"cursor": cursor, "last_full_at": last_full}


def test_first_sync_is_full_and_dimensions_always_full():
    assert plan(RESOURCES["orders"], {}, now=NOW).full
    assert plan(RESOURCES["orders"], {}, now=NOW).params == {}
    p = plan(RESOURCES["products"], state(), now=NOW)
    assert p.full and p.params == {}


def test_updated_since_filters_with_lookback():
    p = plan(RESOURCES["purchases"], state(), now=NOW)
    assert not p.full
    assert p.params == {"filter[updated_at_gte]": "2025-06-09T07:00:00Z"}  # 1 h look-back
    assert plan(RESOURCES["blog_posts"], state(), now=NOW, lookback_s=0).params == {
        "filter[updated_at_gt]": "2025-06-09T08:00:00Z"
    }


def test_created_windows_with_lookbacks():
    assert plan(RESOURCES["orders"], state(), now=NOW).params == {"filter[created_at_gteq]": "2025-05-26T08:00:00Z"}
    assert plan(RESOURCES["transactions"], state(), now=NOW).params == {"filter[start_date]": "2025-06-07"}
    assert plan(RESOURCES["payouts"], state(), now=NOW, lookback_s=DAY_S).params == {"filter[start_date]": "2025-06-08"}


def test_created_in_last_counts_days_on_the_server_clock():
    p = plan(RESOURCES["contacts"], state(), now=NOW, lookback_s=0)
    assert p.params == {"filter[created_in_last]": 3}  # 28 h -> 2 days, +1 day of slack
    p = plan(RESOURCES["contacts"], state(), now=NOW)  # default 30-day look-back
    assert p.params == {"filter[created_in_last]": 33}


def test_periodic_full_refresh_and_forced_full():
    due = state(last_full="2025-06-01T00:00:00Z")
    assert plan(RESOURCES["orders"], due, now=NOW).full
    assert not plan(RESOURCES["orders"], due, now=NOW, full_refresh_every_s=30 * DAY_S).full
    assert plan(RESOURCES["purchases"], state(), now=NOW, force_full=True).full


def test_a_catch_up_reads_the_deep_window_and_leaves_a_due_full_listing_to_the_next_run():
    """A listing completed across runs (its cursor is its first start) is caught up by the
    deep look-back, even where its weekly full listing fell due meanwhile: that waits for the
    next run, which is full, stamps nothing as full."""
    due = state(last_full="2025-06-01T00:00:00Z")
    caught = plan(RESOURCES["transactions"], {**due, "last_deep_at": "2025-06-10T11:00:00Z"},
                  now=NOW, catch_up=True)
    assert not caught.full and caught.deep  # deep though the last deep run was an hour ago
    assert caught.params == {"filter[start_date]": "2025-06-07"}  # the 2-day look-back
    assert caught.reason.startswith("catch-up: ")
    st = dict(due)
    advance(st, caught, None, now=NOW, started=NOW)
    assert st["last_full_at"] == "2025-06-01T00:00:00Z"
    assert plan(RESOURCES["transactions"], st, now=NOW).full  # the next run: the full listing
    assert plan(RESOURCES["purchases"], due, now=NOW, force_full=True, catch_up=True).full
    # contacts: no window finds an edit of an older contact, so a due full listing is the
    # catch-up itself
    assert plan(RESOURCES["contacts"], due, now=NOW, catch_up=True).full
    assert not plan(RESOURCES["contacts"], state(), now=NOW, catch_up=True).full


def test_advance_moves_forward_only_and_stamps_full_runs():
    st = state()
    p = plan(RESOURCES["purchases"], st, now=NOW)
    advance(st, p, datetime(2025, 6, 1, tzinfo=UTC), now=NOW)
    assert st["cursor"] == "2025-06-09T08:00:00Z"
    advance(st, p, datetime(2025, 6, 10, 9, tzinfo=UTC), now=NOW)
    assert st["cursor"] == "2025-06-10T09:00:00Z"
    empty: dict = {}
    full = plan(RESOURCES["orders"], empty, now=NOW)
    advance(empty, full, None, now=NOW)
    assert empty == {"cursor": "2025-06-10T12:00:00Z", "last_full_at": "2025-06-10T12:00:00Z",
                     "last_deep_at": "2025-06-10T12:00:00Z"}
