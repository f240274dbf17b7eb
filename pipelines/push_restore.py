"""A pull never overwrites a row a delivery wrote after the pull's listing began (issue 29).

A pull lists without the warehouse lock and loads under it; a delivery the receiver loaded in
between (it takes the same lock per micro-batch) is fresher than what the pull listed, yet dlt's
merge has no keep-newer rule and would replace it. So, right after the pull's load and under the
same lock (`postload.finish_sync`), the deliveries loaded since the pull began are applied again,
each row only where its `updated_at` is later than the row the pull just wrote. Records without
`updated_at` stand as the pull wrote them: a completed transaction does not change, so the pull's
row is the same transaction with every listed attribute. Payloads are stored already under
`--pii`, so they are applied as stored.

The pull reads the receiver's event log (`webhook_events`) and writes through the modules both
sides share (`delivery_rows`, `pushed_writes`): it imports nothing of `pipelines.webhooks`.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import dlt
import orjson

from creator_sync.common.warehouse_db import WarehouseDB, as_db

from .warehouse_sql import is_duckdb

if TYPE_CHECKING:  # (pyarrow comes with them: imported when there is work)
    from .delivery_rows import Delivery

log = logging.getLogger("creator_sync.webhooks")


def _deliveries_since(db: WarehouseDB, dataset: str, since: datetime) -> list[Delivery]:
    from .delivery_rows import Delivery

    if not db.has_table(dataset, "webhook_events"):
        return []
    rows = db.fetchall(
        f"SELECT event, resource_id, payload_hash, payload, site_id, received_at "
        f"FROM {db.table(dataset, 'webhook_events')} WHERE loaded_at >= ? ORDER BY journal_seq",
        [since])
    # DuckDB's JSON arrives as text, PostgreSQL's jsonb already parsed
    return [Delivery(event, rid, orjson.loads(payload) if isinstance(payload, str | bytes)
                     else payload, digest,
                     received.astimezone(UTC) if received.tzinfo else received.replace(tzinfo=UTC),
                     site)
            for event, rid, digest, payload, site, received in rows if payload]


def restore_fresher_pushes(db: WarehouseDB, dataset: str, since: datetime) -> dict[str, int]:
    """Apply again the rows of deliveries loaded at or after `since` (the pull's start) that
    are newer than the warehouse's; returns the rows considered per table."""
    deliveries = _deliveries_since(db, dataset, since)
    if not deliveries:
        return {}
    from creator_sync.sources.creator_platform import is_link_table

    from .delivery_rows import BatchRows, DeliveryError, normalise_delivery
    from .pushed_writes import PUSHED_LOAD_ID_PREFIX, upsert_resources

    batch = BatchRows()
    for delivery in deliveries:
        try:
            tables = normalise_delivery(delivery)
        except DeliveryError:  # it was dead-lettered when it arrived; nothing of it was written
            continue
        dated = {table: [r for r in rows if r.get("updated_at") is not None]
                 for table, rows in tables.items() if rows and not is_link_table(rows[0])}
        batch.add(delivery, {t: rows for t, rows in dated.items() if rows})
    load_id = f"{PUSHED_LOAD_ID_PREFIX}{datetime.now(UTC).timestamp():.6f}"
    done: dict[str, int] = {}
    with db.transaction():
        for table in batch.table_batches(load_id):
            if table.parent_column is None and table.rows is not None:
                done[table.name] = upsert_resources(db, dataset, table, strictly_newer=True)
    if done:
        log.info("re-applied deliveries loaded during the pull where newer: %s", done)
    return done


def restore_pushes(pipeline: dlt.Pipeline, since: datetime) -> dict[str, int]:
    """`restore_fresher_pushes` on the pipeline's warehouse, where the receiver writes: DuckDB
    or PostgreSQL (nothing elsewhere)."""
    name = pipeline.destination.destination_name
    if not is_duckdb(pipeline) and name != "postgres":
        return {}
    with pipeline.sql_client() as client:
        db = as_db(client.native_connection, "duckdb" if is_duckdb(pipeline) else "postgres")
        return restore_fresher_pushes(db, pipeline.dataset_name, since)
