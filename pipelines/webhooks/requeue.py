"""Give dead-lettered deliveries a second chance once the cause is fixed.

Only deliveries that were valid but could not be loaded (`normalize_failed`, `load_failed`) are
requeued: a malformed body or an unknown event would only be rejected again. They go back into
the journal with their original `received_at`, and the loader handles them like new deliveries.
Requeuing twice is harmless because events are deduplicated on (event, id, payload hash).
"""

from __future__ import annotations

from pathlib import Path

import orjson

from creator_sync.common.settings import DEFAULT_DATASET
from creator_sync.common.warehouse import Warehouse, as_warehouse
from creator_sync.common.warehouse_db import open_warehouse
from creator_sync.pipelines.webhooks.journal import Journal
from creator_sync.pipelines.webhooks.loader import LOCK_TIMEOUT_S
from creator_sync.pipelines.webhooks.records import BadDelivery, encode, parse_delivery

REQUEUE_REASONS = ("normalize_failed", "load_failed")


def requeue_dead_letters(journal: Journal, target: Warehouse | str | Path,
                         dataset: str = DEFAULT_DATASET) -> int:
    """Move loadable dead letters back into the journal; returns how many were requeued.
    `target`: the warehouse, or a DuckDB file's path (with `dataset`)."""
    warehouse = as_warehouse(target, dataset)
    if warehouse.duckdb_path and not Path(warehouse.duckdb_path).exists():
        return 0
    with open_warehouse(warehouse, lock_timeout=LOCK_TIMEOUT_S) as db:
        if not db.has_table(warehouse.dataset, "webhook_dead_letters"):
            return 0
        table = db.table(warehouse.dataset, "webhook_dead_letters")
        rows = db.fetchall(
            f"SELECT journal_seq, body, received_at FROM {table} "
            "WHERE reason IN (?, ?) AND body IS NOT NULL ORDER BY journal_seq",
            list(REQUEUE_REASONS),
        )
        requeued, seqs = [], []
        for seq, body, received_at in rows:
            raw = body.encode()
            try:
                item = parse_delivery(raw, received_at)
            except BadDelivery:
                # a `load_failed` body is the journal record itself: unwrap it
                try:
                    record = orjson.loads(raw)
                    item = parse_delivery(
                        orjson.dumps({k: record.get(k) for k in ("event", "id", "payload")}),
                        received_at,
                        record.get("site_id"),
                    )
                except (BadDelivery, orjson.JSONDecodeError, AttributeError):
                    continue
            requeued.append(encode(item))
            seqs.append(seq)
        if not requeued:
            return 0
        journal.append(requeued)  # durable before the dead letters go away
        members, params = db.int_list(seqs)
        db.execute(f"DELETE FROM {table} WHERE journal_seq IN ({members})", params)
    return len(requeued)
