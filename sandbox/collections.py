"""The one table of per-collection facts: path, type, scope, meta shape, sorts, filters, rules."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from creator_sync.sandbox.dataset import Store
from creator_sync.sandbox.filters import (
    Filter,
    attribute_filters,
    bool_column_filter,
    date_range_filter,
    ref_filter,
    site_filter,
)
from creator_sync.sandbox.options import DEFAULT_BRAND
from creator_sync.sandbox.people_filters import person_filters
from creator_sync.sandbox.schema import ATTRIBUTES, PAYOUTS, public_type
from creator_sync.sandbox.store import NULL

SiteRule = str  # "optional" | "required" | "multi" (required when the account has > 1 site)


@dataclass(frozen=True)
class Collection:
    path: str
    type: str
    scope: str | None  # None: any valid token may read
    meta: str = "default"  # default | purchases | payouts
    sorts: tuple[str, ...] = ()
    filters: dict[str, Filter] = field(default_factory=dict)
    site_rule: SiteRule = "optional"
    page_size: bool = True
    listed: Callable[[Store], np.ndarray] | None = None
    single: bool = False
    includes: tuple[str, ...] = ()
    read_unlisted: bool = False  # archived records stay readable by id (purchases cite them)
    default_sort: str | None = None  # the order without `sort` (A8: some list newest first)
    default_page_size: int | None = None  # the page size without `page[size]` (A8)


def not_archived(type_name: str) -> Callable[[Store], np.ndarray]:
    return lambda store: ~store.tables[type_name].cols["archived"]


def alive(type_name: str) -> Callable[[Store], np.ndarray]:
    """Not deleted (deletes.py): a deleted record is in no list and answers 404."""
    return lambda store: store.alive(type_name)


def _transactions_listed(store: Store) -> np.ndarray:
    return store.tables["transactions"].cols["listed"]


def _hooks_live(store: Store) -> np.ndarray:
    return ~store.tables["hooks"].cols["deleted"]


def _name_or_email(store: Store, value: str, parameter: str) -> np.ndarray:
    from creator_sync.sandbox.filters import texts

    needle = value.strip().lower()
    names, _ = texts(store, "customers", "name", lower=True)
    emails, _ = texts(store, "customers", "email", lower=True)
    hit = (np.strings.find(names, needle) >= 0) | (np.strings.find(emails, needle) >= 0)
    return hit[store.tables["transactions"].cols["customer"]]


def _payout_status(store: Store, value: str, parameter: str) -> np.ndarray:
    from creator_sync.sandbox.errors import bad_param
    from creator_sync.sandbox.vocab import PAYOUT_STATUS

    if value not in PAYOUT_STATUS:
        raise bad_param(parameter, f"{parameter} must be one of {', '.join(PAYOUT_STATUS)} "
                                   f"(lowercase), got {value!r}")
    return store.tables[PAYOUTS].cols["status"] == PAYOUT_STATUS.index(value)


def _exclude_product_types(store: Store, value: str, parameter: str) -> np.ndarray:
    """`filter[exclude_product_types][]=Course&...`: products of none of these types."""
    from creator_sync.sandbox.vocab import PRODUCT_TYPES

    names = {v.strip().lower() for v in value.split(",") if v.strip()}
    codes = [k for k, name in enumerate(PRODUCT_TYPES) if name.lower() in names]
    return ~np.isin(store.tables["products"].cols["ptype"], codes)


def _course_publish_status(store: Store, value: str, parameter: str) -> np.ndarray:
    """A course is published as its product is (`published` or `draft`)."""
    from creator_sync.sandbox.errors import bad_param
    from creator_sync.sandbox.vocab import PUBLISH_STATUS

    if value not in PUBLISH_STATUS:
        raise bad_param(parameter, f"{parameter} must be one of {', '.join(PUBLISH_STATUS)}, "
                                   f"got {value!r}")
    courses = store.tables["courses"].cols
    return store.tables["products"].cols["publish"][courses["product"]] == PUBLISH_STATUS.index(value)


def _landing_published(store: Store) -> np.ndarray:
    """Published: a publish time that has come."""
    publish_at = store.tables["landing_pages"].cols["publish_at"]
    return (publish_at != NULL) & (publish_at <= store.now)


PURCHASE_SORTS = (
    "multipay_payments_made", "opt_in", "currency", "effective_start_at", "cardholder_name",
    "billing_address_zip", "deactivated_at", "deactivation_reason", "coupon_code", "source",
    "referrer", "quantity", "created_at", "updated_at",
)
RANSACK = ("eq", "cont", "not_eq", "not_cont", "start", "end", "gt", "gte", "lt", "lte")
BLOG_FILTER_ATTRS = (
    "title", "content", "slug", "page_title", "page_description", "published_at", "created_at",
    "updated_at", "image_url", "image_alt_text", "tags",
)


def _purchases_filters() -> dict[str, Filter]:
    # documented on the sortable attributes and the amount; accepted on every attribute
    attrs = tuple(a.name for a in ATTRIBUTES["purchases"])
    out = attribute_filters("purchases", attrs, RANSACK)
    out.update({
        "site_id": site_filter("purchases"),
        "customer_id": ref_filter("purchases", "customer", "customers"),
        "active": bool_column_filter(
            "purchases", lambda s: s.tables["purchases"].cols["deactivated_at"] == NULL),
        "deactivated": bool_column_filter(
            "purchases", lambda s: s.tables["purchases"].cols["deactivated_at"] != NULL),
    })
    return out


def _orders_filters() -> dict[str, Filter]:
    out = {
        "site_id": site_filter("orders"),
        "customer_id": ref_filter("orders", "customer", "customers"),
    }
    for attr, suffix in (("order_number", "eq"), ("order_number", "cont"),
                         ("fulfilled_at", "null"), ("created_at", "gteq"),
                         ("created_at", "lteq"), ("total_price_in_cents", "gt"),
                         ("currency_code", "start"), ("currency_code", "in")):
        out.update(attribute_filters("orders", (attr,), (suffix,)))
    return out


# addendum A2: the order items list's filters besides site_id, as (attribute, suffix)
ORDER_ITEM_FILTERS = (
    ("item_type", "eq"), ("item_id", "eq"), ("fulfilled_at", "null"), ("quantity", "gt"),
    ("total_price_in_cents", "gteq"), ("total_price_in_cents", "lteq"), ("item_type", "cont"),
    ("title", "i_cont"), ("item_id", "in"), ("item_type", "not_in"),
)


def _simple(type_name: str, *pairs: tuple[str, str]) -> dict[str, Filter]:
    out: dict[str, Filter] = {"site_id": site_filter(type_name)}
    for attr, suffix in pairs:
        out.update(attribute_filters(type_name, (attr,), (suffix,)))
    return out


COLLECTIONS: dict[str, Collection] = {c.path: c for c in (
    Collection("sites", "sites", None, sorts=("title", "subdomain", "created_at", "updated_at"),
               filters=attribute_filters("sites", ("title", "subdomain"), ("cont",)),
               single=True),
    Collection("contacts", "contacts", "view:contacts", sorts=("name", "email", "created_at"),
               filters=person_filters("contacts"), site_rule="multi", single=True,
               includes=("offers", "tags", "customer"), default_sort="-created_at",
               listed=alive("contacts")),
    Collection("customers", "customers", "view:customers",
               sorts=("name", "email", "created_at", "net_revenue", "last_request_at"),
               filters=person_filters("customers"), site_rule="multi", single=True,
               includes=("contact", "offers", "products"), default_sort="-created_at",
               listed=alive("customers")),
    Collection("products", "products", "view:products", sorts=("title", "description", "status"),
               filters={**_simple("products", ("title", "cont"), ("description", "cont"),
                                  ("status", "eq")),
                        "exclude_product_types": _exclude_product_types},
               listed=not_archived("products"), single=True, read_unlisted=True),
    Collection("offers", "offers", "view:offers", sorts=("title", "price_in_cents"),
               filters=_simple("offers", ("title", "cont"), ("description", "cont")),
               listed=not_archived("offers"), single=True, read_unlisted=True, includes=("products",)),
    Collection("courses", "courses", "view:courses", sorts=("title", "created_at"),
               filters={**_simple("courses", ("title", "cont"), ("description", "cont")),
                        "publish_status_eq": _course_publish_status},
               single=True,
               includes=("modules", "lessons", "lessons.media", "offers")),
    Collection("custom_fields", "custom_fields", "view:custom_fields",
               sorts=("title", "handle", "type", "required"),
               filters=_simple("custom_fields", ("title", "cont"), ("type", "eq"),
                               ("required", "eq")), single=True),
    Collection("forms", "forms", "view:forms", sorts=("title",),
               filters=_simple("forms", ("title", "cont")), single=True,
               includes=("fields", "site", "offer", "contact_tags")),
    Collection("form_submissions", "form_submissions", "view:form_submissions",
               sorts=("name", "email", "created_at"),
               filters={"site_id": site_filter("form_submissions"),
                        "form_id": ref_filter("form_submissions", "form", "forms")},
               single=True, listed=alive("form_submissions")),
    Collection("transactions", "transactions", "view:transactions",
               filters={"site_id": site_filter("transactions"),
                        "customer_id": ref_filter("transactions", "customer", "customers"),
                        "name_or_email": _name_or_email,
                        "start_date": date_range_filter("transactions", "created_at", False),
                        "end_date": date_range_filter("transactions", "created_at", True)},
               listed=_transactions_listed, single=True,
               includes=("customer", "offer", "purchases")),
    Collection("purchases", "purchases", "view:purchases", meta="purchases",
               sorts=PURCHASE_SORTS, filters=_purchases_filters(), single=True,
               includes=("offer", "customer", "transactions", "products")),
    Collection("orders", "orders", "view:orders", sorts=("order_number", "created_at",
                                                         "fulfilled_at"),
               filters=_orders_filters(), single=True,
               includes=("order_items", "customer", "site")),
    Collection("order_items", "order_items", "view:orders",
               sorts=("created_at", "quantity", "fulfilled_at"),
               filters=_simple("order_items", *ORDER_ITEM_FILTERS), single=True),
    Collection("contact_tags", "contact_tags", "view:contacts", sorts=("name", "email"),
               filters=_simple("contact_tags", ("name", "cont")),
               listed=not_archived("contact_tags"), single=True, read_unlisted=True),
    Collection("blog_posts", "blog_posts", "view:blog_posts", sorts=("title", "published_at"),
               filters={"site_id": site_filter("blog_posts"),
                        **attribute_filters("blog_posts", BLOG_FILTER_ATTRS, RANSACK)},
               single=True),
    Collection("website_pages", "website_pages", "view:website_pages", sorts=("created_at",),
               filters={"site_id": site_filter("website_pages")}, single=True),
    Collection(public_type(PAYOUTS, DEFAULT_BRAND), PAYOUTS, "view:payouts", meta="payouts",
               filters={"site_id": site_filter(PAYOUTS), "status": _payout_status,
                        "start_date": date_range_filter(PAYOUTS, "initiated_at", False),
                        "end_date": date_range_filter(PAYOUTS, "initiated_at", True)},
               site_rule="required", page_size=False, single=True),
    Collection("hooks", "hooks", None,
               filters={"site_id": site_filter("hooks"),
                        **attribute_filters("hooks", ("event",), ("eq",))},
               listed=_hooks_live, single=True),
    # addendum A5
    Collection("contact_notes", "contact_notes", "view:contacts",
               sorts=("created_at", "updated_at"),
               filters={"site_id": site_filter("contact_notes"),
                        "contact_id": ref_filter("contact_notes", "contact", "contacts")},
               single=True, default_sort="-created_at", default_page_size=20,
               listed=alive("contact_notes")),
    Collection("landing_pages", "landing_pages", "view:landing_pages", sorts=("title",),
               filters={**_simple("landing_pages", ("title", "start"), ("title", "cont")),
                        "published": bool_column_filter("landing_pages", _landing_published)},
               single=True),
    Collection("podcasts", "podcasts", "view:podcasts", sorts=("title",),
               filters=_simple("podcasts", ("title", "eq"), ("title", "cont"), ("status", "eq"),
                               ("show_type", "eq")), single=True),
)}

ALL_SCOPES: tuple[str, ...] = tuple(sorted(
    {c.scope for c in COLLECTIONS.values() if c.scope}))


def routes(brand: str) -> dict[str, Collection]:
    """Collections by path under a brand word: payouts move to `<brand>_payments_payouts`, and
    no other payouts path exists (addendum A1)."""
    out: dict[str, Collection] = {}
    for collection in COLLECTIONS.values():
        if collection.type == PAYOUTS:
            collection = replace(collection, path=public_type(PAYOUTS, brand))
        out[collection.path] = collection
    return out
