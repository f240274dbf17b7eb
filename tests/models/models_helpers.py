"""Helpers for the models tests: hand-built raw tables that follow the warehouse contract."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import duckdb

from creator_sync.models.raw_contract import SOURCE_TABLES

Rows = dict[str, list[dict[str, Any]]]

EXTRACTED_AT = dt.datetime(2024, 4, 1, tzinfo=dt.UTC)


def ts(text: str) -> dt.datetime:
    """An ISO instant with an explicit offset: raw timestamps are always UTC-aware."""
    value = dt.datetime.fromisoformat(text)
    assert value.tzinfo is not None, text
    return value


def _column_names(table: str, records: list[dict[str, Any]]) -> list[str]:
    """Columns a hand-built raw table gets: those the rows use, plus dlt's load metadata."""
    contract = SOURCE_TABLES[table].columns
    names: list[str] = []
    for record in records:
        names.extend(n for n in record if n not in names)
    for meta in ("_extracted_at", "_dlt_load_id"):
        if meta in contract and meta not in names:
            names.append(meta)
    return names


def _row_values(names: list[str], record: dict[str, Any], index: int) -> list[Any]:
    """One row's values, with the load metadata dlt would have written filled in."""
    values = []
    for name in names:
        value = record.get(name)
        if value is None and name == "_extracted_at":
            value = EXTRACTED_AT
        elif value is None and name == "_dlt_load_id":
            value = f"load-{index:04d}"
        values.append(value)
    return values


def write_raw(path: Path, rows: Rows, dataset: str = "creator_platform") -> str:
    """Create `dataset.<table>` in a DuckDB file with only the columns the rows use (as dlt
    would), typed by the contract in models/sources.py. Returns the file path."""
    con = duckdb.connect(str(path))
    con.execute("set TimeZone = 'UTC'")
    con.execute(f'create schema if not exists "{dataset}"')
    for table, records in rows.items():
        contract = SOURCE_TABLES[table].columns
        names = _column_names(table, records)
        cols = ", ".join(f'"{n}" {contract[n]}' for n in names)
        con.execute(f'create table "{dataset}"."{table}" ({cols})')
        marks = ", ".join("?" for _ in names)
        for i, record in enumerate(records):
            con.execute(f'insert into "{dataset}"."{table}" values ({marks})',
                        _row_values(names, record, i))
    con.close()
    return str(path)


def fetch_dicts(path: str, sql: str) -> list[dict[str, Any]]:
    con = duckdb.connect(path, read_only=True)
    try:
        cursor = con.execute(sql)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    finally:
        con.close()


PG_TYPES = {"double": "double precision"}


def write_raw_postgres(dsn: str, rows: Rows, dataset: str = "creator_platform") -> None:
    """The same hand-built raw tables as `write_raw`, in PostgreSQL."""
    import psycopg2

    con = psycopg2.connect(dsn)
    con.autocommit = True
    with con.cursor() as cur:
        cur.execute(f'drop schema if exists "{dataset}" cascade')
        cur.execute(f'create schema "{dataset}"')
        for table, records in rows.items():
            contract = SOURCE_TABLES[table].columns
            names = _column_names(table, records)
            cols = ", ".join(f'"{n}" {PG_TYPES.get(contract[n], contract[n])}' for n in names)
            cur.execute(f'create table "{dataset}"."{table}" ({cols})')
            marks = ", ".join("%s" for _ in names)
            for i, record in enumerate(records):
                cur.execute(f'insert into "{dataset}"."{table}" values ({marks})',
                            _row_values(names, record, i))
    con.close()


def _normal(value: Any) -> Any:
    """Values from two engines, made comparable: exact for money and dates, 1e-9 for floats."""
    from decimal import Decimal

    if isinstance(value, float):
        return round(value, 9)
    if isinstance(value, Decimal):
        return value.normalize() if value == value.to_integral_value() else value
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC)
    return value


def mart_rows(
    fetch: Any, table: str, skip: set[str] | frozenset[str] = frozenset()
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """All rows of `analytics.<table>` but the `skip` columns, by name, sorted by every column."""
    names, rows = fetch(f"select * from analytics.{table}")
    order = sorted((i for i in range(len(names)) if names[i] not in skip), key=lambda i: names[i])
    normalised = [tuple(_normal(row[i]) for i in order) for row in rows]
    normalised.sort(key=lambda r: tuple((v is None, str(v)) for v in r))
    return [names[i] for i in order], normalised
