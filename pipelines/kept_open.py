"""The warehouse's DuckDB file kept open across a small load's steps (docs/performance.md#cpu):
a package up to `tuning.HOLD_OPEN_MAX_BYTES` loads through one open database."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from creator_sync.common.warehouse import Warehouse


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
def database_kept_open(
    warehouse: Warehouse, enabled: bool = True, create: bool = False
) -> Iterator[None]:
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
