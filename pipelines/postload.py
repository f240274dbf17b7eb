"""SQL steps around a load: row counts for the summary, `_is_deleted` marking, link markers.

`finish_sync(pipeline, source)` is the one entry point after `pipeline.run(source)`, for the CLI
and for a user's own dlt script alike. They run through the pipeline's `sql_client`, so they
work on any SQL destination, and always under the warehouse lock (DuckDB has a single writer).
"""

from __future__ import annotations

import contextlib
import logging
import re
import weakref
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import dlt

from creator_sync.common.locking import warehouse_lock
from creator_sync.sources.creator_platform import sync_run
from creator_sync.sources.creator_platform.normalize import link_columns
from creator_sync.sources.creator_platform.refresh import dependent_refresh

log = logging.getLogger("creator_sync.postload")
_CLIENTS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
# DuckDB's buffer pool while the steps below scan whole tables (see `scan_client`); the
# duplicate check after a killed run hashes every key of a table and gets more (it failed at
# 16MB at `large`, docs/performance.md#memory)
SCAN_MEMORY_LIMIT = "32MB"
REPAIR_MEMORY_LIMIT = "64MB"


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
    out: a database kept open (`held_open`) serves the next load with it. Other
    destinations: as is.
    """
    with sql_client(pipeline) as client:
        previous = None
        if _is_duckdb(pipeline):
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


def _is_duckdb(pipeline: dlt.Pipeline) -> bool:
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


def _existing(client: Any, tables: Iterable[str]) -> set[str]:
    dataset = client.dataset_name
    rows = client.execute_sql(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", dataset
    )
    have = {r[0] for r in rows or []}
    return {t for t in tables if t in have}


def row_counts(pipeline: dlt.Pipeline, tables: Iterable[str]) -> dict[str, int]:
    """COUNT(*) per existing table (0 for tables not created yet)."""
    names = list(tables)
    out = dict.fromkeys(names, 0)
    if not names:  # a run that loads nothing counts nothing: no connection, no statements
        return out
    with scan_client(pipeline) as client:
        for table in _existing(client, names):
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
        for table in _existing(client, tables):
            q = client.make_qualified_table_name(table)
            rows = client.execute_sql(
                f"SELECT COUNT(*) FROM {q} WHERE _dlt_load_id IN ({placeholders})", *load_ids
            )
            out[table] = int(rows[0][0])
    return out


def mark_deleted(
    pipeline: dlt.Pipeline,
    complete: Iterable[tuple[str, str | None]],
    load_ids: list[str],
    extract_started: datetime | None = None,
    listed: Mapping[tuple[str, str | None], set[str]] | None = None,
    seen: Mapping[tuple[str, str | None], set[str]] | None = None,
) -> dict[str, int]:
    """After complete listings, set `_is_deleted` for each (table, site) they cover.

    Where the listing's ids are known (`listed`: a dimension's own listing), a row is alive iff
    it was listed: a row another resource's `include` wrote this run (an archived tag a form
    still names) is not. Otherwise (tables filled by detail reads) a row is alive iff this run
    wrote it or read it unchanged (`seen`: keys per (table, site) of rows the run read but did
    not load again, see `sources.creator_platform.unchanged`). Either way a row someone else
    wrote after the extract started (the webhook loader) is spared: the listing could not have
    seen it. A deleted row that is listed again gets `_is_deleted = false` back.
    """
    marked: dict[str, int] = {}
    listed = listed or {}
    seen = seen or {}
    if not load_ids and not seen and not listed:
        return marked  # a listing that read nothing still decides (every record gone)
    columns = data_tables(pipeline)  # once: each read of the schema costs ~45 ms
    with pipeline.sql_client() as client:
        pairs = list(complete)
        existing = _existing(client, {t for t, _ in pairs})
        for table, site in pairs:
            if table not in existing:
                continue
            if (table, site) in listed:
                count = _mark_unlisted(client, table, site, listed[(table, site)], load_ids, extract_started)
            else:
                count = _mark_unwritten(client, table, site, load_ids, extract_started,
                                        seen.get((table, site)), _key_column(table, columns.get(table, [])))
            if count:
                marked[table] = marked.get(table, 0) + count
    return marked


def _key_column(table: str, columns: list[str]) -> str:
    """The column `unchanged.keyed` keys a table's rows by: `id`, or a link table's parent."""
    return "id" if "id" in columns else link_columns(table, columns)[0]


def _mark_unwritten(
    client: Any, table: str, site: str | None, load_ids: list[str],
    extract_started: datetime | None, seen: set[str] | None = None, key: str = "id",
) -> int:
    q = client.make_qualified_table_name(table)
    where = "" if site is None else " AND site_id = %s"
    # a row is gone unless this run wrote it or read it unchanged (`seen`)
    gone = "TRUE"
    args: list[Any] = []
    if load_ids:
        gone += f" AND _dlt_load_id NOT IN ({', '.join(['%s'] * len(load_ids))})"
        args += load_ids
    if seen:
        keys = sorted(seen)
        gone += (f" AND CAST({client.escape_column_name(key)} AS VARCHAR) NOT IN "
                 f"({', '.join(['%s'] * len(keys))})")
        args += keys
    if extract_started is not None:
        gone += " AND (_extracted_at IS NULL OR _extracted_at < %s)"
        args.append(extract_started)
    args += [] if site is None else [site]
    before = client.execute_sql(
        f"SELECT COUNT(*) FROM {q} WHERE _is_deleted IS NOT TRUE AND {gone}{where}", *args,
    )
    client.execute_sql(f"UPDATE {q} SET _is_deleted = ({gone}) WHERE 1 = 1{where}", *args)
    return int(before[0][0])


def _mark_unlisted(
    client: Any, table: str, site: str | None, ids: set[str], load_ids: list[str],
    extract_started: datetime | None,
) -> int:
    """Diff the stored rows against the listed ids in Python, then flip only what changed.

    Dimension listings are small (hundreds to a few thousand ids), and the diff keeps the SQL
    portable (no temp tables, no parameter-count limits).
    """
    q = client.make_qualified_table_name(table)
    where, args = ("", []) if site is None else (" WHERE site_id = %s", [site])
    rows = client.execute_sql(
        f"SELECT id, _is_deleted, _dlt_load_id, _extracted_at FROM {q}{where}", *args
    ) or []
    ours = set(load_ids)
    to_delete: list[str] = []
    to_restore: list[str] = []
    for rid, deleted, load_id, extracted_at in rows:
        if str(rid) in ids:
            if deleted is not False:
                to_restore.append(rid)
        elif deleted is not True:
            pushed_later = (
                load_id not in ours and extract_started is not None
                and extracted_at is not None and _aware(extracted_at) >= extract_started
            )
            if not pushed_later:
                to_delete.append(rid)
    for flag, todo in ((True, to_delete), (False, to_restore)):
        for start in range(0, len(todo), 1000):
            chunk = todo[start:start + 1000]
            marks = ", ".join(["%s"] * len(chunk))
            extra = "" if site is None else " AND site_id = %s"
            client.execute_sql(
                f"UPDATE {q} SET _is_deleted = %s WHERE id IN ({marks}){extra}",
                flag, *chunk, *([] if site is None else [site]),
            )
    return len(to_delete)


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def kept_tables(pipeline: dlt.Pipeline, dropped_resources: Iterable[str] = ()) -> frozenset[str]:
    """Data tables the destination holds now and that this run's full refresh will not drop.

    Read from the destination, not from dlt state: a crash can leave the two out of step, and
    a table loaded with `append` (see `sources.creator_platform.batches.Batches`) must really be
    new. `dropped_resources`: resources extracted with `refresh="drop_resources"`, whose tables
    dlt drops (by the schema's `resource` of each table) before loading the new data.
    """
    from dlt.common.schema.utils import group_tables_by_resource

    with sql_client(pipeline) as client:
        rows = client.execute_sql(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
            client.dataset_name,
        )
    have = {r[0] for r in rows or []}
    names = set(dropped_resources)
    if names:
        try:
            schema_tables = {t["name"]: t for t in pipeline.default_schema.data_tables(include_incomplete=True)}
        except Exception:  # no schema yet: nothing of ours to drop
            schema_tables = {}
        for resource, tables in group_tables_by_resource(schema_tables).items():
            if resource in names:
                have -= {t["name"] for t in tables}
    return frozenset(have)


def pushed_keys(pipeline: dlt.Pipeline, tables: Iterable[str] | None) -> dict[str, frozenset[str]]:
    """Per table, the keys of rows the webhook loader wrote last (their `_dlt_load_id` is its).

    A run drops re-read rows whose hash matches what it read last time
    (`sources.creator_platform.unchanged`); a row a delivery wrote since may differ from that
    (a missed or out-of-order event), so those keys are loaded again: the pull stays the source
    of truth. Bounded by the deliveries since the last sync: the pull's next write of a row
    replaces the webhook load id.
    """
    from creator_sync.pipelines.webhooks.warehouse import PUSHED_LOAD_ID_PREFIX

    if tables is None:  # kept tables unknown: nothing is dropped, nothing to force
        return {}
    columns = data_tables(pipeline)
    names = [t for t in sorted(set(tables) & set(columns)) if "_dlt_load_id" in columns[t]]
    if not names:
        return {}
    found: dict[str, set[str]] = {}
    with scan_client(pipeline) as client:
        # one statement for every table (~40): a statement each cost ~70 ms a run
        selects = [
            f"SELECT {i} AS t, CAST({client.escape_column_name(_key_column(t, columns[t]))} AS VARCHAR)"
            f" FROM {client.make_qualified_table_name(t)} WHERE _dlt_load_id LIKE %s"
            for i, t in enumerate(names)
        ]
        rows = client.execute_sql(
            " UNION ALL ".join(selects), *[f"{PUSHED_LOAD_ID_PREFIX}%"] * len(selects)) or []
        for i, key in rows:
            found.setdefault(names[i], set()).add(str(key))
    return {table: frozenset(keys) for table, keys in found.items()}


def restore_pushes(pipeline: dlt.Pipeline, since: datetime) -> dict[str, int]:
    """Deliveries the webhook receiver loaded while this run listed, applied again where newer
    than what the load just wrote (`pipelines.webhooks.restore`; DuckDB, where the receiver
    writes)."""
    if not _is_duckdb(pipeline):
        return {}
    from creator_sync.pipelines.webhooks.restore import restore_fresher_pushes

    with pipeline.sql_client() as client:
        return restore_fresher_pushes(client.native_connection, pipeline.dataset_name, since)


def dedupe_appended(pipeline: dlt.Pipeline) -> dict[str, int]:
    """Remove duplicate keys from tables the schema loads with `append` (DuckDB only).

    A load job that inserted its file but was killed before dlt marked it done runs again when
    the package is finished: a merge would collapse the repeat, an append keeps it. So after
    finishing a package left by a killed run, one row per primary key is kept (the newest load).
    """
    removed: dict[str, int] = {}
    if not _is_duckdb(pipeline):
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
        for table in _existing(client, [t for t, keys in candidates.items() if keys]):
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


SYNC_RESOURCES = "sync_resources"
# (column, dlt data type) of `sync_resources` (docs/architecture.md, contract C6)
SYNC_RESOURCES_COLUMNS = (
    ("resource", "text"),
    ("status", "text"),  # synced | failed | skipped
    ("reason", "text"),  # why it failed or was skipped; null when synced
    ("last_attempt_at", "timestamp"),  # this run (UTC, when its extract began)
    ("last_synced_at", "timestamp"),  # the last run in which it completed
    ("rows_loaded", "bigint"),  # rows this run wrote to the resource's own table
    # the platform's clock when the listing of the last completed run began: every record
    # created before it is loaded (models: partial last day, staleness on the platform's clock)
    ("complete_through_at", "timestamp"),
)


def write_sync_resources(
    pipeline: dlt.Pipeline,
    outcomes: Mapping[str, Any],
    rows: Mapping[str, int],
    at: datetime,
    listing_started: Mapping[str, datetime] | None = None,
) -> None:
    """Upsert one row per resource of this run into `sync_resources`, after the load.

    It says what the warehouse holds and what it does not: a resource that failed or was
    skipped keeps its `last_synced_at` and `complete_through_at` from the last run in which it
    completed (null if never). Resources this run did not select keep their rows. One small
    table, a handful of statements; a table from before `complete_through_at` gains it.
    """
    if not outcomes:
        return
    started = listing_started or {}
    names = sorted(outcomes)
    marks = ", ".join(["%s"] * len(names))
    with sql_client(pipeline) as client:
        if not client.has_dataset():
            client.create_dataset()
        q = client.make_qualified_table_name(SYNC_RESOURCES)
        col = {name: client.escape_column_name(name) for name, _ in SYNC_RESOURCES_COLUMNS}
        _ensure_sync_resources(client, q, col)
        previous = {r[0]: (r[1], r[2]) for r in client.execute_sql(
            f"SELECT {col['resource']}, {col['last_synced_at']}, {col['complete_through_at']} "
            f"FROM {q} WHERE {col['resource']} IN ({marks})", *names) or []}
        values: list[Any] = []
        for name in names:
            outcome = outcomes[name]
            synced = outcome.status == "synced"
            last, through = previous.get(name, (None, None))
            values += [name, outcome.status, outcome.reason, at, at if synced else last,
                       int(rows.get(name, 0)), started.get(name) if synced else through]
        row_marks = ", ".join(["(" + ", ".join(["%s"] * len(SYNC_RESOURCES_COLUMNS)) + ")"] * len(names))
        with client.begin_transaction():
            client.execute_sql(f"DELETE FROM {q} WHERE {col['resource']} IN ({marks})", *names)
            client.execute_sql(
                f"INSERT INTO {q} ({', '.join(col.values())}) VALUES {row_marks}", *values
            )


def _ensure_sync_resources(client: Any, q: str, col: dict[str, str]) -> None:
    """Create `sync_resources`, or add the columns an older version did not write."""
    kinds = _destination_types(client)
    rows = client.execute_sql(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = %s "
        "AND table_name = %s", client.dataset_name, SYNC_RESOURCES,
    ) or []
    have = {r[0] for r in rows}
    if not have:
        columns = ", ".join(f"{col[name]} {kinds[kind]}" for name, kind in SYNC_RESOURCES_COLUMNS)
        client.execute_sql(f"CREATE TABLE {q} ({columns})")
        return
    for name, kind in SYNC_RESOURCES_COLUMNS:
        if name not in have:
            client.execute_sql(f"ALTER TABLE {q} ADD COLUMN {col[name]} {kinds[kind]}")


def _destination_types(client: Any) -> dict[str, str]:
    """dlt data type -> the destination's column type (timestamps with time zone)."""
    mapper = client.capabilities.get_type_mapper()
    table = {"name": SYNC_RESOURCES, "columns": {}}
    return {
        kind: mapper.to_destination_type({"name": kind, "data_type": kind, "timezone": True}, table)
        for kind in {kind for _, kind in SYNC_RESOURCES_COLUMNS}
    }


# ---------------------------------------------------------------- after pipeline.run(source)
@dataclass
class Finished:
    """What `finish_sync` did: rows marked deleted per table, and the load ids it judged by."""

    deleted: dict[str, int] = field(default_factory=dict)
    load_ids: list[str] = field(default_factory=list)


@contextlib.contextmanager
def warehouse_guard(pipeline: dlt.Pipeline) -> Iterator[None]:
    """The warehouse lock of a DuckDB destination (DuckDB has one writer; the webhook loader
    takes the same lock); nothing for other destinations, which handle their own writers."""
    path = None
    if _is_duckdb(pipeline):
        with contextlib.suppress(Exception):
            path = pipeline.sql_client().credentials.database  # type: ignore[attr-defined]
    if path and path != ":memory:":
        with warehouse_lock(path):
            yield
    else:
        yield


def finish_sync(
    pipeline: dlt.Pipeline, source: Any, load_info: Any = None, *, lock: bool = True,
) -> Finished:
    """Make the warehouse correct after `pipeline.run(source)` of `creator_platform_source()`.

    1. the dependent customer refresh (customers named by new money, re-read by id), when the
       run needs one and it was not extracted with the source: extracted and loaded here;
    2. `_is_deleted` for the rows complete listings no longer list (per table and site);
    3. the marker rows of empty relationships dropped from link tables, and the rows webhook
       deliveries wrote while the run listed put back where newer than what it loaded;
    4. `sync_resources`: one row per resource, what this run did (the models read it);
    5. the API session revoked and connections closed (the source is spent).

    `load_info`: what `pipeline.run`/`pipeline.load` returned (default: the pipeline's last
    load). `lock=False` when the caller already holds the warehouse lock (the CLI). Call it
    once per source; a source is one run.
    """
    run = sync_run(source)
    try:
        if load_info is None:
            trace = pipeline.last_trace
            load_info = trace.last_load_info if trace is not None else None
        load_ids = list(load_info.loads_ids) if load_info is not None else []
        if not run.dependents_extracted:
            refresh = dependent_refresh(run)
            if refresh is not None:
                load_ids += list(pipeline.run(refresh).loads_ids)
        report = run.report
        with warehouse_guard(pipeline) if lock else contextlib.nullcontext():
            deleted = mark_deleted(pipeline, report.complete, load_ids, run.extract_started,
                                   report.listed, report.seen)
            if load_ids:  # only a load can have overwritten a delivery
                restore_pushes(pipeline, run.extract_started)
            write_sync_resources(pipeline, report.outcomes, report.rows, run.extract_started,
                                 report.listing_started)
    finally:
        run.close()
    return Finished(deleted, load_ids)
