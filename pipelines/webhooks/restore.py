"""A pull never overwrites a row a delivery wrote after the pull's listing began (issue 29).

A pull lists without the warehouse lock and loads under it; a delivery the receiver loaded in
between (it takes the same lock per micro-batch) is fresher than what the pull listed, yet dlt's
merge has no keep-newer rule and would replace it. So, right after the pull's load and under the
same lock, the deliveries loaded since the pull began are applied again, each row only where its
`updated_at` is later than the row the pull just wrote. Records without `updated_at` stand as the
pull wrote them: a completed transaction does not change, so the pull's row is the same
transaction with every listed attribute. Payloads are stored already under `--pii`, so they are
applied as stored.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

import duckdb
import orjson

from creator_sync.common.duckdb_names import quote_ident
from creator_sync.pipelines.webhooks import warehouse
from creator_sync.pipelines.webhooks.records import Delivery
from creator_sync.pipelines.webhooks.rows import BatchRows, DeliveryError, normalise_delivery
from creator_sync.sources.creator_platform.hints import is_link_table

log = logging.getLogger("creator_sync.webhooks")


def _deliveries_since(con: duckdb.DuckDBPyConnection, dataset: str,
                      since: datetime) -> list[Delivery]:
    schema = quote_ident(dataset)
    found = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = ? "
        "AND table_name = 'webhook_events'", [dataset]).fetchone()
    if not found or not found[0]:
        return []
    rows = con.execute(
        f"SELECT event, resource_id, payload_hash, payload, site_id, received_at "
        f"FROM {schema}.webhook_events WHERE loaded_at >= ? ORDER BY journal_seq",
        [since]).fetchall()
    return [Delivery(event, rid, orjson.loads(payload), digest,
                     received.astimezone(UTC) if received.tzinfo else received.replace(tzinfo=UTC),
                     site)
            for event, rid, digest, payload, site, received in rows if payload]


def restore_fresher_pushes(con: duckdb.DuckDBPyConnection, dataset: str,
                           since: datetime) -> dict[str, int]:
    """Apply again the rows of deliveries loaded at or after `since` (the pull's start) that
    are newer than the warehouse's; returns the rows considered per table."""
    deliveries = _deliveries_since(con, dataset, since)
    if not deliveries:
        return {}
    batch = BatchRows()
    for delivery in deliveries:
        try:
            tables = normalise_delivery(delivery)
        except DeliveryError:  # it was dead-lettered when it arrived; nothing of it was written
            continue
        dated = {table: [r for r in rows if r.get("updated_at") is not None]
                 for table, rows in tables.items() if rows and not is_link_table(rows[0])}
        batch.add(delivery, {t: rows for t, rows in dated.items() if rows})
    load_id = f"{warehouse.PUSHED_LOAD_ID_PREFIX}{datetime.now(UTC).timestamp():.6f}"
    done: dict[str, int] = {}
    for table in batch.table_batches(load_id):
        if table.parent_column is None and table.rows is not None:
            done[table.name] = warehouse.upsert_resources(con, dataset, table, strictly_newer=True)
    if done:
        log.info("re-applied deliveries loaded during the pull where newer: %s", done)
    return done
