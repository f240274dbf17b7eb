"""Build the dlt pipeline for a resolved `common.warehouse.Warehouse` (DuckDB and dlt settings).

The values it sets are in `tuning.py`; the process-wide set-up it applies first (allocators,
GC) is `process_tuning`; the DuckDB file kept open across a small load's steps is `kept_open`.

Conventions other areas rely on (models, report, webhooks):
- the app's settings, their section, check and default are in `common.settings.APP_SETTINGS`
  (`[creator_sync]`, env `CREATOR_SYNC__<KEY>`: the warehouse, `duckdb`, `dataset`, ...); the
  API's are the source's, `[sources.creator_platform]` (env `SOURCES__CREATOR_PLATFORM__<KEY>`).
- where the warehouse and the pipeline's local state live is `common.warehouse` (one
  derivation for every command).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dlt

from creator_sync.common.duckdb_names import catalog_qualified_duckdb
from creator_sync.common.files import make_state_dir
from creator_sync.common.settings import Settings, app_setting
from creator_sync.common.warehouse import Warehouse, warehouse_of
from creator_sync.common.warehouse_db import configured_dsn
from creator_sync.pipelines.process_tuning import tune_process

from .tuning import FILE_MAX_ITEMS, FRESH_LOAD_VACUUM_TASKS, WAL_CHECKPOINT


def resolve_warehouse(**flags: Any) -> Warehouse:
    """`warehouse_of` for callers holding flags only: `duckdb`, `dataset`, `destination`,
    `pipelines_dir` (None = not given)."""
    return warehouse_of(Settings(**flags))


def build_pipeline(warehouse: Warehouse, *, fresh_load: bool = False) -> dlt.Pipeline:
    """The dlt pipeline for `warehouse` (any dlt destination; DuckDB by path).

    `fresh_load`: this run fills a new warehouse (or `--full-refresh`); see the vacuum note.
    """
    tune_process()
    if warehouse.destination == "duckdb":
        assert warehouse.duckdb_path is not None
        Path(warehouse.duckdb_path).parent.mkdir(parents=True, exist_ok=True)
        from dlt.destinations.impl.duckdb.configuration import DuckDbCredentials

        # DuckDB's default buffer pool is 80% of RAM: cap it so memory stays flat as data grows
        # (big merges spill to disk instead); `creator_sync.duckdb_memory_limit` overrides
        limit = app_setting("duckdb_memory_limit")
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
        global_config["threads"] = app_setting("duckdb_threads")
        # dlt closes the database after each load job, and DuckDB checkpoints on close; each
        # checkpoint's vacuum re-reads and merges the table's partly filled row groups (every
        # 50,000-row file leaves one), so a first load's peak grew with the table: -50 MiB at
        # medium and -25% load CPU without it (docs/performance.md#memory). A fresh load appends
        # and deletes
        # nothing, so it loses only row-group compaction; incremental runs merge (delete-insert)
        # and keep DuckDB's vacuum, so deleted rows are reclaimed and the file does not creep.
        # `creator_sync.duckdb_vacuum_tasks` overrides both.
        vacuum = app_setting("duckdb_vacuum_tasks")
        if vacuum is None and fresh_load:
            vacuum = FRESH_LOAD_VACUUM_TASKS
        if vacuum is not None:
            global_config["max_vacuum_tasks"] = vacuum
        # dlt's SQL client sets DuckDB's WAL checkpoint threshold to 1 GB on every connection,
        # so only a close checkpoints; while `database_kept_open` keeps the database open, each job's
        # appended rows would then stay in memory until the end (~6 MiB per job: +250 MiB in a
        # nothing-new run at `small`). A pragma is applied after that setting, so it wins.
        credentials = DuckDbCredentials(
            warehouse.duckdb_path,
            global_config=global_config,
            pragmas=[f"wal_autocheckpoint = '{WAL_CHECKPOINT}'"],
        )
        # names qualified with the file's catalog: a dataset may share the file's name
        destination: Any = catalog_qualified_duckdb(credentials)
    elif warehouse.destination == "postgres" and configured_dsn(warehouse):
        from dlt.destinations import postgres

        destination = postgres(credentials=configured_dsn(warehouse))
    else:
        destination = warehouse.destination
    make_state_dir(warehouse.pipelines_dir)  # 0700, and git-ignored inside `.creator-sync/`
    # (`creator_platform_source` asks dlt to stamp arrow items with `_dlt_load_id`)
    # loaded packages are kept by dlt for inspection: drop their data files, keep the metadata
    dlt.config["load.delete_completed_jobs"] = True
    # one load job at a time: with dlt's default of 20, DuckDB works on 20 files at once and
    # the load's memory grows with the number of files, i.e. with data (docs/performance.md#memory)
    dlt.config["load.workers"] = app_setting("load_workers")
    # rotate files so normalize and load never hold a whole collection in memory
    # (the writers resolve `data_writer.*` without a step section)
    dlt.config["data_writer.file_max_items"] = FILE_MAX_ITEMS
    return dlt.pipeline(
        pipeline_name=warehouse.pipeline_name,
        destination=destination,
        dataset_name=warehouse.dataset,
        pipelines_dir=warehouse.pipelines_dir,
    )
