"""SQL access to the warehouse for the steps around a load: one client per pipeline, scans
under a capped DuckDB buffer pool, the tables it holds, and its lock.

They run through the pipeline's `sql_client`, so they work on any SQL destination; DuckDB
alone gets the memory cap and the lock (it has a single writer).
"""

from __future__ import annotations

import contextlib
import logging
import re
import weakref
from collections.abc import Iterable, Iterator
from typing import Any

import dlt

from creator_sync.common.locking import warehouse_lock
from creator_sync.common.warehouse_db import postgres_lock

from .tuning import SCAN_MEMORY_LIMIT

log = logging.getLogger("creator_sync.postload")
_CLIENTS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def sql_client(pipeline: dlt.Pipeline) -> Any:
    """The pipeline's SQL client, built once per pipeline: building one resolves the whole
    destination config (~0.2 s), and a sync runs several short steps. Use it as a context
    manager, as `pipeline.sql_client()`; each `with` opens and closes a connection."""
    client = _CLIENTS.get(pipeline)
    if client is None:
        client = _CLIENTS[pipeline] = pipeline.sql_client()
    return client


@contextlib.contextmanager
def scan_client(pipeline: dlt.Pipeline, limit: str = SCAN_MEMORY_LIMIT) -> Iterator[Any]:
    """`sql_client(pipeline)` with DuckDB's buffer pool capped at `limit` for its reads.

    The steps around a load read whole columns of every table (counts by load id, link
    markers, the duplicate check after a killed run, webhook keys), and DuckDB keeps each
    block it read up to `memory_limit` (1 GB, for the load's merges): at `large` that set the
    sync's peak after the load, +150 MiB for `loaded_counts` and +480 MiB for
    `dedupe_appended` (docs/performance.md#memory); capped, +32 and +75-100 MiB. The cap only saves
    memory,
    it never fails a step (`_CappedScans`): writes run at the database's own limit (a DELETE
    of a `large` link table's markers ran out of memory at 32MB, docs/performance.md#memory), and a
    read the
    cap is too small for runs again without it. The previous limit is put back on the way
    out: a database kept open (`database_kept_open`) serves the next load with it. Other
    destinations: as is.
    """
    with sql_client(pipeline) as client:
        previous = None
        if is_duckdb(pipeline):
            previous = str(client.execute_sql("SELECT current_setting('memory_limit')")[0][0])
            if _bytes(previous) <= _bytes(limit):  # a user's own smaller limit stays
                previous = None
            else:
                try:
                    _memory_limit(client, limit)
                except Exception:  # a database kept open holds more than it can evict
                    previous = None
        if previous is None:
            yield client
            return
        capped = _CappedScans(client, limit, previous)
        try:
            yield capped
        finally:
            capped.uncap()


class _CappedScans:
    """A sql client whose reads run under a lowered `memory_limit` and whose writes do not.

    A write keeps its undo data in memory until it commits, which a small pool cannot spill;
    a read that still runs out of memory is repeated at the previous limit, which then stays
    for the rest of the step. A failed statement changed nothing (each one commits alone).
    """

    def __init__(self, client: Any, limit: str, previous: str) -> None:
        self._client = client
        self._limit = limit
        self._previous = previous
        self._capped = True

    def __getattr__(self, name: str) -> Any:  # names, qualifying: the client's own
        return getattr(self._client, name)

    def execute_sql(self, sql: str, *args: Any) -> Any:
        if not self._capped:
            return self._client.execute_sql(sql, *args)
        if not sql.lstrip().upper().startswith("SELECT"):
            with self.uncapped():
                return self._client.execute_sql(sql, *args)
        try:
            return self._client.execute_sql(sql, *args)
        except Exception as exc:
            if not _out_of_memory(exc):
                raise
            log.debug("a scan needed more than %s: repeated at %s", self._limit, self._previous)
            self.uncap()
            return self._client.execute_sql(sql, *args)

    @contextlib.contextmanager
    def uncapped(self) -> Iterator[None]:
        """The database's own limit inside, the cap again after."""
        was = self._capped
        self.uncap()
        try:
            yield
        finally:
            if was:  # capping again can fail (more held than it can evict): stay uncapped
                with contextlib.suppress(Exception):
                    _memory_limit(self._client, self._limit)
                    self._capped = True

    def uncap(self) -> None:
        if self._capped:
            _memory_limit(self._client, self._previous)
            self._capped = False


_UNITS = {"": 1, "B": 1, "BYTES": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
          "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}


def _bytes(limit: str) -> float:
    """A DuckDB memory size ('32MB', or its own '953.6 MiB') in bytes; unknown: infinite."""
    found = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*", limit)
    if found is None or found[2].upper() not in _UNITS:
        return float("inf")
    return float(found[1]) * _UNITS[found[2].upper()]


def _out_of_memory(exc: BaseException | None) -> bool:
    """DuckDB's out-of-memory error, also when dlt re-raised it as its own."""
    import duckdb

    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, duckdb.OutOfMemoryException):
            return True
        exc = getattr(exc, "dbapi_exception", None) or exc.__cause__ or exc.__context__
        seen += 1
    return False


def is_duckdb(pipeline: dlt.Pipeline) -> bool:
    return bool(pipeline.destination.destination_name == "duckdb")


def _memory_limit(client: Any, limit: str) -> None:
    """Set DuckDB's `memory_limit` for the whole database (it evicts cached blocks down to it)."""
    client.execute_sql(f"SET memory_limit = '{limit}'")


def data_tables(pipeline: dlt.Pipeline) -> dict[str, list[str]]:
    """Data tables known to the pipeline schema -> their column names."""
    try:
        schema = pipeline.default_schema
    except Exception:
        return {}
    return {
        table["name"]: list(table.get("columns", {}))
        for table in schema.data_tables(include_incomplete=False)
    }


def existing_tables(client: Any, tables: Iterable[str]) -> set[str]:
    """Those of `tables` the destination dataset holds."""
    dataset = client.dataset_name
    rows = client.execute_sql(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", dataset
    )
    have = {r[0] for r in rows or []}
    return {t for t in tables if t in have}


@contextlib.contextmanager
def warehouse_guard(pipeline: dlt.Pipeline) -> Iterator[None]:
    """The warehouse's writer lock, which the webhook loader takes too: DuckDB's file lock (one
    writer), PostgreSQL's advisory lock of the dataset (`common.warehouse_db`); nothing for
    other destinations, which no receiver writes."""
    path = dsn = None
    with contextlib.suppress(Exception):
        credentials = pipeline.sql_client().credentials  # type: ignore[attr-defined]
        if is_duckdb(pipeline):
            path = credentials.database
        elif pipeline.destination.destination_name == "postgres":
            dsn = credentials.to_native_representation()
    if path and path != ":memory:":
        with warehouse_lock(path):
            yield
    elif dsn:
        with postgres_lock(dsn, pipeline.dataset_name):
            yield
    else:
        yield
