"""Spec section 2 and 3: every resource's attributes and relationships, their types and states."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from sandbox_contract_helpers import ID_FLOOR, ISO_TS, SITE_COLLECTIONS, parse_ts

S, S_, INT, I_, B, T, T_, O_, N = "str", "str?", "int", "int?", "bool", "ts", "ts?", "obj?", "num"
LIST = "list"

ADDRESS = {f"address_{k}": S_ for k in ("line_1", "line_2", "city", "state", "country", "zip")}
CUSTOMS = {f"custom_{n}": S_ for n in (1, 2, 3)}

# attribute -> type; "?" means nullable. Extra keys the spec mentions as occasional are OPTIONAL.
SCHEMAS: dict[str, dict[str, str]] = {
    "contacts": {
        "name": S_, "email": S, "phone_number": S_, "business_number": S_, "subscribed": B,
        **ADDRESS, "external_user_id": S_, **CUSTOMS, "created_at": T, "updated_at": T,
    },
    "customers": {
        "name": S, "email": S, "avatar": S_, "external_user_id": S_, "public_bio": S_,
        "public_location": S_, "public_website": S_, "socials": O_, "net_revenue": S,
        "sign_in_count": INT, "last_request_at": T_, "bounced_at": T_, "created_at": T, "updated_at": T,
    },
    "products": {
        "title": S, "created_at": T, "description": S_, "status": S, "members_aggregate_count": INT,
        "product_type_name": S, "product_type_id": INT, "publish_status": S, "thumbnail_url": S_,
        "url": S,
    },
    "offers": {
        "title": S, "description": S_, "internal_title": S_, "currency": S, "price_in_cents": INT,
        "payment_type": S, "token": S, "payment_method": S, "price_description": S,
        "checkout_url": S, "recurring_offer": B, "subscription": B, "one_time": B, "single": B,
        "free": B, "image_url": S_,
    },
    "courses": {"title": S, "created_at": T, "description": S_, "thumbnail_url": S_},
    "forms": {"title": S, "default": B, "webhook_url": S_, "url": S, "created_at": T, "updated_at": T},
    "custom_fields": {"title": S, "handle": S, "type": S, "required": B},
    "form_submissions": {
        "name": S_, "email": S_, "phone_number": S_, "business_number": S_, **ADDRESS, **CUSTOMS,
    },
    "purchases": {
        "amount_in_cents": INT, "payment_type": S, "multipay_payments_made": INT, "opt_in": B,
        "raw_extra_contact_information": O_, "currency": S, "effective_start_at": T,
        "cardholder_name": S_, "billing_address_zip": S_, "deactivated_at": T_,
        "deactivation_reason": S_, "coupon_code": S_, "source": S_, "referrer": S_, "quantity": INT,
        "created_at": T, "updated_at": T,
    },
    "orders": {
        "order_number": INT, "currency_code": S, "fulfilled_at": T_, "created_at": T,
        "total_price_in_cents": INT, "subtotal_in_cents": INT, "sales_tax_amount_in_cents": INT,
        "discount_amount_in_cents": INT, "formatted_total_price": S, "formatted_subtotal": S,
        "currency_symbol": S,
    },
    "transactions": {
        "provider": S, "action": S, "state": S, "payment_type": S_, "amount_in_cents": INT,
        "sales_tax_in_cents": INT, "payment_fee_in_cents": I_, "currency": S_, "currency_symbol": S_,
        "formatted_amount": S, "settlement_amount_in_cents": I_,
        "settlement_fee_amount_in_cents": I_, "settlement_currency": S_, "created_at": T,
    },
    "contact_tags": {"name": S},
    "blog_posts": {
        "title": S, "url": S, "content": S_, "slug": S, "page_title": S_, "page_description": S_,
        "published_at": T_, "created_at": T, "updated_at": T,
    },
    "website_pages": {"title": S, "url": S, "created_at": T, "updated_at": T},
    "platform_payments_payouts": {
        "status": S, "amount": N, "currency": S, "initiated_date": T, "estimated_arrival_date": T,
        "bank_account": S,
    },
    "modules": {"title": S, "description": S_, "position": INT, "poster_image_url": S_, "publishing_option": S},
    "lessons": {"title": S, "position": INT, "status": S, "publishing_option": S},
    "media": {"duration_in_minutes": N, "title": S, "kind": S},
    "fields": {
        "title": S, "type": S, "required": B, "handle": S, "select_options": S_, "editable": B,
        "created_at": T, "updated_at": T,
    },
    "hooks": {"event": S, "target_url": S, "resource_id": "any", "created_at": T, "updated_at": T},
    "order_items": {
        "quantity": INT, "currency_code": S, "item_type": S, "item_id": INT, "title": S,
        "fulfilled_at": T_, "created_at": T, "total_price_in_cents": INT, "subtotal_in_cents": INT,
        "sales_tax_amount_in_cents": INT, "discount_amount_in_cents": INT,
        "formatted_total_price": S, "formatted_subtotal": S, "currency_symbol": S,
    },
    # addendum A5
    "contact_notes": {"body": S, "created_at": T, "updated_at": T},
    "landing_pages": {"title": S, "url": S, "publish_at": T_, "created_at": T, "updated_at": T},
    "podcasts": {
        "title": S, "description": S_, "language": S, "owner_email": S_, "author": S_,
        "status": S, "show_type": S, "thumbnail_url": S_, "cover_art_url": S_,
        "categories": LIST, "directories": LIST, "migrated": B, "migrated_to_url": S_,
        "public": B, "ready": B, "distribution_ready": B, "url": S, "created_at": T,
        "updated_at": T,
    },
}
OPTIONAL: dict[str, set[str]] = {
    "products": {"image_url"},
    "blog_posts": {"image_url", "image_alt_text", "tags"},
    "form_submissions": {"created_at", "updated_at"},
    "modules": {"created_at", "updated_at"},
    "lessons": {"created_at", "updated_at"},
    "media": {"created_at", "updated_at"},
    "order_items": {"updated_at"},
    "platform_payments_payouts": {"created_at", "updated_at"},
}

# relationship -> (target type, "one" | "many"); None type means "not checked" (spec is silent).
RELATIONSHIPS: dict[str, dict[str, tuple[str, str]]] = {
    "contacts": {"customer": ("customers", "one"), "offers": ("offers", "many"),
                 "site": ("sites", "one"), "tags": ("contact_tags", "many")},
    "customers": {"contact": ("contacts", "one"), "site": ("sites", "one"),
                  "offers": ("offers", "many"), "products": ("products", "many")},
    "products": {"site": ("sites", "one")},
    "offers": {"site": ("sites", "one"), "products": ("products", "many")},
    "courses": {"site": ("sites", "one"), "offers": ("offers", "many"),
                "modules": ("modules", "many"), "lessons": ("lessons", "many")},
    "forms": {"site": ("sites", "one"), "offer": ("offers", "one"), "fields": ("fields", "many")},
    "custom_fields": {"site": ("sites", "one")},
    "form_submissions": {"site": ("sites", "one"), "form": ("forms", "one")},
    "purchases": {"offer": ("offers", "one"), "customer": ("customers", "one"),
                  "transactions": ("transactions", "many"), "products": ("products", "many")},
    "orders": {"site": ("sites", "one"), "customer": ("customers", "one"),
               "order_items": ("order_items", "many")},
    "transactions": {"customer": ("customers", "one"), "offer": ("offers", "one")},
    "contact_tags": {"site": ("sites", "one")},
    "blog_posts": {"blog": ("blogs", "one")},
    "website_pages": {"site": ("sites", "one")},
    # Relationships of types the spec does not detail: the sandbox's documented choice.
    "modules": {"course": ("courses", "one"), "lessons": ("lessons", "many")},
    "lessons": {"module": ("modules", "one"), "media": ("media", "many")},
    "media": {"lesson": ("lessons", "one")},
    "fields": {"form": ("forms", "one")},
    "order_items": {"order": ("orders", "one"), "site": ("sites", "one")},  # A2, C4
    "platform_payments_payouts": {"site": ("sites", "one")},
    "contact_notes": {"contact": ("contacts", "one")},  # A5
    "landing_pages": {"site": ("sites", "one")},
    "podcasts": {"site": ("sites", "one")},
}

LIFECYCLE = {
    ("platform_payments_payouts", "status"): {"pending", "in_transit", "paid", "failed", "canceled"},
    ("transactions", "state"): {"succeeded"},  # the list holds completed activity only (2.11)
    ("products", "status"): {"ready", "active"},
    ("products", "publish_status"): {"published", "draft"},
    ("modules", "publishing_option"): {"published", "draft"},
    ("lessons", "status"): {"ready", "duplicating", "failed"},
    ("lessons", "publishing_option"): {"draft", "published", "drip", "locked"},
    ("offers", "currency"): {"USD", "EUR", "GBP"},
    ("fields", "type"): {
        "TextField", "PhoneField", "EmailField", "TextAreaField", "CheckboxField",
        "SelectBoxField", "RadioButtonsField", "CountryField", "MobilePhoneField",
    },
}


def check_value(where: str, kind: str, value: Any) -> None:
    nullable = kind.endswith("?")
    if value is None:
        assert nullable or kind == "any", f"{where} is null"
        return
    base = kind.rstrip("?")
    if base == "str":
        assert isinstance(value, str), f"{where} not a string: {value!r}"
    elif base == "int":
        assert type(value) is int, f"{where} not an integer: {value!r}"
    elif base == "bool":
        assert type(value) is bool, f"{where} not a boolean: {value!r}"
    elif base == "ts":
        assert isinstance(value, str) and value.endswith("Z") and ISO_TS.match(value), (
            f"{where} not an ISO 8601 UTC timestamp: {value!r}"
        )
        parse_ts(value)
    elif base == "obj":
        assert isinstance(value, dict), f"{where} not an object: {value!r}"
    elif base == "list":
        assert isinstance(value, list), f"{where} not an array: {value!r}"
    elif base == "num":
        assert isinstance(value, (int, Decimal)) and type(value) is not bool, f"{where}: {value!r}"


def check_resource(resource: dict[str, Any], rtype: str) -> None:
    assert resource["type"] == rtype
    rid = resource["id"]
    assert isinstance(rid, str) and rid.isdigit() and int(rid) > ID_FLOOR, f"{rtype} id {rid!r}"
    schema = SCHEMAS[rtype]
    attributes = resource["attributes"]
    keys = set(attributes)
    missing = set(schema) - keys
    extra = keys - set(schema) - OPTIONAL.get(rtype, set())
    assert not missing, f"{rtype} {rid} lacks {sorted(missing)}"
    assert not extra, f"{rtype} {rid} has undocumented {sorted(extra)}"
    for name, kind in schema.items():
        check_value(f"{rtype}.{name} ({rid})", kind, attributes[name])
    for (of_type, name), allowed in LIFECYCLE.items():
        if of_type == rtype:
            assert attributes[name] in allowed, f"{rtype}.{name} = {attributes[name]!r}"
    for name, (target, cardinality) in RELATIONSHIPS.get(rtype, {}).items():
        rel = resource["relationships"].get(name)
        assert rel is not None, f"{rtype} {rid} lacks relationship {name}"
        if "data" not in rel:
            assert rel.get("links"), f"{rtype}.{name} has neither data nor links"
            continue
        data = rel["data"]
        if cardinality == "one":
            assert data is None or isinstance(data, dict), f"{rtype}.{name} is not to-one"
            items = [data] if data else []
        else:
            assert isinstance(data, list), f"{rtype}.{name} is not to-many"
            items = data
        for item in items:
            assert item["type"] == target, f"{rtype}.{name} points at {item['type']}"
            assert isinstance(item["id"], str) and item["id"].isdigit()


@pytest.mark.parametrize("collection", SITE_COLLECTIONS)
def test_every_listed_resource_matches_its_schema(catalog, site_ids, collection):
    records = [r for s in site_ids for r in catalog.all(collection, s)]
    assert records
    for record in records:
        check_resource(record, collection if collection in SCHEMAS else record["type"])


def test_money_fields_are_integers_everywhere(catalog, site_ids):
    for collection in SITE_COLLECTIONS:
        for site in site_ids:
            for record in catalog.all(collection, site):
                for name, value in record["attributes"].items():
                    if name.endswith("_in_cents") and value is not None:
                        assert type(value) is int, f"{collection}.{name} = {value!r}"


def test_customer_net_revenue_is_a_two_place_decimal_string(catalog, site_id):
    for customer in catalog.all("customers", site_id):
        value = customer["attributes"]["net_revenue"]
        assert Decimal(value) == Decimal(value).quantize(Decimal("0.01"))
        assert "." in value and len(value.split(".")[1]) == 2, value


def test_payout_amount_is_decimal_major_units(catalog, site_id):
    payouts = catalog.all("platform_payments_payouts", site_id)
    assert payouts
    for payout in payouts:
        amount = payout["attributes"]["amount"]
        assert Decimal(amount) == Decimal(amount).quantize(Decimal("0.01"))


def test_contacts_and_customers_carry_resource_links(catalog, api, site_id):
    for contact in catalog.all("contacts", site_id):
        offers = contact["relationships"]["offers"]
        assert offers.get("links", {}).get("self", "").startswith(api.api_url), offers
        if contact["relationships"]["customer"]["data"]:
            link = contact["links"]["customer"]
            assert link == f"{api.api_url}/customers/{contact['relationships']['customer']['data']['id']}"
    for customer in catalog.all("customers", site_id):
        offers = customer["relationships"]["offers"]
        assert offers.get("links", {}).get("self", "").startswith(api.api_url), offers
        assert "data" not in offers, "the customers list carries only links on offers (2.2)"
        contact_id = customer["relationships"]["contact"]["data"]["id"]
        assert customer["links"]["contact"] == f"{api.api_url}/contacts/{contact_id}"


def test_sites_list(api, site_ids):
    sites = api.all("sites")
    assert [s["id"] for s in sites] == site_ids
    for site in sites:
        assert site["type"] == "sites"
        attributes = site["attributes"]
        assert {"name", "subdomain", "currency", "timezone", "created_at"} <= set(attributes)
        assert attributes["currency"] == "USD"
        check_value("sites.created_at", T, attributes["created_at"])


def test_course_list_and_nested_types(api, catalog, site_ids):
    courses = api.all("courses")
    assert courses
    for course in courses:
        check_resource(course, "courses")
    course = courses[0]
    body = api.get(f"courses/{course['id']}", {"include": "modules,lessons.media"})
    kinds = {r["type"] for r in body["included"]}
    assert {"modules", "lessons", "media"} <= kinds
    for resource in body["included"]:
        check_resource(resource, resource["type"])


SINGLE_READS = {
    "contacts": "offers,tags,customer",
    "customers": "contact,offers,products",
    "offers": "products",
    "courses": "modules,lessons.media,offers",
    "forms": "fields,offer,contact_tags",
    "transactions": "customer,offer",
    "purchases": "offer,customer,transactions,products",
    "orders": "order_items,customer",
}


@pytest.mark.parametrize("resource", list(SINGLE_READS))
def test_single_reads_and_their_included_match_the_schemas(api, catalog, site_id, resource):
    listing = api.all("courses", {"filter[site_id]": site_id}) if resource == "courses" else (
        catalog.all(resource, site_id))
    for record in listing[:3]:
        body = api.get(f"{resource}/{record['id']}", {"include": SINGLE_READS[resource]})
        check_resource(body["data"], resource)
        for item in body["included"]:
            if item["type"] == "sites":
                continue
            check_resource(item, item["type"])
