"""`sync_resources`: one row per resource, what the last run did with it (contract C6; the
models judge coverage and staleness by it)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import dlt

from .warehouse_sql import sql_client

SYNC_RESOURCES = "sync_resources"
# (column, dlt data type) of `sync_resources` (docs/architecture.md, contract C6)
SYNC_RESOURCES_COLUMNS = (
    ("resource", "text"),
    ("status", "text"),  # synced | failed | skipped
    ("reason", "text"),  # why it failed or was skipped; null when synced
    ("last_attempt_at", "timestamp"),  # this run (UTC, when its extract began)
    ("last_synced_at", "timestamp"),  # the last run in which it completed
    ("rows_loaded", "bigint"),  # rows this run wrote to the resource's own table
    # the platform's clock when the listing of the last completed run began: every record
    # created before it is loaded (models: partial last day, staleness on the platform's clock)
    ("complete_through_at", "timestamp"),
)


def write_sync_resources(
    pipeline: dlt.Pipeline,
    outcomes: Mapping[str, Any],
    rows: Mapping[str, int],
    at: datetime,
    listing_started: Mapping[str, datetime] | None = None,
) -> None:
    """Upsert one row per resource of this run into `sync_resources`, after the load.

    It says what the warehouse holds and what it does not: a resource that failed or was
    skipped keeps its `last_synced_at` and `complete_through_at` from the last run in which it
    completed (null if never). Resources this run did not select keep their rows. One small
    table, a handful of statements; a table from before `complete_through_at` gains it.
    """
    if not outcomes:
        return
    started = listing_started or {}
    names = sorted(outcomes)
    marks = ", ".join(["%s"] * len(names))
    with sql_client(pipeline) as client:
        if not client.has_dataset():
            client.create_dataset()
        q = client.make_qualified_table_name(SYNC_RESOURCES)
        col = {name: client.escape_column_name(name) for name, _ in SYNC_RESOURCES_COLUMNS}
        _ensure_sync_resources(client, q, col)
        previous = {r[0]: (r[1], r[2]) for r in client.execute_sql(
            f"SELECT {col['resource']}, {col['last_synced_at']}, {col['complete_through_at']} "
            f"FROM {q} WHERE {col['resource']} IN ({marks})", *names) or []}
        values: list[Any] = []
        for name in names:
            outcome = outcomes[name]
            synced = outcome.status == "synced"
            last, through = previous.get(name, (None, None))
            values += [name, outcome.status, outcome.reason, at, at if synced else last,
                       int(rows.get(name, 0)), started.get(name) if synced else through]
        row_marks = ", ".join(["(" + ", ".join(["%s"] * len(SYNC_RESOURCES_COLUMNS)) + ")"] * len(names))
        with client.begin_transaction():
            client.execute_sql(f"DELETE FROM {q} WHERE {col['resource']} IN ({marks})", *names)
            client.execute_sql(
                f"INSERT INTO {q} ({', '.join(col.values())}) VALUES {row_marks}", *values
            )


def _ensure_sync_resources(client: Any, q: str, col: dict[str, str]) -> None:
    """Create `sync_resources`, or add the columns an older version did not write."""
    kinds = _destination_types(client)
    rows = client.execute_sql(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = %s "
        "AND table_name = %s", client.dataset_name, SYNC_RESOURCES,
    ) or []
    have = {r[0] for r in rows}
    if not have:
        columns = ", ".join(f"{col[name]} {kinds[kind]}" for name, kind in SYNC_RESOURCES_COLUMNS)
        client.execute_sql(f"CREATE TABLE {q} ({columns})")
        return
    for name, kind in SYNC_RESOURCES_COLUMNS:
        if name not in have:
            client.execute_sql(f"ALTER TABLE {q} ADD COLUMN {col[name]} {kinds[kind]}")


def _destination_types(client: Any) -> dict[str, str]:
    """dlt data type -> the destination's column type (timestamps with time zone)."""
    return destination_types(client, SYNC_RESOURCES_COLUMNS, SYNC_RESOURCES)


def destination_types(client: Any, columns: tuple[tuple[str, str], ...],
                      name: str = SYNC_RESOURCES) -> dict[str, str]:
    """dlt data type -> the destination's column type, for the kinds of `columns` (a table
    a post-load step writes by SQL)."""
    mapper = client.capabilities.get_type_mapper()
    table = {"name": name, "columns": {}}
    return {
        kind: mapper.to_destination_type({"name": kind, "data_type": kind, "timezone": True}, table)
        for kind in {kind for _, kind in columns}
    }
