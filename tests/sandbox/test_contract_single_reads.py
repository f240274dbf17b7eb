"""Spec 4.4 single reads: each include value (dotted paths too), sparse fields on the main and the
included types, forms' `default` id, and 404 for what does not exist."""

from __future__ import annotations

from typing import Any

import pytest
from sandbox_contract_helpers import assert_error, rel_ids

# resource -> {include value: (relationship path, included type)}
INCLUDES: dict[str, dict[str, tuple[tuple[str, ...], str]]] = {
    "contacts": {"offers": (("offers",), "offers"), "tags": (("tags",), "contact_tags"),
                 "customer": (("customer",), "customers")},
    "customers": {"contact": (("contact",), "contacts"), "offers": (("offers",), "offers"),
                  "products": (("products",), "products")},
    "offers": {"products": (("products",), "products")},
    "courses": {"modules": (("modules",), "modules"), "lessons": (("lessons",), "lessons"),
                "lessons.media": (("lessons", "media"), "media"), "offers": (("offers",), "offers")},
    "forms": {"fields": (("fields",), "fields"), "site": (("site",), "sites"),
              "offer": (("offer",), "offers"), "contact_tags": (("contact_tags",), "contact_tags")},
    "transactions": {"customer": (("customer",), "customers"), "offer": (("offer",), "offers")},
    # Extensions documented by the sandbox (not in spec 4.4):
    "purchases": {"offer": (("offer",), "offers"), "customer": (("customer",), "customers"),
                  "transactions": (("transactions",), "transactions"),
                  "products": (("products",), "products")},
    "orders": {"order_items": (("order_items",), "order_items"), "customer": (("customer",), "customers")},
}
CASES = [(r, i) for r, values in INCLUDES.items() for i in values]
# A sparse attribute pair per type, for fields[<type>].
SPARSE = {
    "contacts": ["name", "email"], "customers": ["email", "net_revenue"], "offers": ["title", "currency"],
    "products": ["title"], "courses": ["title"], "modules": ["title", "position"],
    "lessons": ["title"], "media": ["duration_in_minutes"], "forms": ["title", "default"],
    "fields": ["handle"], "transactions": ["amount_in_cents", "currency"], "contact_tags": ["name"],
    "sites": ["name"], "purchases": ["amount_in_cents"], "orders": ["order_number"],
    "order_items": ["title", "quantity"],
}


def _pick(api, catalog, site_id: str, resource: str, include: str) -> dict[str, Any]:
    """A record whose include target is non-empty, so the test proves something."""
    first_rel = INCLUDES[resource][include][0][0]
    listing = api.all("courses") if resource == "courses" else catalog.all(resource, site_id)
    for record in listing:
        body = api.get(f"{resource}/{record['id']}")
        if rel_ids(body["data"], first_rel):
            return body["data"]
    pytest.fail(f"no {resource} with a non-empty {first_rel}")


def _expected_ids(api, resource: dict[str, Any], path: tuple[str, ...]) -> set[str]:
    ids = set(rel_ids(resource, path[0]))
    if len(path) == 1:
        return ids
    nested: set[str] = set()
    parent = api.get(f"courses/{resource['id']}", {"include": path[0]})
    for item in parent["included"]:
        if item["id"] in ids:
            nested |= set(rel_ids(item, path[1]))
    return nested


@pytest.mark.parametrize(("resource", "include"), CASES, ids=[f"{r}-{i}" for r, i in CASES])
def test_include_loads_exactly_the_related_resources(api, catalog, site_id, resource, include):
    record = _pick(api, catalog, site_id, resource, include)
    path, included_type = INCLUDES[resource][include]
    body = api.get(f"{resource}/{record['id']}", {"include": include})
    assert body["data"]["id"] == record["id"]
    included = body.get("included")
    assert isinstance(included, list), "include given: `included` must be an array"
    got = {r["id"] for r in included if r["type"] == included_type}
    assert got == _expected_ids(api, record, path)
    keys = [(r["type"], r["id"]) for r in included]
    assert len(keys) == len(set(keys)), "duplicate included resources"
    for item in included:
        assert set(item) >= {"id", "type", "attributes"}
        assert item["attributes"], f"included {item['type']} has no attributes"
    if len(path) == 2:
        assert {r["type"] for r in included} >= {path[0], included_type}
    listed = {r["id"]: r for r in catalog.all(included_type, site_id)} if included_type in LISTED else {}
    for item in included:
        if item["id"] in listed:
            assert item["attributes"] == listed[item["id"]]["attributes"], "included differs from its listing"


LISTED = {"customers", "contacts", "offers", "products", "contact_tags"}


@pytest.mark.parametrize("resource", list(INCLUDES))
def test_no_included_without_include(api, catalog, site_id, resource):
    listing = api.all("courses") if resource == "courses" else catalog.all(resource, site_id)
    body = api.get(f"{resource}/{listing[0]['id']}")
    assert "included" not in body
    assert body["data"]["type"] == resource


@pytest.mark.parametrize("resource", [r for r in INCLUDES if r != "courses"])
def test_single_read_matches_listing(api, catalog, site_id, resource):
    record = catalog.all(resource, site_id)[0]
    body = api.get(f"{resource}/{record['id']}")
    assert body["data"]["attributes"] == record["attributes"]


def test_several_includes_at_once(api, catalog, site_id):
    record = _pick(api, catalog, site_id, "contacts", "tags")
    body = api.get(f"contacts/{record['id']}", {"include": "offers,tags,customer"})
    types = {r["type"] for r in body["included"]}
    assert "contact_tags" in types
    if record["relationships"]["customer"]["data"]:
        assert "customers" in types


@pytest.mark.parametrize("resource", list(INCLUDES))
def test_sparse_fields_on_single_read(api, catalog, site_id, resource):
    listing = api.all("courses") if resource == "courses" else catalog.all(resource, site_id)
    wanted = SPARSE[resource]
    body = api.get(f"{resource}/{listing[0]['id']}", {f"fields[{resource}]": ",".join(wanted)})
    assert set(body["data"]["attributes"]) == set(wanted)
    assert isinstance(body["data"].get("relationships", {}), dict)


@pytest.mark.parametrize(("resource", "include"), CASES, ids=[f"{r}-{i}" for r, i in CASES])
def test_sparse_fields_on_included_type(api, catalog, site_id, resource, include):
    record = _pick(api, catalog, site_id, resource, include)
    included_type = INCLUDES[resource][include][1]
    wanted = SPARSE[included_type]
    body = api.get(f"{resource}/{record['id']}",
                   {"include": include, f"fields[{included_type}]": ",".join(wanted)})
    items = [r for r in body["included"] if r["type"] == included_type]
    assert items
    for item in items:
        assert set(item["attributes"]) == set(wanted)
    plain = api.get(f"{resource}/{record['id']}")
    assert body["data"]["attributes"] == plain["data"]["attributes"], "main type must stay complete"


def test_sparse_fields_for_included_type_ignored_without_include(api, catalog, site_id):
    record = catalog.all("transactions", site_id)[0]
    plain = api.get(f"transactions/{record['id']}")
    body = api.get(f"transactions/{record['id']}", {"fields[customers]": "email"})
    assert "included" not in body
    assert body["data"] == plain["data"]


@pytest.mark.parametrize("collection", ["contacts", "purchases", "platform_payments_payouts", "orders"])
def test_sparse_fields_on_collections(api, catalog, site_id, collection):
    first = catalog.all(collection, site_id)[0]
    name = next(iter(first["attributes"]))
    body = api.get(collection, {"filter[site_id]": site_id, f"fields[{collection}]": name})
    assert body["data"]
    for record in body["data"]:
        assert set(record["attributes"]) == {name}


def test_unknown_sparse_field_is_400(api, catalog, site_id):
    record = catalog.all("contacts", site_id)[0]
    response = api.raw_get(f"contacts/{record['id']}", {"fields[contacts]": "name,shoe_size"})
    assert_error(response, 400, "fields")


@pytest.mark.parametrize(("resource", "include"), [("contacts", "purchases"), ("offers", "site.owner"),
                                                   ("courses", "lessons.quizzes"), ("transactions", "customer.bogus")])
def test_unknown_include_is_400(api, catalog, site_id, resource, include):
    listing = api.all("courses") if resource == "courses" else catalog.all(resource, site_id)
    response = api.raw_get(f"{resource}/{listing[0]['id']}", {"include": include})
    assert_error(response, 400, "include")


@pytest.mark.parametrize("site_index", [0, 1])
def test_default_form(api, catalog, site_ids, site_index):
    site = site_ids[site_index]
    defaults = [f for f in catalog.all("forms", site) if f["attributes"]["default"]]
    assert len(defaults) == 1, "exactly one default form per site"
    body = api.get("forms/default", {"filter[site_id]": site, "include": "fields"})
    assert body["data"]["id"] == defaults[0]["id"]
    assert body["data"]["attributes"]["default"] is True
    assert {r["type"] for r in body["included"]} == {"fields"}


@pytest.mark.parametrize(
    "path",
    ["contacts/2999999999", "customers/2999999999", "offers/2999999999", "courses/2999999999",
     "forms/2999999999", "transactions/2999999999", "contacts/abc", "hooks/2999999999"],
)
def test_missing_resource_is_404(api, path):
    assert_error(api.raw_get(path), 404)


def test_resource_of_wrong_type_is_404(api, catalog, site_id):
    contact = catalog.all("contacts", site_id)[0]
    assert_error(api.raw_get(f"offers/{contact['id']}"), 404)


def test_unknown_route_is_404(api):
    assert_error(api.raw_get("widgets"), 404)


def test_sparse_fields_restrict_relationships_too(api, catalog, site_id):
    """Documented: relationships are `{}` unless a relationship name is listed."""
    record = catalog.all("contacts", site_id)[0]
    body = api.get(f"contacts/{record['id']}", {"fields[contacts]": "name"})
    assert body["data"]["relationships"] == {}
    body = api.get(f"contacts/{record['id']}", {"fields[contacts]": "name,tags"})
    assert set(body["data"]["attributes"]) == {"name"}
    assert set(body["data"]["relationships"]) == {"tags"}
    assert body["data"]["relationships"]["tags"]["data"] == record["relationships"]["tags"]["data"]


def test_default_form_without_site_filter_is_the_first_sites(api, catalog, site_ids):
    default = next(f for f in catalog.all("forms", site_ids[0]) if f["attributes"]["default"])
    assert api.get("forms/default")["data"]["id"] == default["id"]


def test_payout_detail_of_an_unknown_id_is_404(api, catalog, site_id):
    """Addendum A3 adds the payout detail; an id that is no payout still answers 404."""
    payout = catalog.all("platform_payments_payouts", site_id)[0]
    site = {"filter[site_id]": site_id}
    assert api.raw_get(f"platform_payments_payouts/{payout['id']}", site).status_code == 200
    assert_error(api.raw_get("platform_payments_payouts/3999999999", site), 404)
    assert_error(api.raw_get(f"platform_payments_payouts/{site_id}", site), 404)


def test_unlisted_transactions_are_referenced_but_not_readable(api, catalog, site_id):
    """Documented: purchases.transactions references test/failed/pending ones; they answer 404."""
    listed = {t["id"] for t in catalog.all("transactions", site_id)}
    hidden = {t for p in catalog.all("purchases", site_id) for t in rel_ids(p, "transactions")} - listed
    assert hidden, "no purchase references an unlisted transaction"
    for tx_id in sorted(hidden)[:10]:
        assert_error(api.raw_get(f"transactions/{tx_id}"), 404)


def test_archived_records_referenced_by_purchases_are_readable(api, catalog, site_id):
    offers = {o["id"] for o in catalog.all("offers", site_id)}
    for purchase in catalog.all("purchases", site_id):
        offer_id = purchase["relationships"]["offer"]["data"]["id"]
        if offer_id not in offers:
            assert api.raw_get(f"offers/{offer_id}").status_code == 200


@pytest.mark.parametrize("resource", ["contacts", "customers", "offers", "forms", "transactions"])
def test_single_read_self_link_is_absolute(api, catalog, site_id, resource):
    record = catalog.all(resource, site_id)[0]
    body = api.get(f"{resource}/{record['id']}")
    assert body["links"]["self"] == f"{api.api_url}/{resource}/{record['id']}"
