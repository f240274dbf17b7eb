"""What the raw dataset says about the sync: when it last loaded, rows per table, site names.

Read from dlt's own `_dlt_loads` (status 0 = a completed load) and the dataset's tables; all
sites together, because a sync loads them together.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import duckdb

from common.duckdb_names import quote_ident


@dataclass(frozen=True)
class Freshness:
    dataset: str
    found: bool
    last_sync_at: dt.datetime | None
    rows: dict[str, int]


def read_freshness(con: duckdb.DuckDBPyConnection, dataset: str) -> Freshness:
    """Last successful load and rows per table of the raw dataset (all sites: it is the sync's view)."""
    tables = [
        name
        for (name,) in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = ? "
            "AND table_type = 'BASE TABLE' ORDER BY table_name",
            [dataset],
        ).fetchall()
    ]
    if not tables:
        return Freshness(dataset, False, None, {})
    schema = quote_ident(dataset)
    last_sync = None
    if "_dlt_loads" in tables:
        (last_sync,) = con.execute(
            f"SELECT max(inserted_at) FROM {schema}._dlt_loads WHERE status = 0"
        ).fetchone()
    data_tables = [t for t in tables if not t.startswith("_dlt")]
    rows: dict[str, int] = {}
    if data_tables:
        union = " UNION ALL ".join(
            f"SELECT ? AS t, count(*) FROM {schema}.{quote_ident(t)}" for t in data_tables
        )
        rows = {name: int(count) for name, count in con.execute(union, data_tables).fetchall()}
    if isinstance(last_sync, dt.datetime) and last_sync.tzinfo is None:
        last_sync = last_sync.replace(tzinfo=dt.UTC)
    return Freshness(dataset, True, last_sync, rows)


def read_site_names(con: duckdb.DuckDBPyConnection, dataset: str) -> dict[str, str]:
    """Site id -> name from the raw `sites` table, for a header people recognise; {} if absent."""
    columns = {
        name
        for (name,) in con.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_schema = ? AND table_name = 'sites'",
            [dataset],
        ).fetchall()
    }
    if not {"id", "name"} <= columns:
        return {}
    rows = con.execute(
        f"SELECT id, any_value(name) FROM {quote_ident(dataset)}.sites "
        "WHERE name IS NOT NULL GROUP BY id ORDER BY id"
    ).fetchall()
    return {str(site): str(name) for site, name in rows}
