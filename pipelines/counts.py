"""Row counts for the sync's summary: rows per table, and rows this run's loads wrote."""

from __future__ import annotations

from collections.abc import Iterable

import dlt

from .warehouse_sql import existing_tables, scan_client


def row_counts(pipeline: dlt.Pipeline, tables: Iterable[str]) -> dict[str, int]:
    """COUNT(*) per existing table (0 for tables not created yet)."""
    names = list(tables)
    out = dict.fromkeys(names, 0)
    if not names:  # a run that loads nothing counts nothing: no connection, no statements
        return out
    with scan_client(pipeline) as client:
        for table in existing_tables(client, names):
            rows = client.execute_sql(f"SELECT COUNT(*) FROM {client.make_qualified_table_name(table)}")
            out[table] = int(rows[0][0])
    return out


def loaded_counts(pipeline: dlt.Pipeline, tables: Iterable[str], load_ids: list[str]) -> dict[str, int]:
    """Rows per table that carry one of `load_ids` (i.e. were written by this run)."""
    out: dict[str, int] = {}
    tables = list(tables)
    if not load_ids or not tables:
        return out
    placeholders = ", ".join(["%s"] * len(load_ids))
    with scan_client(pipeline) as client:
        for table in existing_tables(client, tables):
            q = client.make_qualified_table_name(table)
            rows = client.execute_sql(
                f"SELECT COUNT(*) FROM {q} WHERE _dlt_load_id IN ({placeholders})", *load_ids
            )
            out[table] = int(rows[0][0])
    return out
