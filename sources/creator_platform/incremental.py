"""Incremental planning: which filter to send for a (resource, site), and how state advances.

State per (resource, site) lives in dlt source state:
`{"cursor": ISO timestamp, "last_full_at": ISO timestamp, "last_deep_at": ISO timestamp}`.
Relative windows use the server's clock (HTTP `Date`), because the platform's notion of "last N
days" is its own.

Three kinds of run per (resource, site): *full* (first sync, `--full-refresh`, periodic), *deep*
(once per `deep_every_s`: the window reaches `lookback_s` behind the cursor, for edits that
only a re-read finds) and *ordinary* (the window reaches `recent_lookback_s` behind the cursor:
new and updated records only, so that a run with nothing new reads one page).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from .endpoints import DAY_S, Resource
from .values import parse_timestamp


@dataclass(frozen=True)
class Plan:
    params: dict[str, Any]
    full: bool  # a complete listing (enables `_is_deleted` marking and resets last_full_at)
    reason: str
    # windowed runs: records with a cursor value at or after `since` must be read (a listing
    # read newest first may stop below it); None for full listings
    since: datetime | None = None
    deep: bool = False  # the long look-back was used (stamps last_deep_at)


def _iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def full_listing_period(resource: Resource, full_refresh_every_s: int | None = None) -> int | None:
    """Seconds between periodic full listings (the setting overrides the resource's own)."""
    inc = resource.incremental
    return inc.full_refresh_every_s if full_refresh_every_s is None else full_refresh_every_s


def full_listing_due(resource: Resource, last_full: datetime | None, *, now: datetime,
                     full_refresh_every_s: int | None = None) -> bool:
    """Has the periodic full listing fallen due, the last one having begun at `last_full`?"""
    every = full_listing_period(resource, full_refresh_every_s)
    if every is None:
        return False
    return last_full is None or (now - last_full).total_seconds() >= every


def plan(
    resource: Resource,
    state: dict[str, Any],
    *,
    now: datetime,
    lookback_s: int | None = None,
    full_refresh_every_s: int | None = None,
    force_full: bool = False,
    catch_up: bool = False,
    retry_since: datetime | None = None,
    retry_full: bool = False,
    refused: bool = False,
) -> Plan:
    """Filter parameters for this run (sort and site filter are added by the caller).

    `catch_up`: the site's listing completed across runs (checkpoint.py); what changed since
    its first start is read with the deep look-back. A periodic full listing due meanwhile is
    left to the next run where the windows find edits (`Incremental.edits_only_in_full`): the
    run has just read every record once, and a first sync spanning more than the period
    would otherwise list it whole again at every completion, never done.

    `retry_since`: the oldest cursor value of a record set aside (rejects.py): the window
    reaches back to it, so the record is read again; `retry_full`: one has none, a complete
    listing reads it. `refused`: the platform refused the incremental filter (a 400,
    `RefusedFilter`): every run is a full listing until the filter is tried again.
    """
    inc = resource.incremental
    if inc.strategy == "full":
        return Plan({}, True, "full refresh table")
    cursor = parse_timestamp(state.get("cursor")) if state.get("cursor") else None
    if force_full or cursor is None:
        return Plan({}, True, "first sync" if cursor is None else "full refresh requested")
    every = full_listing_period(resource, full_refresh_every_s)
    last_full = parse_timestamp(state.get("last_full_at")) if state.get("last_full_at") else None
    if (not catch_up or inc.edits_only_in_full) and full_listing_due(
            resource, last_full, now=now, full_refresh_every_s=full_refresh_every_s):
        return Plan({}, True, f"periodic full refresh (every {every / DAY_S:g} days)")
    if refused and inc.filter_param:
        return Plan({}, True, f"full listing: the platform refused {inc.filter_param}")
    if retry_full:
        return Plan({}, True, "full listing: reading again a record set aside (no cursor value)")
    deep_back = inc.lookback_s if lookback_s is None else lookback_s
    last_deep = state.get("last_deep_at") or state.get("last_full_at")
    deep = catch_up or last_deep is None or (
        (now - parse_timestamp(last_deep)).total_seconds() >= inc.deep_every_s)
    back = deep_back if deep else min(inc.recent_lookback_s, deep_back)
    since = cursor - timedelta(seconds=back)
    retrying = retry_since is not None and retry_since < since
    if retrying:
        since = retry_since  # type: ignore[assignment]
    value: Any
    if inc.strategy in ("updated_since", "created_since"):
        value = _iso(since)
    elif inc.strategy == "date_range":
        value = since.date().isoformat()
    elif inc.strategy == "created_in_last":
        value = math.ceil(max(0.0, (now - since).total_seconds()) / DAY_S) + 1
    elif inc.strategy == "newest_first":
        value = None  # no server filter: the listing stops below `since`
    else:  # pragma: no cover - settings are validated by tests
        raise ValueError(f"unknown strategy {inc.strategy}")
    params = {inc.filter_param: value} if inc.filter_param and value is not None else {}
    reason = (("catch-up: " if catch_up else "") + f"incremental since {_iso(since)}"
              + (" (deep look-back)" if deep else "")
              + (" (back to a record set aside)" if retrying else ""))
    return Plan(params, False, reason, since=since, deep=deep)


def advance(
    state: dict[str, Any],
    plan_: Plan,
    max_cursor: datetime | None,
    *,
    now: datetime,
    started: datetime | None = None,
) -> None:
    """Move the cursor forward (never back) after a successful listing.

    A listing of the window returns every record stamped before it started, so the cursor
    moves to the server clock at the start of the listing (`started`), never past it: a record
    read before an update made during the run is re-read by the next run, and the next window
    begins one look-back before `started` rather than before the newest record (a burst of
    records just before the run is then not read again on every run). Without `started`, the
    largest cursor value listed.
    """
    new = started if started is not None else max_cursor
    old = parse_timestamp(state.get("cursor")) if state.get("cursor") else None
    if new is not None and (old is None or new > old):
        state["cursor"] = _iso(new)
    elif old is None:
        # nothing listed yet: start windows from the server clock at the time of this run
        state["cursor"] = _iso(now)
    if plan_.full:
        state["last_full_at"] = _iso(now)
    if plan_.full or plan_.deep:
        state["last_deep_at"] = _iso(now)


REFUSED_KEY = "_refused_filter"  # in the resource state: {"param", "at", "detail"}
REFUSED_RETRY_S = 7 * DAY_S  # how often a refused filter is tried again


class RefusedFilter:
    """A platform that answers a window's incremental filter with a 400 (a filter neither the
    base spec nor the live document lists: `filter[updated_at_gt]` on blog posts) does not
    take it: the resource is then read by full listings, remembered in its state, and the
    filter is tried again every `REFUSED_RETRY_S` (docs/sync.md#a-refused-filter)."""

    def __init__(self, resource: Resource, state: dict[str, Any]) -> None:
        self.param = resource.incremental.filter_param
        self.name = resource.name
        self.state = state

    def refuses(self, exc: Any, params: dict[str, Any]) -> bool:
        """Is `exc` the platform refusing the filter? A 400 on a request that carried it."""
        return (getattr(exc, "status", None) == 400 and self.param is not None
                and self.param in params)

    def active(self, now: datetime) -> bool:
        """Read by full listings now? Refused within `REFUSED_RETRY_S`, the same filter."""
        noted = self.state.get(REFUSED_KEY)
        if not isinstance(noted, dict) or noted.get("param") != self.param or not noted.get("at"):
            return False
        return (now - parse_timestamp(noted["at"])).total_seconds() < REFUSED_RETRY_S

    def remember(self, now: datetime, exc: Any, report: Any) -> None:
        """Note the refusal in state and say it once, in one summary line."""
        first = not self.active(now)
        self.state[REFUSED_KEY] = {"param": self.param, "at": _iso(now),
                                   "detail": (getattr(exc, "detail", None) or "")[:200]}
        if first:
            report.add_notice(
                f"{self.name}: the platform refused {self.param} (HTTP 400): read by full "
                f"listings instead (remembered; the filter is tried again in "
                f"{REFUSED_RETRY_S // DAY_S} days)")
