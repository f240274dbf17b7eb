"""Per-type facts for rendering: attributes (name, kind, source column) and relationships.

One table drives every endpoint: the renderer, sparse fields, sorting and attribute filters all
look attributes up here instead of hand-writing each resource.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from creator_sync.sandbox import vocab as V
from creator_sync.sandbox.dataset import Store
from creator_sync.sandbox.store import NULL

# attribute kinds
VALUE = "v"  # stored or virtual value as is (str, int, bool, float, dict, None)
TIME = "t"  # epoch seconds, NULL (-1) -> null
NINT = "n"  # nullable integer, NULL_INT -> null
ENUM = "e"  # small code -> label, negative -> null
MONEY = "m"  # cents -> decimal string "12.34"
DECIMAL = "d"  # cents -> JSON number with two decimals


@dataclass(frozen=True)
class Attr:
    name: str
    kind: str = VALUE
    source: str | None = None
    labels: tuple[str, ...] = ()

    @property
    def column(self) -> str:
        return self.source or self.name


@dataclass(frozen=True)
class Rel:
    """A relationship; `source` says where its rows come from (resolved in `relations.py`):
    ("col", column) a row-reference column of this table; ("link", name) a Links pair table;
    ("fk", child_type, column) children pointing here; ("via", column, link) a link table
    reached through a to-one column (a purchase's products are its offer's products)."""

    name: str
    type: str
    many: bool
    source: tuple[str, ...]
    list_data: bool = True  # False: on lists only `links` is shown (customers.offers)
    links_self: bool = False  # show `links.self` to the relationship


def one(column: str) -> tuple[str, ...]:
    return ("col", column)


def link(name: str) -> tuple[str, ...]:
    return ("link", name)


def fk(child_type: str, column: str) -> tuple[str, ...]:
    return ("fk", child_type, column)


# a transaction pays one purchase, a bundle several (A8): many-to-many, `sandbox/bundles.py`
PAID = ("paid",)


def T(name: str, source: str | None = None) -> Attr:
    return Attr(name, TIME, source)


def E(name: str, labels: tuple[str, ...], source: str | None = None) -> Attr:
    return Attr(name, ENUM, source, labels)


def A(*names: str) -> list[Attr]:
    return [Attr(n) for n in names]


ADDRESS = ("address_line_1", "address_line_2", "address_city", "address_state",
           "address_country", "address_zip")
MONEY_PARTS = ("total_price_in_cents", "subtotal_in_cents", "sales_tax_amount_in_cents",
               "discount_amount_in_cents")
MONEY_SOURCES = ("total", "subtotal", "tax", "discount")


def _money_attrs() -> list[Attr]:
    return [Attr(n, VALUE, s) for n, s in zip(MONEY_PARTS, MONEY_SOURCES, strict=True)]


def site_rel(type_name: str) -> Rel:
    return Rel("site", "sites", False, one("site"))


ATTRIBUTES: dict[str, list[Attr]] = {
    "sites": [*A("title", "name", "subdomain", "currency"), E("timezone", V.TIMEZONES),
              T("created_at"), T("updated_at")],
    "blogs": [*A("title"), T("created_at")],
    "contacts": [
        *A("name", "email", "phone_number", "business_number"), Attr("subscribed"),
        *A(*ADDRESS), *A("external_user_id", "custom_1", "custom_2", "custom_3"),
        T("created_at"), T("updated_at"),
    ],
    "customers": [
        *A("name", "email", "avatar", "external_user_id", "public_bio", "public_location",
           "public_website", "socials"),
        Attr("net_revenue", MONEY, "net_revenue_cents"), Attr("sign_in_count"),
        T("last_request_at"), T("bounced_at"), T("created_at"), T("updated_at"),
    ],
    "products": [
        Attr("title"), T("created_at"), Attr("description"), E("status", V.PRODUCT_STATUS),
        Attr("members_aggregate_count", VALUE, "members"),
        E("product_type_name", V.PRODUCT_TYPES, "ptype"), Attr("product_type_id"),
        E("publish_status", V.PUBLISH_STATUS, "publish"),
        *A("thumbnail_url", "url", "image_url"),
    ],
    "offers": [
        *A("title", "description", "internal_title"), E("currency", V.CURRENCIES),
        Attr("price_in_cents"), E("payment_type", V.PAYMENT_TYPES, "ptype"), Attr("token"),
        E("payment_method", ("", "card", "card_and_paypal"), "method"),
        *A("price_description", "checkout_url", "recurring_offer", "subscription", "one_time",
           "single", "free", "image_url"),
    ],
    "courses": [Attr("title"), T("created_at"), *A("description", "thumbnail_url")],
    "modules": [
        *A("title", "description", "position", "poster_image_url"),
        E("publishing_option", V.MODULE_PUBLISHING, "publish"),
    ],
    "lessons": [
        *A("title", "position"), E("status", V.LESSON_STATUS),
        E("publishing_option", V.LESSON_PUBLISHING, "publish"),
    ],
    "media": [Attr("title"), E("kind", V.MEDIA_KINDS), Attr("duration_in_minutes", VALUE, "duration")],
    "forms": [
        *A("title", "default", "webhook_url", "url"), T("created_at"), T("updated_at"),
    ],
    "fields": [
        Attr("title"), E("type", V.FIELD_TYPES, "kind"), *A("required", "handle", "select_options",
                                                            "editable"),
        T("created_at"), T("updated_at", "created_at"),
    ],
    "custom_fields": [*A("title", "handle"), E("type", V.FIELD_TYPES, "ftype"), Attr("required")],
    "form_submissions": [
        *A("name", "email", "phone_number", "business_number", *ADDRESS, "custom_1", "custom_2",
           "custom_3"),
        T("created_at"),
    ],
    "purchases": [
        Attr("amount_in_cents"), E("payment_type", V.PAYMENT_TYPES, "ptype"),
        Attr("multipay_payments_made", VALUE, "payments_made"),
        *A("opt_in", "raw_extra_contact_information"),
        E("currency", V.CURRENCIES), T("effective_start_at", "created_at"),
        *A("cardholder_name", "billing_address_zip"), T("deactivated_at"),
        E("deactivation_reason", V.DEACTIVATION_REASONS, "reason"),
        E("coupon_code", V.COUPONS, "coupon"), E("source", V.SOURCES), E("referrer", V.REFERRERS),
        Attr("quantity"), T("created_at"), T("updated_at"),
    ],
    "orders": [
        Attr("order_number", VALUE, "number"), E("currency_code", V.CURRENCIES, "currency"),
        T("fulfilled_at"), T("created_at"), *_money_attrs(),
        *A("formatted_total_price", "formatted_subtotal"),
        E("currency_symbol", V.CURRENCY_SYMBOLS, "currency"),
    ],
    "order_items": [
        Attr("quantity"), E("currency_code", V.CURRENCIES, "currency"),
        *A("item_type", "item_id", "title"), T("fulfilled_at"),
        T("created_at"), *_money_attrs(), *A("formatted_total_price", "formatted_subtotal"),
        E("currency_symbol", V.CURRENCY_SYMBOLS, "currency"),
    ],
    "transactions": [
        E("provider", V.PROVIDERS), E("action", V.ACTIONS), E("state", V.STATES),
        E("payment_type", V.PAYMENT_TYPES, "ptype"), Attr("amount_in_cents"),
        Attr("sales_tax_in_cents"), Attr("payment_fee_in_cents", NINT, "payment_fee"),
        E("currency", V.CURRENCIES), E("currency_symbol", V.CURRENCY_SYMBOLS, "currency"),
        Attr("formatted_amount"),
        Attr("settlement_amount_in_cents", NINT, "settlement_amount"),
        Attr("settlement_fee_amount_in_cents", NINT, "settlement_fee"),
        Attr("settlement_currency"), T("created_at"),
    ],
    "contact_tags": [Attr("name")],
    "blog_posts": [
        *A("title", "url", "content", "slug", "page_title", "page_description"),
        T("published_at"), T("created_at"), T("updated_at"),
        *A("image_url", "image_alt_text", "tags"),
    ],
    "website_pages": [*A("title", "url"), T("created_at"), T("updated_at")],
    "payouts": [
        E("status", V.PAYOUT_STATUS), Attr("amount", DECIMAL, "amount_cents"), Attr("currency"),
        T("initiated_date", "initiated_at"), T("estimated_arrival_date", "arrival_at"),
        Attr("bank_account"),
    ],
    "hooks": [
        E("event", V.EVENTS), *A("target_url", "resource_id"), T("created_at"), T("updated_at"),
    ],
    # addendum A5
    "contact_notes": [Attr("body"), T("created_at"), T("updated_at")],
    "landing_pages": [*A("title", "url"), T("publish_at"), T("created_at"), T("updated_at")],
    "podcasts": [
        *A("title", "description"), E("language", V.PODCAST_LANGUAGES),
        *A("owner_email", "author"), E("status", V.PODCAST_STATUS),
        E("show_type", V.PODCAST_SHOW_TYPES),
        *A("thumbnail_url", "cover_art_url", "categories", "directories", "migrated",
           "migrated_to_url", "public", "ready", "distribution_ready", "url"),
        T("created_at"), T("updated_at"),
    ],
}

RELATIONSHIPS: dict[str, list[Rel]] = {
    "sites": [],
    "blogs": [site_rel("blogs")],
    "contacts": [
        Rel("customer", "customers", False, one("customer")),
        Rel("offers", "offers", True, link("contacts.offers"), links_self=True),
        site_rel("contacts"),
        Rel("tags", "contact_tags", True, link("contacts.tags")),
    ],
    "customers": [
        Rel("contact", "contacts", False, one("contact")),
        site_rel("customers"),
        Rel("offers", "offers", True, link("customers.offers"), list_data=False, links_self=True),
        Rel("products", "products", True, link("customers.products")),
    ],
    "products": [site_rel("products")],
    "offers": [site_rel("offers"), Rel("products", "products", True, link("offers.products"))],
    "courses": [
        Rel("site", "sites", False, one("site")),
        Rel("offers", "offers", True, link("courses.offers")),
        Rel("modules", "modules", True, fk("modules", "course")),
        Rel("lessons", "lessons", True, fk("lessons", "course")),
    ],
    "modules": [
        Rel("course", "courses", False, one("course")),
        Rel("lessons", "lessons", True, fk("lessons", "module")),
    ],
    "lessons": [
        Rel("module", "modules", False, one("module")),
        Rel("media", "media", True, fk("media", "lesson")),
    ],
    "media": [Rel("lesson", "lessons", False, one("lesson"))],
    "forms": [
        site_rel("forms"),
        Rel("offer", "offers", False, one("offer")),
        Rel("fields", "fields", True, fk("fields", "form")),
        Rel("contact_tags", "contact_tags", True, link("forms.contact_tags")),
    ],
    "fields": [Rel("form", "forms", False, one("form"))],
    "custom_fields": [site_rel("custom_fields")],
    "form_submissions": [
        site_rel("form_submissions"), Rel("form", "forms", False, one("form")),
    ],
    "purchases": [
        Rel("offer", "offers", False, one("offer")),
        Rel("customer", "customers", False, one("customer")),
        Rel("transactions", "transactions", True, PAID),
        Rel("products", "products", True, ("via", "offer", "offers.products")),
    ],
    "orders": [
        site_rel("orders"),
        Rel("customer", "customers", False, one("customer")),
        Rel("order_items", "order_items", True, fk("order_items", "order")),
    ],
    "order_items": [Rel("order", "orders", False, one("order")), site_rel("order_items")],
    "transactions": [
        Rel("customer", "customers", False, one("customer")),
        # deprecated (A8): filled only for a single-offer transaction, null on a bundle
        Rel("offer", "offers", False, one("offer")),
        Rel("purchases", "purchases", True, PAID),
    ],
    "contact_tags": [site_rel("contact_tags")],
    "blog_posts": [Rel("blog", "blogs", False, one("blog"))],
    "website_pages": [site_rel("website_pages")],
    "payouts": [site_rel("payouts")],
    "hooks": [site_rel("hooks")],
    "contact_notes": [Rel("contact", "contacts", False, one("contact"))],
    "landing_pages": [site_rel("landing_pages")],
    "podcasts": [site_rel("podcasts")],
}

PAYOUTS = "payouts"  # internal type; public type and path `<brand>_payments_payouts` (A1)
# attributes only a single read shows (addendum A3: a payout's lines)
DETAIL_ATTRS: dict[str, tuple[str, ...]] = {PAYOUTS: ("transactions",)}


def public_type(type_name: str, brand: str) -> str:
    """The JSON:API type (and collection path) of an internal type under a brand word."""
    return f"{brand}_payments_payouts" if type_name == PAYOUTS else type_name


# webhook payloads show orders.payment_transactions (spec 2.10); lists and reads do not
ORDER_PAYMENTS = Rel("payment_transactions", "transactions", True, fk("transactions", "order"))

ATTR_INDEX: dict[str, dict[str, Attr]] = {t: {a.name: a for a in attrs}
                                          for t, attrs in ATTRIBUTES.items()}
REL_INDEX: dict[str, dict[str, Rel]] = {t: {r.name: r for r in rels}
                                        for t, rels in RELATIONSHIPS.items()}


def site_of(store: Store, type_name: str) -> np.ndarray:
    """Site row of every record of a type (for filter[site_id])."""
    table = store.tables[type_name]
    cols = table.cols
    if "site" in cols:
        return cols["site"]
    if type_name == "blog_posts":
        return store.tables["blogs"].cols["site"][cols["blog"]]
    if type_name == "transactions":
        return store.tables["customers"].cols["site"][cols["customer"]]
    raise KeyError(f"{type_name} has no site")


__all__ = ["ATTRIBUTES", "ATTR_INDEX", "NULL", "RELATIONSHIPS", "REL_INDEX", "Attr", "Rel"]
