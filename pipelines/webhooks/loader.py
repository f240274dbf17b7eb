"""Background loader: journal -> micro-batches -> one warehouse transaction each -> offset.

The warehouse (DuckDB or PostgreSQL) is opened only for the write of one batch and only under
its writer lock (`common.warehouse_db.open_warehouse`: the DuckDB file lock, or PostgreSQL's
advisory lock of the dataset), so a pull sync (which holds the same lock around its load step)
and the receiver never contend, nor do two receivers on one PostgreSQL warehouse; while the lock
is busy the journal keeps accepting deliveries and the batch simply grows.

Exactly-once effect: the offset is committed after the warehouse transaction. A crash in between
replays the batch, which is harmless: events are deduplicated on (event, id, payload hash), dead
letters on their journal sequence number, and resource upserts are idempotent.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import orjson

from creator_sync.common.locking import LockTimeout
from creator_sync.common.settings import DEFAULT_DATASET
from creator_sync.common.warehouse import Warehouse, as_warehouse
from creator_sync.common.warehouse_db import WarehouseUnavailable, open_warehouse
from creator_sync.pipelines import pushed_writes
from creator_sync.pipelines.delivery_rows import (
    BatchRows,
    Delivery,
    DeliveryError,
    delivery_site_id,
    normalise_delivery,
    scrub_payload,
)
from creator_sync.pipelines.erasure_log import ErasedPeople
from creator_sync.pipelines.forget_scrub import erase_in_body, erase_in_payload
from creator_sync.pipelines.webhooks import warehouse
from creator_sync.pipelines.webhooks.forget_requests import answer_pending
from creator_sync.pipelines.webhooks.journal import Journal, JournalReader, Record
from creator_sync.pipelines.webhooks.records import DeadLetter, decode
from creator_sync.sources.creator_platform import PiiMode

log = logging.getLogger("creator_sync.webhooks")

# Failures worth waiting out: the warehouse locked by another process or out of reach, disk
# trouble; PostgreSQL out of reach or its connection lost (psycopg2's Operational and Interface
# errors: deadlocks, serialisation failures and shutdowns included), where psycopg2 is installed.
TRANSIENT: tuple[type[BaseException], ...] = (
    duckdb.IOException,
    duckdb.TransactionException,
    OSError,
    TimeoutError,
    LockTimeout,
    WarehouseUnavailable,
)
try:
    import psycopg2

    TRANSIENT += (psycopg2.OperationalError, psycopg2.InterfaceError)
except ImportError:  # pragma: no cover - psycopg2 comes with dlt[postgres]
    pass

# a short lock wait, so a long sync shows up as retries, not a hang
LOCK_TIMEOUT_S = 5.0


@dataclass
class LoaderStats:
    batches: int = 0
    events_loaded: int = 0
    duplicates: int = 0
    dead_letters: int = 0
    retries: int = 0
    last_error: str | None = None
    loaded_seq: int = 0
    rows: dict[str, int] = field(default_factory=dict)


class Loader:
    """Runs in its own thread; `stop()` drains what is durable, then returns."""

    def __init__(
        self,
        journal: Journal,
        warehouse: Warehouse | str | Path,
        *,
        dataset: str = DEFAULT_DATASET,
        batch_size: int = 500,
        interval: float = 1.0,
        retry_max_s: float = 5.0,
        pii: PiiMode = None,
        pii_salt: str = "",
        erased: ErasedPeople | None = None,
    ):
        """`warehouse`: where batches go (a DuckDB file's path: that file, with `dataset`)."""
        self.journal = journal
        self.warehouse = as_warehouse(warehouse, dataset)
        self.dataset = self.warehouse.dataset
        self.batch_size = batch_size
        self.interval = interval
        self.retry_max_s = retry_max_s
        self.pii = pii
        self.pii_salt = pii_salt
        self.erased = erased  # people `forget` erased: scrubbed from deliveries that name them
        self._relocate = False  # the journal was rewritten: the reader finds its place again
        self.stats = LoaderStats(loaded_seq=journal.loaded_seq())
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- life cycle ---------------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self.run, name="webhook-loader", daemon=True)
        self._thread.start()

    def stop(self, timeout: float | None = 30.0) -> None:
        self._stop.set()
        self.journal.wake()
        if self._thread is not None:
            self._thread.join(timeout)

    def run(self) -> None:
        reader = JournalReader(self.journal, self.journal.loaded_seq())
        batch: list[Record] = []
        started = 0.0
        while True:
            if not batch:
                if self._stop.is_set() and reader.position >= self.journal.durable_seq:
                    return
                if answer_pending(self.journal) or self._relocate:  # offsets moved
                    reader = JournalReader(self.journal, reader.position)
                    self._relocate = False
                self.journal.wait_for(reader.position, 0.2, self._stop)
            more = reader.read(self.batch_size - len(batch))
            if more and not batch:
                started = time.monotonic()
            batch.extend(more)
            if not batch:
                continue
            age = time.monotonic() - started
            if len(batch) >= self.batch_size or age >= self.interval or self._stop.is_set():
                if not self._load_with_retry(batch):
                    return  # stopping while the warehouse is unavailable: the journal keeps it
                batch = []
            else:
                self.journal.wait_for(reader.position, self.interval - age, self._stop)

    def _load_with_retry(self, batch: list[Record]) -> bool:
        """Retry transient failures (lock, I/O) forever while running; isolate bad deliveries."""
        delay = 0.05
        give_up_at: float | None = None
        while True:
            try:
                self.load_isolating(batch)
                return True
            except Exception as exc:  # transient, or a bug: never drop, never die; retry
                self.stats.retries += 1
                self.stats.last_error = str(exc)
                level = logging.WARNING if isinstance(exc, TRANSIENT) else logging.ERROR
                log.log(level, "loading %d deliveries failed, will retry: %s", len(batch), exc)
                if self._stop.is_set():
                    give_up_at = give_up_at or time.monotonic() + 2 * self.retry_max_s
                    if time.monotonic() >= give_up_at:
                        return False
                time.sleep(delay)
                delay = min(delay * 2, self.retry_max_s)

    def load_isolating(self, batch: list[Record]) -> None:
        """A deterministic failure is bisected down to the delivery causing it, which goes to
        the dead letters with the error; the rest of the batch still loads, in order."""
        try:
            self.load(batch)
        except TRANSIENT:
            raise
        except Exception as exc:
            if len(batch) == 1:
                log.error("journal record %d cannot be loaded: %s", batch[0].seq, exc)
                self.load(batch, poison={batch[0].seq: str(exc)})
                return
            middle = len(batch) // 2
            self.load_isolating(batch[:middle])
            self.load_isolating(batch[middle:])

    def _event_row(self, seq: int, delivery: Delivery) -> dict:
        payload = scrub_payload(delivery.payload, self.pii, self.pii_salt)
        return {
            "event": delivery.event,
            "resource_id": delivery.resource_id,
            "payload_hash": delivery.payload_hash,
            "payload": orjson.dumps(payload).decode(),
            "site_id": delivery_site_id(delivery),
            "journal_seq": seq,
            "received_at": delivery.received_at,
        }

    def _without_erased(self, delivery: Delivery) -> Delivery:
        """A delivery naming a person `forget` erased lands without them, and its journal
        record is scrubbed too (the platform still holds them until it erases them)."""
        person = self.erased.named_in(delivery.payload) if self.erased is not None else None
        if person is None:
            return delivery
        self.journal.scrub(lambda body: erase_in_body(body, person))
        self._relocate = True
        return dataclasses.replace(delivery, payload=erase_in_payload(delivery.payload, person))

    def _scrub_dead(self, row: dict) -> dict:
        """Under --pii a rejected body is not kept: it may hold the very values being hidden."""
        if self.pii is None:
            return row
        return {**row, "body": None}

    # -- one batch ----------------------------------------------------------------------------
    def load(self, records: list[Record], poison: dict[int, str] | None = None) -> None:
        """Load one batch in one transaction, then move the committed offset past it."""
        deliveries: list[tuple[int, Delivery]] = []
        dead: list[dict] = []
        duplicates = 0
        for record in records:
            if poison and record.seq in poison:
                dead.append(_poison_row(record, poison[record.seq]))
                continue
            item = decode(record.body)
            if isinstance(item, Delivery):
                deliveries.append((record.seq, self._without_erased(item)))
            else:
                dead.append(_dead_row(record.seq, item))
        with open_warehouse(self.warehouse, lock_timeout=LOCK_TIMEOUT_S) as db, db.transaction():
            warehouse.ensure_schema(db, self.dataset)
            fresh = warehouse.new_event_keys(db, self.dataset, (d.key for _, d in deliveries))
            rows = BatchRows()
            events = []
            for seq, delivery in deliveries:
                if delivery.key not in fresh:
                    duplicates += 1
                    continue
                fresh.discard(delivery.key)  # a redelivery inside the same batch
                try:
                    rows.add(delivery, normalise_delivery(delivery, self.pii, self.pii_salt))
                except DeliveryError as exc:
                    dead.append(_failed_row(seq, delivery, str(exc)))
                    continue
                events.append(self._event_row(seq, delivery))
            loaded_at = datetime.now(UTC)
            load_id = f"{pushed_writes.PUSHED_LOAD_ID_PREFIX}{loaded_at.timestamp():.6f}"
            rows_written: dict[str, int] = {}
            for table in rows.table_batches(load_id, self.pii):
                if table.parent_column is None:
                    count = pushed_writes.upsert_resources(db, self.dataset, table)
                else:
                    count = pushed_writes.replace_links(db, self.dataset, table)
                rows_written[table.name] = rows_written.get(table.name, 0) + count
            if events:
                warehouse.insert_events(db, self.dataset, warehouse.events_table(events, loaded_at))
            added_dead = 0
            if dead:
                added_dead = warehouse.insert_dead_letters(
                    db,
                    self.dataset,
                    warehouse.dead_letters_table([self._scrub_dead(row) for row in dead], loaded_at),
                )
        self.journal.commit_loaded(records[-1].seq)
        self.journal.prune()
        self.stats.batches += 1
        self.stats.events_loaded += len(events)
        self.stats.duplicates += duplicates
        self.stats.dead_letters += added_dead
        for table, count in rows_written.items():
            self.stats.rows[table] = self.stats.rows.get(table, 0) + count
        self.stats.loaded_seq = records[-1].seq
        log.info(
            "loaded %d deliveries (%d new events, %d dead letters) up to journal seq %d",
            len(records), len(events), added_dead, records[-1].seq,
        )


def _dead_row(seq: int, item: DeadLetter) -> dict:
    return {
        "reason": item.reason,
        "detail": item.detail,
        "event": item.event,
        "body": item.body,
        "journal_seq": seq,
        "received_at": item.received_at,
    }


def _failed_row(seq: int, delivery: Delivery, detail: str) -> dict:
    body = orjson.dumps(
        {"event": delivery.event, "id": delivery.resource_id, "payload": delivery.payload}
    ).decode()
    return {
        "reason": "normalize_failed",
        "detail": detail,
        "event": delivery.event,
        "body": body,
        "journal_seq": seq,
        "received_at": delivery.received_at,
    }


def _poison_row(record: Record, error: str) -> dict:
    """A record that cannot be loaded at all, kept as it was journaled (even undecodable)."""
    try:
        item = decode(record.body)
        event, received_at = item.event, item.received_at
    except Exception:
        event, received_at = None, datetime.now(UTC)
    return {
        "reason": "load_failed",
        "detail": error,
        "event": event,
        "body": record.body.decode("utf-8", errors="replace"),
        "journal_seq": record.seq,
        "received_at": received_at,
    }
