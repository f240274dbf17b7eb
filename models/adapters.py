"""Thin connections to the warehouses the models run on.

The SQL is written once in DuckDB's dialect; an adapter knows its dialect (PostgreSQL's
translates with sqlglot, through `models.translations`), how to replace a table, and how to
list a raw table's columns. Everything runs in one transaction, so a failing model leaves the
previous build untouched.
"""

from __future__ import annotations

from typing import Any, Protocol

import duckdb

from creator_sync.common.duckdb_names import connect_warehouse, quote_ident, quote_literal
from creator_sync.common.terminal import (
    EXIT_SIGNAL_BASE,
    Interrupted,
    interrupt_code,
    was_interrupted,
)
from creator_sync.common.warehouse_db import (
    MissingWarehouseCredentials,
    WarehouseUnavailable,
    redact_dsn,
    resolve_dsn,
)
from creator_sync.models.translations import Translations

# re-exported: the commands catch them from here
__all__ = ["MissingWarehouseCredentials", "WarehouseUnavailable", "redact_dsn"]

class Adapter(Protocol):
    dialect: str
    label: str

    def execute(self, sql: str) -> None: ...

    def fetch(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]: ...

    def columns(self, schema: str, table: str) -> dict[str, str] | None: ...

    def schema_columns(self, schema: str) -> dict[str, dict[str, str]]: ...

    def replace_table(self, schema: str, table: str, select_sql: str) -> None: ...

    def begin(self) -> None: ...

    def comment(self, comments: list[tuple[str, str, str | None, str]]) -> None: ...

    def commit(self) -> None: ...

    def rollback(self) -> None: ...

    def close(self) -> None: ...


class _Base:
    dialect = "duckdb"
    label = "?"
    _conn: Any

    def translate(self, sql: str) -> str:
        return sql

    def comment(self, comments: list[tuple[str, str, str | None, str]]) -> None:
        """COMMENT ON TABLE / COLUMN for (schema, table, column or None, text), in one script:
        the syntax is the same on DuckDB and PostgreSQL, so it is not transpiled."""
        statements = []
        for schema, table, column, text in comments:
            target = f"{quote_ident(schema)}.{quote_ident(table)}"
            literal = "'" + text.replace("'", "''") + "'"
            if column is None:
                statements.append(f"comment on table {target} is {literal}")
            else:
                statements.append(f"comment on column {target}.{quote_ident(column)} is {literal}")
        if statements:
            self._conn_execute(";\n".join(statements))

    def columns(self, schema: str, table: str) -> dict[str, str] | None:
        _, rows = self.fetch(
            "select column_name, data_type from information_schema.columns "
            f"where table_schema = {quote_literal(schema)} and table_name = {quote_literal(table)}"
        )
        return {name: dtype for name, dtype in rows} or None

    def schema_columns(self, schema: str) -> dict[str, dict[str, str]]:
        """Every table of `schema` with its columns, in one query (the runner reads all the raw
        tables' columns before it builds)."""
        _, rows = self.fetch(
            "select table_name, column_name, data_type from information_schema.columns "
            f"where table_schema = {quote_literal(schema)}"
        )
        out: dict[str, dict[str, str]] = {}
        for table, name, dtype in rows:
            out.setdefault(table, {})[name] = dtype
        return out

    def schema_exists(self, schema: str) -> bool:
        _, rows = self.fetch(
            f"select 1 from information_schema.schemata where schema_name = {quote_literal(schema)}"
        )
        return bool(rows)

    def ensure_schema(self, schema: str) -> None:
        self.execute(f"create schema if not exists {quote_ident(schema)}")


def _reraise_interrupt(conn: duckdb.DuckDBPyConnection, exc: Exception) -> None:
    """DuckDB turns a pending SIGINT/SIGTERM into `Query interrupted` (an InterruptException or
    a RuntimeError, by version): give it back as the signal it was, so that no caller mistakes
    it for a failing query. The query may still be running inside DuckDB when Python sees the
    exception (DuckDB 1.5.6, about one time in two): stop it first, or the rollback that
    follows waits for it to finish."""
    if isinstance(exc, duckdb.InterruptException) or was_interrupted(exc):
        conn.interrupt()
        raise Interrupted(interrupt_code(exc) - EXIT_SIGNAL_BASE) from exc


class DuckDBAdapter(_Base):
    dialect = "duckdb"

    def __init__(self, path: str, read_only: bool = False) -> None:
        self.label = f"duckdb:{path}"
        # under an alias: a file named like the dataset (or `analytics`) stays unambiguous
        self._conn = connect_warehouse(path, read_only=read_only)
        # Casting a TIMESTAMPTZ to DATE follows the session zone: pin it, the SQL converts
        # explicitly with AT TIME ZONE wherever a local day is meant.
        self._conn.execute("set TimeZone = 'UTC'")

    def execute(self, sql: str) -> None:
        self._conn_execute(self.translate(sql))

    def _conn_execute(self, sql: str) -> None:
        try:
            self._conn.execute(sql)
        except Exception as exc:
            _reraise_interrupt(self._conn, exc)
            raise

    def fetch(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        try:
            cursor = self._conn.execute(self.translate(sql))
            names = [d[0] for d in cursor.description] if cursor.description else []
            return names, cursor.fetchall()
        except Exception as exc:
            _reraise_interrupt(self._conn, exc)
            raise

    def replace_table(self, schema: str, table: str, select_sql: str) -> None:
        self.execute(
            f"create or replace table {quote_ident(schema)}.{quote_ident(table)} as\n{select_sql}"
        )

    def begin(self) -> None:
        self._conn.execute("begin transaction")

    def commit(self) -> None:
        self._conn.execute("commit")

    def rollback(self) -> None:
        self._conn.execute("rollback")

    def close(self) -> None:
        self._conn.close()


class PostgresAdapter(_Base):
    dialect = "postgres"

    def __init__(self, dsn: str) -> None:
        import psycopg2

        self._conn = psycopg2.connect(dsn)
        self._conn.autocommit = True
        params = self._conn.get_dsn_parameters()
        # The label names the server, never the password.
        self.label = f"postgres:{params.get('host')}:{params.get('port')}/{params.get('dbname')}"
        # sqlglot's translations, kept between runs: a daily build repeats yesterday's SQL
        self._translations = Translations(self.dialect)
        with self._conn.cursor() as cursor:
            cursor.execute("set time zone 'UTC'")

    def translate(self, sql: str) -> str:
        return self._translations(sql)

    def execute(self, sql: str) -> None:
        self._conn_execute(self.translate(sql))

    def _conn_execute(self, sql: str) -> None:
        with self._conn.cursor() as cursor:
            cursor.execute(sql)

    def fetch(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        with self._conn.cursor() as cursor:
            cursor.execute(self.translate(sql))
            names = [d[0] for d in cursor.description] if cursor.description else []
            return names, cursor.fetchall()

    def replace_table(self, schema: str, table: str, select_sql: str) -> None:
        target = f"{quote_ident(schema)}.{quote_ident(table)}"
        self.execute(f"drop table if exists {target} cascade")
        self.execute(f"create table {target} as\n{select_sql}")
        # A new table has no statistics until autovacuum comes by, a minute or more later: the
        # models built on it were planned on default estimates, and three of them took 10 of a
        # `tiny` build's 12 s (int_revenue_schedule, unpaid_balance, revenue_daily). ANALYZE
        # reads a sample (0.4 s for the whole build at `tiny`) and is allowed in the build's
        # transaction.
        self._conn_execute(f"analyze {target}")

    def begin(self) -> None:
        # one snapshot for the whole build and its tests: a sync may commit meanwhile (no
        # file lock keeps it out, as on DuckDB), and READ COMMITTED would show each statement
        # a different raw dataset
        self._conn.set_session(isolation_level="REPEATABLE READ", autocommit=False)

    def commit(self) -> None:
        self._conn.commit()
        self._conn.autocommit = True

    def rollback(self) -> None:
        self._conn.rollback()
        self._conn.autocommit = True

    def close(self) -> None:
        self._conn.close()


DESTINATIONS = ("duckdb", "postgres")


def open_adapter(
    destination: str,
    duckdb_path: str,
    postgres_dsn: str | None = None,
    *,
    read_only: bool = False,
) -> Adapter:
    """The one way `models` and `report` open the warehouse the pipeline loaded: the DuckDB file
    (read-only for a reader, so it never locks out a sync), or PostgreSQL by `postgres_dsn` (the
    setting `creator_sync.postgres_dsn`), else as `common.warehouse_db.resolve_dsn` finds it."""
    if destination == "duckdb":
        try:
            return DuckDBAdapter(duckdb_path, read_only=read_only)
        except Exception as exc:  # duckdb raises IOException when another process holds the file
            mode = "read-only" if read_only else "for writing"
            hint = " (is a sync or a models build still writing to it?)" if "lock" in str(exc) else ""
            raise WarehouseUnavailable(
                f"{duckdb_path}: cannot open the database {mode}{hint}: {exc}"
            ) from exc
    if destination != "postgres":
        raise WarehouseUnavailable(
            f"unknown destination {destination!r} (choose from {', '.join(DESTINATIONS)})"
        )
    dsn = resolve_dsn(postgres_dsn)
    try:
        return PostgresAdapter(dsn)
    except Exception as exc:
        # psycopg2 echoes a malformed DSN back in its message: mask the password
        raise WarehouseUnavailable(
            f"cannot connect to postgres: {redact_dsn(str(exc).strip())}"
        ) from None
