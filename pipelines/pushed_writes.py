"""Rows written into the DuckDB warehouse beside dlt: a column-aware upsert per id and the
replacement of a parent's link rows as a set. The webhook loader writes every delivery so
(`webhooks.loader`); the pull applies again, after its load, the deliveries that arrived while it
listed (`push_restore`): so it lives here, below both.

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
from typing import TYPE_CHECKING

import duckdb

from creator_sync.common.duckdb_names import quote_ident, quote_literal, table_ref
from creator_sync.sources.creator_platform import declared_columns, table_hints

if TYPE_CHECKING:  # imported where arrow data is built: a pull sync reads only the constants
    import pyarrow as pa

# the `_dlt_load_id` of every row the webhook loader writes starts so: the pull sync reloads such
# rows when it re-reads them, even unchanged (see `pipelines.warehouse_facts.webhook_written_keys`)
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

@dataclass
class TableBatch:
    """Rows for one warehouse table. `replace_parents` marks a link table: every link row of
    these parent ids is replaced (the parent was delivered with that relationship's data)."""

    name: str
    rows: pa.Table | None
    parent_column: str | None = None
    replace_parents: set[str] = field(default_factory=set)


def existing_columns(con: duckdb.DuckDBPyConnection, schema: str, table: str) -> dict[str, str]:
    rows = con.execute(  # duckdb_columns() is much cheaper than information_schema here
        "SELECT column_name, data_type FROM duckdb_columns() "
        "WHERE database_name = current_database() AND schema_name = ? AND table_name = ? "
        "ORDER BY column_index",
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
    target = table_ref(con, schema, table)
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
        target = table_ref(con, schema, batch.name)
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
    target = table_ref(con, schema, batch.name)
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
