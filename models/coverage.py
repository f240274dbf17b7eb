"""What the finance figures are built on, and what that means for each figure.

The headline (`models/headline.py`, printed by `creator-sync models` and `demo`) and the report
read it from the marts of the same build (`analytics.data_coverage`, `analytics.build_metadata`),
so both say the same thing:
- a figure whose resources hold no records (left out by `--resources`, failed, skipped for the
  credential's scopes, or empty because the path is wrong) is not shown; the reason is;
- the last reporting day is partial when the data reaches only part of it (in the reporting time
  zone): the 30-day windows end the day before, so half a day never drives a comparison;
- the figures are stale when the newest record is older than the staleness limit, and a
  resource is stale when its last completed sync is.
"""

from __future__ import annotations

import datetime as dt
import zoneinfo
from dataclasses import dataclass
from typing import Any

from creator_sync.common.settings import app_setting, option
from creator_sync.models.build_info import BuildInfo, Fetch, as_utc, fetch_dicts, read_build_info

DATA_COVERAGE = "analytics.data_coverage"
WINDOW_DAYS = 30


LABELS = {"transactions": "Transactions", "purchases": "Purchases", "payouts": "Payouts"}
# Each headline figure and the resources it is built on.
FIGURE_SOURCES: dict[str, tuple[str, ...]] = {
    "net_revenue": ("transactions",),
    "mrr": ("purchases",),
    "unreconciled_payouts": ("payouts", "transactions"),
    "unpaid_balance": ("payouts", "transactions"),
}
# What to check when a sync completed but found no records.
EMPTY_HINTS = {"payouts": "if the account has payouts, check payouts_path (--payouts-path)"}


def fmt_utc(value: dt.datetime | None) -> str:
    return value.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC") if value else "—"


def fmt_age(delta: dt.timedelta) -> str:
    """`3 hours`, `2 days`: coarse on purpose, it answers "is this recent?"."""
    seconds = max(0, int(delta.total_seconds()))
    for unit, size in (("day", 86_400), ("hour", 3_600), ("minute", 60)):
        if seconds >= size:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return "less than a minute"


# The flag of every command that states the figures (`models`, `report`); the key, its check,
# help and default are `creator_sync.stale_after_days` in common.settings.
stale_after_option = option("stale_after_days", type=float)


def stale_after(days: float | None = None) -> dt.timedelta:
    """The staleness limit: `days` when given (a flag), else the configuration, else the
    setting's default."""
    return dt.timedelta(days=app_setting("stale_after_days", days))


@dataclass(frozen=True)
class ResourceCoverage:
    """One row of `analytics.data_coverage`."""

    resource: str
    records_count: int
    newest_record_at: dt.datetime | None
    is_sync_recorded: bool
    sync_status: str | None
    sync_reason: str | None
    last_attempt_at: dt.datetime | None
    last_synced_at: dt.datetime | None
    complete_through_at: dt.datetime | None
    known_missing_count: int | None
    # loaded and its latest sync completed: the marts state no amount built on it otherwise
    is_complete: bool = True
    incomplete_reason: str | None = None
    # records set aside (raw `rejected_records`): a value that cannot be read; not complete
    rejected_count: int = 0

    @property
    def label(self) -> str:
        return LABELS.get(self.resource, self.resource)

    @property
    def is_first_sync_partial(self) -> bool:
        """Its first listing has not completed (a sync stopped by its time budget or a
        signal, going on next run): what it holds is part of the account, not all of it."""
        return self.sync_status == "partial" and self.last_synced_at is None

    @property
    def is_loaded(self) -> bool:
        return self.records_count > 0 and not self.is_first_sync_partial

    @property
    def has_problem(self) -> bool:
        """Not loaded, or the latest sync of it did not complete."""
        return (not self.is_loaded or self.sync_status in ("failed", "skipped", "partial")
                or self.rejected_count > 0)

    def last_sync(self) -> str:
        """What the latest sync did with it: `synced 2026-03-01 12:00 UTC`, `failed: <why>`."""
        if not self.is_sync_recorded:
            if self.is_loaded:
                return f"loaded {fmt_utc(self.last_synced_at)} (per-resource status not recorded)"
            return "never synced (left out by --resources, or no sync has run)"
        if self.sync_status == "synced" and self.rejected_count:
            return (f"synced {fmt_utc(self.last_attempt_at)}, {self.rejected_count:,} record(s) "
                    "set aside in rejected_records (a value that cannot be read)")
        if self.sync_status == "synced":
            return f"synced {fmt_utc(self.last_attempt_at)}"
        return f"{self.sync_status}: {self.sync_reason or 'no reason recorded'}"

    def summary(self) -> str:
        """One line a finance reader can act on, e.g.
        `Payouts: not loaded (last sync: failed: /platform_payments_payouts answered 404 ...)`."""
        if self.is_first_sync_partial:
            return (f"{self.label}: not loaded: its first sync has not completed "
                    f"({self.records_count:,} read so far; last sync: {self.last_sync()})")
        if not self.is_loaded:
            if self.sync_status == "synced":
                hint = EMPTY_HINTS.get(self.resource)
                return (
                    f"{self.label}: not loaded (last sync: {self.last_sync()}, found none"
                    + (f"; {hint})" if hint else ")")
                )
            if not self.is_sync_recorded:
                return f"{self.label}: not loaded ({self.last_sync()})"
            return f"{self.label}: not loaded (last sync: {self.last_sync()})"
        if self.has_problem:
            return (
                f"{self.label}: {self.records_count:,} loaded, synced through "
                f"{fmt_utc(self.last_synced_at)}; last sync: {self.last_sync()}"
            )
        return (
            f"{self.label}: {self.records_count:,} loaded, newest {fmt_utc(self.newest_record_at)}; "
            f"last sync: {self.last_sync()}"
        )


@dataclass(frozen=True)
class Window:
    """The 30-day window of the headline figures, ending on the last complete reporting day."""

    last_day: dt.date | None  # the last day the marts reach (the build's as-of)
    end: dt.date | None  # "figures through": the last complete day
    partial_day: dt.date | None  # the last day when the data reaches only part of it
    data_through_at: dt.datetime | None  # every transaction before this is loaded

    @property
    def start(self) -> dt.date | None:
        return self.end - dt.timedelta(days=WINDOW_DAYS - 1) if self.end else None

    @property
    def prior_start(self) -> dt.date | None:
        return self.end - dt.timedelta(days=2 * WINDOW_DAYS - 1) if self.end else None


@dataclass(frozen=True)
class Staleness:
    limit: dt.timedelta
    newest: ResourceCoverage | None  # the resource holding the newest record
    age: dt.timedelta | None  # of that record, on the platform's clock
    stale_syncs: dict[str, dt.timedelta]  # resource -> time since its last completed sync

    @property
    def is_stale(self) -> bool:
        return bool(self.stale_syncs) or (self.age is not None and self.age > self.limit)

    def lines(self) -> list[str]:
        limit = f"the limit of {fmt_age(self.limit)} (--stale-after-days)"
        out = []
        if self.newest is not None and self.age is not None and self.age > self.limit:
            noun = self.newest.resource.rstrip("s")
            out.append(
                f"STALE: the newest record (a {noun} of {fmt_utc(self.newest.newest_record_at)})"
                f" is {fmt_age(self.age)} old, beyond {limit}"
            )
        for resource, age in sorted(self.stale_syncs.items()):
            out.append(
                f"STALE: {resource} last synced {fmt_age(age)} ago, beyond {limit}"
            )
        return out


@dataclass(frozen=True)
class Coverage:
    build: BuildInfo
    resources: dict[str, ResourceCoverage]

    def missing(self, figure: str) -> list[ResourceCoverage]:
        """The resources `figure` is built on that are not complete (hold no records, or their
        latest sync did not complete): the marts carry no amount for it then."""
        return [
            self.resources[name]
            for name in FIGURE_SOURCES[figure]
            if name in self.resources and not self.resources[name].is_complete
        ]

    def unavailable(self, figure: str) -> str | None:
        """`payouts not loaded` (or `payouts last sync failed`) when the figure cannot be
        stated, else None."""
        missing = self.missing(figure)
        if not missing:
            return None
        if all(not r.is_loaded for r in missing):
            return " and ".join(r.resource for r in missing) + " not loaded"
        return "; ".join(r.incomplete_reason or f"{r.resource} incomplete" for r in missing)

    @property
    def problems(self) -> list[ResourceCoverage]:
        return [r for r in self.resources.values() if r.has_problem]

    @property
    def last_sync_at(self) -> dt.datetime | None:
        """The newest completed sync of any resource the figures are built on."""
        times = [r.last_synced_at for r in self.resources.values() if r.last_synced_at]
        return max(times) if times else None

    def window(self, last_day: dt.date | None) -> Window:
        """Where the figures end. The last day is partial unless the transactions are loaded
        through the end of it in the reporting time zone; then the windows end a day earlier."""
        transactions = self.resources.get("transactions")
        through = transactions.complete_through_at if transactions else None
        if last_day is None or through is None:
            return Window(last_day, last_day, None, through)
        zone = zoneinfo.ZoneInfo(self.build.timezone)
        day_ends = dt.datetime.combine(last_day + dt.timedelta(days=1), dt.time(), zone)
        if through >= day_ends:
            return Window(last_day, last_day, None, through)
        return Window(last_day, last_day - dt.timedelta(days=1), last_day, through)

    def staleness(self, now: dt.datetime, limit: dt.timedelta) -> Staleness:
        """Stale when the newest record is older than `limit`, or a resource's last completed
        sync is. A record's age is read on the platform's clock (`complete_through_at` minus
        the sync's own start shifts it), so a sandbox with a fixed clock is not stale."""
        loaded = [r for r in self.resources.values() if r.is_loaded and r.newest_record_at]
        newest = max(loaded, key=lambda r: r.newest_record_at) if loaded else None
        age = None
        if newest is not None:
            platform_now = now
            if newest.complete_through_at and newest.last_synced_at:
                platform_now = now - (newest.last_synced_at - newest.complete_through_at)
            age = platform_now - newest.newest_record_at
        stale_syncs = {
            r.resource: now - r.last_synced_at
            for r in self.resources.values()
            if r.is_loaded and r.last_synced_at and now - r.last_synced_at > limit
        }
        return Staleness(limit, newest, age, stale_syncs)

    def basis(self) -> str:
        """`2,586 transactions, 1,007 purchases and 717 payouts`: what the figures count."""
        parts = [f"{r.records_count:,} {r.resource}" for r in self.resources.values()]
        if len(parts) < 2:
            return "".join(parts) or "no records"
        return ", ".join(parts[:-1]) + " and " + parts[-1]

    def a7_note(self) -> str | None:
        """Addendum A7: the transactions list can hold far fewer records than purchases suggest."""
        transactions = self.resources.get("transactions")
        missing = transactions.known_missing_count if transactions else None
        if not missing:
            return None
        return (
            f"{missing:,} paid purchase{'s have' if missing != 1 else ' has'} no transaction "
            "loaded: revenue counts only the transactions the platform listed"
        )


def _resource(row: dict[str, Any]) -> ResourceCoverage:
    return ResourceCoverage(
        resource=str(row["resource"]),
        records_count=int(row["records_count"]),
        newest_record_at=as_utc(row["newest_record_at"]),
        is_sync_recorded=bool(row["is_sync_recorded"]),
        sync_status=row["sync_status"],
        sync_reason=row["sync_reason"],
        last_attempt_at=as_utc(row["last_attempt_at"]),
        last_synced_at=as_utc(row["last_synced_at"]),
        complete_through_at=as_utc(row["complete_through_at"]),
        known_missing_count=(
            int(row["known_missing_count"]) if row["known_missing_count"] is not None else None
        ),
        is_complete=bool(row.get("is_complete", int(row["records_count"]) > 0)),
        incomplete_reason=row.get("incomplete_reason"),
        rejected_count=int(row.get("rejected_count") or 0),
    )


def read_coverage(fetch: Fetch) -> Coverage:
    """Both marts, through any warehouse connection's `fetch(sql) -> (columns, rows)`."""
    order = {name: i for i, name in enumerate(LABELS)}
    rows = sorted(
        fetch_dicts(fetch, f"select * from {DATA_COVERAGE}"),
        key=lambda r: (order.get(r["resource"], len(order)), r["resource"]),
    )
    return Coverage(read_build_info(fetch), {str(r["resource"]): _resource(r) for r in rows})
