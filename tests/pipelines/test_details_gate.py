"""Detail reads only for new/changed list records; hooks URL redaction; webhook-safe deletes."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta

import duckdb
from fakeapi import record

from creator_sync.pipelines.sync import run_sync

SITE = "2147483650"


def query(path, sql):
    with duckdb.connect(path, read_only=True) as con:
        return con.execute(sql).fetchall()


def _courses(api, n=3):
    api.collections["courses"] = []
    for i in range(n):
        cid = str(2700000000 + i)
        course = record("courses", cid, site=SITE, title=f"C{i}")
        course["relationships"]["modules"] = {"data": [{"id": f"28{cid}", "type": "modules"}]}
        api.collections["courses"].append(course)
        detail = copy.deepcopy(course)
        module = record("modules", f"28{cid}", site=SITE, title=f"M{i}")
        api.details[("courses", cid)] = {"data": detail, "included": [module]}


def _detail_reads(api):
    return [r for r in api.requests if r.url.path.startswith("/v1/courses/")]


def test_course_details_are_read_again_only_when_the_list_record_changed(fake_api, settings_for):
    _courses(fake_api)
    settings = settings_for(resources=("courses",))
    db = settings.warehouse.duckdb_path
    run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert len(_detail_reads(fake_api)) == 3  # one read per course, every include at once
    assert query(db, "select count(*) from creator_platform.modules where not _is_deleted") == [(3,)]

    fake_api.requests.clear()
    second = run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert _detail_reads(fake_api) == []  # nothing changed: no single reads
    assert second.deleted == {}  # skipped details must not mark their modules deleted
    assert query(db, "select count(*) from creator_platform.modules where not _is_deleted") == [(3,)]

    fake_api.collections["courses"][1]["attributes"]["title"] = "C1 renamed"
    fake_api.requests.clear()
    run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert {r.url.path for r in _detail_reads(fake_api)} == {"/v1/courses/2700000001"}

    fake_api.requests.clear()
    run_sync(settings_for(resources=("courses",), full_refresh=True),
             transport=fake_api.transport(), show_progress=False)
    assert len(_detail_reads(fake_api)) == 3


def test_detail_reads_have_their_own_higher_concurrency(fake_api, settings_for):
    import threading
    import time

    _courses(fake_api, n=24)
    lock, now, peak = threading.Lock(), [0], [0]

    def hook(request):  # count single reads in flight (the mock transport runs in the caller)
        if request.url.path.startswith("/v1/courses/"):
            with lock:
                now[0] += 1
                peak[0] = max(peak[0], now[0])
            time.sleep(0.02)
            with lock:
                now[0] -= 1
        return None

    fake_api.hook = hook
    settings = settings_for(resources=("courses",), concurrency=1, detail_concurrency=6)
    run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert len(_detail_reads(fake_api)) == 24
    assert 1 < peak[0] <= 6  # more than the list concurrency, never more than asked


def test_hooks_target_url_secret_is_redacted_in_the_warehouse(fake_api, settings_for):
    hook = record("hooks", "2900000000", site=SITE, event="sale.created",
                  target_url="https://sync.example.com/hooks/s3cr3t-segment")
    fake_api.collections["hooks"] = [hook]
    settings = settings_for(resources=("hooks",))
    run_sync(settings, transport=fake_api.transport(), show_progress=False)
    rows = query(settings.warehouse.duckdb_path, "select target_url from creator_platform.hooks")
    assert rows == [("https://sync.example.com/hooks/***",)]


def test_deletions_spare_rows_written_after_the_extract_started(fake_api, settings_for):
    """The source's `deletions` resource flags what a complete listing no longer lists, but not
    a row the webhook loader wrote after the extract started (the listing could not see it)."""
    settings = settings_for(resources=("sites", "products"))
    db = settings.warehouse.duckdb_path
    run_sync(settings, transport=fake_api.transport(), show_progress=False)
    later = datetime.now(UTC) + timedelta(hours=1)
    with duckdb.connect(db) as con:  # the webhook loader pushes a new product meanwhile
        con.execute(
            "insert into creator_platform.products (id, site_id, _extracted_at, _dlt_load_id) "
            "values ('3000000999', ?, ?, 'webhooks.1')", [SITE, later],
        )
        stored = con.execute("select count(*) from creator_platform.products where site_id = ?",
                             [SITE]).fetchone()[0]
    fake_api.collections["products"] = []  # a newer run lists none: old rows go, the pushed stays
    second = run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert second.deleted["products"] >= stored - 1 > 0
    assert query(db, "select id from creator_platform.products where site_id = "
                     f"'{SITE}' and not coalesce(_is_deleted, false)") == [("3000000999",)]


def test_unchanged_orders_are_not_read_again_even_if_dated_after_the_server_clock(
    fake_api, settings_for
):
    """The order-items fallback (no /v1/order_items list) reads each new or changed order."""
    # the fake's clock (HTTP Date) is 2025-06-01 12:00; these orders are "newer" than it, so a
    # timestamp gate alone would re-read them on every run
    fake_api.collections["orders"] = []
    for i in range(4):
        oid = str(2600000000 + i)
        order = record("orders", oid, site=SITE, created_at=f"2025-06-0{2 + i}T10:00:00Z",
                       total_in_cents=1000 + i, fulfilled_at=None)
        fake_api.collections["orders"].append(order)
        fake_api.details[("orders", oid)] = {"data": copy.deepcopy(order), "included": []}
    settings = settings_for(resources=("order_items",))
    run_sync(settings, transport=fake_api.transport(), show_progress=False)

    def reads():
        return [r.url.path for r in fake_api.requests if r.url.path.startswith("/v1/orders/")]

    assert len(reads()) == 4
    fake_api.requests.clear()
    run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert reads() == []
    fake_api.collections["orders"][2]["attributes"]["fulfilled_at"] = "2025-06-05T09:00:00Z"
    fake_api.requests.clear()
    run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert reads() == ["/v1/orders/2600000002"]


def test_old_customers_named_by_new_transactions_are_re_read_by_id(fake_api, settings_for):
    import httpx
    import orjson

    cust = record("customers", "2500000001", site=SITE, name="Old", created_at="2024-01-01T00:00:00Z",
                  net_revenue="100.00")
    fake_api.collections["customers"] = [cust]
    tx = record("transactions", "2400000001", site=SITE, amount_in_cents=2500, currency="USD",
                created_at="2025-05-31T10:00:00Z")
    tx["relationships"]["customer"] = {"data": {"id": "2500000001", "type": "customers"}}
    fake_api.collections["transactions"] = [tx]
    settings = settings_for(resources=("customers", "transactions"))
    db = settings.warehouse.duckdb_path
    run_sync(settings, transport=fake_api.transport(), show_progress=False)
    reads = lambda: [r.url.path for r in fake_api.requests if r.url.path.startswith("/v1/customers/")]  # noqa: E731
    assert reads() == []  # first run lists every customer: nothing to re-read

    def hook(request):  # incremental customers window: the 2024 customer is outside it
        if request.url.path == "/v1/customers" and "filter[created_in_last]" in request.url.params:
            body = {"data": [], "meta": {"total_pages": 0, "total_count": 0}}
            return httpx.Response(200, content=orjson.dumps(body), headers={"Date": "Sun, 01 Jun 2025 12:00:00 GMT"})
        return None

    fake_api.hook = hook
    fresh = copy.deepcopy(cust)
    fresh["attributes"]["net_revenue"] = "125.00"
    fake_api.details[("customers", "2500000001")] = {"data": fresh}
    fake_api.requests.clear()
    run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert reads() == []  # the look-back re-read the old transaction: not new money

    new_tx = copy.deepcopy(tx)
    new_tx["id"] = "2400000002"
    new_tx["attributes"]["created_at"] = "2025-06-01T12:30:00Z"  # after the last run's clock
    fake_api.collections["transactions"].append(new_tx)
    fake_api.requests.clear()
    run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert reads() == ["/v1/customers/2500000001"]
    rows = query(db, "select cast(net_revenue as varchar), name from creator_platform.customers")
    assert len(rows) == 1 and rows[0][0].startswith("125.0") and rows[0][1] == "Old"
