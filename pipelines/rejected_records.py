"""`rejected_records`: the records a sync set aside, one row each (issue 40; the source keeps
them in state and reads them again, `sources/creator_platform/rejects.py`).

A record whose value cannot be read (an amount of `"n/a"`) is left out of its table and the
rest of its resource loads; this table says which, where and why. After each run, the rows
of every resource the run read are replaced by what it set aside now: a record read again
that loads leaves the table; resources the run failed or did not select keep their rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import dlt

from .sync_resources import destination_types
from .warehouse_sql import sql_client

REJECTED_RECORDS = "rejected_records"
# (column, dlt data type), docs/architecture.md (warehouse contract)
REJECTED_RECORDS_COLUMNS = (
    ("resource", "text"),  # the resource whose listing read it (`payouts`)
    ("site_id", "text"),  # the listing's site (null: a resource not read per site)
    ("record_id", "text"),
    ("field", "text"),  # the attribute, or `<array>.<field>` of a line (`transactions.fee`)
    ("value", "text"),  # the value as the API wrote it (at most 200 characters)
    ("reason", "text"),
    ("rejected_at", "timestamp"),  # when a sync first set it aside (UTC)
)


def write_rejected_records(
    pipeline: dlt.Pipeline,
    rejected: Mapping[str, Mapping[str | None, Mapping[str, Mapping[str, Any]]]],
    outcomes: Mapping[str, Any],
) -> None:
    """Replace the rows of each resource this run read (and did not fail) with the records it
    holds set aside now. A no-op (no table created) while nothing was ever set aside."""
    names = sorted(n for n in rejected if n in outcomes and outcomes[n].status != "failed")
    rows = [
        (name, site, rid, e.get("field"), e.get("value"), e.get("reason"), _when(e.get("at")))
        for name in names for site, entries in rejected[name].items()
        for rid, e in entries.items()
    ]
    if not names:
        return
    with sql_client(pipeline) as client:
        if not rows and not _exists(client):
            return
        if not client.has_dataset():
            client.create_dataset()
        q = client.make_qualified_table_name(REJECTED_RECORDS)
        col = {name: client.escape_column_name(name) for name, _ in REJECTED_RECORDS_COLUMNS}
        if not _exists(client):
            kinds = destination_types(client, REJECTED_RECORDS_COLUMNS, REJECTED_RECORDS)
            client.execute_sql(f"CREATE TABLE {q} (" + ", ".join(
                f"{col[name]} {kinds[kind]}" for name, kind in REJECTED_RECORDS_COLUMNS) + ")")
        marks = ", ".join(["%s"] * len(names))
        with client.begin_transaction():
            client.execute_sql(f"DELETE FROM {q} WHERE {col['resource']} IN ({marks})", *names)
            if rows:
                row_marks = ", ".join(
                    ["(" + ", ".join(["%s"] * len(REJECTED_RECORDS_COLUMNS)) + ")"] * len(rows))
                client.execute_sql(
                    f"INSERT INTO {q} ({', '.join(col.values())}) VALUES {row_marks}",
                    *[value for row in rows for value in row])


def _when(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


def _exists(client: Any) -> bool:
    return bool(client.execute_sql(
        "SELECT 1 FROM information_schema.tables WHERE table_schema = %s AND table_name = %s",
        client.dataset_name, REJECTED_RECORDS))
