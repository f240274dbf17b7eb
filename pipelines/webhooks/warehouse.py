"""The webhook loader's own tables in DuckDB: the event log (`webhook_events`, also what the
pull's `push_restore` reads) and the dead letters. The delivered rows themselves are upserted,
and their links replaced, by `pipelines.pushed_writes`."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

import duckdb

from creator_sync.common.duckdb_names import schema_ref, table_ref

if TYPE_CHECKING:  # imported where arrow data is built
    import pyarrow as pa

EVENTS_DDL = """
CREATE TABLE IF NOT EXISTS {schema}.webhook_events (
    event VARCHAR NOT NULL,
    resource_id VARCHAR NOT NULL,
    payload_hash VARCHAR NOT NULL,
    payload JSON,
    site_id VARCHAR,
    journal_seq BIGINT,
    received_at TIMESTAMPTZ NOT NULL,
    loaded_at TIMESTAMPTZ NOT NULL
)"""

DEAD_LETTERS_DDL = """
CREATE TABLE IF NOT EXISTS {schema}.webhook_dead_letters (
    reason VARCHAR NOT NULL,
    detail VARCHAR,
    event VARCHAR,
    body VARCHAR,
    journal_seq BIGINT NOT NULL,
    received_at TIMESTAMPTZ NOT NULL,
    loaded_at TIMESTAMPTZ NOT NULL
)"""


def ensure_schema(con: duckdb.DuckDBPyConnection, schema: str) -> None:
    ref = schema_ref(con, schema)
    con.execute(f"CREATE SCHEMA IF NOT EXISTS {ref}")
    con.execute(EVENTS_DDL.format(schema=ref))
    con.execute(DEAD_LETTERS_DDL.format(schema=ref))


def new_event_keys(
    con: duckdb.DuckDBPyConnection, schema: str, keys: Iterable[tuple[str, str, str]]
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
    con.register("_wh_probe", probe)
    try:
        seen = con.execute(
            f"SELECT p.event, p.resource_id, p.payload_hash FROM _wh_probe p "
            f"JOIN {table_ref(con, schema, 'webhook_events')} e USING (event, resource_id, payload_hash)"
        ).fetchall()
    finally:
        con.unregister("_wh_probe")
    return set(keys) - {tuple(row) for row in seen}


def insert_events(con: duckdb.DuckDBPyConnection, schema: str, rows: pa.Table) -> None:
    con.register("_wh_events", rows)
    try:
        con.execute(
            f"INSERT INTO {table_ref(con, schema, 'webhook_events')} BY NAME "
            "SELECT event, resource_id, payload_hash, payload::JSON AS payload, site_id, "
            "journal_seq, received_at, loaded_at FROM _wh_events"
        )
    finally:
        con.unregister("_wh_events")


def insert_dead_letters(con: duckdb.DuckDBPyConnection, schema: str, rows: pa.Table) -> int:
    """Idempotent on journal_seq, so a replayed batch does not double a dead letter."""
    table = table_ref(con, schema, "webhook_dead_letters")
    con.register("_wh_dead", rows)
    try:
        before = con.execute(
            f"SELECT count(*) FROM {table}"
        ).fetchone()[0]
        con.execute(
            f"INSERT INTO {table} BY NAME SELECT * FROM _wh_dead "
            f"WHERE journal_seq NOT IN (SELECT journal_seq FROM {table})"
        )
        after = con.execute(
            f"SELECT count(*) FROM {table}"
        ).fetchone()[0]
    finally:
        con.unregister("_wh_dead")
    return after - before


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
