"""After `pipeline.run(source)`: what needs the CLI's world beside the load (`finish_sync`).

`finish_sync(pipeline, source)` is the one entry point after the load, for the CLI and for a
user's own dlt script alike: it puts back what webhook deliveries wrote during the run
(`push_restore`), erases again whom `forget` erased (its log), and closes the source's session.
Its steps run through the pipeline's `sql_client`, so they work on any SQL destination, and
always under the warehouse lock (DuckDB has a single writer). `_is_deleted`, the erasure of
deleted people and the run's bookkeeping (`sync_resources`, `rejected_records`, `api_totals`)
are the source's own, in the same load (its `deletions` and `bookkeeping` resources).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

import dlt

from creator_sync.sources.creator_platform import BOOKKEEPING_NAMES, sync_run

from . import erasure_log
from .erasure import PEOPLE_TABLES, any_deleted, erase_people
from .forget_warehouse import erase, returning
from .push_restore import restore_pushes
from .warehouse_sql import data_tables, warehouse_guard


@dataclass
class Finished:
    """What the run did: rows its source flagged deleted per table, the load ids, and rows
    whose personal fields went (a deleted person's, by the source; one `forget` erased whom
    the load brought back, here)."""

    deleted: dict[str, int] = field(default_factory=dict)
    load_ids: list[str] = field(default_factory=list)
    erased: dict[str, int] = field(default_factory=dict)


def finish_sync(
    pipeline: dlt.Pipeline, source: Any, load_info: Any = None, *, lock: bool = True,
    erasure_salt: str | None = None,
) -> Finished:
    """Make the warehouse correct after `pipeline.run(source)` of `creator_platform_source()`.

    (The customers named by new money are re-read, `_is_deleted` set with deleted people's
    fields erased, and the run's bookkeeping tables written, by resources of the source, in
    the same load.)

    1. (the source's: what its `deletions` resource flagged and erased is reported);
    2. the rows webhook deliveries wrote while the run listed put back where newer than what
       it loaded, a deleted person's erased again (`deleted_people="erase"`: the source erased
       what it loaded, but a delivery it could not see may hold the fields); then the people
       `forget` erased whom this run brought back erased again (`erasure_salt`: the salt of
       its log's hashes);
    3. the API session revoked and connections closed (the source is spent).

    Link tables need nothing here: dlt's merge replaces each loaded parent's links
    (`normalize.table_hints`).

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
        data_loads = _data_loads(load_info, load_ids)
        report = run.report
        deleted, erased = dict(report.deleted), dict(report.erased)
        with warehouse_guard(pipeline) if lock else contextlib.nullcontext():
            # only a load of data can have overwritten a delivery
            restored = restore_pushes(pipeline, run.extract_started) if data_loads else {}
            if restored and getattr(run.deletions, "erase", False):
                for table, count in _erase_restored(pipeline).items():
                    erased[table] = erased.get(table, 0) + count
            for table, count in _erase_returning(pipeline, data_loads, erasure_salt).items():
                erased[table] = erased.get(table, 0) + count
    finally:
        run.close()
    return Finished(deleted, load_ids, erased)


def _data_loads(load_info: Any, load_ids: list[str]) -> list[str]:
    """The loads of `load_ids` that wrote a data table: only they can have overwritten a
    delivery or brought back a person `forget` erased (a nothing-new run loads its bookkeeping
    alone, `sync_resources`). All of them when the load info does not list its jobs."""
    packages = {p.load_id: p for p in getattr(load_info, "load_packages", None) or ()}
    out = []
    for load_id in load_ids:
        package = packages.get(load_id)
        tables = {job.job_file_info.table_name for jobs in (package.jobs.values() if package else ())
                  for job in jobs}
        if not tables or any(t not in BOOKKEEPING_NAMES and not t.startswith("_dlt") for t in tables):
            out.append(load_id)
    return out


def _erase_restored(pipeline: dlt.Pipeline) -> dict[str, int]:
    """After deliveries were put back: the personal fields of every deleted person, erased
    again where a delivery brought them back (one cheap query when nobody is deleted)."""
    tables = data_tables(pipeline)
    flagged = [t for t in PEOPLE_TABLES if "_is_deleted" in tables.get(t, ())]
    with pipeline.sql_client() as client:
        if not flagged or not any_deleted(client, flagged):
            return {}
        return erase_people(client, tables)


def _erase_returning(pipeline: dlt.Pipeline, load_ids: list[str],
                     salt: str | None) -> dict[str, int]:
    erasures = list(erasure_log.entries(pipeline.pipelines_dir))
    if not erasures or not salt or not load_ids:
        return {}
    tables = data_tables(pipeline)
    with pipeline.sql_client() as client:
        person = returning(client, tables, load_ids, erasures, salt)
        return {} if person is None else erase(client, tables, person)
