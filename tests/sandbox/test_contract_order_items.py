"""Addendum A2 (contract C4): order items as their own collection, `GET /v1/order_items` and
`GET /v1/order_items/{id}`, with every listed sort and filter; orders keep `include`."""

from __future__ import annotations

import httpx
import pytest
from sandbox_contract_helpers import (
    Api,
    assert_error,
    assert_sorted,
    check_filter,
    parse_ts,
    rel_id,
    rel_ids,
)

# base section 2.10, order item attributes
ITEM_ATTRIBUTES = {
    "quantity", "currency_code", "item_type", "item_id", "title", "fulfilled_at", "created_at",
    "total_price_in_cents", "subtotal_in_cents", "sales_tax_amount_in_cents",
    "discount_amount_in_cents", "formatted_total_price", "formatted_subtotal", "currency_symbol",
}


def _items_of_orders(api, catalog, site: str) -> dict[str, dict]:
    """Every order item of a site, read through `GET /v1/orders/{id}?include=order_items`."""
    out = {}
    for order in catalog.all("orders", site):
        body = api.get(f"orders/{order['id']}", {"include": "order_items"})
        assert {i["id"] for i in body["included"]} == set(rel_ids(order, "order_items"))
        out.update({i["id"]: i for i in body["included"]})
    return out


def test_list_holds_every_item_of_every_order_of_the_site(api, catalog, each_site):
    listed = catalog.by_id("order_items", each_site)
    via_orders = _items_of_orders(api, catalog, each_site)
    assert listed and set(listed) == set(via_orders)
    for item_id, item in listed.items():
        assert item["type"] == "order_items"
        assert set(item["attributes"]) == ITEM_ATTRIBUTES
        assert item["attributes"] == via_orders[item_id]["attributes"]
        assert rel_id(item, "order") == rel_id(via_orders[item_id], "order")
        assert item["relationships"]["order"]["data"]["type"] == "orders"
        assert item["relationships"]["site"]["data"] == {"id": each_site, "type": "sites"}
        assert isinstance(item["attributes"]["item_id"], int)


def test_list_uses_the_default_meta_shape_and_pages_of_up_to_100(api, site_id):
    body = api.get("order_items", {"filter[site_id]": site_id, "page[size]": 5})
    assert set(body["meta"]) == {"total_pages", "total_count", "current_page"}
    assert body["meta"]["current_page"] == 1 and len(body["data"]) == 5
    assert body["meta"]["total_pages"] == -(-body["meta"]["total_count"] // 5)
    assert body["links"]["next"] and body["links"]["prev"] is None
    assert "/v1/order_items?" in body["links"]["self"]
    assert api.get("order_items", {"page[size]": 100})["data"]
    assert_error(api.raw_get("order_items", {"page[size]": 101}), 400, "page[size]")
    assert api.get("order_items")["meta"]["total_count"] > body["meta"]["total_count"], \
        "without filter[site_id] the list holds the items of every site"


def test_single_read_equals_the_listed_item(api, catalog, site_id):
    for item in catalog.all("order_items", site_id)[:5]:
        body = api.get(f"order_items/{item['id']}")
        assert body["data"] == item
    assert_error(api.raw_get("order_items/2200000000"), 404)
    assert_error(api.raw_get("order_items/nope"), 404)


@pytest.mark.parametrize("attribute", ["created_at", "quantity", "fulfilled_at"])
@pytest.mark.parametrize("descending", [False, True], ids=["asc", "desc"])
def test_sorts(api, site_id, attribute, descending):
    sort = f"-{attribute}" if descending else attribute
    records = api.all("order_items", {"filter[site_id]": site_id, "sort": sort})
    assert len(records) > 10
    assert_sorted(records, attribute, descending)


def test_unlisted_sort_is_400(api):
    assert_error(api.raw_get("order_items", {"sort": "title"}), 400, "sort")


def _site_items(catalog, site):
    return catalog.all("order_items", site)


def test_filter_item_type_eq_and_not_in(api, catalog, site_ids):
    kinds = set()
    for site in site_ids:
        items = _site_items(catalog, site)
        for kind in {i["attributes"]["item_type"] for i in items}:
            kinds.add(kind)
            check_filter(api, items, "order_items", site, {"filter[item_type_eq]": kind},
                         lambda r, k=kind: r["attributes"]["item_type"] == k)
            others = {i["id"] for i in items if i["attributes"]["item_type"] != kind}
            got = set(api.ids("order_items", {"filter[site_id]": site,
                                              "filter[item_type_not_in]": kind}))
            assert got == others
        everything = ",".join(sorted({i["attributes"]["item_type"] for i in items}))
        assert api.ids("order_items", {"filter[site_id]": site,
                                       "filter[item_type_not_in]": everything}) == []
    assert len(kinds) >= 2, f"test data shows a single item_type: {kinds}"


def test_filter_item_id_eq_and_in(api, catalog, site_id):
    items = _site_items(catalog, site_id)
    ids = sorted({i["attributes"]["item_id"] for i in items})
    check_filter(api, items, "order_items", site_id, {"filter[item_id_eq]": str(ids[0])},
                 lambda r: r["attributes"]["item_id"] == ids[0])
    pair = ids[:1] + ids[-1:]
    check_filter(api, items, "order_items", site_id,
                 {"filter[item_id_in]": ",".join(map(str, pair))},
                 lambda r: r["attributes"]["item_id"] in pair)
    assert_error(api.raw_get("order_items", {"filter[item_id_eq]": "abc"}), 400, "item_id_eq")


@pytest.mark.parametrize("value", ["true", "false"])
def test_filter_fulfilled_at_null(api, catalog, site_ids, value):
    for site in site_ids:
        items = _site_items(catalog, site)
        check_filter(api, items, "order_items", site, {"filter[fulfilled_at_null]": value},
                     lambda r: (r["attributes"]["fulfilled_at"] is None) == (value == "true"))
    assert_error(api.raw_get("order_items", {"filter[fulfilled_at_null]": "maybe"}), 400,
                 "fulfilled_at_null")


def test_filter_quantity_and_total_bounds(api, catalog, site_id):
    items = _site_items(catalog, site_id)
    check_filter(api, items, "order_items", site_id, {"filter[quantity_gt]": "1"},
                 lambda r: r["attributes"]["quantity"] > 1)
    totals = sorted(i["attributes"]["total_price_in_cents"] for i in items)
    middle = totals[len(totals) // 2]
    check_filter(api, items, "order_items", site_id,
                 {"filter[total_price_in_cents_gteq]": str(middle)},
                 lambda r: r["attributes"]["total_price_in_cents"] >= middle)
    check_filter(api, items, "order_items", site_id,
                 {"filter[total_price_in_cents_lteq]": str(middle)},
                 lambda r: r["attributes"]["total_price_in_cents"] <= middle)
    check_filter(api, items, "order_items", site_id,
                 {"filter[total_price_in_cents_gteq]": str(middle),
                  "filter[total_price_in_cents_lteq]": str(middle)},
                 lambda r: r["attributes"]["total_price_in_cents"] == middle)
    assert_error(api.raw_get("order_items", {"filter[quantity_gt]": "lots"}), 400, "quantity_gt")


def test_filter_item_type_cont_and_title_i_cont(api, catalog, site_ids):
    for site in site_ids:
        items = _site_items(catalog, site)
        check_filter(api, items, "order_items", site, {"filter[item_type_cont]": "rodu"},
                     lambda r: "rodu" in r["attributes"]["item_type"])
        needle = items[0]["attributes"]["title"].split()[0][1:4].lower()

        def has_needle(r: dict, needle: str = needle) -> bool:
            return needle in r["attributes"]["title"].lower()

        for given in (needle.upper(), needle):  # i_cont: case-insensitive contains
            check_filter(api, items, "order_items", site, {"filter[title_i_cont]": given},
                         has_needle)


def test_unknown_filter_names_it(api):
    error = assert_error(api.raw_get("order_items", {"filter[order_id]": "1"}), 400)
    assert "order_id" in error["source"]["pointer"]


def test_sparse_fields(api, site_id):
    body = api.get("order_items", {"filter[site_id]": site_id,
                                   "fields[order_items]": "quantity,order"})
    for item in body["data"]:
        assert set(item["attributes"]) == {"quantity"}
        assert set(item["relationships"]) == {"order"}
    assert_error(api.raw_get("order_items", {"fields[order_items]": "price"}), 400,
                 "fields[order_items]")


def test_order_read_includes_items_customer_and_site(api, catalog, site_id):
    listed = catalog.by_id("order_items", site_id)
    order = catalog.all("orders", site_id)[0]
    body = api.get(f"orders/{order['id']}", {"include": "order_items,customer,site"})
    by_type: dict[str, list] = {}
    for resource in body["included"]:
        by_type.setdefault(resource["type"], []).append(resource)
    assert {i["id"] for i in by_type["order_items"]} == set(rel_ids(order, "order_items"))
    for item in by_type["order_items"]:
        assert item == listed[item["id"]]
    assert [c["id"] for c in by_type["customers"]] == [rel_id(order, "customer")]
    assert [s["id"] for s in by_type["sites"]] == [site_id]


def test_items_follow_their_order(api, catalog, each_site):
    orders = catalog.by_id("orders", each_site)
    for item in catalog.all("order_items", each_site):
        order = orders[rel_id(item, "order")]["attributes"]
        a = item["attributes"]
        assert parse_ts(a["created_at"]) == parse_ts(order["created_at"])
        assert a["fulfilled_at"] == order["fulfilled_at"]
        assert a["currency_code"] == order["currency_code"]


def test_activity_items_appear_in_the_list_and_fulfilment_moves(sandbox_factory):
    client = Api(sandbox_factory(seed=5).base_url)
    try:
        before = set(client.ids("order_items"))
        open_before = set(client.ids("order_items", {"filter[fulfilled_at_null]": "true"}))
        response = httpx.post(client.base_url + "/_sandbox/activity", json={"count": 60},
                              timeout=120)
        assert response.status_code == 200
        summary = response.json()
        after = {i["id"]: i for i in client.all("order_items")}
        new = set(after) - before
        assert new and summary.get("order"), "activity made no order"
        for order in client.all("orders", {"filter[created_at_gteq]": "2026-03-01T12:00:01Z"}):
            assert set(rel_ids(order, "order_items")) <= new
        fulfilled = open_before - set(client.ids("order_items",
                                                 {"filter[fulfilled_at_null]": "true"}))
        assert fulfilled and summary.get("fulfil"), "a fulfilment sets fulfilled_at on items"
        assert all(after[i]["attributes"]["fulfilled_at"] for i in fulfilled)
    finally:
        client.close()
