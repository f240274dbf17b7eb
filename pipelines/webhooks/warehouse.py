"""The webhook loader's own tables in the warehouse (DuckDB or PostgreSQL): the event log
(`webhook_events`, also what the pull's `push_restore` reads) and the dead letters. The delivered
rows themselves are upserted, and their links replaced, by `pipelines.pushed_writes`."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from creator_sync.common.warehouse_db import WarehouseDB

if TYPE_CHECKING:  # imported where arrow data is built
    import pyarrow as pa

# column -> logical type (`WarehouseDB.types` gives each warehouse's SQL type)
EVENTS_COLUMNS = {
    "event": "text NOT NULL", "resource_id": "text NOT NULL", "payload_hash": "text NOT NULL",
    "payload": "json", "site_id": "text", "journal_seq": "bigint",
    "received_at": "timestamp NOT NULL", "loaded_at": "timestamp NOT NULL",
}
DEAD_LETTERS_COLUMNS = {
    "reason": "text NOT NULL", "detail": "text", "event": "text", "body": "text",
    "journal_seq": "bigint NOT NULL", "received_at": "timestamp NOT NULL",
    "loaded_at": "timestamp NOT NULL",
}


def _types(db: WarehouseDB, columns: dict[str, str], *, nullable: bool = False) -> dict[str, str]:
    out = {}
    for name, spec in columns.items():
        kind, _, rest = spec.partition(" ")
        out[name] = db.types[kind] + ("" if nullable or not rest else f" {rest}")
    return out


def ensure_schema(db: WarehouseDB, schema: str) -> None:
    db.execute(f"CREATE SCHEMA IF NOT EXISTS {db.schema(schema)}")
    for table, columns in (("webhook_events", EVENTS_COLUMNS),
                           ("webhook_dead_letters", DEAD_LETTERS_COLUMNS)):
        body = ", ".join(f"{name} {sql}" for name, sql in _types(db, columns).items())
        db.execute(f"CREATE TABLE IF NOT EXISTS {db.table(schema, table)} ({body})")


def new_event_keys(
    db: WarehouseDB, schema: str, keys: Iterable[tuple[str, str, str]]
) -> set[tuple[str, str, str]]:
    """Which (event, resource id, payload hash) keys are not in webhook_events yet."""
    import pyarrow as pa

    keys = list(dict.fromkeys(keys))
    if not keys:
        return set()
    probe = pa.table(
        {
            "event": [k[0] for k in keys],
            "resource_id": [k[1] for k in keys],
            "payload_hash": [k[2] for k in keys],
        }
    )
    text = db.types["text"]
    with db.staged("_wh_probe", probe, dict.fromkeys(probe.column_names, text)) as staged:
        seen = db.fetchall(
            f"SELECT p.event, p.resource_id, p.payload_hash FROM {staged} p "
            f"JOIN {db.table(schema, 'webhook_events')} e USING (event, resource_id, payload_hash)"
        )
    return set(keys) - {tuple(row) for row in seen}


def insert_events(db: WarehouseDB, schema: str, rows: pa.Table) -> None:
    staged_types = {**_types(db, EVENTS_COLUMNS, nullable=True), "payload": db.types["text"]}
    with db.staged("_wh_events", rows, staged_types) as staged:
        names = ", ".join(EVENTS_COLUMNS)
        values = ", ".join(db.json(c) if c == "payload" else c for c in EVENTS_COLUMNS)
        db.execute(f"INSERT INTO {db.table(schema, 'webhook_events')} ({names}) "
                   f"SELECT {values} FROM {staged}")


def insert_dead_letters(db: WarehouseDB, schema: str, rows: pa.Table) -> int:
    """Idempotent on journal_seq, so a replayed batch does not double a dead letter."""
    table = db.table(schema, "webhook_dead_letters")
    with db.staged("_wh_dead", rows, _types(db, DEAD_LETTERS_COLUMNS, nullable=True)) as staged:
        ((before,),) = db.fetchall(f"SELECT count(*) FROM {table}")
        names = ", ".join(DEAD_LETTERS_COLUMNS)
        db.execute(
            f"INSERT INTO {table} ({names}) SELECT {names} FROM {staged} "
            f"WHERE journal_seq NOT IN (SELECT journal_seq FROM {table})"
        )
        ((after,),) = db.fetchall(f"SELECT count(*) FROM {table}")
    return int(after) - int(before)


def events_table(rows: list[dict], loaded_at: datetime) -> pa.Table:
    import pyarrow as pa

    schema = pa.schema(
        [
            ("event", pa.string()),
            ("resource_id", pa.string()),
            ("payload_hash", pa.string()),
            ("payload", pa.string()),
            ("site_id", pa.string()),
            ("journal_seq", pa.int64()),
            ("received_at", pa.timestamp("us", tz="UTC")),
            ("loaded_at", pa.timestamp("us", tz="UTC")),
        ]
    )
    return pa.Table.from_pylist([{**r, "loaded_at": loaded_at} for r in rows], schema=schema)


def dead_letters_table(rows: list[dict], loaded_at: datetime) -> pa.Table:
    import pyarrow as pa

    schema = pa.schema(
        [
            ("reason", pa.string()),
            ("detail", pa.string()),
            ("event", pa.string()),
            ("body", pa.string()),
            ("journal_seq", pa.int64()),
            ("received_at", pa.timestamp("us", tz="UTC")),
            ("loaded_at", pa.timestamp("us", tz="UTC")),
        ]
    )
    return pa.Table.from_pylist([{**r, "loaded_at": loaded_at} for r in rows], schema=schema)
