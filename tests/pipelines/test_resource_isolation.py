"""One failing resource does not sink the others; scopes; the `sync_resources` table (C6).

Against the in-memory API (httpx.MockTransport): a resource that fails after its retries is
reported, keeps its state as before the run, and every other resource loads and commits.
"""

from __future__ import annotations

from datetime import datetime

import duckdb
import httpx
from fakeapi import record
from pipeline_fakes import FAKE_SECRET

from creator_sync.pipelines.sync import failure_line, format_summary, run_sync

SITE_A, SITE_B = "2147483650", "2147483651"


def query(path, sql):
    with duckdb.connect(path, read_only=True) as con:
        return con.execute(sql).fetchall()


def statuses(db) -> dict[str, tuple]:
    rows = query(db, "select resource, status, reason, last_attempt_at, last_synced_at, rows_loaded "
                     "from creator_platform.sync_resources")
    return {r[0]: r[1:] for r in rows}


def test_payouts_404_fails_only_payouts_and_names_the_setting(fake_api, settings_for):
    settings = settings_for(resources=("sites", "products", "contacts", "payouts"))
    db = settings.warehouse.duckdb_path
    result = run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert set(result.failed) == {"payouts"}
    reason = result.failed["payouts"]
    assert "/platform_payments_payouts answered 404" in reason
    assert "payouts_path" in reason and "--payouts-path" in reason
    line = failure_line(result)
    assert line.startswith("1 resource(s) failed") and "payouts" in line and "\n" not in line
    # everything else landed complete
    assert query(db, "select count(*) from creator_platform.contacts") == [(30,)]
    assert query(db, "select count(*) from creator_platform.products") == [(6,)]
    got = statuses(db)
    assert got["payouts"][0] == "failed" and "payouts_path" in got["payouts"][1]
    assert got["payouts"][3] is None  # never synced
    assert got["contacts"][0] == "synced" and got["contacts"][4] == 30
    assert got["contacts"][3] == got["contacts"][2]  # synced now

    # the user sets the path: payouts start from scratch (their state never advanced)
    fake_api.collections["acme_payments_payouts"] = [
        record("acme_payments_payouts", 3900000000 + i, site=SITE_A, status="Paid",
               amount=10.5, initiated_date=f"2025-05-0{1 + i}T00:00:00Z") for i in range(3)
    ]
    settings.source["payouts_path"] = "/acme_payments_payouts"
    second = run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert second.failed == {}
    assert second.plans[f"payouts/{SITE_A}"] == "first sync"
    assert query(db, "select count(*), min(status) from creator_platform.payouts") == [(3, "paid")]
    assert statuses(db)["payouts"][0] == "synced"


def test_a_resource_failing_midway_keeps_its_state_and_the_others_commit(fake_api, settings_for):
    """Site A of contacts is read, site B answers 500 after every retry: contacts fails, its
    cursors stay where they were (the next run reads everything again), products commit."""
    settings = settings_for(resources=("products", "contacts"), max_attempts=2)
    db = settings.warehouse.duckdb_path

    def hook(request):
        if request.url.path == "/v1/contacts" and request.url.params.get("filter[site_id]") == SITE_B:
            return httpx.Response(503, content=b"down", headers={"Date": fake_api.date})
        return None

    fake_api.hook = hook
    result = run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert set(result.failed) == {"contacts"}
    assert "503" in result.failed["contacts"] and "giving up after 2 attempts" in result.failed["contacts"]
    assert query(db, "select count(*) from creator_platform.products") == [(6,)]
    # what was read before the failure is valid rows, merged on their keys
    assert query(db, "select count(*), count(distinct id), min(site_id), max(site_id) "
                     "from creator_platform.contacts") == [(15, 15, SITE_A, SITE_A)]
    fake_api.hook = None
    second = run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert second.failed == {}
    # the cursor of site A did not advance with the failed run: read in full again
    assert second.plans[f"contacts/{SITE_A}"] == "first sync"
    assert second.plans[f"contacts/{SITE_B}"] == "first sync"
    assert query(db, "select count(*), count(distinct id) from creator_platform.contacts") == [(30, 30)]


def test_sync_resources_keeps_when_a_failed_resource_last_completed(fake_api, settings_for):
    settings = settings_for(resources=("products", "contacts"))
    db = settings.warehouse.duckdb_path
    run_sync(settings, transport=fake_api.transport(), show_progress=False)
    first = statuses(db)
    # a malformed record (a bad value alone is set aside: test_rejected_records.py)
    fake_api.collections["contacts"][0]["attributes"] = "not an object"
    result = run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert "attributes" in result.failed["contacts"]
    now = statuses(db)
    assert now["contacts"][0] == "failed" and "attributes" in now["contacts"][1]
    assert now["contacts"][2] > first["contacts"][2]  # attempted again
    assert now["contacts"][3] == first["contacts"][3]  # last synced by the first run
    assert now["products"][0] == "synced" and now["products"][3] == now["products"][2]
    assert isinstance(now["products"][2], datetime) and now["products"][2].utcoffset().total_seconds() == 0
    # a run of other resources leaves the contacts row alone
    run_sync(settings_for(resources=("products",)), transport=fake_api.transport(), show_progress=False)
    assert statuses(db)["contacts"] == now["contacts"]


def _least_privilege_world(fake_api):
    fake_api.scope = "view:contacts"
    for name in ("contact_tags", "contact_notes", "hooks"):
        fake_api.collections[name] = []
    fake_api.singles["me"] = {"data": {"id": "77", "type": "users", "attributes": {
        "name": "Owner", "email": "owner@example.com", "initials": "O", "role_level": "OWNER"}}}


def test_a_least_privilege_credential_syncs_what_it_may_and_succeeds(fake_api, settings_for):
    _least_privilege_world(fake_api)
    settings = settings_for()  # every resource, as a new user runs it
    db = settings.warehouse.duckdb_path
    result = run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert result.failed == {}
    skipped = {n for n, o in result.outcomes.items() if o.status == "skipped"}
    assert "products" in skipped and "payouts" in skipped and "transactions" in skipped
    assert {"sites", "contacts", "contact_tags", "contact_notes", "hooks", "me"}.isdisjoint(skipped)
    assert any("skipped" in n and "products" in n for n in result.notices)
    assert "skipped" in format_summary(result)
    # nothing was asked of what the credential may not read
    assert not [r for r in fake_api.requests if r.url.path.startswith("/v1/products")]
    assert query(db, "select count(*) from creator_platform.contacts") == [(30,)]
    got = statuses(db)
    assert got["products"][:2] == ("skipped", "the credential lacks the scope view:products")
    assert got["products"][4] == 0


def test_a_resource_asked_for_by_name_that_the_scopes_do_not_cover_fails(fake_api, settings_for):
    _least_privilege_world(fake_api)
    settings = settings_for(resources=("contacts", "products"))
    result = run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert result.failed == {"products": "the credential lacks the scope view:products"}
    assert query(settings.warehouse.duckdb_path, "select count(*) from creator_platform.contacts") == [(30,)]


def test_scopes_in_another_vocabulary_skip_nothing(fake_api, settings_for):
    fake_api.scope = "read write"
    settings = settings_for(resources=("products", "contacts"))
    result = run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert result.failed == {} and all(o.status == "synced" for o in result.outcomes.values())


def test_me_is_one_row_replaced_by_each_run(fake_api, settings_for):
    _least_privilege_world(fake_api)
    settings = settings_for(resources=("me",))
    db = settings.warehouse.duckdb_path
    run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert query(db, "select id, name, email, role_level, site_id from creator_platform.me") == [
        ("77", "Owner", "owner@example.com", "OWNER", None)]
    fake_api.singles["me"]["data"]["id"] = "78"  # another credential's user
    run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert query(db, "select id from creator_platform.me") == [("78",)]


def test_order_items_fall_back_to_order_reads_only_when_the_list_is_missing(fake_api, settings_for):
    orders = []
    for i in range(3):
        oid = str(3600000000 + i)
        order = record("orders", oid, site=SITE_A, created_at=f"2025-05-0{1 + i}T10:00:00Z",
                       fulfilled_at=None, order_number=1001 + i)
        order["relationships"]["order_items"] = {"data": [{"id": f"37{oid}", "type": "order_items"}]}
        orders.append(order)
        item = record("order_items", f"37{oid}", site=SITE_A, created_at=f"2025-05-0{1 + i}T10:00:00Z",
                      quantity=1, total_price_in_cents=500)
        item["relationships"]["order"] = {"data": {"id": oid, "type": "orders"}}
        fake_api.details[("orders", oid)] = {"data": order, "included": [item]}
    fake_api.collections["orders"] = orders
    settings = settings_for(resources=("orders", "order_items"))
    db = settings.warehouse.duckdb_path

    def calls(prefix):
        return [r for r in fake_api.requests if r.url.path.startswith(prefix)]

    result = run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert result.failed == {}
    assert any("/order_items answered 404" in n for n in result.notices)
    assert len(calls("/v1/orders/")) == 3  # one include read per order
    assert query(db, "select id, order_id from creator_platform.order_items order by 1") == [
        (f"37{3600000000 + i}", str(3600000000 + i)) for i in range(3)]
    assert query(db, "select count(*) from creator_platform.orders_order_items") == [(3,)]

    fake_api.requests.clear()
    run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert calls("/v1/order_items") == []  # the fallback is remembered
    assert calls("/v1/orders/") == []  # and its gate: nothing changed

    # the platform grows the list: a week later the source tries it again and uses it
    fake_api.collections["order_items"] = [fake_api.details[("orders", o["id"])]["included"][0]
                                           for o in orders]
    fake_api.date = "Mon, 09 Jun 2025 12:00:00 GMT"
    fake_api.requests.clear()
    third = run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert third.failed == {}
    assert calls("/v1/order_items") and calls("/v1/orders/") == []
    assert query(db, "select count(*), count(distinct id) from creator_platform.order_items") == [(3, 3)]


def test_order_items_come_from_the_list_and_orders_need_no_single_reads(fake_api, settings_for):
    order = record("orders", "3600000000", site=SITE_A, created_at="2025-05-01T10:00:00Z")
    order["relationships"]["order_items"] = {"data": [{"id": "3700000000", "type": "order_items"}]}
    fake_api.collections["orders"] = [order]
    item = record("order_items", "3700000000", site=SITE_A, created_at="2025-05-01T10:00:00Z",
                  quantity=2, item_id=2500000000, fulfilled_at=None)
    item["relationships"]["order"] = {"data": {"id": "3600000000", "type": "orders"}}
    fake_api.collections["order_items"] = [item]
    settings = settings_for(resources=("orders", "order_items"))
    db = settings.warehouse.duckdb_path
    result = run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert result.failed == {} and result.notices == []
    assert not [r for r in fake_api.requests if r.url.path.startswith("/v1/orders/")]
    assert query(db, "select id, order_id, site_id, quantity from creator_platform.order_items") == [
        ("3700000000", "3600000000", SITE_A, 2)]
    tables = {r[0] for r in query(db, "select table_name from information_schema.tables")}
    assert "orders_order_items" not in tables  # the fallback's alone (contract C4)


def test_a_payout_whose_detail_answers_404_keeps_its_list_record(fake_api, settings_for):
    fake_api.collections["platform_payments_payouts"] = [
        record("platform_payments_payouts", "3900000001", site=SITE_A, status="paid", amount=5,
               initiated_date="2025-05-01T00:00:00Z")]
    settings = settings_for(resources=("payouts",))
    result = run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert result.failed == {}
    assert result.without_lines == {"payouts": 1}
    assert query(settings.warehouse.duckdb_path, "select id from creator_platform.payouts") == [("3900000001",)]


def test_a_failing_customer_re_read_fails_customers_only(fake_api, settings_for):
    """The dependent refresh (customers named by new money, re-read by id) runs after the
    extract: a read that fails after its retries marks customers failed, the run still loads."""
    cust = record("customers", "2500000001", site=SITE_A, created_at="2024-01-01T00:00:00Z")
    fake_api.collections["customers"] = [cust]
    tx = record("transactions", "2400000001", site=SITE_A, amount_in_cents=2500,
                created_at="2025-05-31T10:00:00Z")
    tx["relationships"]["customer"] = {"data": {"id": "2500000001", "type": "customers"}}
    fake_api.collections["transactions"] = [tx]
    settings = settings_for(resources=("customers", "transactions"), max_attempts=2)
    run_sync(settings, transport=fake_api.transport(), show_progress=False)

    def hook(request):
        if request.url.path == "/v1/customers" and "filter[created_in_last]" in request.url.params:
            body = b'{"data": [], "meta": {"total_pages": 0, "total_count": 0}}'
            return httpx.Response(200, content=body, headers={"Date": fake_api.date})
        if request.url.path.startswith("/v1/customers/"):
            return httpx.Response(502, content=b"bad gateway", headers={"Date": fake_api.date})
        return None

    fake_api.hook = hook
    new_tx = dict(tx, id="2400000002", attributes={**tx["attributes"], "created_at": "2025-06-01T12:30:00Z"})
    fake_api.collections["transactions"].append(new_tx)
    result = run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert set(result.failed) == {"customers"}
    assert "re-reading customers named by new money failed" in result.failed["customers"]
    assert query(settings.warehouse.duckdb_path,
                 "select count(*) from creator_platform.transactions") == [(2,)]


def test_a_full_refresh_with_a_failing_resource_loads_nothing_and_drops_nothing(fake_api, settings_for):
    settings = settings_for(resources=("products", "contacts"))
    db = settings.warehouse.duckdb_path
    run_sync(settings, transport=fake_api.transport(), show_progress=False)
    fake_api.collections["products"] = fake_api.collections["products"][:2]
    # a malformed record (a bad value alone is set aside: test_rejected_records.py)
    fake_api.collections["contacts"][0]["attributes"] = "not an object"
    refresh = settings_for(resources=("products", "contacts"), full_refresh=True)
    try:
        run_sync(refresh, transport=fake_api.transport(), show_progress=False)
    except Exception as exc:  # the run fails as a whole
        from creator_sync.pipelines.sync import one_line

        assert "attributes" in one_line(exc) and "contacts" in one_line(exc)
    else:
        raise AssertionError("a full refresh with a failing resource must fail")
    assert query(db, "select count(*) from creator_platform.contacts") == [(30,)]
    assert query(db, "select count(*) from creator_platform.products") == [(6,)]  # not refreshed


def test_the_customer_re_read_waits_only_for_the_resources_a_run_selected(fake_api, tmp_path):
    """`customers_refresh` waits for `transactions`, `purchases` and `customers` to end
    (`RunReport.until_ended`); one a user's script leaves out with `with_resources` never
    runs, so it is not waited for: the run ends, and reads no customer (customers did not sync)."""
    import threading

    import dlt

    from creator_sync.sources.creator_platform import Runtime, creator_platform_source

    tx = record("transactions", "2400000001", site=SITE_A, amount_in_cents=2500,
                created_at="2025-05-31T10:00:00Z")
    tx["relationships"]["customer"] = {"data": {"id": "2500000001", "type": "customers"}}
    fake_api.collections["transactions"] = [tx]
    source = creator_platform_source(
        base_url="http://127.0.0.1:9", client_id="cid", client_secret=FAKE_SECRET,
        resources=["customers", "transactions"], host=Runtime(transport=fake_api.transport()))
    assert "customers_refresh" in source.resources
    pipeline = dlt.pipeline("selected", destination=dlt.destinations.duckdb(str(tmp_path / "s.duckdb")),
                            dataset_name="creator_platform", pipelines_dir=str(tmp_path / "p"))
    done: list[object] = []
    worker = threading.Thread(target=lambda: done.append(
        pipeline.run(source.with_resources("transactions", "customers_refresh"))), daemon=True)
    worker.start()
    worker.join(60)
    assert done, "the run waited for a resource it did not select"
    assert query(str(tmp_path / "s.duckdb"), "select count(*) from creator_platform.transactions") == [(1,)]
    assert not [r for r in fake_api.requests if r.url.path.startswith("/v1/customers")]
