"""Loader: micro-batches land typed rows, dedup, column-aware upsert, links, dead letters,
idempotent replay, and waiting out a held warehouse lock."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from decimal import Decimal

import duckdb
import orjson
import pytest
from webhook_payloads import customer, delivery, order_created, payment_succeeded, transaction

from creator_sync.common.locking import warehouse_lock
from creator_sync.pipelines.webhooks.journal import Journal, JournalReader
from creator_sync.pipelines.webhooks.loader import Loader
from creator_sync.pipelines.webhooks.records import BadDelivery, dead_letter, encode, parse_delivery

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def env(tmp_path):
    journal = Journal(tmp_path / "journal")
    db = tmp_path / "wh.duckdb"
    loader = Loader(journal, db, batch_size=50, interval=0.05)
    yield journal, db, loader
    loader.stop()
    journal.close()


def put(journal: Journal, *bodies: dict | bytes, site_id: str | None = None) -> None:
    encoded = []
    for body in bodies:
        raw = body if isinstance(body, bytes) else orjson.dumps(body)
        try:
            encoded.append(encode(parse_delivery(raw, NOW, site_id)))
        except BadDelivery as exc:
            encoded.append(encode(dead_letter(raw, exc, NOW)))
    journal.append(encoded)


def load_all(journal: Journal, loader: Loader) -> None:
    records = JournalReader(journal, journal.loaded_seq()).read(10_000)
    loader.load(records)


def query(db, sql: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()


def test_deliveries_land_typed_rows_and_raw_events(env):
    journal, db, loader = env
    put(journal, payment_succeeded(), order_created())
    load_all(journal, loader)

    events = query(db, "SELECT event, resource_id, site_id FROM creator_platform.webhook_events ORDER BY journal_seq")
    assert events == [
        ("payment_succeeded", "3300000001", "2200000001"),
        ("order_created", "3400000001", "2200000001"),
    ]
    [(amount, created, customer_id)] = query(
        db, "SELECT amount_in_cents, created_at, customer_id FROM creator_platform.transactions"
    )
    assert amount == 4999
    assert created == datetime(2026, 1, 2, 1, 4, 5, tzinfo=UTC)  # +02:00 normalised to UTC
    assert customer_id == "3000000001"
    assert query(db, "SELECT net_revenue FROM creator_platform.customers") == [(Decimal("123.45"),)]
    assert query(db, "SELECT count(*) FROM creator_platform.order_items") == [(2,)]
    links = query(db, "SELECT order_id, order_item_id FROM creator_platform.orders_order_items ORDER BY 2")
    assert links == [("3400000001", "3500000001"), ("3400000001", "3500000002")]
    assert query(db, "SELECT transaction_id FROM creator_platform.orders_payment_transactions") == [
        ("3300000001",)
    ]
    types = dict(
        query(
            db,
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = 'creator_platform' AND table_name = 'customers'",
        )
    )
    assert types["net_revenue"] == "DECIMAL(38,9)"
    assert types["created_at"] == "TIMESTAMP WITH TIME ZONE"
    assert types["socials"] == "JSON"
    assert types["sign_in_count"] == "BIGINT"


def test_redeliveries_are_deduplicated_within_and_across_batches(env):
    journal, db, loader = env
    same = payment_succeeded()
    reordered = {"payload": same["payload"], "event": same["event"], "id": same["id"]}
    put(journal, same, reordered)
    load_all(journal, loader)
    put(journal, same)
    load_all(journal, loader)
    assert query(db, "SELECT count(*) FROM creator_platform.webhook_events") == [(1,)]
    assert loader.stats.duplicates == 2
    # a different payload for the same resource is a new event (and the newer values win)
    put(journal, payment_succeeded(amount=5999))
    load_all(journal, loader)
    assert query(db, "SELECT count(*) FROM creator_platform.webhook_events") == [(2,)]
    assert query(db, "SELECT amount_in_cents FROM creator_platform.transactions") == [(5999,)]


def test_sparse_payload_does_not_erase_columns_the_pull_loaded(env):
    journal, db, loader = env
    put(journal, payment_succeeded())
    load_all(journal, loader)
    with duckdb.connect(str(db)) as con:  # what a pull sync would have filled in
        con.execute(
            "UPDATE creator_platform.transactions SET settlement_amount_in_cents = 4800, "
            "provider = 'platform_payments'"
        )
    put(journal, delivery("payment_succeeded", "3300000001", [transaction(state="succeeded", amount_in_cents=5000)]))
    load_all(journal, loader)
    assert query(
        db, "SELECT amount_in_cents, settlement_amount_in_cents, provider FROM creator_platform.transactions"
    ) == [(5000, 4800, "platform_payments")]


def test_link_sets_are_replaced_per_parent_last_delivery_wins(env):
    journal, db, loader = env
    from webhook_payloads import order

    first = delivery("order_created", "3400000001", order(items=("3500000001", "3500000002")))
    second = delivery("order_created", "3400000001", order(items=("3500000003",)))
    other = delivery("order_created", "3400000009", order("3400000009", items=("3500000009",)))
    put(journal, first, other)
    load_all(journal, loader)
    put(journal, second)
    load_all(journal, loader)
    links = query(db, "SELECT order_id, order_item_id FROM creator_platform.orders_order_items ORDER BY 1, 2")
    assert links == [("3400000001", "3500000003"), ("3400000009", "3500000009")]


def test_dead_letters_and_unloadable_payloads_do_not_block_the_batch(env):
    journal, db, loader = env
    bad_amount = delivery(
        "payment_succeeded", "3300000002", [transaction("3300000002", amount_in_cents="12.5")]
    )
    put(journal, {"id": "1", "event": "nope", "payload": []}, b"{oops", bad_amount, payment_succeeded())
    load_all(journal, loader)
    dead = query(db, "SELECT reason, event, detail FROM creator_platform.webhook_dead_letters ORDER BY journal_seq")
    assert [(r, e) for r, e, _ in dead] == [
        ("unknown_event", "nope"),
        ("malformed_json", None),
        ("normalize_failed", "payment_succeeded"),
    ]
    assert "amount_in_cents" in dead[2][2] and "3300000002" in dead[2][2]
    assert query(db, "SELECT id FROM creator_platform.transactions") == [("3300000001",)]
    assert journal.loaded_seq() == 4


def test_replaying_a_loaded_batch_changes_nothing(env):
    journal, db, loader = env
    put(journal, payment_succeeded(), order_created(), {"id": "1", "event": "nope", "payload": []})
    load_all(journal, loader)

    def snapshot():
        return [
            query(db, f"SELECT count(*) FROM creator_platform.{t}")[0][0]
            for t in ("webhook_events", "webhook_dead_letters", "transactions", "customers",
                      "orders", "order_items", "orders_order_items")
        ]

    before = snapshot()
    loader.load(JournalReader(journal, 0).read(100))  # crash between commit and offset write
    assert snapshot() == before


def test_background_loader_waits_for_the_warehouse_lock(env):
    journal, db, loader = env
    lock = warehouse_lock(db)
    lock.__enter__()
    released = False
    try:
        loader.start()
        put(journal, payment_succeeded())
        time.sleep(0.5)
        assert journal.loaded_seq() == 0  # the pull sync holds the lock: nothing written
        put(journal, order_created())  # the journal keeps accepting meanwhile
    finally:
        lock.__exit__(None, None, None)
        released = True
    deadline = time.monotonic() + 20
    while journal.loaded_seq() < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert released and journal.loaded_seq() == 2
    loader.stop()
    assert query(db, "SELECT count(*) FROM creator_platform.webhook_events") == [(2,)]


def test_site_falls_back_to_the_url_hint_when_payload_names_none(env):
    journal, db, loader = env
    put(journal, delivery("payment_succeeded", "3300000001", [transaction()]), site_id="2200000042")
    load_all(journal, loader)
    assert query(db, "SELECT site_id FROM creator_platform.transactions") == [("2200000042",)]


def test_pii_mode_applies_to_rows_and_raw_payloads(tmp_path):
    from creator_sync.sources.creator_platform.pii import apply_pii

    journal = Journal(tmp_path / "journal")
    db = tmp_path / "pii.duckdb"
    loader = Loader(journal, db, pii="hash", pii_salt="pepper")
    put(journal, payment_succeeded(), b"{not json with ada@example.com")
    load_all(journal, loader)
    journal.close()
    expected = {"email": "ada@example.com", "name": "Ada"}
    apply_pii(expected, "hash", "pepper", "customers")
    assert expected["name"] != "Ada", "a customer's name is personal"
    assert query(db, "SELECT email, name FROM creator_platform.customers") == [
        (expected["email"], expected["name"])]
    [(payload,)] = query(db, "SELECT payload FROM creator_platform.webhook_events")
    assert "ada@example.com" not in payload and expected["email"] in payload
    assert '"Ada"' not in payload and expected["name"] in payload
    assert query(db, "SELECT body FROM creator_platform.webhook_dead_letters") == [(None,)]


def test_an_older_redelivery_does_not_roll_back_a_newer_row(env):
    journal, db, loader = env
    newer = delivery("payment_succeeded", "3300000001",
                     [customer(updated_at="2026-02-02T00:00:00Z", net_revenue="200.00")])
    older = delivery("payment_succeeded", "3300000001",
                     [customer(updated_at="2026-02-01T00:00:00Z", net_revenue="100.00")])
    put(journal, newer, older)  # out of order inside one batch
    load_all(journal, loader)
    assert query(db, "SELECT net_revenue FROM creator_platform.customers") == [(Decimal("200.00"),)]
    put(journal, older)  # a late retry in a later batch (same payload: deduplicated)
    retry = delivery("purchase", "9", [customer(updated_at="2026-01-31T00:00:00Z", name="Old")])
    put(journal, retry)  # a different event carrying an older snapshot
    load_all(journal, loader)
    assert query(db, "SELECT net_revenue, name FROM creator_platform.customers") == [
        (Decimal("200.00"), "Ada")
    ]
    put(journal, delivery("purchase", "10", [customer(updated_at="2026-02-03T00:00:00Z", name="New")]))
    load_all(journal, loader)
    assert query(db, "SELECT name FROM creator_platform.customers") == [("New",)]


def test_a_record_that_breaks_loading_is_isolated_and_the_rest_loads(env):
    journal, db, loader = env
    put(journal, payment_succeeded("3300000001"))
    journal.append([b"\x00 not a journal body"])  # e.g. written by a future, newer version
    put(journal, payment_succeeded("3300000002"))
    loader.start()
    deadline = time.monotonic() + 20
    while journal.loaded_seq() < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    loader.stop()
    assert query(db, "SELECT id FROM creator_platform.transactions ORDER BY id") == [
        ("3300000001",), ("3300000002",)
    ]
    [(reason, seq, body)] = query(
        db, "SELECT reason, journal_seq, body FROM creator_platform.webhook_dead_letters"
    )
    assert (reason, seq) == ("load_failed", 2) and "not a journal body" in body
    assert loader.stats.events_loaded == 2


def test_rows_fit_tables_the_pull_created_with_dlt_columns(env):
    journal, db, loader = env
    with duckdb.connect(str(db)) as con:  # as dlt creates them (with add_dlt_id switched on)
        con.execute("CREATE SCHEMA creator_platform")
        con.execute(
            "CREATE TABLE creator_platform.contact_tags (id VARCHAR NOT NULL, name VARCHAR, "
            "site_id VARCHAR, _extracted_at TIMESTAMPTZ, _is_deleted BOOLEAN, "
            "_dlt_load_id VARCHAR NOT NULL, _dlt_id VARCHAR NOT NULL)"
        )
        con.execute(
            "CREATE TABLE creator_platform.contacts_tags (contact_id VARCHAR NOT NULL, "
            "contact_tag_id VARCHAR NOT NULL, site_id VARCHAR, _extracted_at TIMESTAMPTZ, "
            "_dlt_load_id VARCHAR NOT NULL, _dlt_id VARCHAR NOT NULL)"
        )
    contact = {
        "id": "3100000001", "type": "contacts", "attributes": {"email": "a@example.com"},
        "relationships": {
            "site": {"data": {"id": "2200000001", "type": "sites"}},
            "tags": {"data": [{"id": "3600000001", "type": "contact_tags"}]},
        },
    }
    tag = {"id": "3600000001", "type": "contact_tags", "attributes": {"name": "vip"},
           "relationships": {"site": {"data": {"id": "2200000001", "type": "sites"}}}}
    put(journal, delivery("tag_added", "3100000001", [contact, tag]))
    load_all(journal, loader)
    assert query(db, "SELECT name, _is_deleted, length(_dlt_id) > 0, _dlt_load_id LIKE 'webhooks.%' "
                     "FROM creator_platform.contact_tags") == [("vip", False, True, True)]
    assert query(db, "SELECT contact_id, contact_tag_id FROM creator_platform.contacts_tags") == [
        ("3100000001", "3600000001")
    ]
    assert query(db, "SELECT count(*) FROM creator_platform.webhook_dead_letters") == [(0,)]


def test_requeued_dead_letters_load_once_the_cause_is_gone(env):
    from creator_sync.pipelines.webhooks.requeue import requeue_dead_letters

    journal, db, loader = env
    bad = delivery("payment_succeeded", "3300000007",
                   [transaction("3300000007", amount_in_cents="12.5")])
    put(journal, bad, {"id": "1", "event": "nope", "payload": []})
    load_all(journal, loader)
    assert query(db, "SELECT reason FROM creator_platform.webhook_dead_letters ORDER BY 1") == [
        ("normalize_failed",), ("unknown_event",)
    ]
    # the "fix": this warehouse now accepts the value (here: we edit the dead letter's body,
    # standing in for a normaliser that learned to read it)
    with duckdb.connect(str(db)) as con:
        con.execute("UPDATE creator_platform.webhook_dead_letters SET body = replace(body, "
                    "'\"12.5\"', '1250') WHERE reason = 'normalize_failed'")
    assert requeue_dead_letters(journal, db) == 1
    assert requeue_dead_letters(journal, db) == 0  # gone from the dead letters
    load_all(journal, loader)
    assert query(db, "SELECT id, amount_in_cents FROM creator_platform.transactions") == [
        ("3300000007", 1250)
    ]
    assert query(db, "SELECT reason FROM creator_platform.webhook_dead_letters") == [
        ("unknown_event",)
    ]
    assert query(db, "SELECT received_at FROM creator_platform.webhook_events") == [(NOW,)]


def test_requeue_unwraps_journal_records_and_skips_garbage(env):
    from creator_sync.pipelines.webhooks.requeue import requeue_dead_letters

    journal, db, loader = env
    put(journal, payment_succeeded("3300000001"))
    journal.append([b"\x00 garbage"])
    loader.load_isolating(JournalReader(journal, 0).read(10))  # record 2: a load_failed letter
    record = encode(parse_delivery(orjson.dumps(payment_succeeded("3300000009")), NOW, "22"))
    with duckdb.connect(str(db)) as con:
        con.execute(
            "INSERT INTO creator_platform.webhook_dead_letters VALUES "
            "('load_failed', 'boom', 'payment_succeeded', ?, 99, now(), now())",
            [record.decode()],
        )
    assert requeue_dead_letters(journal, db) == 1  # the journal record; not the garbage
    load_all(journal, loader)
    assert query(db, "SELECT id FROM creator_platform.transactions ORDER BY 1") == [
        ("3300000001",), ("3300000009",)
    ]
    assert query(db, "SELECT body FROM creator_platform.webhook_dead_letters") == [
        ("\x00 garbage",)
    ]
