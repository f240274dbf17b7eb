"""The "Notes" columns of spec section 2: uniqueness, normalisation and cross-field rules that a
realistic platform's data obeys (and that models may rely on)."""

from __future__ import annotations

import re
from collections import defaultdict
from decimal import Decimal

from sandbox_contract_helpers import SITE_COLLECTIONS, parse_ts, rel_id, rel_ids

EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$")
SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£"}


def _unique(values: list) -> bool:
    present = [v for v in values if v is not None]
    return len(present) == len(set(present))


def test_customer_emails_are_normalised_and_unique(catalog, each_site):
    customers = catalog.all("customers", each_site)
    emails = [c["attributes"]["email"] for c in customers]
    assert all(e == e.strip().lower() and EMAIL.match(e) for e in emails), emails[:5]
    assert _unique(emails), "customer email must be unique within a site"
    assert _unique([c["attributes"]["external_user_id"] for c in customers])


def test_contact_emails_are_valid(catalog, each_site):
    for contact in catalog.all("contacts", each_site):
        assert EMAIL.match(contact["attributes"]["email"]), contact["attributes"]["email"]


def test_form_titles_unique_and_field_handles_unique_per_site(api, catalog, each_site):
    forms = catalog.all("forms", each_site)
    assert _unique([f["attributes"]["title"] for f in forms])
    handle_to_id: dict[str, set[str]] = defaultdict(set)
    for form in forms:
        body = api.get(f"forms/{form['id']}", {"include": "fields"})
        for field in body["included"]:
            a = field["attributes"]
            handle_to_id[a["handle"]].add(field["id"])
            if a["type"] in ("SelectBoxField", "RadioButtonsField"):
                options = a["select_options"].split("\n")
                assert options and _unique(options), field["id"]
    assert all(len(ids) == 1 for ids in handle_to_id.values()), "a field handle names one field per site"


def test_custom_field_handles_key_the_contact_customs(catalog, each_site):
    handles = [c["attributes"]["handle"] for c in catalog.all("custom_fields", each_site)]
    assert handles and _unique(handles)
    contact_keys = set(catalog.all("contacts", each_site)[0]["attributes"])
    assert set(handles) <= contact_keys


def test_offer_flags_agree_with_price_and_payment_type(catalog, each_site):
    tokens = []
    for offer in catalog.all("offers", each_site):
        a = offer["attributes"]
        tokens.append(a["token"])
        assert a["token"] in a["checkout_url"], "the token is used in checkout URLs"
        assert a["free"] == (a["price_in_cents"] == 0), offer["id"]
        assert a["subscription"] == a["payment_type"].startswith("subscription"), offer["id"]
        assert a["recurring_offer"] == a["subscription"], offer["id"]
        assert a["one_time"] == (a["payment_type"] == "one_time"), offer["id"]
        assert SYMBOLS[a["currency"]] in a["price_description"] or a["free"], a["price_description"]
    assert _unique(tokens)


def _money(text: str) -> Decimal:
    return Decimal(re.sub(r"[^0-9.\-]", "", text))


def test_transaction_currency_symbol_and_formatted_amount(catalog, each_site):
    for tx in catalog.all("transactions", each_site):
        a = tx["attributes"]
        assert a["currency_symbol"] == SYMBOLS[a["currency"]], tx["id"]
        assert a["currency_symbol"] in a["formatted_amount"]
        assert _money(a["formatted_amount"]) == Decimal(a["amount_in_cents"]) / 100, a["formatted_amount"]


def test_order_formatting(catalog, each_site):
    for order in catalog.all("orders", each_site):
        a = order["attributes"]
        assert a["currency_symbol"] == SYMBOLS[a["currency_code"]]
        assert _money(a["formatted_total_price"]) == Decimal(a["total_price_in_cents"]) / 100
        assert _money(a["formatted_subtotal"]) == Decimal(a["subtotal_in_cents"]) / 100
    numbers = [o["attributes"]["order_number"] for o in catalog.all("orders", each_site)]
    assert _unique(numbers)


def test_course_positions_order_modules_and_lessons(api, each_site):
    for course in api.all("courses", {"filter[site_id]": each_site}):
        body = api.get(f"courses/{course['id']}", {"include": "modules,lessons"})
        modules = [m for m in body["included"] if m["type"] == "modules"]
        positions = sorted(m["attributes"]["position"] for m in modules)
        assert positions == list(range(positions[0], positions[0] + len(positions))), course["id"]
        lessons = {r["id"]: r for r in body["included"] if r["type"] == "lessons"}
        for module in modules:
            within = sorted(lessons[i]["attributes"]["position"] for i in rel_ids(module, "lessons"))
            assert _unique(within), module["id"]
            assert all(rel_id(lessons[i], "module") == module["id"] for i in rel_ids(module, "lessons"))
        assert set(lessons) == {i for m in modules for i in rel_ids(m, "lessons")}


NOT_PAST = {"estimated_arrival_date"}  # a payout arrives in the future


def test_no_record_is_from_the_future(api, catalog, site_ids):
    now = api.server_now()
    for collection in SITE_COLLECTIONS:
        for site in site_ids:
            for record in catalog.all(collection, site):
                for key, value in record["attributes"].items():
                    if key in NOT_PAST or not isinstance(value, str):
                        continue
                    if key.endswith("_at") or key.endswith("_date"):
                        assert parse_ts(value) <= now, (collection, record["id"], key, value)


def test_customer_activity_fields(catalog, each_site):
    for customer in catalog.all("customers", each_site):
        a = customer["attributes"]
        assert a["sign_in_count"] >= 0
        if a["last_request_at"]:
            assert parse_ts(a["last_request_at"]) >= parse_ts(a["created_at"]), customer["id"]


def test_external_user_id_is_shared_by_contact_and_customer(catalog, each_site):
    """Spec 2.1: the external reference is shared with the customer."""
    contacts = catalog.by_id("contacts", each_site)
    for customer in catalog.all("customers", each_site):
        contact = contacts[rel_id(customer, "contact")]
        assert contact["attributes"]["external_user_id"] == customer["attributes"]["external_user_id"]


def test_product_member_count_matches_customers_holding_it(api, catalog, each_site):
    holders: dict[str, int] = defaultdict(int)
    for customer in catalog.all("customers", each_site):
        for product in rel_ids(api.get(f"customers/{customer['id']}")["data"], "products"):
            holders[product] += 1
    for product in catalog.all("products", each_site):
        assert product["attributes"]["members_aggregate_count"] == holders.get(product["id"], 0), product["id"]
