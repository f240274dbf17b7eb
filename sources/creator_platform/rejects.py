"""Records set aside: a value that cannot be read (`"n/a"` as an amount) never sinks a resource.

A listing leaves such a record out (`rows.Rejected`) and keeps it in its site's state,
`{"rejected": {id: {table, field, value, reason, at, cursor}}}`, until it reads it again:

- the next run's window reaches back to the oldest such record's cursor value (a record with
  none: a complete listing), so it is read again whatever the window (`incremental.plan`);
- its detail read is not remembered (`details.DetailGate`), so it is read again too;
- a record read again that converts is loaded and leaves the state, one that still does not
  stays (with the time it was first set aside); a complete listing that no longer lists it
  drops it (deleted on the platform);
- more than `MAX_PER_SITE` at once is no odd value but a systematic change: the resource fails,
  naming the first.

The source's `bookkeeping` resource writes the state's records to the `rejected_records`
table in the same load (what the summary, `status` and `data_coverage` read).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from .details import DetailGate
from .endpoints import type_info
from .errors import NormalizationError
from .rows import Rejected
from .values import parse_timestamp

STATE_KEY = "rejected"  # in a site's resource state
MAX_PER_SITE = 1_000


def _iso(value: datetime) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


class Rejects:
    """The records of one (resource, site) set aside, written through to its state."""

    def __init__(self, site_state: dict[str, Any]) -> None:
        self.state = site_state
        self.seen: set[str] = set()  # ids set aside before and read again by this listing

    @property
    def entries(self) -> dict[str, dict[str, Any]]:
        return self.state.get(STATE_KEY) or {}

    def oldest(self) -> datetime | None:
        """The oldest cursor value of a record set aside: the next window starts there."""
        stamps = [parse_timestamp(e["cursor"]) for e in self.entries.values() if e.get("cursor")]
        return min((s for s in stamps if s is not None), default=None)

    def undated(self) -> bool:
        """A record set aside without a cursor value: only a complete listing reads it."""
        return any(not e.get("cursor") for e in self.entries.values())

    def note(self, rows: Mapping[str, list[dict[str, Any]]], rejected: list[Rejected],
             cursor_field: str, gate: DetailGate | None) -> None:
        """A batch's outcome: records set aside before that now converted leave; `rejected`
        join (their detail reads forgotten, so that they are read again)."""
        entries = dict(self.entries)
        loaded: dict[str | None, set[Any]] = {}
        for rid, entry in list(entries.items()):
            table = entry.get("table")
            if table not in loaded:
                loaded[table] = {r.get("id") for r in rows.get(table, ())} if table else set()
            if rid in loaded[table]:
                del entries[rid]
                self.seen.add(rid)
        now = _iso(datetime.now(UTC))
        for item in rejected:
            rid = item.record_id or ""
            previous = entries.get(rid)
            entries[rid] = {
                "table": type_info(item.jtype).table if isinstance(item.jtype, str) else None,
                "field": item.field, "value": item.value, "reason": item.reason,
                "at": previous["at"] if previous else now,
                "cursor": _cursor(item.record, cursor_field),
            }
            self.seen.add(rid)
            if gate is not None:
                gate.seen.pop(rid, None)
                gate.known.pop(rid, None)
        if len(entries) > MAX_PER_SITE:
            first = rejected[0] if rejected else None
            raise NormalizationError(
                f"{len(entries)} records have a value that cannot be read (more than "
                f"{MAX_PER_SITE}: not an odd value but a change of format); the first: "
                f"{first.reason if first else '?'}",
                record_id=first.record_id if first else None, field=first.field if first else None)
        self._save(entries)

    def finish(self, complete: bool) -> None:
        """The listing completed; a complete one read every record: a record set aside that
        it neither loaded nor set aside again is no longer on the platform."""
        if complete and self.entries:
            self._save({r: e for r, e in self.entries.items() if r in self.seen})

    def _save(self, entries: dict[str, dict[str, Any]]) -> None:
        if entries:
            self.state[STATE_KEY] = entries
        else:
            self.state.pop(STATE_KEY, None)


def _cursor(record: Mapping[str, Any], cursor_field: str) -> str | None:
    """The record's cursor value (ISO, UTC), where it has a readable one."""
    attributes = record.get("attributes") if isinstance(record, Mapping) else None
    if not isinstance(attributes, Mapping):
        return None
    try:
        stamp = parse_timestamp(attributes.get(cursor_field))
    except (ValueError, TypeError):
        return None
    return _iso(stamp) if stamp is not None else None
