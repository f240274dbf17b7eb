"""Build the dlt pipeline for a resolved `common.warehouse.Warehouse` (DuckDB tuning, dlt settings).

Conventions other areas rely on (models, report, webhooks):
- every setting, its section, check and default is in `sources.creator_platform.config.SETTINGS`:
  `[sources.creator_platform]` (env `SOURCES__CREATOR_PLATFORM__<KEY>`) for the API,
  `[creator_sync]` (env `CREATOR_SYNC__<KEY>`) for the warehouse (`duckdb`, `dataset`, ...).
- where the warehouse and the pipeline's local state live is `common.warehouse` (one
  derivation for every command).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dlt

from creator_sync.common.duckdb_names import catalog_qualified_duckdb
from creator_sync.common.files import make_state_dir
from creator_sync.common.repeating import every
from creator_sync.common.warehouse import Warehouse, warehouse_of
from creator_sync.sources.creator_platform import SYNC_SECTION, Settings, setting

log = logging.getLogger("creator_sync.factory")

# rows per extract/load file: DuckDB holds a load job's appended rows uncompressed until its
# commit (a row group is 122,880 rows), so a wide table's job grew ~0.8 MiB per 1,000 rows:
# +46-54 MiB at 50,000, +31-37 at 25,000 (docs/performance.md#memory); fewer rows cost a job and a
# row group more
FILE_MAX_ITEMS = 25_000
# row-group merges DuckDB schedules at each checkpoint: none while a sync fills a new warehouse
# (see build_pipeline), DuckDB's own default otherwise
FRESH_LOAD_VACUUM_TASKS = 0
# a load package at most this big (its files, compressed) loads through one open database,
# a new warehouse's first load too (`small`'s is ~6.8 MB: -8 % CPU, +16 MiB,
# docs/performance.md#cpu);
# bigger ones let each job close the file, so memory stays flat as data grows
# (docs/performance.md#memory)
HOLD_OPEN_MAX_BYTES = 16 * 1024 * 1024
# DuckDB checkpoints a commit that leaves at least this much WAL behind (see build_pipeline)
WAL_CHECKPOINT = "256KB"
# while a sync extracts, glibc's free pages go back to the OS this often (see trimmed_heap)
TRIM_EVERY_S = 10.0
# allocations (net of frees) between the cyclic GC's young collections in a sync; CPython's
# default is 700 (see settle_gc)
GC_YOUNG_THRESHOLD = 10_000
# allocators of a sync (see tune_allocators): glibc's malloc arenas at most, and arrow's
# memory pool (a user's ARROW_DEFAULT_MEMORY_POOL wins)
MALLOC_ARENAS = 2
ARROW_POOL = "jemalloc"
_M_ARENA_MAX = -8  # glibc's mallopt parameter (malloc.h)


def release_free_memory() -> None:
    """Give the C heap's free pages back to the OS before the load step.

    Extraction leaves ~25 MiB (medium) of freed glibc and arrow memory mapped; DuckDB allocates
    with its own jemalloc and cannot reuse it, so without this the load's peak stacks on top of
    it (docs/performance.md#memory). A few milliseconds, once per sync; a no-op where glibc is not
    the libc.
    """
    pa = sys.modules.get("pyarrow")  # not imported: this run built no arrow data to release
    try:
        if pa is not None:
            pa.default_memory_pool().release_unused()
    except Exception:  # an arrow build without the call: nothing to release there
        log.debug("arrow pool: release_unused not available")
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def _libc(name: str) -> Any:
    """A glibc function (`malloc_trim`, `mallopt`), or None where the libc has none."""
    try:  # the symbols the process already has: no `ldconfig` run to find libc
        return getattr(ctypes.CDLL(None), name, None)
    except OSError:
        return None


def _malloc_trim() -> Any:
    return _libc("malloc_trim")


def tune_allocators() -> None:
    """Keep a long extraction's free-but-held heap memory small, before its threads start.

    At `large` extraction sat at 450-510 MiB RSS for 35 minutes although Python's live data is
    ~70 MiB (tracemalloc): the rest was allocator memory. ~20 HTTP threads each got a glibc
    arena (up to 8 per core) that kept the pieces of the page bodies it parsed, and glibc's
    dynamic mmap threshold moved those bodies (100 KiB-1 MiB) from mmap into the arenas after
    the first ones were freed; arrow's default pool (mimalloc) held ~60 MiB of RSS for ~10 MiB
    allocated. Two arenas, a fixed 128 KiB threshold (bodies are mapped and unmapped) and
    jemalloc for arrow (which `release_free_memory` purges before the load) took 90 MiB off the first minutes'
    level at `large` (docs/performance.md#memory). The fixed threshold is left out: it cost ~1 s of
    system CPU
    in a `small` sync (+3.5 %), and point 3 has no margin. Once per process; a no-op where
    glibc is not the libc.
    """
    if getattr(tune_allocators, "done", False):
        return
    tune_allocators.done = True  # type: ignore[attr-defined]
    if "pyarrow" not in sys.modules:  # read once, when arrow makes its default pool
        os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", ARROW_POOL)
    mallopt = _libc("mallopt")
    if mallopt is not None:
        mallopt(_M_ARENA_MAX, MALLOC_ARENAS)


@contextlib.contextmanager
def trimmed_heap(every_s: float = TRIM_EVERY_S) -> Iterator[None]:
    """Hand glibc's free pages back to the OS every `every_s` seconds while the block runs.

    During extraction the threads' malloc arenas keep what page bodies and parsed JSON freed:
    at `large` they grew 67 -> 196 MiB in 5 minutes with 40-90 MiB in use, and trimming every
    40 s kept RSS ~75 MiB lower after 4 minutes (docs/performance.md#memory). A trim takes
    milliseconds and
    runs without the GIL (ctypes releases it). Arrow's pool is not purged here, only once
    before the load (`release_free_memory`): purging jemalloc every 10 s cost ~+0.9 s CPU in
    a `small` sync for no lower peak; its own decay hands pages back (docs/performance.md#memory).
    """
    trim = _malloc_trim()
    if trim is None:  # not glibc: nothing to trim there
        yield
        return
    with every(every_s, lambda: trim(0), name="creator-sync-trim"):
        yield


def package_bytes(warehouse: Warehouse) -> int:
    """Bytes of the load packages waiting to be loaded (dlt's `load/new` and `load/normalized`)."""
    root = Path(warehouse.pipelines_dir) / warehouse.pipeline_name / "load"
    return sum(
        f.stat().st_size
        for folder in ("new", "normalized")
        if (root / folder).is_dir()
        for f in (root / folder).rglob("*")
        if f.is_file()
    )


@contextlib.contextmanager
def held_open(warehouse: Warehouse, enabled: bool = True, create: bool = False) -> Iterator[None]:
    """Keep the DuckDB file open across the short steps inside (run it under the warehouse lock).

    dlt opens and closes the database for every load job and every SQL step, and each close
    checkpoints: ~110 jobs and steps cost ~6 s of a nothing-new sync at `small`
    (docs/performance.md#nothing-new).
    While one connection is open, DuckDB hands every `connect` of the same file and
    configuration the same database instance, so those opens are cheap and a checkpoint runs
    only when a commit leaves `WAL_CHECKPOINT` of log behind. The price is the buffer pool kept
    between jobs (bounded by `memory_limit`), so callers hold it only for small packages
    (`HOLD_OPEN_MAX_BYTES`). A missing file is left missing unless `create` (a load, which
    creates it anyway): a read must not turn "no warehouse yet" into an empty one.
    """
    path = warehouse.duckdb_path
    if not enabled or warehouse.destination != "duckdb" or path is None or not (create or Path(path).exists()):
        yield
        return
    import duckdb

    # the same arguments dlt's DuckDB connection pool passes, or DuckDB refuses the second open
    con = duckdb.connect(database=path, read_only=False, config={})
    try:
        yield
    finally:
        con.close()


def remember_secret_hints() -> None:
    """Answer dlt's "is this type hint a secret?" once per hint instead of once per lookup.

    dlt resolves a configuration every time it opens a file writer, a destination client or a
    load job, and asks that question for every key in every provider and section it tries:
    ~28,000 times in a nothing-new sync at `small`, about half of the ~1,100 resolutions' cost
    (docs/performance.md#nothing-new). The answer depends on the hint alone, so it is kept per
    hint. Idempotent;
    a dlt that renamed the function is left as it is.
    """
    from dlt.common.configuration import resolve
    from dlt.common.configuration.providers import environ
    from dlt.common.configuration.specs import base_configuration

    original = getattr(base_configuration, "is_secret_hint", None)
    if original is None or getattr(original, "remembered", False):
        return
    known: dict[Any, bool] = {}

    def is_secret_hint(hint: Any) -> bool:
        try:
            return known[hint]
        except KeyError:
            answer = known[hint] = original(hint)
            return answer
        except TypeError:  # an unhashable hint: ask every time
            return bool(original(hint))

    is_secret_hint.remembered = True  # type: ignore[attr-defined]
    for module in (base_configuration, resolve, environ):
        if getattr(module, "is_secret_hint", None) is original:
            module.is_secret_hint = is_secret_hint  # type: ignore[attr-defined]


def remember_type_hints() -> None:
    """Resolve each TypedDict's type hints once in dlt's `validate_dict`, not per call.

    dlt validates a table schema for every item a resource yields (and schemas at each step),
    and each validation calls `typing.get_type_hints` for the table and again for each of its
    columns (dlt's own TODO says "very slow ... should cache"): ~4.8 ms per item of a
    21-column table, 0.6 ms with the hints kept. Hints of a class in its module's namespace do
    not change after import, so they are kept per class when asked in its own module's
    namespace (what `validate_dict` passes); other calls pass through.
    `validate_dict` only reads the result. Idempotent; a dlt without the name is left alone.
    """
    from dlt.common import validation

    original = getattr(validation, "get_type_hints", None)
    if original is None or getattr(original, "remembered", False):
        return
    known: dict[Any, Any] = {}

    def get_type_hints(obj: Any, globalns: Any = None, localns: Any = None,
                       include_extras: bool = False) -> Any:
        module = sys.modules.get(getattr(obj, "__module__", None) or "")
        if localns is not None or include_extras or globalns is not getattr(module, "__dict__", None):
            return original(obj, globalns=globalns, localns=localns, include_extras=include_extras)
        try:
            return known[obj]
        except KeyError:
            hints = known[obj] = original(obj, globalns=globalns)
            return hints
        except TypeError:  # unhashable: resolve every time
            return original(obj, globalns=globalns)

    get_type_hints.remembered = True  # type: ignore[attr-defined]
    validation.get_type_hints = get_type_hints  # type: ignore[attr-defined]


def settle_gc() -> None:
    """Keep CPython's cyclic garbage collector from re-walking what a sync never frees.

    A full `small` sync parses ~2,000 JSON pages into millions of short-lived dicts and lists:
    with the default thresholds the collector ran ~1,600 young, ~150 middle and 13 full
    collections, each full one walking every object the imports made (dlt, pyarrow, duckdb,
    sqlglot): 2.1-3.2 s of a ~20 s sync's CPU. Once imports are done, the objects alive are
    moved to the permanent generation (`gc.freeze`: never walked again), and the young
    threshold is raised so that most pages are freed by reference counting before a
    collection sees them: ~1.25 s left. Only the young generations are collected first
    (2 ms): a full collection there costs ~0.1 s, a nothing-new sync's 3 %, to free ~40
    import-time objects. Memory: cycles wait a little longer (peak RSS +5-12 MiB at `small`).
    Once per process.
    """
    if getattr(settle_gc, "done", False):
        return
    settle_gc.done = True  # type: ignore[attr-defined]
    gc.collect(1)
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, middle, old)


def resolve_warehouse(**flags: Any) -> Warehouse:
    """`warehouse_of` for callers holding flags only: `duckdb`, `dataset`, `destination`,
    `pipelines_dir` (None = not given)."""
    return warehouse_of(Settings(**flags))


def build_pipeline(warehouse: Warehouse, *, fresh_load: bool = False) -> dlt.Pipeline:
    """The dlt pipeline for `warehouse` (any dlt destination; DuckDB by path).

    `fresh_load`: this run fills a new warehouse (or `--full-refresh`); see the vacuum note.
    """
    tune_allocators()
    remember_secret_hints()
    remember_type_hints()
    settle_gc()
    if warehouse.destination == "duckdb":
        assert warehouse.duckdb_path is not None
        Path(warehouse.duckdb_path).parent.mkdir(parents=True, exist_ok=True)
        from dlt.destinations.impl.duckdb.configuration import DuckDbCredentials

        # DuckDB's default buffer pool is 80% of RAM: cap it so memory stays flat as data grows
        # (big merges spill to disk instead); `creator_sync.duckdb_memory_limit` overrides
        limit = setting(SYNC_SECTION, "duckdb_memory_limit")
        # insertion order is irrelevant to merges; dropping it lets big merges spill
        global_config: dict[str, Any] = {
            "memory_limit": str(limit),
            "preserve_insertion_order": False,
            # bulk inserts buffer this many row groups (122,880 rows each) before writing:
            # one keeps a load job's memory independent of how big the table already is
            "write_buffer_row_group_count": 1,
        }
        # one thread: each load job reads one file, and every thread adds its own buffers to
        # the job's memory (`creator_sync.duckdb_threads` overrides)
        global_config["threads"] = setting(SYNC_SECTION, "duckdb_threads")
        # dlt closes the database after each load job, and DuckDB checkpoints on close; each
        # checkpoint's vacuum re-reads and merges the table's partly filled row groups (every
        # 50,000-row file leaves one), so a first load's peak grew with the table: -50 MiB at
        # medium and -25% load CPU without it (docs/performance.md#memory). A fresh load appends
        # and deletes
        # nothing, so it loses only row-group compaction; incremental runs merge (delete-insert)
        # and keep DuckDB's vacuum, so deleted rows are reclaimed and the file does not creep.
        # `creator_sync.duckdb_vacuum_tasks` overrides both.
        vacuum = setting(SYNC_SECTION, "duckdb_vacuum_tasks")
        if vacuum is None and fresh_load:
            vacuum = FRESH_LOAD_VACUUM_TASKS
        if vacuum is not None:
            global_config["max_vacuum_tasks"] = vacuum
        # dlt's SQL client sets DuckDB's WAL checkpoint threshold to 1 GB on every connection,
        # so only a close checkpoints; while `held_open` keeps the database open, each job's
        # appended rows would then stay in memory until the end (~6 MiB per job: +250 MiB in a
        # nothing-new run at `small`). A pragma is applied after that setting, so it wins.
        credentials = DuckDbCredentials(
            warehouse.duckdb_path,
            global_config=global_config,
            pragmas=[f"wal_autocheckpoint = '{WAL_CHECKPOINT}'"],
        )
        # names qualified with the file's catalog: a dataset may share the file's name
        destination: Any = catalog_qualified_duckdb(credentials)
    else:
        destination = warehouse.destination
    make_state_dir(warehouse.pipelines_dir)  # 0700, and git-ignored inside `.creator-sync/`
    # (`creator_platform_source` asks dlt to stamp arrow items with `_dlt_load_id`)
    # loaded packages are kept by dlt for inspection: drop their data files, keep the metadata
    dlt.config["load.delete_completed_jobs"] = True
    # one load job at a time: with dlt's default of 20, DuckDB works on 20 files at once and
    # the load's memory grows with the number of files, i.e. with data (docs/performance.md#memory)
    dlt.config["load.workers"] = setting(SYNC_SECTION, "load_workers")
    # rotate files so normalize and load never hold a whole collection in memory
    # (the writers resolve `data_writer.*` without a step section)
    dlt.config["data_writer.file_max_items"] = FILE_MAX_ITEMS
    return dlt.pipeline(
        pipeline_name=warehouse.pipeline_name,
        destination=destination,
        dataset_name=warehouse.dataset,
        pipelines_dir=warehouse.pipelines_dir,
    )
