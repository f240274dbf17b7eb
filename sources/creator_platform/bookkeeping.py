"""The run's bookkeeping, written by the source itself in the same load: its `bookkeeping`
resource (DECISIONS-2.md, "A source that stands alone").

Three tables say what the warehouse holds (docs/architecture.md): `sync_resources` (contract
C6: one row per resource, what its last run did; the models judge coverage and staleness by
it), `rejected_records` (the records set aside, a value that cannot be read) and `api_totals`
(per resource and site, the API's total the last complete listing read).

The resource waits (`RunReport.until_ended`) until every other resource of the extract has
ended, `deletions` included, then yields each table's whole new content with `replace`: one
small truncate and insert (~20 rows), no staging dataset, and safe under `refresh=
"drop_resources"` (a dropped table is filled again). The rows a run does not write itself are
read from the destination, once, when the table exists: resources this run did not select keep
their rows, and a failed or skipped resource keeps `last_synced_at` and `complete_through_at`
of its last completed run. `rejected_records` and `api_totals` are written only when their
content changes (a nothing-new run loads `sync_resources` alone). A table an earlier version
created by plain SQL gains the columns dlt needs (nullable `_dlt_load_id`, `_dlt_id`) and any
of ours it lacks before the load.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, nullcontext
from datetime import UTC, datetime
from typing import Any

import dlt

from .destination import current_pipeline, refreshed_tables

NAME = "bookkeeping"  # the resource's name; its items name their own tables

SYNC_RESOURCES = "sync_resources"
# (column, dlt data type) of `sync_resources` (docs/architecture.md, contract C6)
SYNC_RESOURCES_COLUMNS = (
    ("resource", "text"),
    ("status", "text"),  # synced | failed | skipped | partial
    ("reason", "text"),  # why it failed or was skipped; null when synced
    ("last_attempt_at", "timestamp"),  # this run (UTC, when its extract began)
    ("last_synced_at", "timestamp"),  # the last run in which it completed
    ("rows_loaded", "bigint"),  # rows this run wrote to the resource's own table
    # the platform's clock when the listing of the last completed run began: every record
    # created before it is loaded (models: partial last day, staleness on the platform's clock)
    ("complete_through_at", "timestamp"),
)

REJECTED_RECORDS = "rejected_records"
REJECTED_RECORDS_COLUMNS = (
    ("resource", "text"),  # the resource whose listing read it (`payouts`)
    ("site_id", "text"),  # the listing's site (null: a resource not read per site)
    ("record_id", "text"),
    ("field", "text"),  # the attribute, or `<array>.<field>` of a line (`transactions.fee`)
    ("value", "text"),  # the value as the API wrote it (at most 200 characters)
    ("reason", "text"),
    ("rejected_at", "timestamp"),  # when a sync first set it aside (UTC)
)

API_TOTALS = "api_totals"
API_TOTALS_COLUMNS = (
    ("resource", "text"),
    ("site_id", "text"),  # null: a resource not listed per site (`sites`)
    ("table_name", "text"),  # the raw table whose rows the total counts
    ("api_total", "bigint"),  # the total at the listing's last page; null: none comparable
    ("first_page_total", "bigint"),  # the total at the first page this run read
    ("read_at", "timestamp"),  # the platform's clock when the listing completed
    ("listing_started_at", "timestamp"),  # ... and when it began
    ("no_total_reason", "text"),  # why there is no comparable total (null when there is)
)

COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    SYNC_RESOURCES: SYNC_RESOURCES_COLUMNS,
    REJECTED_RECORDS: REJECTED_RECORDS_COLUMNS,
    API_TOTALS: API_TOTALS_COLUMNS,
}
TABLES = tuple(COLUMNS)
DLT_COLUMNS = ("_dlt_load_id", "_dlt_id")  # what dlt writes in each row of a table it loads

Row = dict[str, Any]


def column_hints(table: str) -> dict[str, dict[str, Any]]:
    """dlt column hints of a bookkeeping table: the types the SQL writers of earlier versions
    gave it (timestamps with time zone), every column nullable (a table those versions created
    cannot gain a NOT NULL column)."""
    return {name: {"name": name, "data_type": kind, "nullable": True,
                   **({"timezone": True} if kind == "timestamp" else {})}
            for name, kind in COLUMNS[table]}


# ---------------------------------------------------------------- each table's new content
def sync_resources_rows(outcomes: Mapping[str, Any], rows: Mapping[str, int], at: datetime,
                        listing_started: Mapping[str, datetime],
                        previous: list[Row] | None) -> list[Row]:
    """One row per resource of this run, and the stored rows of the others. A resource that
    did not sync keeps `last_synced_at` and `complete_through_at` of its last completed run
    (null if never)."""
    before = {r["resource"]: r for r in previous or ()}
    out = [r for name, r in before.items() if name not in outcomes]
    for name in sorted(outcomes):
        outcome = outcomes[name]
        synced = outcome.status == "synced"
        last = before.get(name, {})
        out.append({
            "resource": name, "status": outcome.status, "reason": outcome.reason,
            "last_attempt_at": at,
            "last_synced_at": at if synced else last.get("last_synced_at"),
            "rows_loaded": int(rows.get(name, 0)),
            "complete_through_at": (listing_started.get(name) if synced
                                    else last.get("complete_through_at")),
        })
    return out


def rejected_records_rows(
    rejected: Mapping[str, Mapping[str | None, Mapping[str, Mapping[str, Any]]]],
    outcomes: Mapping[str, Any], previous: list[Row] | None,
) -> list[Row] | None:
    """The rows of each resource this run read (and did not fail) replaced by the records it
    holds set aside now; the others kept. None: nothing to write (the table is created with
    the first record set aside, and left as it is when its content would not change)."""
    names = {n for n in rejected if n in outcomes and outcomes[n].status != "failed"}
    if not names:
        return None
    new = [{"resource": name, "site_id": site, "record_id": rid, "field": e.get("field"),
            "value": e.get("value"), "reason": e.get("reason"), "rejected_at": _when(e.get("at"))}
           for name in sorted(names) for site, entries in rejected[name].items()
           for rid, e in entries.items()]
    if previous is None:
        return new or None
    out = [r for r in previous if r["resource"] not in names] + new
    return None if _same(out, previous, REJECTED_RECORDS) else out


def api_totals_rows(totals: Mapping[tuple[str, str | None], Any],
                    previous: list[Row] | None) -> list[Row] | None:
    """One row per (resource, site) a listing of this run read whole, the others kept. None
    without any."""
    if not totals:
        return None
    keys = sorted(totals, key=lambda k: (k[0], k[1] or ""))
    out = [r for r in previous or () if (r["resource"], r["site_id"]) not in totals]
    for resource, site in keys:
        t = totals[(resource, site)]
        out.append({"resource": resource, "site_id": site, "table_name": t.table,
                    "api_total": t.total, "first_page_total": t.first_total,
                    "read_at": t.read_at, "listing_started_at": t.listing_started_at,
                    "no_total_reason": t.reason})
    return out


# ---------------------------------------------------------------- the resource
class Bookkeeping:
    """The `bookkeeping` resource of one run: `report` (a `RunReport`) read once every other
    resource ended; `lock`: the host's warehouse lock, taken to read and upgrade the tables."""

    def __init__(self, report: Any, extract_started: datetime,
                 lock: Callable[[], AbstractContextManager[Any]] | None = None) -> None:
        self.report = report
        self.extract_started = extract_started
        self.lock = lock or nullcontext

    def rows(self) -> Iterator[Any]:
        """Each table whose content this run changes, whole, for a `replace`."""
        report = self.report
        outcomes, totals = dict(report.outcomes), dict(report.totals)
        # a table dlt drops or empties at this load (`refresh=`) is filled again, changed or not
        dropped = refreshed_tables() & set(TABLES)
        wanted = [t for t, any_ in ((SYNC_RESOURCES, outcomes),
                                    (REJECTED_RECORDS, [n for n in report.rejected if n in outcomes]),
                                    (API_TOTALS, totals)) if any_ or t in dropped]
        if not wanted:
            return
        pipeline = current_pipeline()
        if pipeline is None:  # (an extract without a destination: this run's rows alone)
            content = self._content(outcomes, totals, {}, dropped)
        else:
            with self.lock(), pipeline.sql_client() as client:
                have = _columns(client, wanted)
                stored = {t: _read(client, t, have[t]) for t in wanted if t in have}
                content = self._content(outcomes, totals, stored, dropped)
                for table in content:
                    _upgrade(client, table, have.get(table))
        for table, rows in content.items():
            hints = dlt.mark.make_hints(table_name=table, write_disposition="replace",
                                        columns=column_hints(table))
            # an empty content still replaces the table (`materialize_table_schema`)
            yield dlt.mark.with_hints(rows or dlt.mark.materialize_table_schema(), hints,
                                      create_table_variant=True)

    def _content(self, outcomes: dict[str, Any], totals: dict[Any, Any],
                 stored: Mapping[str, list[Row]], dropped: set[str]) -> dict[str, list[Row]]:
        report = self.report
        out: dict[str, list[Row] | None] = {
            SYNC_RESOURCES: sync_resources_rows(
                outcomes, report.rows, self.extract_started, report.listing_started,
                stored.get(SYNC_RESOURCES)) if outcomes else None,
            REJECTED_RECORDS: rejected_records_rows(report.rejected, outcomes,
                                                    stored.get(REJECTED_RECORDS)),
            API_TOTALS: api_totals_rows(totals, stored.get(API_TOTALS)),
        }
        for table in dropped & set(stored):
            if out[table] is None:
                out[table] = stored[table]
        return {table: rows for table, rows in out.items() if rows is not None}

    def resource(self, waits_for: Callable[[], Iterable[str]]) -> Any:
        """The `bookkeeping` resource: waits for `waits_for()` to end, then yields `rows()`.
        Its own disposition is not `replace` (dlt would then empty a table it yields nothing
        to); each table's item says `replace`."""
        def rows() -> Iterator[Any]:
            yield from self.report.after(NAME, waits_for, self.rows)

        return dlt.resource(rows, name=NAME, write_disposition="append")


# ---------------------------------------------------------------- the destination
def _columns(client: Any, tables: list[str]) -> dict[str, set[str]]:
    """Those of `tables` the destination holds -> their columns (one query)."""
    rows = client.execute_sql(
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = %s "
        f"AND table_name IN ({', '.join(['%s'] * len(tables))})", client.dataset_name, *tables)
    out: dict[str, set[str]] = {}
    for table, column in rows or []:
        out.setdefault(table, set()).add(column)
    return out


def _read(client: Any, table: str, have: set[str]) -> list[Row]:
    """The stored rows of a bookkeeping table (a column it lacks reads as null)."""
    names = [name for name, _ in COLUMNS[table]]
    select = ", ".join(client.escape_column_name(n) if n in have else "NULL" for n in names)
    rows = client.execute_sql(f"SELECT {select} FROM {client.make_qualified_table_name(table)}")
    return [{n: _aware(v) for n, v in zip(names, row, strict=True)} for row in rows or []]


def _upgrade(client: Any, table: str, have: set[str] | None) -> None:
    """Add to a table an earlier version created what a dlt load of it needs: our columns it
    lacks, and dlt's own, nullable (rows written by plain SQL have none)."""
    if not have:
        return  # (dlt creates it)
    kinds = dict(COLUMNS[table]) | dict.fromkeys(DLT_COLUMNS, "text")
    missing = [name for name in kinds if name not in have]
    if not missing:
        return
    mapper = client.capabilities.get_type_mapper()
    schema_table = {"name": table, "columns": {}}
    q = client.make_qualified_table_name(table)
    for name in missing:
        kind = mapper.to_destination_type(
            {"name": name, "data_type": kinds[name], "timezone": True}, schema_table)
        client.execute_sql(f"ALTER TABLE {q} ADD COLUMN {client.escape_column_name(name)} {kind}")


def _same(rows: list[Row], previous: list[Row], table: str) -> bool:
    names = [name for name, _ in COLUMNS[table]]

    def key(row: Row) -> tuple[str, ...]:
        return tuple(repr(_aware(row.get(n))) for n in names)

    return sorted(map(key, rows)) == sorted(map(key, previous))


def _when(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


def _aware(value: Any) -> Any:
    """A timestamp as UTC-aware (a destination may hand it back naive, or in its own zone)."""
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return value
