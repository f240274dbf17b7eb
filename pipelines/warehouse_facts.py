"""What the warehouse holds before a run, read for the source's arguments: the tables it
keeps (a table new to it is loaded with `append`) and the keys of rows deliveries pushed last
(re-read, they are loaded even when unchanged)."""

from __future__ import annotations

from collections.abc import Iterable

import dlt

from creator_sync.sources.creator_platform import BOOKKEEPING_NAMES, pushed_keys

from .warehouse_sql import data_tables, scan_client, sql_client


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


def webhook_written_keys(pipeline: dlt.Pipeline, tables: Iterable[str] | None) -> dict[str, frozenset[str]]:
    """Per table, the keys of rows the webhook loader wrote last (their `_dlt_load_id` is its).

    A run drops re-read rows whose hash matches what it read last time
    (`sources.creator_platform.unchanged`); a row a delivery wrote since may differ from that
    (a missed or out-of-order event), so those keys are loaded again: the pull stays the source
    of truth. Bounded by the deliveries since the last sync: the pull's next write of a row
    replaces the webhook load id. The query is the source's (`pushed_keys`, which a run no host
    told reads itself), here under the scan's memory cap.
    """
    if tables is None:  # kept tables unknown: nothing is dropped, nothing to force
        return {}
    columns = data_tables(pipeline)
    # (the run's bookkeeping tables are the source's own: no delivery writes them)
    names = [t for t in sorted(set(tables) & set(columns) - set(BOOKKEEPING_NAMES))
             if "_dlt_load_id" in columns[t]]
    if not names:
        return {}
    with scan_client(pipeline) as client:
        return pushed_keys(client, {t: columns[t] for t in names})
