"""Section 6 deliveries and the `/_sandbox/activity` route: new records, moving `updated_at`,
payout status changes, and POSTs to subscribed hooks honouring `resource_id`."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest
from sandbox_contract_helpers import (
    Api,
    Receiver,
    check_payout_rule,
    check_sample_shape,
    parse_ts,
    rel_ids,
)

EVENTS = ["purchase", "payment_succeeded", "order_created", "form_submission", "tag_added", "tag_removed"]


def _hook(api: Api, site_id: str, event: str, target: str, resource_id: str | None = None) -> str:
    attributes: dict[str, Any] = {"event": event, "target_url": target}
    if resource_id is not None:
        attributes["resource_id"] = resource_id
    body = {"data": {"type": "hooks", "attributes": attributes,
                     "relationships": {"site": {"data": {"id": site_id, "type": "sites"}}}}}
    response = api.post_json("hooks", body)
    assert response.status_code == 201, response.text
    return response.json()["data"]["id"]


@pytest.fixture(scope="module")
def live(sandbox_factory_module):
    """A private sandbox advanced by activity. Every event is hooked (wildcard) to one receiver,
    and once per possible `resource_id` (each offer, form and tag of the site) to another, so the
    deliveries of the second must partition those of the first."""
    handle = sandbox_factory_module(scale="tiny", seed=21, sites=2)
    api = Api(handle.base_url)
    site_id = api.all("sites")[0]["id"]
    before = {name: api.all(name, {"filter[site_id]": site_id})
              for name in ("contacts", "customers", "purchases", "orders", "transactions",
                           "platform_payments_payouts", "form_submissions")}
    every_transaction_before = {t["id"] for t in api.all("transactions")}
    now_before = api.server_now()
    wildcard, filtered = Receiver(), Receiver()
    for event in EVENTS:
        _hook(api, site_id, event, f"{wildcard.url}/{event}")
    keys = {
        "purchase": [o["id"] for o in api.all("offers", {"filter[site_id]": site_id})],
        "payment_succeeded": [o["id"] for o in api.all("offers", {"filter[site_id]": site_id})],
        "form_submission": [f["id"] for f in api.all("forms", {"filter[site_id]": site_id})],
        "tag_added": [t["id"] for t in api.all("contact_tags", {"filter[site_id]": site_id})],
        "tag_removed": [t["id"] for t in api.all("contact_tags", {"filter[site_id]": site_id})],
    }
    for event, ids in keys.items():
        for resource_id in ids:
            _hook(api, site_id, event, f"{filtered.url}/{event}/{resource_id}", resource_id=resource_id)
    result = handle.activity(60)
    wildcard.wait_for(lambda got: {r["body"]["event"] for r in got} >= set(EVENTS))
    wildcard.settle()
    filtered.settle()
    state = {"handle": handle, "api": api, "site_id": site_id, "before": before,
             "now_before": now_before, "result": result, "wildcard": wildcard,
             "every_transaction_before": every_transaction_before,
             "filtered": filtered}
    yield state
    wildcard.close()
    filtered.close()
    api.close()


def test_activity_route_answers_over_http(sandbox_factory):
    handle = sandbox_factory(scale="tiny", seed=22)
    response = httpx.post(handle.base_url + "/_sandbox/activity", json={"count": 3}, timeout=30)
    assert response.status_code == 200, response.text
    assert isinstance(response.json(), dict)
    bad = httpx.post(handle.base_url + "/_sandbox/activity", json={"count": "many"}, timeout=30)
    assert bad.status_code in (400, 422)


def test_clock_moves_forward(live):
    now = live["api"].server_now()
    assert now > live["now_before"]
    assert int(now.timestamp()) == live["result"]["now"], "activity reports the new clock"
    # Documented: each event moves the clock by --seconds-per-event (3600 s).
    assert (now - live["now_before"]).total_seconds() == 60 * 3600


@pytest.mark.parametrize("collection", ["contacts", "purchases", "orders", "transactions", "form_submissions"])
def test_new_records_appear(live, collection):
    after = live["api"].ids(collection, {"filter[site_id]": live["site_id"]})
    old = {r["id"] for r in live["before"][collection]}
    new = set(after) - old
    assert new, f"activity made no new {collection}"
    assert old <= set(after), f"activity removed {collection}"


def test_contact_updates_move_updated_at(live):
    api, site_id = live["api"], live["site_id"]
    old = {r["id"]: r for r in live["before"]["contacts"]}
    moved = [r for r in api.all("contacts", {"filter[site_id]": site_id})
             if r["id"] in old and r["attributes"] != old[r["id"]]["attributes"]]
    assert moved, "no existing contact was updated"
    for record in moved:
        assert parse_ts(record["attributes"]["updated_at"]) > parse_ts(old[record["id"]]["attributes"]["updated_at"])


def test_purchases_get_deactivated(live):
    api, site_id = live["api"], live["site_id"]
    old = {r["id"]: r for r in live["before"]["purchases"]}
    now = {r["id"]: r for r in api.all("purchases", {"filter[site_id]": site_id})}
    deactivated = [i for i in old if old[i]["attributes"]["deactivated_at"] is None
                   and now[i]["attributes"]["deactivated_at"] is not None]
    assert deactivated, "no purchase was deactivated"
    for purchase_id in deactivated:
        assert parse_ts(now[purchase_id]["attributes"]["updated_at"]) >= parse_ts(
            now[purchase_id]["attributes"]["deactivated_at"])


def test_new_refunds_among_new_transactions(live):
    """Refunds happen on whichever site activity picks: look at every site."""
    api = live["api"]
    old = live["every_transaction_before"]
    new = [r for r in api.all("transactions") if r["id"] not in old]
    assert any(r["attributes"]["action"] == "refund" for r in new), "activity made no refund"
    for record in new:
        created = parse_ts(record["attributes"]["created_at"])
        assert live["now_before"] < created <= api.server_now(), "new records happen in the advanced window"


def test_recent_payouts_are_pending_or_in_transit(live):
    """After a few days of activity, the newest payouts are not yet paid."""
    api, site_id = live["api"], live["site_id"]
    statuses = {r["attributes"]["status"]
                for r in api.all("platform_payments_payouts", {"filter[site_id]": site_id})}
    assert statuses & {"pending", "in_transit"}, statuses


def test_payout_rule_holds_after_activity(live):
    api, site_id = live["api"], live["site_id"]
    check_payout_rule(api.all("transactions", {"filter[site_id]": site_id}),
                      api.all("platform_payments_payouts", {"filter[site_id]": site_id}),
                      api.server_now())


def test_payout_statuses_change(live):
    api, site_id = live["api"], live["site_id"]
    old = {r["id"]: r["attributes"]["status"] for r in live["before"]["platform_payments_payouts"]}
    now = {r["id"]: r["attributes"]["status"]
           for r in api.all("platform_payments_payouts", {"filter[site_id]": site_id})}
    changed = {i for i in old if i in now and now[i] != old[i]}
    assert changed or set(now) - set(old), "payouts did not move with the clock"


def test_every_event_is_delivered_with_its_payload_shape(live):
    received = live["wildcard"].received
    events = {r["body"]["event"] for r in received}
    assert events >= set(EVENTS), f"not delivered: {set(EVENTS) - events}"
    for delivery in received:
        body = delivery["body"]
        content_type = {k.lower(): v for k, v in delivery["headers"].items()}.get("content-type", "")
        assert content_type.startswith(("application/json", "application/vnd.api+json"))
        assert set(body) >= {"id", "event", "payload"}
        assert delivery["path"] == f"/{body['event']}", "delivered to the wrong hook"
        assert isinstance(body["id"], str) and body["id"].isdigit()
        check_sample_shape(body["event"], body["payload"])
        assert body["id"] in {item["id"] for item in body["payload"]}, \
            "`id` names the resource that triggered the event"


def test_deliveries_concern_the_hooked_site(live):
    """Hooks belong to a site: the other site's activity is not delivered to them."""
    checked = 0
    for delivery in live["wildcard"].received:
        for item in delivery["body"]["payload"]:
            site = (item.get("relationships") or {}).get("site")
            if site and site.get("data"):
                assert site["data"]["id"] == live["site_id"], delivery["body"]["event"]
                checked += 1
    assert checked


def test_delivered_records_are_listed(live):
    api, site_id = live["api"], live["site_id"]
    transactions = set(api.ids("transactions", {"filter[site_id]": site_id}))
    for delivery in live["wildcard"].received:
        if delivery["body"]["event"] == "payment_succeeded":
            assert delivery["body"]["payload"][0]["id"] in transactions


def _resource_key(body: dict) -> str | None:
    """What `resource_id` matches for each event (the sandbox's documented choice)."""
    first = body["payload"][0]
    event = body["event"]
    if event in ("purchase", "payment_succeeded"):
        offer = first["relationships"]["offer"]["data"]
        return offer["id"] if offer else None
    if event == "form_submission":
        return first["relationships"]["form"]["data"]["id"]
    if event in ("tag_added", "tag_removed"):
        tags = [i["id"] for i in body["payload"] if i["type"] == "contact_tags"]
        assert len(tags) == 1, "a tag payload carries its tag"
        return tags[0]
    return None


def _dump(body: dict) -> str:
    return json.dumps(body, sort_keys=True, default=str)


def test_resource_id_restricts_deliveries(live):
    """Each filtered hook gets exactly the wildcard deliveries whose resource is its own."""
    # Sets: a retried delivery (same body) counts once.
    expected = {
        (f"/{d['body']['event']}/{_resource_key(d['body'])}", _dump(d["body"]))
        for d in live["wildcard"].received
        if d["body"]["event"] != "order_created" and _resource_key(d["body"]) is not None
    }
    got = {(d["path"], _dump(d["body"])) for d in live["filtered"].received}
    assert got == expected
    assert {path.split("/")[1] for path, _ in got} >= {"purchase", "form_submission", "tag_added"}


def test_delivery_headers_and_body_ids(live):
    first_of = {"purchase": "purchases", "payment_succeeded": "transactions",
                "order_created": "orders", "form_submission": "form_submissions",
                "tag_added": "contacts", "tag_removed": "contacts"}
    for delivery in live["wildcard"].received:
        headers, body = delivery["headers"], delivery["body"]
        assert headers["x-sandbox-event"] == body["event"]
        assert headers["x-sandbox-attempt"].isdigit()
        assert headers.get("x-sandbox-delivery")
        trigger = [i for i in body["payload"] if i["type"] == first_of[body["event"]]]
        assert trigger and trigger[0]["id"] == body["id"], body["event"]


def test_failed_deliveries_are_retried(sandbox_factory):
    handle = sandbox_factory(scale="tiny", seed=26, webhook_retries=2, webhook_backoff=0.05)
    api = Api(handle.base_url)
    flaky, dead = Receiver(fail_first=1), Receiver(fail_first=99)
    try:
        site_id = api.all("sites")[0]["id"]
        _hook(api, site_id, "purchase", flaky.url + "/purchase")
        _hook(api, site_id, "purchase", dead.url + "/purchase")
        handle.activity(30)
        flaky.settle(quiet=1.0)
        dead.settle(quiet=1.0)
        by_delivery: dict[str, list[str]] = {}
        for delivery in flaky.received:
            by_delivery.setdefault(delivery["headers"]["x-sandbox-delivery"], []).append(
                delivery["headers"]["x-sandbox-attempt"])
        assert by_delivery, "no purchase delivered"
        assert all(attempts == ["1", "2"] for attempts in by_delivery.values()), by_delivery
        dead_attempts: dict[str, int] = {}
        for delivery in dead.received:
            key = delivery["headers"]["x-sandbox-delivery"]
            dead_attempts[key] = dead_attempts.get(key, 0) + 1
        assert set(dead_attempts.values()) == {3}, "first attempt + 2 retries, then give up"
    finally:
        flaky.close()
        dead.close()
        api.close()


def test_deleted_hook_gets_nothing(sandbox_factory):
    handle = sandbox_factory(scale="tiny", seed=23)
    api = Api(handle.base_url)
    receiver = Receiver()
    try:
        site_id = api.all("sites")[0]["id"]
        hook_id = _hook(api, site_id, "purchase", receiver.url + "/purchase")
        assert api.http.delete(api.url(f"hooks/{hook_id}"), headers=api.headers).status_code in (200, 204)
        handle.activity(30)
        receiver.wait_for(lambda got: bool(got), timeout=1.5)
        assert receiver.received == []
    finally:
        receiver.close()
        api.close()


def test_tags_are_added_and_removed(live):
    api, site_id = live["api"], live["site_id"]
    old = {r["id"]: set(rel_ids(r, "tags")) for r in live["before"]["contacts"]}
    now = {r["id"]: set(rel_ids(r, "tags")) for r in api.all("contacts", {"filter[site_id]": site_id})}
    added = any(now[i] - old[i] for i in old)
    removed = any(old[i] - now[i] for i in old)
    assert added and removed, "activity should add and remove tags on existing contacts"


def _state(handle) -> dict[str, bytes]:
    api = Api(handle.base_url)
    try:
        site = api.all("sites")[0]["id"]
        out = {}
        for name in ("contacts", "purchases", "transactions", "platform_payments_payouts", "orders"):
            response = api.raw_get(name, {"filter[site_id]": site, "sort": "-created_at"}
                                   if name in ("contacts", "purchases", "orders") else {"filter[site_id]": site})
            out[name] = response.content.replace(handle.base_url.encode(), b"BASE")
        out["date"] = api.raw_get("sites").headers["date"].encode()
        return out
    finally:
        api.close()


def test_activity_is_deterministic(sandbox_factory):
    one, two = sandbox_factory(scale="tiny", seed=24), sandbox_factory(scale="tiny", seed=24)
    for handle in (one, two):
        handle.activity(15)
        handle.activity(5)
    assert _state(one) == _state(two)


def test_activity_interval_runs_in_the_background(sandbox_factory):
    handle = sandbox_factory(scale="tiny", seed=25, activity_interval=0.2)
    api = Api(handle.base_url)
    try:
        first = api.server_now()
        site = api.all("sites")[0]["id"]
        before = api.get("contacts", {"filter[site_id]": site})["meta"]["total_count"]
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and api.server_now() == first:
            time.sleep(0.1)
        assert api.server_now() > first, "the clock did not move"
        while time.monotonic() < deadline + 5:
            after = api.get("contacts", {"filter[site_id]": site})["meta"]["total_count"]
            if after > before:
                break
            time.sleep(0.1)
        assert after > before, "no new contact from background activity"
    finally:
        api.close()


def test_money_stays_consistent_after_activity(live):
    """net_revenue follows the new transactions; customers and contacts stay paired."""
    from collections import defaultdict
    from decimal import Decimal

    api, site_id = live["api"], live["site_id"]
    totals: dict[str, int] = defaultdict(int)
    for tx in api.all("transactions", {"filter[site_id]": site_id}):
        totals[tx["relationships"]["customer"]["data"]["id"]] += tx["attributes"]["amount_in_cents"]
    contacts = {c["id"]: c for c in api.all("contacts", {"filter[site_id]": site_id})}
    for customer in api.all("customers", {"filter[site_id]": site_id}):
        expected = Decimal(totals.get(customer["id"], 0)) / 100
        assert customer["attributes"]["net_revenue"] == f"{expected:.2f}", customer["id"]
        contact = contacts[customer["relationships"]["contact"]["data"]["id"]]
        assert contact["attributes"]["email"] == customer["attributes"]["email"]


def test_purchase_updated_at_follows_its_transactions(live):
    api, site_id = live["api"], live["site_id"]
    created = {t["id"]: parse_ts(t["attributes"]["created_at"])
               for t in api.all("transactions", {"filter[site_id]": site_id})}
    for purchase in api.all("purchases", {"filter[site_id]": site_id}):
        mine = [created[t] for t in rel_ids(purchase, "transactions") if t in created]
        if mine:
            assert parse_ts(purchase["attributes"]["updated_at"]) >= max(mine), purchase["id"]


def test_new_records_have_new_ascending_ids(live):
    api, site_id = live["api"], live["site_id"]
    old = {r["id"] for r in live["before"]["contacts"]}
    ids = [int(r["id"]) for r in api.all("contacts", {"filter[site_id]": site_id})]
    new = [i for i in ids if str(i) not in old]
    assert new and min(new) > max(int(i) for i in old)
    assert ids == sorted(ids, reverse=True)  # A8: contacts list newest first


def test_reads_during_activity_stay_clean(sandbox_factory):
    """Four clients read while activity mutates the store: every answer is a well-formed 200."""
    from concurrent.futures import ThreadPoolExecutor

    handle = sandbox_factory(scale="tiny", seed=28)
    api = Api(handle.base_url)
    site = api.all("sites")[0]["id"]
    token = api.tokens["access_token"]
    paths = [("contacts", {"sort": "-created_at"}), ("purchases", {"filter[active]": "true"}),
             ("transactions", {}), ("platform_payments_payouts", {}), ("customers", {"sort": "net_revenue"}),
             ("orders", {"filter[fulfilled_at_null]": "false"})]

    def reader(worker: int) -> list[str]:
        problems = []
        with httpx.Client(timeout=30) as http:
            for n in range(30):
                path, params = paths[(worker + n) % len(paths)]
                query = {**params, "filter[site_id]": site}
                if "payouts" not in path:
                    query["page[size]"] = 50
                response = http.get(f"{handle.api_url}/{path}", params=query,
                                    headers={"Authorization": f"Bearer {token}"})
                if response.status_code != 200:
                    problems.append(f"{path}: {response.status_code} {response.text[:200]}")
                    continue
                body = response.json()
                if not isinstance(body.get("data"), list) or len(body["data"]) > 50:
                    problems.append(f"{path}: malformed page")
        return problems

    try:
        with ThreadPoolExecutor(4) as pool:
            futures = [pool.submit(reader, w) for w in range(4)]
            for _ in range(6):
                handle.activity(5)
            problems = [p for f in futures for p in f.result()]
        assert problems == []
    finally:
        api.close()


def test_deliveries_are_deterministic(sandbox_factory):
    bodies = []
    for _ in range(2):
        handle = sandbox_factory(scale="tiny", seed=29)
        api = Api(handle.base_url)
        receiver = Receiver()
        try:
            site_id = api.all("sites")[0]["id"]
            for event in ("purchase", "tag_added", "order_created"):
                _hook(api, site_id, event, f"{receiver.url}/{event}")
            handle.activity(20)
            receiver.settle()
            bodies.append(sorted(json.dumps(d["body"], sort_keys=True, default=str)
                                 .replace(handle.base_url, "BASE") for d in receiver.received))
        finally:
            receiver.close()
            api.close()
    assert bodies[0] and bodies[0] == bodies[1]


STATUS_ORDER = {"pending": 0, "in_transit": 1, "paid": 2}


def test_existing_payouts_keep_ids_amounts_and_move_forward(live):
    """Activity only adds payouts and advances statuses: a synced payout never changes its id,
    amount or dates, and never goes back (pending -> in_transit -> paid; failed stays)."""
    api, site_id = live["api"], live["site_id"]
    now = {r["id"]: r["attributes"] for r in api.all("platform_payments_payouts", {"filter[site_id]": site_id})}
    for old in live["before"]["platform_payments_payouts"]:
        assert old["id"] in now, f"payout {old['id']} vanished"
        was, is_ = old["attributes"], now[old["id"]]
        for key in ("amount", "currency", "initiated_date", "estimated_arrival_date", "bank_account"):
            assert was[key] == is_[key], (old["id"], key)
        if was["status"] in STATUS_ORDER:
            assert STATUS_ORDER.get(is_["status"], -1) >= STATUS_ORDER[was["status"]], old["id"]
        else:
            assert is_["status"] == was["status"], old["id"]


def test_listed_transactions_are_immutable(live):
    """Completed financial activity is append-only: refunds arrive as new transactions."""
    api, site_id = live["api"], live["site_id"]
    now = {r["id"]: r for r in api.all("transactions", {"filter[site_id]": site_id})}
    for old in live["before"]["transactions"]:
        assert old["id"] in now, f"transaction {old['id']} vanished"
        assert now[old["id"]]["attributes"] == old["attributes"], old["id"]
        assert now[old["id"]]["relationships"] == old["relationships"], old["id"]


@pytest.mark.parametrize("collection", ["purchases", "contacts", "customers"])
def test_any_change_moves_updated_at(live, collection):
    """Incremental sync on `updated_at` must not miss a change: a record whose attributes or
    relationships changed has a later `updated_at`."""
    api, site_id = live["api"], live["site_id"]
    now = {r["id"]: r for r in api.all(collection, {"filter[site_id]": site_id})}
    changed = 0
    for old in live["before"][collection]:
        new = now[old["id"]]
        if (new["attributes"], new["relationships"]) != (old["attributes"], old["relationships"]):
            changed += 1
            assert parse_ts(new["attributes"]["updated_at"]) > parse_ts(old["attributes"]["updated_at"]), (
                old["id"])
    assert changed


def test_activity_fulfils_open_orders(live):
    """Spec 3: an order is unfulfilled while `fulfilled_at` is null, so it can become fulfilled.
    Orders have no `updated_at`, so the pipeline needs such transitions to test its lookback."""
    api, site_id = live["api"], live["site_id"]
    now = {r["id"]: r for r in api.all("orders", {"filter[site_id]": site_id})}
    opened = [o for o in live["before"]["orders"] if o["attributes"]["fulfilled_at"] is None]
    assert opened, "no open order before activity"
    fulfilled = [o["id"] for o in opened if now[o["id"]]["attributes"]["fulfilled_at"]]
    assert fulfilled, "no open order was fulfilled"
    for order_id in fulfilled:
        at = now[order_id]["attributes"]["fulfilled_at"]
        assert live["now_before"] < parse_ts(at) <= api.server_now()
        body = api.get(f"orders/{order_id}", {"include": "order_items"})
        assert all(i["attributes"]["fulfilled_at"] == at for i in body["included"]), order_id
