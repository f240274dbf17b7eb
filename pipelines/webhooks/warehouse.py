"""One transaction per micro-batch into DuckDB: upsert resources, replace links, log events.

Why direct DuckDB and not a dlt pipeline run: it is ~2.5x cheaper per micro-batch
(`benchmarks/webhooks_burst.py --writers`), it never touches the pull pipeline's dlt state, and
dlt's merge cannot do the column-aware upsert below. Tables are created, or widened, from the same
arrow schema the pull sync loads, so a later pull sync merges into them cleanly.

Why a column-aware upsert and not delete+insert: webhook payloads are often sparser than list
responses (a payment_succeeded transaction has no settlement fields). Replacing the row would
erase what the pull sync loaded; so an existing row only takes the columns the payload carried.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

import duckdb

from creator_sync.common.duckdb_names import quote_ident, quote_literal
from creator_sync.sources.creator_platform import declared_columns, table_hints

if TYPE_CHECKING:  # imported where arrow data is built: a pull sync reads only the constants
    import pyarrow as pa

# the `_dlt_load_id` of every row the webhook loader writes starts so: the pull sync reloads such
# rows when it re-reads them, even unchanged (see `pipelines.postload.webhook_written_keys`)
PUSHED_LOAD_ID_PREFIX = "webhooks."
PRESENT = "__present"  # list<string> column: which columns this row's payload actually carried
# dlt's DuckDB types for our logical types (timestamps are UTC-aware: TIMESTAMPTZ).
DUCKDB_TYPES = {
    "text": "VARCHAR",
    "bigint": "BIGINT",
    "bool": "BOOLEAN",
    "timestamp": "TIMESTAMP WITH TIME ZONE",
    "double": "DOUBLE",
    "json": "JSON",
}

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


@dataclass
class TableBatch:
    """Rows for one warehouse table. `replace_parents` marks a link table: every link row of
    these parent ids is replaced (the parent was delivered with that relationship's data)."""

    name: str
    rows: pa.Table | None
    parent_column: str | None = None
    replace_parents: set[str] = field(default_factory=set)


def ensure_schema(con: duckdb.DuckDBPyConnection, schema: str) -> None:
    con.execute(f"CREATE SCHEMA IF NOT EXISTS {quote_ident(schema)}")
    con.execute(EVENTS_DDL.format(schema=quote_ident(schema)))
    con.execute(DEAD_LETTERS_DDL.format(schema=quote_ident(schema)))


def existing_columns(con: duckdb.DuckDBPyConnection, schema: str, table: str) -> dict[str, str]:
    rows = con.execute(  # duckdb_columns() is much cheaper than information_schema here
        "SELECT column_name, data_type FROM duckdb_columns() "
        "WHERE schema_name = ? AND table_name = ? ORDER BY column_index",
        [schema, table],
    ).fetchall()
    return {name: dtype for name, dtype in rows}


def _column_ddl(table: str, columns: list[str]) -> dict[str, str]:
    """DuckDB type (and NOT NULL) per column, from the same dlt hints the pull sync loads with,
    so that a table the receiver creates is the table the pull sync would have created."""
    hints = table_hints(table, declared_columns(table, columns))["columns"]
    ddl = {}
    for column in columns:
        if column == "_dlt_load_id":  # added by dlt to the pull sync's arrow loads
            ddl[column] = "VARCHAR NOT NULL"
            continue
        hint = hints.get(column, {"data_type": "text"})
        kind = hint["data_type"]
        sql_type = (
            f"DECIMAL({hint['precision']}, {hint['scale']})" if kind == "decimal"
            else DUCKDB_TYPES[kind]
        )
        ddl[column] = sql_type if hint.get("nullable", True) else f"{sql_type} NOT NULL"
    return ddl


def _prepare_table(
    con: duckdb.DuckDBPyConnection, schema: str, table: str, columns: list[str]
) -> set[str]:
    """Create the table with the pull sync's column types, or add the columns it lacks;
    returns the table's columns."""
    target = f"{quote_ident(schema)}.{quote_ident(table)}"
    have = existing_columns(con, schema, table)
    ddl = _column_ddl(table, columns)
    if not have:
        body = ", ".join(f"{quote_ident(c)} {t}" for c, t in ddl.items())
        con.execute(f"CREATE TABLE {target} ({body})")
        return set(columns)
    for column in columns:
        if column not in have:
            nullable_type = ddl[column].removesuffix(" NOT NULL")
            con.execute(f"ALTER TABLE {target} ADD COLUMN {quote_ident(column)} {nullable_type}")
    return set(have) | set(columns)


def _fill_ins(have: Iterable[str], columns: Iterable[str]) -> str:
    """Values for pull-side columns our rows do not carry: a new row is not deleted, and if the
    pull's dlt config ever adds `_dlt_id` (NOT NULL), each row still gets a unique one."""
    missing = set(have) - set(columns)
    fill = ""
    if "_is_deleted" in missing:
        fill += ", false AS _is_deleted"
    if "_dlt_id" in missing:
        fill += ", replace(uuid()::VARCHAR, '-', '') AS _dlt_id"
    return fill


def upsert_resources(
    con: duckdb.DuckDBPyConnection, schema: str, batch: TableBatch, *, strictly_newer: bool = False
) -> int:
    """Insert new ids; on existing ids set only the columns each row's payload carried.
    `strictly_newer`: update a row only when both carry `updated_at` and the payload's is later
    (a pull's load is then never undone by a push of the same version)."""
    data = batch.rows
    columns = [c for c in data.column_names if c != PRESENT]
    view = f"_wh_{batch.name}"
    con.register(view, data)
    try:
        have = _prepare_table(con, schema, batch.name, columns)
        target = f"{quote_ident(schema)}.{quote_ident(batch.name)}"
        if PRESENT in data.column_names:
            assignments = ", ".join(
                f"{quote_ident(c)} = CASE WHEN list_contains(b.{PRESENT}, {quote_literal(c)}) "
                f"THEN b.{quote_ident(c)} ELSE t.{quote_ident(c)} END"
                for c in columns
                if c != "id"
            )
        else:
            assignments = ", ".join(f"{quote_ident(c)} = b.{quote_ident(c)}" for c in columns if c != "id")
        if assignments:
            # a retried, older delivery must not roll back a newer version of the row
            newer_only = (
                " AND (b.updated_at IS NULL OR t.updated_at IS NULL OR b.updated_at >= t.updated_at)"
                if "updated_at" in columns and "updated_at" in have
                else ""
            )
            if strictly_newer:
                newer_only = (" AND b.updated_at > t.updated_at"
                              if "updated_at" in columns and "updated_at" in have else " AND false")
            con.execute(
                f"UPDATE {target} AS t SET {assignments} FROM {view} AS b "
                f"WHERE t.id = b.id{newer_only}"
            )
        insert_cols = ", ".join(quote_ident(c) for c in columns) + _fill_ins(have, columns)
        con.execute(
            f"INSERT INTO {target} BY NAME SELECT {insert_cols} FROM {view} "
            f"WHERE id NOT IN (SELECT id FROM {target})"
        )
    finally:
        con.unregister(view)
    return data.num_rows


def replace_links(con: duckdb.DuckDBPyConnection, schema: str, batch: TableBatch) -> int:
    """Link rows of each delivered parent are replaced as a set (architecture doc)."""
    import pyarrow as pa

    assert batch.parent_column is not None
    target = f"{quote_ident(schema)}.{quote_ident(batch.name)}"
    data = batch.rows
    count = 0 if data is None else data.num_rows
    exists = bool(_prepare_table(con, schema, batch.name, data.column_names)) if count else bool(
        existing_columns(con, schema, batch.name)
    )
    if batch.replace_parents and exists:
        con.register("_wh_parents", pa.table({"parent_id": sorted(batch.replace_parents)}))
        try:
            con.execute(
                f"DELETE FROM {target} WHERE {quote_ident(batch.parent_column)} IN "
                "(SELECT parent_id FROM _wh_parents)"
            )
        finally:
            con.unregister("_wh_parents")
    if count:
        view = f"_wh_{batch.name}"
        con.register(view, data)
        try:
            cols = ", ".join(quote_ident(c) for c in data.column_names)
            fill = _fill_ins(existing_columns(con, schema, batch.name), data.column_names)
            con.execute(
                f"INSERT INTO {target} BY NAME SELECT *{fill} FROM "
                f"(SELECT DISTINCT {cols} FROM {view})"
            )
        finally:
            con.unregister(view)
    return count


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
            f"JOIN {quote_ident(schema)}.webhook_events e USING (event, resource_id, payload_hash)"
        ).fetchall()
    finally:
        con.unregister("_wh_probe")
    return set(keys) - {tuple(row) for row in seen}


def insert_events(con: duckdb.DuckDBPyConnection, schema: str, rows: pa.Table) -> None:
    con.register("_wh_events", rows)
    try:
        con.execute(
            f"INSERT INTO {quote_ident(schema)}.webhook_events BY NAME "
            "SELECT event, resource_id, payload_hash, payload::JSON AS payload, site_id, "
            "journal_seq, received_at, loaded_at FROM _wh_events"
        )
    finally:
        con.unregister("_wh_events")


def insert_dead_letters(con: duckdb.DuckDBPyConnection, schema: str, rows: pa.Table) -> int:
    """Idempotent on journal_seq, so a replayed batch does not double a dead letter."""
    con.register("_wh_dead", rows)
    try:
        before = con.execute(
            f"SELECT count(*) FROM {quote_ident(schema)}.webhook_dead_letters"
        ).fetchone()[0]
        con.execute(
            f"INSERT INTO {quote_ident(schema)}.webhook_dead_letters BY NAME SELECT * FROM _wh_dead "
            f"WHERE journal_seq NOT IN (SELECT journal_seq FROM {quote_ident(schema)}.webhook_dead_letters)"
        )
        after = con.execute(
            f"SELECT count(*) FROM {quote_ident(schema)}.webhook_dead_letters"
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
