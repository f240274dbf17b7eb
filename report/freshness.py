"""What the raw dataset says about the sync: when it last loaded, rows per table, site names.

Read from dlt's own `_dlt_loads` (status 0 = a completed load) and the dataset's tables; all
sites together, because a sync loads them together.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from creator_sync.common.duckdb_names import quote_ident, quote_literal


@dataclass(frozen=True)
class Freshness:
    dataset: str
    found: bool
    last_sync_at: dt.datetime | None
    rows: dict[str, int]


def _rows(adapter: Any, sql: str) -> list[tuple[Any, ...]]:
    return adapter.fetch(sql)[1]


def read_freshness(adapter: Any, dataset: str) -> Freshness:
    """Last successful load and rows per table of the raw dataset (all sites: it is the sync's
    view), through any warehouse adapter."""
    tables = [
        name
        for (name,) in _rows(
            adapter,
            "select table_name from information_schema.tables where table_schema = "
            f"{quote_literal(dataset)} and table_type = 'BASE TABLE' order by table_name",
        )
    ]
    if not tables:
        return Freshness(dataset, False, None, {})
    schema = quote_ident(dataset)
    last_sync = None
    if "_dlt_loads" in tables:
        ((last_sync,),) = _rows(
            adapter, f"select max(inserted_at) from {schema}._dlt_loads where status = 0"
        )
    data_tables = [t for t in tables if not t.startswith("_dlt")]
    rows: dict[str, int] = {}
    if data_tables:
        union = " union all ".join(
            f"select {quote_literal(t)} as t, count(*) from {schema}.{quote_ident(t)}"
            for t in data_tables
        )
        rows = {name: int(count) for name, count in _rows(adapter, union)}
    if isinstance(last_sync, dt.datetime) and last_sync.tzinfo is None:
        last_sync = last_sync.replace(tzinfo=dt.UTC)
    return Freshness(dataset, True, last_sync, rows)


def read_site_names(adapter: Any, dataset: str) -> dict[str, str]:
    """Site id -> name from the raw `sites` table, for a header people recognise; {} if absent."""
    columns = {
        name
        for (name,) in _rows(
            adapter,
            "select column_name from information_schema.columns "
            f"where table_schema = {quote_literal(dataset)} and table_name = 'sites'",
        )
    }
    if not {"id", "name"} <= columns:
        return {}
    rows = _rows(
        adapter,
        f"select id, max(name) from {quote_ident(dataset)}.sites "
        "where name is not null group by id order by id",
    )
    return {str(site): str(name) for site, name in rows}
