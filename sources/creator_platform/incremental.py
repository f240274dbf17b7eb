"""Incremental planning: which filter to send for a (resource, site), and how state advances.

State per (resource, site) lives in dlt source state:
`{"cursor": ISO timestamp, "last_full_at": ISO timestamp}`. Relative windows use the server's
clock (HTTP `Date`), because the platform's notion of "last N days" is its own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from .normalize import parse_timestamp
from .settings import DAY_S, Resource


@dataclass(frozen=True)
class Plan:
    params: dict[str, Any]
    full: bool  # a complete listing (enables `_is_deleted` marking and resets last_full_at)
    reason: str


def _iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def plan(
    resource: Resource,
    state: dict[str, Any],
    *,
    now: datetime,
    lookback_s: int | None = None,
    full_refresh_every_s: int | None = None,
    force_full: bool = False,
) -> Plan:
    """Filter parameters for this run (sort and site filter are added by the caller)."""
    inc = resource.incremental
    if inc.strategy == "full":
        return Plan({}, True, "full refresh table")
    cursor = parse_timestamp(state.get("cursor")) if state.get("cursor") else None
    if force_full or cursor is None:
        return Plan({}, True, "first sync" if cursor is None else "full refresh requested")
    every = inc.full_refresh_every_s if full_refresh_every_s is None else full_refresh_every_s
    last_full = parse_timestamp(state.get("last_full_at")) if state.get("last_full_at") else None
    if every is not None and (last_full is None or (now - last_full).total_seconds() >= every):
        return Plan({}, True, f"periodic full refresh (every {every / DAY_S:g} days)")
    back = inc.lookback_s if lookback_s is None else lookback_s
    since = cursor - timedelta(seconds=back)
    assert inc.filter_param is not None
    if inc.strategy in ("updated_since", "created_since"):
        value: Any = _iso(since)
    elif inc.strategy == "date_range":
        value = since.date().isoformat()
    elif inc.strategy == "created_in_last":
        days = math.ceil(max(0.0, (now - since).total_seconds()) / DAY_S) + 1
        value = days
    else:  # pragma: no cover - settings are validated by tests
        raise ValueError(f"unknown strategy {inc.strategy}")
    return Plan({inc.filter_param: value}, False, f"incremental since {_iso(since)}")


def advance(
    state: dict[str, Any],
    plan_: Plan,
    max_cursor: datetime | None,
    *,
    now: datetime,
    started: datetime | None = None,
) -> None:
    """Move the cursor forward (never back) after a successful listing.

    The cursor never passes the server clock at the start of the listing (`started`): a record
    read before an update made during the run is then re-read by the next run.
    """
    if max_cursor is not None and started is not None and max_cursor > started:
        max_cursor = started
    old = parse_timestamp(state.get("cursor")) if state.get("cursor") else None
    if max_cursor is not None and (old is None or max_cursor > old):
        state["cursor"] = _iso(max_cursor)
    elif old is None:
        # nothing listed yet: start windows from the server clock at the time of this run
        state["cursor"] = _iso(now)
    if plan_.full:
        state["last_full_at"] = _iso(now)
