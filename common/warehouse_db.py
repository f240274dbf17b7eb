"""The warehouse as our own SQL sees it, DuckDB or PostgreSQL: one open connection with its
writer lock (`open_warehouse`), and the few things that differ between the two (`WarehouseDB`).

dlt loads the warehouse; beside it, a few steps write SQL of their own: the webhook loader's
micro-batches, the push restore after a pull's load, `status`, erasure. They all go through
here, so each runs on DuckDB and PostgreSQL alike and takes the one lock that keeps writers
apart:

- DuckDB has a single writer: the file lock `<duckdb>.lock` (`locking.warehouse_lock`), which
  the pull sync also holds around its load step;
- PostgreSQL has many writers, but the receiver's upsert (update, then insert what is new) and
  the pull's merge must not interleave: a session advisory lock per dataset
  (`pg_advisory_lock`), held by the sync around its load step and by each micro-batch. The
  server drops it when the holder's connection ends, so a killed process never leaves it held.

SQL passed to `execute`/`fetchall` is written once, with `?` placeholders; names go through
`table`/`schema` (qualified so that no file or dataset name makes them ambiguous), and the few
dialect differences are methods (`contains`, `uuid_hex`, `json`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from .duckdb_literals import inline_parameters
from .duckdb_names import connect_warehouse, quote_ident, quote_literal, schema_ref, table_ref
from .locking import LockTimeout, warehouse_lock
from .warehouse import DEPRECATED_DSN_ENV, Warehouse

if TYPE_CHECKING:
    import pyarrow as pa

# the dlt destination's SQL type per logical type (dlt's DuckDB and PostgreSQL type mappers), so
# a table our SQL creates is the table a pull would have created
SQL_TYPES = {
    "duckdb": {"text": "VARCHAR", "bigint": "BIGINT", "bool": "BOOLEAN",
               "timestamp": "TIMESTAMP WITH TIME ZONE", "double": "DOUBLE", "json": "JSON",
               "load_id": "VARCHAR", "text_list": "VARCHAR[]"},
    "postgres": {"text": "varchar", "bigint": "bigint", "bool": "boolean",
                 "timestamp": "timestamp with time zone", "double": "double precision",
                 "json": "jsonb", "load_id": "varchar(64)", "text_list": "varchar[]"},
}


class WarehouseUnavailable(Exception):
    """The warehouse cannot be opened; the message is one line, names where, and holds no
    password."""


class MissingWarehouseCredentials(WarehouseUnavailable):
    """No credentials for the warehouse were given anywhere: a configuration error (exit 2),
    where a refused connection with credentials is a run-time failure."""


def postgres_dsn(wh: Warehouse) -> str:
    """The PostgreSQL warehouse's DSN: the setting `creator_sync.postgres_dsn` (flag, env
    `CREATOR_SYNC__POSTGRES_DSN`, `.dlt/secrets.toml`), else the deprecated
    `CREATOR_SYNC_POSTGRES_DSN`, else dlt's postgres destination credentials: the database
    `sync` loads, whichever of them names it."""
    return resolve_dsn(wh.postgres_dsn)


def resolve_dsn(given: str | None) -> str:
    """`given` (the setting's value), else the deprecated variable, else dlt's credentials."""
    dsn = given or os.environ.get(DEPRECATED_DSN_ENV)
    if dsn:
        return dsn
    from dlt.common.configuration import resolve_configuration
    from dlt.common.configuration.exceptions import ConfigurationException
    from dlt.destinations.impl.postgres.configuration import PostgresCredentials

    try:
        credentials = resolve_configuration(PostgresCredentials(),
                                            sections=("destination", "postgres"))
    except ConfigurationException:
        raise MissingWarehouseCredentials(
            "no postgres credentials found: set CREATOR_SYNC__POSTGRES_DSN (or postgres_dsn "
            "under [creator_sync] in .dlt/secrets.toml), or dlt's "
            "DESTINATION__POSTGRES__CREDENTIALS") from None
    return str(credentials.to_native_representation())


def configured_dsn(wh: Warehouse) -> str | None:
    """The DSN creator-sync's own settings give (the deprecated variable included), or None:
    then dlt resolves its destination's credentials itself."""
    return wh.postgres_dsn or os.environ.get(DEPRECATED_DSN_ENV) or None


def redact_dsn(text: str) -> str:
    """Mask any password of a DSN (URL or key=value form) inside a message."""
    import re

    pattern = re.compile(r"(://[^:/@\s]*:)[^\s\"']*@|(password\s*=\s*)('[^']*'|\S+)",
                         re.IGNORECASE)
    return pattern.sub(lambda m: f"{m.group(1)}***@" if m.group(1) else f"{m.group(2)}***", text)


def connect_postgres(dsn: str) -> Any:
    """A psycopg2 connection in autocommit (transactions are explicit), on UTC; a failure is
    one line without the password."""
    import psycopg2

    try:
        conn = psycopg2.connect(dsn)
    except Exception as exc:  # psycopg2 echoes a malformed DSN back: mask the password
        raise WarehouseUnavailable(
            f"cannot connect to postgres: {redact_dsn(str(exc).strip())}") from None
    conn.autocommit = True
    with conn.cursor() as cursor:
        cursor.execute("SET TIME ZONE 'UTC'")
    return conn


def postgres_label(conn: Any) -> str:
    """Where a connection goes, never its password: `postgres:host:port/db`."""
    params = conn.get_dsn_parameters()
    return f"postgres:{params.get('host')}:{params.get('port')}/{params.get('dbname')}"


def warehouse_label(wh: Warehouse) -> str:
    """Where the warehouse is, for a reader, never a password: the DuckDB file, or
    `postgres:host:port/db (dataset X)`."""
    if wh.duckdb_path:
        return wh.duckdb_path
    if wh.destination != "postgres":
        return f"{wh.destination} (dataset {wh.dataset})"
    try:
        from psycopg2.extensions import parse_dsn

        params = parse_dsn(postgres_dsn(wh))
    except Exception:  # no credentials or a malformed DSN: the connection will say so
        return f"postgres (dataset {wh.dataset})"
    return (f"postgres:{params.get('host', 'localhost')}:{params.get('port', 5432)}/"
            f"{params.get('dbname', '')} (dataset {wh.dataset})")


def lock_key(dataset: str) -> int:
    """The advisory lock of one dataset (a signed 64-bit key; advisory locks are per database)."""
    digest = hashlib.sha256(f"creator_sync.warehouse:{dataset}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class WarehouseDB:
    """One open connection (DuckDB's or psycopg2's, ours or dlt's), with what differs."""

    def __init__(self, native: Any, dialect: str, label: str = "") -> None:
        assert dialect in SQL_TYPES, dialect
        self.native = native
        self.dialect = dialect
        self.label = label
        self.types = SQL_TYPES[dialect]

    # -- names --------------------------------------------------------------------------------
    def schema(self, schema: str) -> str:
        """`schema`, unambiguous whatever the file and dataset are called (`schema_ref`)."""
        return schema_ref(self.native, schema)

    def table(self, schema: str, table: str) -> str:
        return table_ref(self.native, schema, table)

    # -- statements ---------------------------------------------------------------------------
    def _sql(self, sql: str, params: Sequence[Any] | None) -> str:
        if self.dialect == "postgres" and params is not None:
            return sql.replace("%", "%%").replace("?", "%s")
        return sql

    def _duckdb(self, sql: str, params: Sequence[Any] | None) -> Any:
        """DuckDB runs it, its parameters written as literals where they have one
        (`duckdb_literals`: binding makes DuckDB import pandas)."""
        inlined = inline_parameters(sql, params, "?") if params else None
        if inlined is not None:
            return self.native.execute(inlined)
        return self.native.execute(sql, params)

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> None:
        if self.dialect == "duckdb":
            self._duckdb(sql, params)
            return
        with self.native.cursor() as cursor:
            cursor.execute(self._sql(sql, params), params)

    def fetchall(self, sql: str, params: Sequence[Any] | None = None) -> list[tuple[Any, ...]]:
        if self.dialect == "duckdb":
            return self._duckdb(sql, params).fetchall()
        with self.native.cursor() as cursor:
            cursor.execute(self._sql(sql, params), params)
            return cursor.fetchall() if cursor.description else []

    def columns(self, schema: str, table: str) -> dict[str, str]:
        """The table's columns and their types, in order; {} when there is no such table."""
        if self.dialect == "duckdb":  # duckdb_columns() is much cheaper than information_schema
            sql = ("SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = "
                   "current_database() AND schema_name = ? AND table_name = ? ORDER BY column_index")
        else:
            sql = ("SELECT column_name, data_type FROM information_schema.columns "
                   "WHERE table_schema = ? AND table_name = ? ORDER BY ordinal_position")
        return dict(self.fetchall(sql, [schema, table]))

    def has_table(self, schema: str, table: str) -> bool:
        return bool(self.columns(schema, table))

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """One transaction: committed when the block ends, rolled back when it raises."""
        self.execute("BEGIN TRANSACTION" if self.dialect == "duckdb" else "BEGIN")
        try:
            yield
        except BaseException:
            with contextlib.suppress(Exception):
                self.execute("ROLLBACK")
            raise
        self.execute("COMMIT")

    @contextlib.contextmanager
    def staged(self, name: str, data: pa.Table, types: dict[str, str]) -> Iterator[str]:
        """`data` readable in SQL under `name` for the block: a view of the arrow table on
        DuckDB; a temporary table of `types` (column -> SQL type) on PostgreSQL."""
        if self.dialect == "duckdb":
            self.native.register(name, data)
            try:
                yield name
            finally:
                self.native.unregister(name)
            return
        from psycopg2.extras import execute_values

        columns = list(data.column_names)
        body = ", ".join(f"{quote_ident(c)} {types[c]}" for c in columns)
        self.execute(f"DROP TABLE IF EXISTS {quote_ident(name)}")
        self.execute(f"CREATE TEMPORARY TABLE {quote_ident(name)} ({body})")
        try:
            if data.num_rows:
                rows = list(zip(*(data.column(c).to_pylist() for c in columns), strict=True))
                target = ", ".join(quote_ident(c) for c in columns)
                with self.native.cursor() as cursor:
                    execute_values(cursor, f"INSERT INTO {quote_ident(name)} ({target}) VALUES %s",
                                   rows, page_size=1000)
            yield quote_ident(name)
        finally:
            with contextlib.suppress(Exception):
                self.execute(f"DROP TABLE IF EXISTS {quote_ident(name)}")

    # -- what differs in SQL ------------------------------------------------------------------
    def contains(self, array_sql: str, value: str) -> str:
        """SQL: the text array `array_sql` holds the literal `value`."""
        if self.dialect == "duckdb":
            return f"list_contains({array_sql}, {quote_literal(value)})"
        return f"{quote_literal(value)} = ANY({array_sql})"

    def uuid_hex(self) -> str:
        """SQL: a new random id, 32 hex digits."""
        if self.dialect == "duckdb":
            return "replace(uuid()::VARCHAR, '-', '')"
        return "replace(gen_random_uuid()::text, '-', '')"

    def json(self, sql: str) -> str:
        """SQL: text as the warehouse's JSON type."""
        return f"({sql})::{self.types['json']}"

    def int_list(self, values: Sequence[int]) -> tuple[str, list[Any]]:
        """SQL and its parameter: `x IN (<this>)` over a list of integers."""
        return "SELECT unnest(?::BIGINT[])", [list(values)]


def as_db(native: Any, dialect: str | None = None) -> WarehouseDB:
    """A `WarehouseDB` over a connection someone else opened (dlt's `native_connection`)."""
    if dialect is None:
        import duckdb

        dialect = "duckdb" if isinstance(native, duckdb.DuckDBPyConnection) else "postgres"
    return WarehouseDB(native, dialect)


@contextlib.contextmanager
def _advisory_lock(conn: Any, dataset: str, timeout: float | None, label: str) -> Iterator[None]:
    key = lock_key(dataset)
    deadline = None if timeout is None else time.monotonic() + timeout
    with conn.cursor() as cursor:
        while True:
            cursor.execute("SELECT pg_try_advisory_lock(%s)", [key])
            if cursor.fetchone()[0]:
                break
            if deadline is not None and time.monotonic() >= deadline:
                raise LockTimeout(f"warehouse {label} (dataset {dataset!r}) is held by another "
                                  f"writer (waited {timeout:.0f}s; advisory lock {key})")
            time.sleep(0.1)
    try:
        yield
    finally:
        with contextlib.suppress(Exception), conn.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [key])


@contextlib.contextmanager
def writer_lock(wh: Warehouse, *, timeout: float | None = 600.0) -> Iterator[None]:
    """The warehouse's writer lock alone, around writes made elsewhere (dlt's load step):
    DuckDB's file lock, PostgreSQL's advisory lock of the dataset; nothing elsewhere."""
    if wh.duckdb_path:
        with warehouse_lock(wh.duckdb_path, timeout=timeout):
            yield
    elif wh.destination == "postgres":
        with postgres_lock(postgres_dsn(wh), wh.dataset, timeout=timeout):
            yield
    else:
        yield


@contextlib.contextmanager
def postgres_lock(dsn: str, dataset: str, *, timeout: float | None = 600.0) -> Iterator[None]:
    """The advisory lock of `dataset` in the database of `dsn`, on a connection of its own."""
    conn = connect_postgres(dsn)
    try:
        with _advisory_lock(conn, dataset, timeout, postgres_label(conn)):
            yield
    finally:
        conn.close()


@contextlib.contextmanager
def open_warehouse(wh: Warehouse, *, lock_timeout: float | None = 600.0,
                   read_only: bool = False) -> Iterator[WarehouseDB]:
    """The warehouse open for our own SQL: DuckDB (under a catalog alias, `connect_warehouse`)
    or PostgreSQL, with its writer lock held for the block (on PostgreSQL none when
    `read_only`; DuckDB refuses a reader while another process writes, so a reader waits for
    the lock too: `status` while `listen` loads a batch waits, it failed with "Could not set
    lock on file", issue 38)."""
    if wh.duckdb_path:
        with warehouse_lock(wh.duckdb_path, timeout=lock_timeout):
            con = connect_warehouse(wh.duckdb_path, read_only=read_only)
            try:
                yield WarehouseDB(con, "duckdb", wh.duckdb_path)
            finally:
                con.close()
        return
    if wh.destination != "postgres":
        raise WarehouseUnavailable(
            f"this command works on duckdb or postgres, not {wh.destination!r} "
            "[key=creator_sync.destination]")
    conn = connect_postgres(postgres_dsn(wh))
    try:
        label = postgres_label(conn)
        lock = (contextlib.nullcontext() if read_only
                else _advisory_lock(conn, wh.dataset, lock_timeout, label))
        with lock:
            yield WarehouseDB(conn, "postgres", label)
    finally:
        conn.close()
