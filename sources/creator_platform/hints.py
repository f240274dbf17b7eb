"""Declared columns and dlt hints of every table, resource, link and line (docs/architecture.md).

What the warehouse is told before any row arrives: each table's columns and types (contract
columns first, drifted ones by name), its keys and write disposition, and which tables are link
or line tables (keyed by parent, replaced per parent).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Any

from .endpoints import (
    DECIMAL_PRECISION,
    LINE_KEY,
    LINE_TABLES,
    ColumnType,
    column_type,
)

EXTRACTED_AT = "_extracted_at"
# true on a marker row only (an empty relationship or line array, `rows.py`): dlt's `hard_delete`
# column of link and line tables (the merge deletes the parent's stored rows and inserts no
# marker), null in every stored row
EMPTY_PARENT = "_empty_parent"
META_COLUMNS: dict[str, ColumnType] = {"site_id": "text", EXTRACTED_AT: "timestamp"}


@functools.cache
def _known_tables() -> dict[str, Any]:
    from .endpoints import TYPES

    return {info.table: info for info in TYPES.values()}


def declared_columns(table: str, observed: Iterable[str] = ()) -> dict[str, ColumnType]:
    """Column -> type for a table: contract columns first, then drifted ones, by name."""
    cols: dict[str, ColumnType] = {}
    line = LINE_TABLES.get(table)
    if line is not None:
        cols[line.parent_column] = "text"
        cols[LINE_KEY] = "bigint"
        cols["site_id"] = "text"
        cols.update(line.column_types)
        cols["_extracted_at"] = "timestamp"
    elif table in _known_tables():
        info = _known_tables()[table]
        cols["id"] = "text"
        for attr in info.attributes:
            cols[attr] = column_type(attr)
        for rel in info.to_one:
            cols[f"{rel}_id"] = "text"
        cols.update(META_COLUMNS)
        if info.flags_deleted:
            cols["_is_deleted"] = "bool"
    for name in observed:
        if name not in cols:
            cols[name] = "bool" if name in ("_is_deleted", EMPTY_PARENT) else (
                "text" if name.endswith("_id") or name == "id" else column_type(name)
            )
    return cols


def table_hints(table: str, columns: Mapping[str, ColumnType] | None = None) -> dict[str, Any]:
    """dlt hints (for `dlt.mark.make_hints`) for a resource or link table."""
    cols = dict(columns) if columns is not None else declared_columns(table)
    col_hints: dict[str, dict[str, Any]] = {}
    for name, kind in cols.items():
        hint: dict[str, Any] = {"data_type": _dlt_type(kind), "nullable": True}
        if kind == "decimal":
            hint["precision"], hint["scale"] = DECIMAL_PRECISION
        if kind == "timestamp":
            hint["timezone"] = True
        col_hints[name] = hint
    if "id" in cols:
        col_hints["id"]["nullable"] = False
        return {
            "table_name": table,
            "write_disposition": "merge",
            "primary_key": "id",
            "columns": col_hints,
        }
    parent_col, child_col = link_columns(table, cols)
    for c in (parent_col, child_col):
        col_hints.setdefault(c, {"data_type": "text"})["nullable"] = False
    # declared whether or not this item has a marker: the first item's hints make the table
    col_hints[EMPTY_PARENT] = {"data_type": "bool", "nullable": True, "hard_delete": True}
    return {
        "table_name": table,
        # a parent's rows are replaced as a set: those of each parent loaded are deleted first
        "write_disposition": {"disposition": "merge", "strategy": "delete-insert"},
        "primary_key": [parent_col, child_col],
        "merge_key": parent_col,
        "columns": col_hints,
    }


def link_columns(table: str, columns: Iterable[str]) -> tuple[str, str]:
    """(parent column, child column) of a link table: the first two `*_id` besides site_id;
    of a line table: its parent column and `line_number`."""
    line = LINE_TABLES.get(table)
    if line is not None:
        return line.parent_column, LINE_KEY
    ids = [c for c in columns if c.endswith("_id") and c != "site_id" and not c.startswith("_")]
    if len(ids) < 2:
        raise ValueError(f"{table} does not look like a link table: {list(columns)}")
    return ids[0], ids[1]


def _dlt_type(kind: ColumnType) -> str:
    return {
        "text": "text",
        "bigint": "bigint",
        "bool": "bool",
        "timestamp": "timestamp",
        "decimal": "decimal",
        "double": "double",
        "json": "json",
    }[kind]


def is_link_table(columns: Iterable[str], table: str | None = None) -> bool:
    """Link tables have no `id` column (and are named `<resource table>_<relationship>`); line
    tables (`settings.LINE_TABLES`) are keyed and replaced per parent the same way."""
    if "id" in set(columns):
        return False
    return table is None or table in LINE_TABLES or any(
        table.startswith(f"{t}_") for t in _known_tables())
