"""Spec 4.2 sorts: every documented sort attribute, both directions, stable tie-break on id."""

from __future__ import annotations

import pytest
from sandbox_contract_helpers import assert_error, assert_sorted

SORTS = {
    "contacts": ["name", "email", "created_at"],
    "customers": ["name", "email", "created_at", "net_revenue", "last_request_at"],
    "products": ["title", "description", "status"],
    "offers": ["title", "price_in_cents"],
    "custom_fields": ["title", "handle", "type", "required"],
    "forms": ["title"],
    "form_submissions": ["name", "email", "created_at"],
    "purchases": [
        "multipay_payments_made", "opt_in", "currency", "effective_start_at", "cardholder_name",
        "billing_address_zip", "deactivated_at", "deactivation_reason", "coupon_code", "source",
        "referrer", "quantity", "created_at", "updated_at",
    ],
    "orders": ["order_number", "created_at", "fulfilled_at"],
    "contact_tags": ["name"],
    "blog_posts": ["title", "published_at"],
    "website_pages": ["created_at"],
    "courses": ["title", "created_at"],  # extension route: the sandbox's documented sorts
}
CASES = [(c, a) for c, attrs in SORTS.items() for a in attrs]


@pytest.mark.parametrize("descending", [False, True], ids=["asc", "desc"])
@pytest.mark.parametrize(("collection", "attribute"), CASES, ids=[f"{c}.{a}" for c, a in CASES])
def test_documented_sort(api, catalog, site_id, collection, attribute, descending):
    params = {"filter[site_id]": site_id, "sort": ("-" if descending else "") + attribute}
    records = api.all(collection, params)
    assert sorted(r["id"] for r in records) == sorted(r["id"] for r in catalog.all(collection, site_id))
    if attribute not in records[0]["attributes"]:
        pytest.fail(f"{collection} is sortable by {attribute} but does not return it")
    assert_sorted(records, attribute, descending)


@pytest.mark.parametrize(("collection", "attribute"), [("contacts", "created_at"), ("purchases", "currency")])
def test_sort_is_stable_across_pages(api, catalog, site_id, collection, attribute):
    """Small pages of a sorted listing concatenate to the large-page listing (no drift)."""
    base = {"filter[site_id]": site_id, "sort": attribute}
    whole = [r["id"] for r in api.all(collection, base)]
    small = [r["id"] for body in api.pages(collection, {**base, "page[size]": 3}) for r in body["data"]]
    assert small == whole


def test_tie_break_on_id_where_ties_exist(api, site_id):
    """Currency has few values, so most purchases tie: ties must still be ordered by id."""
    records = api.all("purchases", {"filter[site_id]": site_id, "sort": "currency"})
    currencies = [r["attributes"]["currency"] for r in records]
    assert len(set(currencies)) < len(currencies), "expected ties on currency"
    assert_sorted(records, "currency", descending=False)


@pytest.mark.parametrize(
    ("collection", "sort"),
    [
        ("contacts", "phone_number"),
        ("contacts", "nonexistent"),
        ("contacts", "--name"),
        ("purchases", "amount_in_cents_x"),
        ("orders", "total_price_in_cents"),
        ("offers", "currency"),
        ("forms", "created_at"),
        ("contacts", "name,created_at"),
    ],
)
def test_undocumented_sort_is_400(api, site_id, collection, sort):
    response = api.raw_get(collection, {"filter[site_id]": site_id, "sort": sort})
    assert_error(response, 400, "sort")


@pytest.mark.parametrize("collection", ["transactions", "platform_payments_payouts"])
def test_collections_without_sort_reject_it(api, site_id, collection):
    response = api.raw_get(collection, {"filter[site_id]": site_id, "sort": "created_at"})
    assert_error(response, 400, "sort")


@pytest.mark.parametrize("collection", ["purchases", "transactions", "platform_payments_payouts"])
def test_unsorted_lists_are_in_id_order(catalog, site_id, collection):
    ids = [int(r["id"]) for r in catalog.all(collection, site_id)]
    assert ids == sorted(ids)


@pytest.mark.parametrize("collection", ["contacts", "customers", "contact_notes"])
def test_people_and_notes_unsorted_are_newest_first(catalog, site_id, collection):
    """A8: contacts, customers and contact notes default to created_at, newest first."""
    ids = [int(r["id"]) for r in catalog.all(collection, site_id)]
    assert ids == sorted(ids, reverse=True)


def test_contact_tags_sort_by_email_keeps_id_order(api, catalog, site_id):
    """The spec lists `email` for tags, which have none: documented to keep id order."""
    for sort in ("email", "-email"):
        ids = api.ids("contact_tags", {"filter[site_id]": site_id, "sort": sort})
        assert ids == [r["id"] for r in catalog.all("contact_tags", site_id)]
