"""Spec 4.2 and 4.3 filters, checked against the data: each filter is recomputed from the complete
listing and the server's answer must be exactly that set."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from sandbox_contract_helpers import (
    assert_error,
    check_filter,
    contains,
    parse_ts,
    pick_needle,
    rel_id,
    rel_ids,
)

Record = dict[str, Any]


def attr(record: Record, name: str) -> Any:
    return record["attributes"][name]


# ---- simple collections ---------------------------------------------------------------------

CONT_CASES = [
    ("products", "title"), ("products", "description"), ("offers", "title"),
    ("offers", "description"), ("custom_fields", "title"), ("forms", "title"),
    ("contact_tags", "name"),
]


@pytest.mark.parametrize(("collection", "field"), CONT_CASES)
def test_cont_filters(api, catalog, site_id, collection, field):
    records = catalog.all(collection, site_id)
    needle = pick_needle([attr(r, field) for r in records])
    check_filter(api, records, collection, site_id, {f"filter[{field}_cont]": needle}, contains(field, needle))


@pytest.mark.parametrize(("collection", "field"), [("products", "status"), ("custom_fields", "type")])
def test_eq_filters(api, catalog, site_id, collection, field):
    records = catalog.all(collection, site_id)
    for value in sorted({attr(r, field) for r in records}):
        check_filter(api, records, collection, site_id, {f"filter[{field}_eq]": value},
                     lambda r, v=value: attr(r, field) == v)


@pytest.mark.parametrize("value", [True, False])
def test_custom_fields_required_eq(api, catalog, site_id, value):
    records = catalog.all("custom_fields", site_id)
    if not any(attr(r, "required") is value for r in records):
        pytest.fail(f"test data has no custom field with required={value}")
    check_filter(api, records, "custom_fields", site_id, {"filter[required_eq]": str(value).lower()},
                 lambda r: attr(r, "required") is value)


def test_form_submissions_by_form(api, catalog, site_id):
    records = catalog.all("form_submissions", site_id)
    for form_id in sorted({rel_id(r, "form") for r in records})[:3]:
        check_filter(api, records, "form_submissions", site_id, {"filter[form_id]": form_id},
                     lambda r, f=form_id: rel_id(r, "form") == f)


# ---- transactions ---------------------------------------------------------------------------

def test_transactions_by_customer(api, catalog, site_id):
    records = catalog.all("transactions", site_id)
    for customer_id in sorted({rel_id(r, "customer") for r in records})[:3]:
        check_filter(api, records, "transactions", site_id, {"filter[customer_id]": customer_id},
                     lambda r, c=customer_id: rel_id(r, "customer") == c)


def test_transactions_by_name_or_email(api, catalog, site_id):
    records = catalog.all("transactions", site_id)
    customers = catalog.by_id("customers", site_id)
    customer = customers[rel_id(records[0], "customer")]
    for needle in (customer["attributes"]["email"], customer["attributes"]["name"]):
        def matches(r: Record, n: str = needle) -> bool:
            c = customers[rel_id(r, "customer")]["attributes"]
            return n.lower() in (c["email"] or "").lower() or n.lower() in (c["name"] or "").lower()
        got = check_filter(api, records, "transactions", site_id, {"filter[name_or_email]": needle}, matches)
        assert records[0]["id"] in got


def _date_window(records: list[Record], field: str) -> tuple[str, str]:
    days = sorted({parse_ts(attr(r, field)).date() for r in records})
    assert len(days) >= 4
    return days[len(days) // 4].isoformat(), days[3 * len(days) // 4].isoformat()


@pytest.mark.parametrize("collection,field", [("transactions", "created_at"),
                                              ("platform_payments_payouts", "initiated_date")])
def test_date_range_filters(api, catalog, site_id, collection, field):
    """start_date and end_date bound the UTC date, both inclusive, and combine with AND."""
    records = catalog.all(collection, site_id)
    start, end = _date_window(records, field)

    def day(r: Record) -> str:
        return parse_ts(attr(r, field)).date().isoformat()

    check_filter(api, records, collection, site_id, {"filter[start_date]": start}, lambda r: day(r) >= start)
    check_filter(api, records, collection, site_id, {"filter[end_date]": end}, lambda r: day(r) <= end)
    check_filter(api, records, collection, site_id, {"filter[start_date]": start, "filter[end_date]": end},
                 lambda r: start <= day(r) <= end)


@pytest.mark.parametrize("collection", ["transactions", "platform_payments_payouts"])
@pytest.mark.parametrize("name", ["start_date", "end_date"])
def test_bad_dates_are_400(api, site_id, collection, name):
    response = api.raw_get(collection, {"filter[site_id]": site_id, f"filter[{name}]": "not-a-date"})
    assert_error(response, 400, name)


# ---- payouts ----------------------------------------------------------------------------------

@pytest.mark.parametrize("status", ["pending", "in_transit", "paid", "failed", "canceled"])
def test_payout_status_filter(api, catalog, site_id, status):
    records = catalog.all("platform_payments_payouts", site_id)
    got = set(api.ids("platform_payments_payouts", {"filter[site_id]": site_id, "filter[status]": status}))
    assert got == {r["id"] for r in records if attr(r, "status").lower() == status}


def test_payout_status_filter_combines_with_dates(api, catalog, site_id):
    records = catalog.all("platform_payments_payouts", site_id)
    start, _ = _date_window(records, "initiated_date")
    got = set(api.ids("platform_payments_payouts",
                      {"filter[site_id]": site_id, "filter[status]": "paid", "filter[start_date]": start}))
    assert got == {r["id"] for r in records if attr(r, "status") == "paid"
                   and parse_ts(attr(r, "initiated_date")).date().isoformat() >= start}


def test_payout_statuses_present(catalog, site_ids):
    """`pending`/`in_transit` depend on the last days' sales; the activity tests cover them."""
    statuses = {attr(r, "status") for s in site_ids for r in catalog.all("platform_payments_payouts", s)}
    assert "paid" in statuses, statuses
    assert statuses & {"failed", "canceled"}, "a few payouts should fail or be canceled"


def test_payout_bad_status_is_400(api, site_id):
    response = api.raw_get("platform_payments_payouts", {"filter[site_id]": site_id, "filter[status]": "lost"})
    assert_error(response, 400, "status")


# ---- purchases --------------------------------------------------------------------------------

PURCHASE_STRINGS = ["currency", "cardholder_name", "billing_address_zip", "deactivation_reason",
                    "coupon_code", "source", "referrer"]
PURCHASE_NUMBERS = ["amount_in_cents", "multipay_payments_made", "quantity"]
PURCHASE_TIMES = ["effective_start_at", "deactivated_at", "created_at", "updated_at"]


def _string_predicate(suffix: str, field: str, value: str) -> Callable[[Record], bool | None]:
    def predicate(r: Record) -> bool | None:
        v = attr(r, field)
        if v is None:
            return None if suffix.startswith("not_") else False
        lv, lval = v.lower(), value.lower()
        return {
            "eq": v == value, "not_eq": v != value, "cont": lval in lv, "not_cont": lval not in lv,
            "start": lv.startswith(lval), "end": lv.endswith(lval),
        }[suffix]
    return predicate


def _order_predicate(suffix: str, key: Callable[[Any], Any], bound: Any, field: str):
    def predicate(r: Record) -> bool | None:
        v = attr(r, field)
        if v is None:
            return False
        k = key(v)
        return {"eq": k == bound, "not_eq": k != bound, "gt": k > bound, "gte": k >= bound,
                "lt": k < bound, "lte": k <= bound, "gteq": k >= bound, "lteq": k <= bound}[suffix]
    return predicate


def _median(values: list[Any]) -> Any:
    ordered = sorted(v for v in values if v is not None)
    assert ordered
    return ordered[len(ordered) // 2]


@pytest.mark.parametrize("suffix", ["eq", "not_eq", "cont", "not_cont", "start", "end"])
@pytest.mark.parametrize("field", PURCHASE_STRINGS)
def test_purchase_string_suffixes(api, catalog, site_id, field, suffix):
    records = catalog.all("purchases", site_id)
    values = [attr(r, field) for r in records]
    present = sorted({v for v in values if v})
    if not present:
        pytest.fail(f"test data has no purchase with {field}")
    if suffix in ("eq", "not_eq"):
        value = present[len(present) // 2] if suffix == "eq" or len(present) > 1 else "no-such-value"
    elif suffix in ("start", "end"):
        value = present[0][:2] if suffix == "start" else present[0][-2:]
    else:
        value = pick_needle(values) if suffix == "cont" or len(present) > 1 else "qqzz"
    check_filter(api, records, "purchases", site_id, {f"filter[{field}_{suffix}]": value},
                 _string_predicate(suffix, field, value))


@pytest.mark.parametrize("suffix", ["eq", "not_eq", "gt", "gte", "lt", "lte"])
@pytest.mark.parametrize("field", PURCHASE_NUMBERS)
def test_purchase_number_suffixes(api, catalog, site_id, field, suffix):
    records = catalog.all("purchases", site_id)
    values = [attr(r, field) for r in records]
    # The median, else a bound just outside the data, so that some record matches.
    for bound in (_median(values), min(values) - 1, max(values) + 1):
        predicate = _order_predicate(suffix, lambda v: v, bound, field)
        if any(predicate(r) for r in records):
            break
    check_filter(api, records, "purchases", site_id, {f"filter[{field}_{suffix}]": bound}, predicate)


@pytest.mark.parametrize("suffix", ["gt", "gte", "lt", "lte"])
@pytest.mark.parametrize("field", PURCHASE_TIMES)
def test_purchase_time_suffixes(api, catalog, site_id, field, suffix):
    records = catalog.all("purchases", site_id)
    raw = _median([attr(r, field) for r in records if attr(r, field)])
    bound = parse_ts(raw)
    check_filter(api, records, "purchases", site_id, {f"filter[{field}_{suffix}]": raw},
                 _order_predicate(suffix, parse_ts, bound, field))


@pytest.mark.parametrize("value", [True, False])
def test_purchase_opt_in_eq(api, catalog, site_id, value):
    records = catalog.all("purchases", site_id)
    check_filter(api, records, "purchases", site_id, {"filter[opt_in_eq]": str(value).lower()},
                 lambda r: attr(r, "opt_in") is value)


def test_purchase_active_and_deactivated(api, catalog, site_id):
    records = catalog.all("purchases", site_id)
    active = check_filter(api, records, "purchases", site_id, {"filter[active]": "true"},
                          lambda r: attr(r, "deactivated_at") is None)
    inactive = check_filter(api, records, "purchases", site_id, {"filter[deactivated]": "true"},
                            lambda r: attr(r, "deactivated_at") is not None)
    assert active | inactive == {r["id"] for r in records}


def test_purchase_documented_shortcuts(api, catalog, site_id):
    records = catalog.all("purchases", site_id)
    customer = rel_id(records[0], "customer")
    check_filter(api, records, "purchases", site_id, {"filter[customer_id]": customer},
                 lambda r: rel_id(r, "customer") == customer)
    referrer = pick_needle([attr(r, "referrer") for r in records])
    check_filter(api, records, "purchases", site_id, {"filter[referrer_cont]": referrer},
                 contains("referrer", referrer))
    coupon = next(attr(r, "coupon_code") for r in records if attr(r, "coupon_code"))
    check_filter(api, records, "purchases", site_id, {"filter[coupon_code_eq]": coupon},
                 lambda r: attr(r, "coupon_code") == coupon)


def test_purchase_filters_combine_with_and(api, catalog, site_id):
    records = catalog.all("purchases", site_id)
    bound = _median([attr(r, "amount_in_cents") for r in records])
    check_filter(api, records, "purchases", site_id,
                 {"filter[amount_in_cents_gte]": bound, "filter[active]": "true"},
                 lambda r: attr(r, "amount_in_cents") >= bound and attr(r, "deactivated_at") is None)


# ---- orders -------------------------------------------------------------------------------------

def test_orders_filters(api, catalog, site_id):
    records = catalog.all("orders", site_id)
    one = records[len(records) // 2]
    number = attr(one, "order_number")
    check_filter(api, records, "orders", site_id, {"filter[order_number_eq]": number},
                 lambda r: attr(r, "order_number") == number)
    digits = str(number)[-2:]
    check_filter(api, records, "orders", site_id, {"filter[order_number_cont]": digits},
                 lambda r: digits in str(attr(r, "order_number")))
    customer = rel_id(one, "customer")
    check_filter(api, records, "orders", site_id, {"filter[customer_id]": customer},
                 lambda r: rel_id(r, "customer") == customer)
    for flag in (True, False):
        check_filter(api, records, "orders", site_id, {"filter[fulfilled_at_null]": str(flag).lower()},
                     lambda r, f=flag: (attr(r, "fulfilled_at") is None) is f)
    raw = _median([attr(r, "created_at") for r in records])
    bound = parse_ts(raw)
    for suffix in ("gteq", "lteq"):
        check_filter(api, records, "orders", site_id, {f"filter[created_at_{suffix}]": raw},
                     _order_predicate(suffix, parse_ts, bound, "created_at"))
    price = _median([attr(r, "total_price_in_cents") for r in records])
    check_filter(api, records, "orders", site_id, {"filter[total_price_in_cents_gt]": price},
                 lambda r: attr(r, "total_price_in_cents") > price)
    currencies = sorted({attr(r, "currency_code") for r in records})
    check_filter(api, records, "orders", site_id, {"filter[currency_code_start]": currencies[0][:1]},
                 lambda r: attr(r, "currency_code").upper().startswith(currencies[0][:1].upper()))
    chosen = currencies[:2] if len(currencies) > 1 else currencies
    check_filter(api, records, "orders", site_id, {"filter[currency_code_in]": ",".join(chosen)},
                 lambda r: attr(r, "currency_code") in chosen)


def test_orders_bad_filter_values_are_400(api, site_id):
    for name, value in [("created_at_gteq", "yesterday"), ("fulfilled_at_null", "maybe"),
                        ("total_price_in_cents_gt", "lots")]:
        response = api.raw_get("orders", {"filter[site_id]": site_id, f"filter[{name}]": value})
        assert_error(response, 400, name)


# ---- blog posts ----------------------------------------------------------------------------------

BLOG_STRINGS = ["title", "content", "slug", "page_title", "page_description"]


@pytest.mark.parametrize("suffix", ["eq", "not_eq", "cont", "not_cont", "start", "end"])
@pytest.mark.parametrize("field", BLOG_STRINGS)
def test_blog_post_string_suffixes(api, catalog, site_id, field, suffix):
    records = catalog.all("blog_posts", site_id)
    values = [attr(r, field) for r in records]
    present = sorted({v for v in values if v})
    if suffix in ("eq", "not_eq"):
        value = present[len(present) // 2]
    elif suffix in ("start", "end"):
        value = present[0][:4] if suffix == "start" else present[0][-4:]
    else:
        value = pick_needle(values)
    check_filter(api, records, "blog_posts", site_id, {f"filter[{field}_{suffix}]": value},
                 _string_predicate(suffix, field, value))


@pytest.mark.parametrize("field", ["published_at", "created_at", "updated_at"])
def test_blog_post_time_eq(api, catalog, site_id, field):
    records = catalog.all("blog_posts", site_id)
    raw = _median([attr(r, field) for r in records if attr(r, field)])
    check_filter(api, records, "blog_posts", site_id, {f"filter[{field}_eq]": raw},
                 lambda r: attr(r, field) is not None and parse_ts(attr(r, field)) == parse_ts(raw))


@pytest.mark.parametrize("field", ["image_url", "image_alt_text", "tags"])
def test_blog_post_extra_filterable_attributes_are_accepted(api, catalog, site_id, field):
    """2.13: these are filterable though not listed as attributes; the filter must be accepted."""
    records = catalog.all("blog_posts", site_id)
    body = api.get("blog_posts", {"filter[site_id]": site_id, f"filter[{field}_cont]": "zzzqqq-none"})
    assert body["data"] == []
    if field in records[0]["attributes"]:
        needle = pick_needle([attr(r, field) for r in records])
        check_filter(api, records, "blog_posts", site_id, {f"filter[{field}_cont]": needle},
                     contains(field, needle))


# ---- unknown filters ------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("collection", "name"),
    [
        ("contacts", "colour"),
        ("products", "title_eq"),
        ("offers", "price_in_cents_gt"),
        ("orders", "created_at_gt"),
        ("purchases", "amount_in_cents_between"),
        ("transactions", "amount_in_cents_gt"),
        ("website_pages", "title_cont"),
        ("platform_payments_payouts", "amount_gt"),
    ],
)
def test_undocumented_filter_is_400(api, site_id, collection, name):
    response = api.raw_get(collection, {"filter[site_id]": site_id, f"filter[{name}]": "1"})
    assert_error(response, 400, name)


@pytest.mark.parametrize(
    ("collection", "name", "value"),
    [
        ("contacts", "created_in_last", "soon"),
        ("contacts", "created_in_last", "-3"),
        ("customers", "has_offer_id", "abc"),
        ("contacts", "has_tag_id", "12.5"),
        ("custom_fields", "required_eq", "maybe"),
        ("purchases", "active", "yes-please"),
        ("purchases", "amount_in_cents_gt", "ten"),
        ("purchases", "created_at_gte", "2025-13-45"),
        ("orders", "order_number_eq", "x1"),
        ("transactions", "customer_id", "bob"),
        ("form_submissions", "form_id", "form"),
    ],
)
def test_bad_filter_values_are_400(api, site_id, collection, name, value):
    response = api.raw_get(collection, {"filter[site_id]": site_id, f"filter[{name}]": value})
    assert_error(response, 400, name)


def test_bad_site_id_is_400(api):
    assert_error(api.raw_get("contacts", {"filter[site_id]": "main-site"}), 400, "site_id")


# ---- contacts and customers (4.3) ------------------------------------------------------------------

@pytest.mark.parametrize("collection", ["contacts", "customers"])
def test_search_matches_name_or_email(api, catalog, site_id, collection):
    records = catalog.all(collection, site_id)
    target = records[len(records) // 2]
    local = target["attributes"]["email"].split("@")[0]
    got = api.all(collection, {"filter[site_id]": site_id, "filter[search]": local})
    assert target["id"] in {r["id"] for r in got}
    for record in got:
        a = record["attributes"]
        assert local.lower() in f"{a['name'] or ''} {a['email']}".lower(), a
    assert api.all(collection, {"filter[site_id]": site_id, "filter[search]": "qqzzxxnomatch"}) == []
    upper = api.ids(collection, {"filter[site_id]": site_id, "filter[search]": local.upper()})
    assert set(upper) == {r["id"] for r in got}, "documented: search ignores case"


@pytest.mark.parametrize("collection", ["contacts", "customers"])
@pytest.mark.parametrize("quantile", [0.25, 0.75])
def test_created_in_last(api, catalog, site_id, collection, quantile):
    """Relative to the sandbox clock (the Date header); records within a day of the edge may go
    either way. N is taken from the data so that some records match and some do not."""
    records = catalog.all(collection, site_id)
    now = api.server_now()
    ages = sorted((now - parse_ts(attr(r, "created_at"))).days for r in records)
    days = ages[int(len(ages) * quantile)] + 1
    cut = now - timedelta(days=days)

    def predicate(r: Record) -> bool | None:
        created = parse_ts(attr(r, "created_at"))
        if abs(created - cut) < timedelta(days=1):
            return None
        return created > cut

    check_filter(api, records, collection, site_id, {"filter[created_in_last]": days}, predicate)


def _offer_ids(api, collection: str, record_id: str) -> set[str]:
    body = api.get(f"{collection}/{record_id}", {"include": "offers"})
    return set(rel_ids(body["data"], "offers"))


@pytest.mark.parametrize("collection", ["contacts", "customers"])
def test_has_offer_id(api, catalog, site_id, collection):
    records = catalog.all(collection, site_id)
    offers = {r["id"]: _offer_ids(api, collection, r["id"]) for r in records}
    counts: dict[str, int] = {}
    for ids in offers.values():
        for offer in ids:
            counts[offer] = counts.get(offer, 0) + 1
    assert counts, "no record holds an offer"
    offer = max(counts, key=lambda o: (counts[o], o))
    check_filter(api, records, collection, site_id, {"filter[has_offer_id]": offer},
                 lambda r: offer in offers[r["id"]])


def test_contacts_has_tag_id(api, catalog, site_id):
    records = catalog.all("contacts", site_id)
    tags = sorted({t for r in records for t in rel_ids(r, "tags")})
    assert tags, "no contact carries a tag"
    for tag in tags[:3]:
        check_filter(api, records, "contacts", site_id, {"filter[has_tag_id]": tag},
                     lambda r, t=tag: t in rel_ids(r, "tags"))


def test_customers_has_tag_id_follows_their_contact(api, catalog, site_id):
    contacts = catalog.by_id("contacts", site_id)
    records = catalog.all("customers", site_id)
    tags = sorted({t for c in contacts.values() for t in rel_ids(c, "tags")})
    tag = tags[0]
    check_filter(api, records, "customers", site_id, {"filter[has_tag_id]": tag},
                 lambda r: tag in rel_ids(contacts[rel_id(r, "contact")], "tags"))


def test_customers_has_product_id(api, catalog, site_id):
    records = catalog.all("customers", site_id)
    products = {r["id"]: set(rel_ids(api.get(f"customers/{r['id']}")["data"], "products")) for r in records}
    product = sorted({p for ids in products.values() for p in ids})[0]
    check_filter(api, records, "customers", site_id, {"filter[has_product_id]": product},
                 lambda r: product in products[r["id"]])



def test_timestamp_filters_honour_offsets(api, catalog, site_id):
    """The same instant written with another offset filters the same (clients may echo back
    `-05:00` values seen in quirks mode)."""
    from datetime import timedelta, timezone

    records = catalog.all("purchases", site_id)
    raw = _median([attr(r, "updated_at") for r in records])
    shifted = parse_ts(raw).astimezone(timezone(timedelta(hours=2))).isoformat()
    assert shifted.endswith("+02:00")
    base = {"filter[site_id]": site_id}
    assert set(api.ids("purchases", {**base, "filter[updated_at_gte]": shifted})) == set(
        api.ids("purchases", {**base, "filter[updated_at_gte]": raw}))
