"""Repair after a killed run: a load job re-run when its package was finished appended its
rows twice; one row per key is kept."""

from __future__ import annotations

import dlt

from .tuning import REPAIR_MEMORY_LIMIT
from .warehouse_sql import existing_tables, is_duckdb, scan_client


def dedupe_appended(pipeline: dlt.Pipeline) -> dict[str, int]:
    """Remove duplicate keys from tables the schema loads with `append` (DuckDB only).

    A load job that inserted its file but was killed before dlt marked it done runs again when
    the package is finished: a merge would collapse the repeat, an append keeps it. So after
    finishing a package left by a killed run, one row per primary key is kept (the newest load).
    """
    removed: dict[str, int] = {}
    if not is_duckdb(pipeline):
        return removed
    try:
        schema = pipeline.default_schema
    except Exception:
        return removed
    candidates = {
        t["name"]: [c for c, col in t.get("columns", {}).items() if col.get("primary_key")]
        for t in schema.data_tables(include_incomplete=False)
        if t.get("write_disposition") == "append"
    }
    with scan_client(pipeline, REPAIR_MEMORY_LIMIT) as client:
        for table in existing_tables(client, [t for t, keys in candidates.items() if keys]):
            keys = ", ".join(client.escape_column_name(k) for k in candidates[table])
            q = client.make_qualified_table_name(table)
            rows = client.execute_sql(
                f"SELECT COUNT(*) - COUNT(DISTINCT ({keys})) FROM {q}"
            )
            extra = int(rows[0][0])
            if extra:
                client.execute_sql(
                    f"DELETE FROM {q} WHERE rowid IN (SELECT rowid FROM (SELECT rowid, ROW_NUMBER() "
                    f"OVER (PARTITION BY {keys} ORDER BY _dlt_load_id DESC) AS rn FROM {q}) WHERE rn > 1)"
                )
                removed[table] = extra
    return removed
