"""Rows written into the warehouse (DuckDB or PostgreSQL, `common.warehouse_db`) beside dlt: a
column-aware upsert per id and the replacement of a parent's link rows as a set. The webhook loader writes every delivery so
(`webhooks.loader`); the pull applies again, after its load, the deliveries that arrived while it
listed (`push_restore`): so it lives here, below both.

Why direct SQL and not a dlt pipeline run: it is ~2.5x cheaper per micro-batch
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

from creator_sync.common.duckdb_names import quote_ident
from creator_sync.common.warehouse_db import WarehouseDB
from creator_sync.sources.creator_platform import (
    PUSHED_LOAD_ID_PREFIX,  # noqa: F401  (re-exported: the loader and the pull name it so)
    declared_columns,
    table_hints,
)

if TYPE_CHECKING:  # imported where arrow data is built: a pull sync reads only the constants
    import pyarrow as pa

# the `_dlt_load_id` of every row the webhook loader writes starts with `PUSHED_LOAD_ID_PREFIX`
# (declared by the source, which reads them): the pull sync reloads such rows when it re-reads
# them, even unchanged (see `pipelines.warehouse_facts.webhook_written_keys`)
PRESENT = "__present"  # list<string> column: which columns this row's payload actually carried


@dataclass
class TableBatch:
    """Rows for one warehouse table. `replace_parents` marks a link table: every link row of
    these parent ids is replaced (the parent was delivered with that relationship's data)."""

    name: str
    rows: pa.Table | None
    parent_column: str | None = None
    replace_parents: set[str] = field(default_factory=set)


def existing_columns(db: WarehouseDB, schema: str, table: str) -> dict[str, str]:
    return db.columns(schema, table)


def _column_ddl(db: WarehouseDB, table: str, columns: list[str]) -> dict[str, str]:
    """SQL type (and NOT NULL) per column, from the same dlt hints the pull sync loads with,
    so that a table the receiver creates is the table the pull sync would have created."""
    hints = table_hints(table, declared_columns(table, columns))["columns"]
    ddl = {}
    for column in columns:
        if column == "_dlt_load_id":  # added by dlt to the pull sync's arrow loads
            ddl[column] = f"{db.types['load_id']} NOT NULL"
            continue
        if column == PRESENT:  # only ever staged, never a warehouse column
            ddl[column] = db.types["text_list"]
            continue
        hint = hints.get(column, {"data_type": "text"})
        kind = hint["data_type"]
        sql_type = (
            f"DECIMAL({hint['precision']}, {hint['scale']})" if kind == "decimal"
            else db.types[kind]
        )
        ddl[column] = sql_type if hint.get("nullable", True) else f"{sql_type} NOT NULL"
    return ddl


def _prepare_table(db: WarehouseDB, schema: str, table: str, columns: list[str]) -> set[str]:
    """Create the table with the pull sync's column types, or add the columns it lacks;
    returns the table's columns."""
    target = db.table(schema, table)
    have = existing_columns(db, schema, table)
    ddl = _column_ddl(db, table, columns)
    if not have:
        body = ", ".join(f"{quote_ident(c)} {t}" for c, t in ddl.items())
        db.execute(f"CREATE TABLE {target} ({body})")
        return set(columns)
    for column in columns:
        if column not in have:
            nullable_type = ddl[column].removesuffix(" NOT NULL")
            db.execute(f"ALTER TABLE {target} ADD COLUMN {quote_ident(column)} {nullable_type}")
    return set(have) | set(columns)


def _staged_types(db: WarehouseDB, table: str, data: pa.Table) -> dict[str, str]:
    """The column types rows of `table` are staged with (PostgreSQL's temporary table)."""
    return {c: t.removesuffix(" NOT NULL")
            for c, t in _column_ddl(db, table, list(data.column_names)).items()}


def _fill_ins(db: WarehouseDB, have: Iterable[str], columns: Iterable[str]) -> dict[str, str]:
    """Values for pull-side columns our rows do not carry (column -> SQL): a new row is not
    deleted, and if the pull's dlt config ever adds `_dlt_id` (NOT NULL), each row still gets
    a unique one."""
    missing = set(have) - set(columns)
    fill = {}
    if "_is_deleted" in missing:
        fill["_is_deleted"] = "false"
    if "_dlt_id" in missing:
        fill["_dlt_id"] = db.uuid_hex()
    return fill


def _insert(db: WarehouseDB, target: str, columns: list[str], fill: dict[str, str],
            select_from: str) -> None:
    """INSERT the `columns` of `select_from` (a SELECT's FROM and WHERE) with the fill-ins."""
    names = ", ".join(quote_ident(c) for c in [*columns, *fill])
    values = ", ".join([*(quote_ident(c) for c in columns), *fill.values()])
    db.execute(f"INSERT INTO {target} ({names}) SELECT {values} FROM {select_from}")


def upsert_resources(
    db: WarehouseDB, schema: str, batch: TableBatch, *, strictly_newer: bool = False
) -> int:
    """Insert new ids; on existing ids set only the columns each row's payload carried.
    `strictly_newer`: update a row only when both carry `updated_at` and the payload's is later
    (a pull's load is then never undone by a push of the same version)."""
    data = batch.rows
    assert data is not None
    columns = [c for c in data.column_names if c != PRESENT]
    with db.staged(f"_wh_{batch.name}", data, _staged_types(db, batch.name, data)) as view:
        have = _prepare_table(db, schema, batch.name, columns)
        target = db.table(schema, batch.name)
        if PRESENT in data.column_names:
            assignments = ", ".join(
                f"{quote_ident(c)} = CASE WHEN {db.contains(f'b.{PRESENT}', c)} "
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
            db.execute(
                f"UPDATE {target} AS t SET {assignments} FROM {view} AS b "
                f"WHERE t.id = b.id{newer_only}"
            )
        _insert(db, target, columns, _fill_ins(db, have, columns),
                f"{view} WHERE id NOT IN (SELECT id FROM {target})")
    return data.num_rows


def replace_links(db: WarehouseDB, schema: str, batch: TableBatch) -> int:
    """Link rows of each delivered parent are replaced as a set (architecture doc)."""
    import pyarrow as pa

    assert batch.parent_column is not None
    target = db.table(schema, batch.name)
    data = batch.rows
    count = 0 if data is None else data.num_rows
    exists = bool(_prepare_table(db, schema, batch.name, data.column_names)) if count else bool(
        existing_columns(db, schema, batch.name)
    )
    if batch.replace_parents and exists:
        parents = pa.table({"parent_id": sorted(batch.replace_parents)})
        with db.staged("_wh_parents", parents, {"parent_id": db.types["text"]}) as staged:
            db.execute(
                f"DELETE FROM {target} WHERE {quote_ident(batch.parent_column)} IN "
                f"(SELECT parent_id FROM {staged})"
            )
    if count:
        with db.staged(f"_wh_{batch.name}", data, _staged_types(db, batch.name, data)) as view:
            columns = list(data.column_names)
            cols = ", ".join(quote_ident(c) for c in columns)
            fill = _fill_ins(db, existing_columns(db, schema, batch.name), columns)
            _insert(db, target, columns, fill, f"(SELECT DISTINCT {cols} FROM {view}) AS d")
    return count
