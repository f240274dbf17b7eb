"""Names in a DuckDB warehouse: one quoting helper, and no clash between file and dataset.

DuckDB names a file's catalog after the file (`creator_platform.duckdb` -> `creator_platform`).
When the dataset (a schema in that file) has the same name, `creator_platform.contacts` is
ambiguous ("catalog or schema?") and DuckDB refuses it. Our defaults are exactly that pair, so:

- the pipeline (dlt) qualifies every name with the catalog, `"catalog"."dataset"."table"`, as dlt
  already does for MotherDuck (`catalog_qualified_duckdb`);
- our own connections (models, report, webhook loader) open the file under a catalog alias that
  no schema in it uses (`connect_warehouse`), so two-part `schema.table` names stay unambiguous
  whatever the file and the dataset are called, and the SQL needs no catalog;
- SQL that may run on either kind of connection (the rows a delivery writes, which the pull's
  push restore writes again on dlt's own connection, whose catalog is the file's name) names
  its tables with `table_ref`: `"catalog"."schema"."table"`, the catalog asked of the connection;
- every identifier we put into SQL goes through `quote_ident`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import duckdb

from .duckdb_literals import inline_parameters, quote_literal, sql_literal

if TYPE_CHECKING:
    from dlt.common.destination import Destination

WAREHOUSE_ALIAS = "creator_sync_warehouse"
# catalogs every DuckDB session has besides the file's own: a schema of the same name is
# ambiguous in two-part names however the file is opened
RESERVED_CATALOGS = frozenset({"memory", "system", "temp"})
# DuckDB's rows per row group, the unit it splits a scan by between threads
ROW_GROUP_ROWS = 122_880


def quote_ident(name: str) -> str:
    """`name` as a quoted SQL identifier (DuckDB and PostgreSQL): any text is safe inside."""
    return '"' + str(name).replace('"', '""') + '"'


def schema_ref(con: Any, schema: str) -> str:
    """`schema` as the prefix of its tables on `con`, unambiguous whatever the file and the
    dataset are called: `"catalog"."schema"` on DuckDB, with the connection's current catalog
    (the file's own name when dlt opened it, the alias under `connect_warehouse`); `"schema"`
    on any other database (PostgreSQL never reads `a.b` as catalog and schema)."""
    if isinstance(con, duckdb.DuckDBPyConnection):
        (catalog,) = con.execute("SELECT current_database()").fetchone()
        return f"{quote_ident(catalog)}.{quote_ident(schema)}"
    return quote_ident(schema)


def table_ref(con: Any, schema: str, table: str) -> str:
    """`schema.table` on `con`, qualified as `schema_ref` says."""
    return f"{schema_ref(con, schema)}.{quote_ident(table)}"


def connect_warehouse(path: str | os.PathLike[str], *, read_only: bool = False,
                      config: dict[str, Any] | None = None) -> duckdb.DuckDBPyConnection:
    """Open a warehouse file under a catalog alias that is no schema's name, and make it current.

    The alias is what separates it from the file name: `duckdb.connect(path)` would name the
    catalog after the file, which clashes with a dataset of the same name.
    """
    con = duckdb.connect(config=config or {})
    try:
        # spill files beside the warehouse, as a direct open would (not in the working dir)
        con.execute(f"SET temp_directory = {quote_literal(f'{os.fspath(path)}.tmp')}")
        alias = WAREHOUSE_ALIAS
        options = " (READ_ONLY)" if read_only else ""
        con.execute(f"ATTACH {quote_literal(os.fspath(path))} AS {quote_ident(alias)}{options}")
        # the alias as a literal, not a bound parameter: DuckDB imports pandas (~0.4 s of CPU)
        # to inspect the first value bound on a connection, a cost every command would pay
        schemas = {r[0] for r in con.execute(
            "SELECT schema_name FROM duckdb_schemas() WHERE database_name = "
            f"{quote_literal(alias)}").fetchall()}
        while alias in schemas:  # a dataset called like the alias: pick another alias
            con.execute(f"DETACH {quote_ident(alias)}")
            alias += "_"
            con.execute(f"ATTACH {quote_literal(os.fspath(path))} AS {quote_ident(alias)}{options}")
        con.execute(f"USE {quote_ident(alias)}")
        if "threads" not in (config or {}):
            _one_thread_when_small(con)
    except BaseException:
        con.close()
        raise
    return con


def _one_thread_when_small(con: duckdb.DuckDBPyConnection) -> None:
    """One DuckDB thread on a warehouse whose tables each fit in one row group.

    DuckDB splits a scan by row group: below one, every query runs on one thread anyway, and
    the other threads only add hand-offs (the models' ~450 statements at `tiny` took 28 % less
    CPU on one thread, in the same wall time). A bigger warehouse keeps DuckDB's default (a
    thread per core), which is what makes its models fast.
    """
    (largest,) = con.execute(
        "SELECT coalesce(max(estimated_size), 0) FROM duckdb_tables() "
        "WHERE database_name = current_database()").fetchone()
    if largest < ROW_GROUP_ROWS:
        con.execute("SET threads = 1")


def catalog_qualified_duckdb(credentials: Any) -> Destination:
    """dlt's DuckDB destination, qualifying every name with the file's catalog."""
    return _destination_class()(credentials=credentials)


def _destination_class() -> type:
    """Built on first use: importing dlt's DuckDB destination costs ~0.3 s."""
    global _DESTINATION
    if _DESTINATION is None:
        _DESTINATION = _build_destination_class()
    return _DESTINATION


_DESTINATION: type | None = None
_CATALOGS: dict[str, str] = {}  # database path -> its catalog name (DuckDB's, per process)


def _build_destination_class() -> type:
    from dlt.destinations import duckdb as dlt_duckdb
    from dlt.destinations.impl.duckdb.configuration import DuckDbConnectionPool
    from dlt.destinations.impl.duckdb.duck import DuckDbClient
    from dlt.destinations.impl.duckdb.sql_client import DuckDbSqlClient

    class LiteralSettingsPool(DuckDbConnectionPool):
        """dlt's pool, its `SET`s written with literals (`duckdb_literals`: no pandas import)."""

        @staticmethod
        def _apply_config(conn: Any, scope: Any, config: dict[str, Any]) -> None:
            for key, value in config.items():
                literal = sql_literal(value)
                if literal is None:
                    DuckDbConnectionPool._apply_config(conn, scope, {key: value})
                    continue
                try:
                    conn.execute(f"SET {scope} {key} = {literal}")
                except duckdb.CatalogException:
                    if key != "search_path":  # dlt's rule: a schema not created yet is fine
                        raise

    class CatalogQualifiedSqlClient(DuckDbSqlClient):
        """Names are `"catalog"."dataset"."table"`, as dlt's MotherDuck client writes them.

        dlt's DuckDB client returns no catalog, so its SQL says `dataset.table`, which DuckDB
        cannot bind when the file (catalog) and the dataset share a name. The catalog is asked
        of DuckDB itself (`current_database()`), once per file and process, never guessed
        from the file name: SQL is generated before a connection is open too.
        """

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            pool = self.credentials.conn_pool
            if type(pool) is DuckDbConnectionPool and pool._conn is None:
                # nothing opened from it yet: the same pool, its settings set by literal
                pool.__class__ = LiteralSettingsPool

        def catalog_name(self, quote: bool = True, casefold: bool = True) -> str | None:
            name = self._file_catalog()
            if casefold:
                name = self.capabilities.casefold_identifier(name)
            return self.capabilities.escape_identifier(name) if quote else name

        def _file_catalog(self) -> str:
            key = str(self.credentials.database)
            name = _CATALOGS.get(key)
            if name is None:
                if self._conn is not None:
                    name = self._conn.execute("SELECT current_database()").fetchone()[0]
                else:
                    pool = self.credentials.conn_pool
                    conn = pool.borrow_conn(global_config=self._global_config,
                                            pragmas=self._pragmas)
                    try:
                        name = conn.execute("SELECT current_database()").fetchone()[0]
                    finally:
                        pool.return_conn(conn)
                _CATALOGS[key] = name
            return name

        def warn_if_catalog_equals_dataset_name(self) -> None:
            """dlt warns that equal names confuse DuckDB's binder: qualified names do not."""

        @contextlib.contextmanager
        def execute_query(self, query: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
            """dlt's, each `%s` written as its value's literal where it has one (no binding)."""
            if args and not kwargs and isinstance(query, str):
                inlined = inline_parameters(query, args)
                if inlined is not None:
                    query, args = inlined, ()
            with super().execute_query(query, *args, **kwargs) as cursor:
                yield cursor

    class CatalogQualifiedClient(DuckDbClient):
        def __init__(self, schema: Any, config: Any, capabilities: Any) -> None:
            super().__init__(schema, config, capabilities)
            self.sql_client = CatalogQualifiedSqlClient(
                self.sql_client.dataset_name,
                self.sql_client.staging_dataset_name,
                config.credentials,
                capabilities,
            )

    class CatalogQualifiedDuckDb(dlt_duckdb):
        @property
        def client_class(self) -> type:
            return CatalogQualifiedClient

        @property
        def destination_type(self) -> str:
            # dlt stores the type in pipeline state and compares it on every run: this is
            # dlt's DuckDB destination, and pipelines created before stay valid
            return "dlt.destinations.duckdb"

    return CatalogQualifiedDuckDb


@contextlib.contextmanager
def no_empty_file_left(path: str | os.PathLike[str] | None) -> Iterator[None]:
    """A run that fails before loading anything leaves no empty warehouse file behind (dlt
    creates it when it first looks at the destination): the next run then starts as a first."""
    existed = path is None or os.path.exists(path)
    try:
        yield
    except BaseException:
        if not existed:
            _remove_if_empty(os.fspath(path))  # type: ignore[arg-type]
        raise


def _remove_if_empty(path: str) -> None:
    try:
        con = duckdb.connect(path, read_only=True)
    except (duckdb.Error, OSError):  # held by another process, or gone: leave it
        return
    try:
        tables = con.execute("SELECT count(*) FROM duckdb_tables()").fetchone()
    finally:
        con.close()
    if tables and tables[0] == 0:
        for leftover in (path, f"{path}.wal"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(leftover)

def compact_in_place(path: str | os.PathLike[str]) -> None:
    """Rewrite a DuckDB file whole. DuckDB reuses the blocks an UPDATE or DELETE freed but never
    clears them, so an erased value can be read back from the file until it is rewritten: copy
    every schema, table, view and comment into a new file, then rename it over the old one."""
    path = os.fspath(path)
    fresh = f"{path}.compact"
    with contextlib.suppress(FileNotFoundError):
        os.remove(fresh)
    con = duckdb.connect()
    try:
        con.execute(f"ATTACH {quote_literal(path)} AS old_file (READ_ONLY)")
        con.execute(f"ATTACH {quote_literal(fresh)} AS new_file")
        con.execute("COPY FROM DATABASE old_file TO new_file")
        con.execute("DETACH new_file")
        con.execute("DETACH old_file")
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.remove(fresh)
        raise
    finally:
        con.close()
    os.chmod(fresh, os.stat(path).st_mode & 0o777)
    with open(fresh, "rb") as handle:
        os.fsync(handle.fileno())
    os.replace(fresh, path)
    directory = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
