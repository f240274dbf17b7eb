"""After `pipeline.run(source)`: what needs the loaded tables (`finish_sync`).

`finish_sync(pipeline, source)` is the one entry point after the load, for the CLI and for a
user's own dlt script alike; each of its steps is a module of its own job:
`deletion_marking`, `push_restore`, `sync_resources` (SQL access: `warehouse_sql`). They run
through the pipeline's `sql_client`, so they work on any SQL destination, and always under the
warehouse lock (DuckDB has a single writer).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

import dlt

from creator_sync.common.settings import DEFAULTS
from creator_sync.sources.creator_platform import sync_run

from . import erasure_log
from .api_totals import write_api_totals
from .deletion_marking import mark_deleted
from .erasure import PEOPLE_TABLES, any_deleted, erase_people
from .forget_warehouse import erase, returning
from .push_restore import restore_pushes
from .rejected_records import write_rejected_records
from .sync_resources import write_sync_resources
from .warehouse_sql import data_tables, warehouse_guard


@dataclass
class Finished:
    """What `finish_sync` did: rows marked deleted per table, and the load ids it judged by."""

    deleted: dict[str, int] = field(default_factory=dict)
    load_ids: list[str] = field(default_factory=list)
    erased: dict[str, int] = field(default_factory=dict)  # rows whose personal fields went


def finish_sync(
    pipeline: dlt.Pipeline, source: Any, load_info: Any = None, *, lock: bool = True,
    deleted_people: str = DEFAULTS.deleted_people, erasure_salt: str | None = None,
) -> Finished:
    """Make the warehouse correct after `pipeline.run(source)` of `creator_platform_source()`.

    (The customers named by new money are re-read by a resource of the source, in the same
    load.)

    1. `_is_deleted` for the rows complete listings no longer list (per table and site);
    2. the rows webhook deliveries wrote while the run listed put back where newer than what
       it loaded; then, with `deleted_people="erase"` (`[creator_sync] deleted_people`), the
       personal fields of every deleted person erased (`erasure.erase_people`), and the
       people `forget` erased whom this run brought back erased again (`erasure_salt`: the
       salt of its log's hashes);
    3. `sync_resources`: one row per resource, what this run did (the models read it),
       `rejected_records`: the records it set aside, a value that cannot be read, and
       `api_totals`: the API's total per resource and site its complete listings read;
    4. the API session revoked and connections closed (the source is spent).

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
        report = run.report
        with warehouse_guard(pipeline) if lock else contextlib.nullcontext():
            deleted = mark_deleted(pipeline, report.complete, load_ids, run.extract_started,
                                   report.listed, report.seen, report.began)
            if load_ids:  # only a load can have overwritten a delivery
                restore_pushes(pipeline, run.extract_started)
            # (after the deliveries put back: one of a deleted person is erased too)
            erased = (_erase_deleted(pipeline, bool(set(PEOPLE_TABLES) & set(deleted)))
                      if deleted_people == "erase" and (load_ids or deleted) else {})
            for table, count in _erase_returning(pipeline, load_ids, erasure_salt).items():
                erased[table] = erased.get(table, 0) + count
            write_sync_resources(pipeline, report.outcomes, report.rows, run.extract_started,
                                 report.listing_started)
            write_rejected_records(pipeline, report.rejected, report.outcomes)
            write_api_totals(pipeline, report.totals)
    finally:
        run.close()
    return Finished(deleted, load_ids, erased)


def _erase_returning(pipeline: dlt.Pipeline, load_ids: list[str],
                     salt: str | None) -> dict[str, int]:
    erasures = list(erasure_log.entries(pipeline.pipelines_dir))
    if not erasures or not salt or not load_ids:
        return {}
    tables = data_tables(pipeline)
    with pipeline.sql_client() as client:
        person = returning(client, tables, load_ids, erasures, salt)
        return {} if person is None else erase(client, tables, person)


def _erase_deleted(pipeline: dlt.Pipeline, marked: bool) -> dict[str, int]:
    """After a run that marked someone, or that loaded anything while the warehouse holds a
    deleted person: a later load (a deleted customer's purchase read again) may have brought
    their fields back. A warehouse without deleted people costs one cheap query per round."""
    tables = data_tables(pipeline)
    flagged = [t for t in PEOPLE_TABLES if "_is_deleted" in tables.get(t, ())]
    if not flagged:
        return {}
    with pipeline.sql_client() as client:
        if not marked and not any_deleted(client, flagged):
            return {}
        return erase_people(client, tables)
