"""The endpoints: THE per-resource facts table (`RESOURCES`), and the raw tables' types (`TYPES`).

Everything endpoint-specific lives here as data: the source, client, pagination, incremental and
normalisation code is generic and reads these facts. Adding a collection = adding one entry.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from typing import Literal

DAY_S = 86_400

# ---------------------------------------------------------------- column types
# Logical column types; arrow_tables.py maps them to arrow, hints.py to warehouse types.
ColumnType = Literal["text", "bigint", "bool", "timestamp", "decimal", "double", "json"]

# Attribute name -> type, shared by every resource (the API names things consistently).
ATTRIBUTE_TYPES: dict[str, ColumnType] = {
    # integers / counts
    "product_type_id": "bigint",
    "position": "bigint",
    "order_number": "bigint",
    "quantity": "bigint",
    "members_aggregate_count": "bigint",
    "sign_in_count": "bigint",
    "multipay_payments_made": "bigint",
    "item_id": "bigint",
    # booleans
    "subscribed": "bool",
    "recurring_offer": "bool",
    "subscription": "bool",
    "one_time": "bool",
    "single": "bool",
    "free": "bool",
    "default": "bool",
    "required": "bool",
    "editable": "bool",
    "opt_in": "bool",
    # timestamps not ending in _at
    "initiated_date": "timestamp",
    "estimated_arrival_date": "timestamp",
    # money in major units: exact decimals
    "amount": "decimal",
    "net_revenue": "decimal",
    # not money
    "duration_in_minutes": "double",
    # objects and arrays
    "socials": "json",
    "raw_extra_contact_information": "json",
    "categories": "json",
    "directories": "json",
    # podcast flags
    "migrated": "bool",
    "public": "bool",
    "ready": "bool",
    "distribution_ready": "bool",
    # integer-or-string in the spec: keep the text, never lose leading zeros
    "resource_id": "text",
}

DECIMAL_PRECISION = (38, 9)
# Decimal columns are money in major units unless named here: money is stored rounded half-even
# to the cent (`MONEY_SCALE` places), a rate at the column's full scale; where rounding changed
# the value, the exact text the API sent is kept beside it in `<column>_raw` (values.read_decimal)
MONEY_SCALE = 2
RATE_COLUMNS: frozenset[str] = frozenset({"exchange_rate"})
RAW_SUFFIX = "_raw"


def decimal_scale(name: str) -> int:
    """Places a decimal column is stored at: a rate's full scale, money's cents."""
    return DECIMAL_PRECISION[1] if name in RATE_COLUMNS else MONEY_SCALE

# Columns the optional `--pii hash|drop` applies to (every table, incl. included/link tables).
PII_COLUMNS: frozenset[str] = frozenset(
    {
        "email",
        "phone_number",
        "business_number",
        "address_line_1",
        "address_line_2",
        "address_city",
        "address_state",
        "address_country",
        "address_zip",
        "billing_address_zip",
        "cardholder_name",
        "owner_email",
        "customer_name",
        "customer_email",
    }
)
# Columns personal only in some tables: a person's `name` (a contact's, a customer's, the name a
# form submitter typed, the credential's user), never a tag's, an offer's or a product's.
PII_TABLE_COLUMNS: dict[str, frozenset[str]] = {
    table: frozenset({"name"}) for table in ("contacts", "customers", "form_submissions", "me")
}

# every column `--pii` may change in some table (what a comparison with a clear run leaves out)
PII_ANY_COLUMNS: frozenset[str] = PII_COLUMNS.union(*PII_TABLE_COLUMNS.values())


@functools.lru_cache(maxsize=1024)
def pii_columns(table: str | None) -> frozenset[str]:
    """The columns `--pii hash|drop` applies to in `table` (None: the every-table ones)."""
    return PII_COLUMNS | PII_TABLE_COLUMNS.get(table or "", frozenset())


@functools.lru_cache(maxsize=4096)
def column_type(name: str) -> ColumnType:
    """Type of an attribute column: explicit table first, then naming conventions, else text.

    Conventions make schema drift safe: a new `foo_at` is a timestamp, a new `foo_in_cents` bigint.
    """
    explicit = ATTRIBUTE_TYPES.get(name)
    if explicit:
        return explicit
    if name.endswith("_in_cents"):
        return "bigint"
    if name.endswith("_at"):
        return "timestamp"
    if name.endswith("_count"):
        return "bigint"
    return "text"


# ------------------------------------------------------------ JSON:API types
LINE_KEY = "line_number"  # 1-based position of a line in its array


@dataclass(frozen=True)
class LineTable:
    """An attribute holding an array of plain objects (not resources): one row per element, in
    a table keyed by (`<parent>_id`, `line_number`) whose rows for a parent are replaced as a
    whole whenever the parent is read with that attribute (merge key `<parent>_id`)."""

    attribute: str  # e.g. "transactions" on a payout detail
    table: str  # e.g. "payout_lines"
    parent_column: str  # e.g. "payout_id"
    columns: tuple[tuple[str, ColumnType], ...]  # declared fields, in order (others: by value)

    @property
    def column_types(self) -> dict[str, ColumnType]:
        return dict(self.columns)


@dataclass(frozen=True)
class TypeInfo:
    """Where records of one JSON:API `type` land, and how they are named in link columns."""

    table: str
    singular: str
    attributes: tuple[str, ...] = ()
    to_one: tuple[str, ...] = ()  # relationship names that become `<rel>_id`
    dimension: bool = False  # full-refresh table carrying `_is_deleted`
    lines: LineTable | None = None  # an array attribute that becomes its own table
    # people and their notes: the platform deletes them (DELETE /v1/contacts/{id}), so the
    # weekly full listing marks `_is_deleted` as a dimension's does (pipelines/erasure.py)
    deletable: bool = False

    @property
    def flags_deleted(self) -> bool:
        """Rows carry `_is_deleted`, set after a complete listing (deletions.py)."""
        return self.dimension or self.deletable


# Payout details itemise the payout (addendum A3, contract C2): amounts in major units.
PAYOUT_LINES = LineTable(
    "transactions", "payout_lines", "payout_id",
    (
        ("transaction_type", "text"), ("pricing_type", "text"),
        ("amount", "decimal"), ("sales_tax", "decimal"), ("fee", "decimal"), ("net", "decimal"),
        ("currency", "text"), ("presented_amount", "decimal"), ("presented_currency", "text"),
        ("exchange_rate", "decimal"), ("customer_id", "text"), ("customer_name", "text"),
        ("customer_email", "text"), ("offer_ids", "json"), ("offer_titles", "json"),
        ("provider", "text"), ("payment_method", "text"), ("created_at", "timestamp"),
        ("coupon_used", "text"), ("quantity", "bigint"),
        ("order_number", "text"),  # `ORD-12345` or `12345`, as sent (orders carry an integer)
    ),
)


PAYOUTS_SUFFIX = "_payments_payouts"
PAYOUTS_TYPE = f"platform{PAYOUTS_SUFFIX}"  # the base spec's neutral word; live: the brand
DEFAULT_PAYOUTS_PATH = f"/{PAYOUTS_TYPE}"

SOURCE_NAME = "creator_platform"  # the dlt source, its config section and its schema

_ADDRESS = (
    "address_line_1",
    "address_line_2",
    "address_city",
    "address_state",
    "address_country",
    "address_zip",
)

TYPES: dict[str, TypeInfo] = {
    t.table if k is None else k: t
    for k, t in [
        (None, TypeInfo(
            # `title`, `subdomain`, `created_at`, `updated_at` on the live platform (addendum A4)
            "sites", "site",
            ("title", "name", "subdomain", "currency", "timezone", "created_at", "updated_at"),
            dimension=True,
        )),
        (None, TypeInfo(
            "contacts", "contact",
            ("name", "email", "phone_number", "business_number", "subscribed", *_ADDRESS,
             "external_user_id", "custom_1", "custom_2", "custom_3", "created_at", "updated_at"),
            ("customer", "site"), deletable=True,
        )),
        (None, TypeInfo(
            "customers", "customer",
            ("name", "email", "avatar", "external_user_id", "public_bio", "public_location",
             "public_website", "socials", "net_revenue", "sign_in_count", "last_request_at",
             "bounced_at", "created_at", "updated_at"),
            ("contact", "site"), deletable=True,
        )),
        (None, TypeInfo(
            "products", "product",
            ("title", "created_at", "description", "status", "members_aggregate_count",
             "product_type_name", "product_type_id", "publish_status", "thumbnail_url", "url",
             "image_url"),
            ("site",), dimension=True,
        )),
        (None, TypeInfo(
            "offers", "offer",
            ("title", "description", "internal_title", "currency", "price_in_cents",
             "payment_type", "token", "payment_method", "price_description", "checkout_url",
             "recurring_offer", "subscription", "one_time", "single", "free", "image_url",
             "created_at"),
            ("site",), dimension=True,
        )),
        (None, TypeInfo(
            "courses", "course", ("title", "created_at", "description", "thumbnail_url"),
            ("site",), dimension=True,
        )),
        (None, TypeInfo(
            "modules", "module",
            ("title", "description", "position", "poster_image_url", "publishing_option"),
            ("course", "site"), dimension=True,
        )),
        (None, TypeInfo(
            "lessons", "lesson", ("title", "position", "status", "publishing_option"),
            ("course", "module", "site"), dimension=True,
        )),
        (None, TypeInfo(
            "media", "media", ("title", "kind", "duration_in_minutes"), ("lesson", "site"),
            dimension=True,
        )),
        (None, TypeInfo(
            "forms", "form", ("title", "default", "webhook_url", "url", "created_at", "updated_at"),
            ("site", "offer"), dimension=True,
        )),
        (None, TypeInfo(
            "fields", "field",
            ("title", "type", "required", "handle", "select_options", "editable", "created_at",
             "updated_at"),
            ("form", "site"), dimension=True,
        )),
        (None, TypeInfo(
            "custom_fields", "custom_field", ("title", "handle", "type", "required"), ("site",),
            dimension=True,
        )),
        (None, TypeInfo(
            "form_submissions", "form_submission",
            ("name", "email", "phone_number", "business_number", *_ADDRESS, "custom_1",
             "custom_2", "custom_3", "created_at"),
            ("site", "form"),
        )),
        (None, TypeInfo(
            "purchases", "purchase",
            ("amount_in_cents", "payment_type", "multipay_payments_made", "opt_in",
             "raw_extra_contact_information", "currency", "effective_start_at",
             "cardholder_name", "billing_address_zip", "deactivated_at", "deactivation_reason",
             "coupon_code", "source", "referrer", "quantity", "created_at", "updated_at"),
            ("offer", "customer", "site"),
        )),
        (None, TypeInfo(
            "orders", "order",
            ("order_number", "currency_code", "fulfilled_at", "created_at",
             "total_price_in_cents", "subtotal_in_cents", "sales_tax_amount_in_cents",
             "discount_amount_in_cents", "formatted_total_price", "formatted_subtotal",
             "currency_symbol"),
            ("site", "customer"),
        )),
        (None, TypeInfo(
            "order_items", "order_item",
            ("quantity", "currency_code", "item_type", "item_id", "title", "fulfilled_at",
             "created_at", "total_price_in_cents", "subtotal_in_cents",
             "sales_tax_amount_in_cents", "discount_amount_in_cents", "formatted_total_price",
             "formatted_subtotal", "currency_symbol"),
            ("order", "site"),
        )),
        (None, TypeInfo(
            "transactions", "transaction",
            ("provider", "action", "state", "payment_type", "amount_in_cents",
             "sales_tax_in_cents", "payment_fee_in_cents", "currency", "currency_symbol",
             "formatted_amount", "settlement_amount_in_cents", "settlement_fee_amount_in_cents",
             "settlement_currency", "created_at"),
            ("customer", "offer", "site"),
        )),
        (PAYOUTS_TYPE, TypeInfo(
            "payouts", "payout",
            ("status", "amount", "currency", "initiated_date", "estimated_arrival_date",
             "bank_account"),
            ("site",), lines=PAYOUT_LINES,
        )),
        (None, TypeInfo("contact_tags", "contact_tag", ("name", "created_at"), ("site",), dimension=True)),
        (None, TypeInfo(
            "blog_posts", "blog_post",
            ("title", "url", "content", "slug", "page_title", "page_description", "published_at",
             "created_at", "updated_at", "image_url", "image_alt_text", "tags"),
            ("blog", "site"),
        )),
        (None, TypeInfo(
            "website_pages", "website_page", ("title", "url", "created_at", "updated_at"),
            ("site",), dimension=True,
        )),
        (None, TypeInfo(
            "hooks", "hook", ("event", "target_url", "resource_id", "created_at", "updated_at"),
            ("site",), dimension=True,
        )),
        (None, TypeInfo(
            "contact_notes", "contact_note", ("body", "created_at", "updated_at"),
            ("contact", "site"), deletable=True,
        )),
        (None, TypeInfo(
            "landing_pages", "landing_page",
            ("title", "url", "publish_at", "created_at", "updated_at"), ("site",), dimension=True,
        )),
        (None, TypeInfo(
            "podcasts", "podcast",
            ("title", "description", "language", "owner_email", "author", "status", "show_type",
             "thumbnail_url", "cover_art_url", "categories", "directories", "migrated",
             "migrated_to_url", "public", "ready", "distribution_ready", "url", "created_at",
             "updated_at"),
            ("site",), dimension=True,
        )),
        # the credential's user (GET /v1/me): whatever type the API gives it, its one row
        # lands here (see Resource.single)
        (None, TypeInfo("me", "me", ("name", "email", "initials", "role_level"))),
    ]
}
LINE_TABLES: dict[str, LineTable] = {
    info.lines.table: info.lines for info in TYPES.values() if info.lines is not None
}

# Some payloads use a plural type we have not declared: route them by the type name itself.
TABLE_TO_TYPE: dict[str, str] = {info.table: jtype for jtype, info in TYPES.items()}


def type_info(jtype: str) -> TypeInfo:
    """Info for a JSON:API type; unknown types get a table named after the type (schema drift).

    Payouts carry the platform's brand word in their type (`<brand>_payments_payouts`,
    addendum A1): any such type is a payout.
    """
    info = TYPES.get(jtype)
    if info is not None:
        return info
    if jtype.endswith(PAYOUTS_SUFFIX):
        return TYPES[PAYOUTS_TYPE]
    singular = jtype[:-1] if jtype.endswith("s") else jtype
    return TypeInfo(jtype, singular)


# Link tables whose child column is not simply `<singular of the related type>_id`.
LINK_TABLES: dict[tuple[str, str], tuple[str, str]] = {
    # (parent table, relationship) -> (link table, child type)
    ("contacts", "tags"): ("contacts_tags", "contact_tags"),
    ("forms", "contact_tags"): ("forms_contact_tags", "contact_tags"),
    ("orders", "payment_transactions"): ("orders_payment_transactions", "transactions"),
    # the purchases a transaction pays: one, or several for a bundle (A8); the deprecated
    # `offer` is null on a bundle, so the models credit offers through this link
    ("transactions", "purchases"): ("transactions_purchases", "purchases"),
}


def link_table(parent_table: str, relationship: str, child_type: str | None) -> tuple[str, str, str]:
    """(link table, parent column, child column) for a to-many relationship."""
    parent = type_info(TABLE_TO_TYPE.get(parent_table, parent_table))
    name, declared_child = LINK_TABLES.get(
        (parent_table, relationship), (f"{parent_table}_{relationship}", child_type or relationship)
    )
    child = type_info(child_type or declared_child)
    return name, f"{parent.singular}_id", f"{child.singular}_id"


# ------------------------------------------------------------ collections
MetaShape = Literal["default", "purchases", "payouts"]
Strategy = Literal[
    "full",  # list everything each run; dimension tables get `_is_deleted`
    "updated_since",  # server-side updated_at filter, cursor = max(updated_at)
    "created_since",  # server-side created_at filter (timestamp), with look-back
    "date_range",  # start_date (ISO date) filter, with look-back
    "created_in_last",  # filter[created_in_last]=N days from the server clock, with look-back
    "newest_first",  # no server filter: newest first by the cursor field, read down to `since`
]
# How a windowed (incremental, not full) listing is read, so that a run with nothing new costs
# one page: "asc" reads the window oldest first (a precise server filter bounds it); "desc"
# sorts by `-<cursor_field>` and stops after the first page older than the window; "tail" is
# for endpoints without a sort whose default order is oldest first: page 1, then the last
# pages backwards until one is older than the window (order checked at run time).
ListOrder = Literal["asc", "desc", "tail"]

MINUTE_S = 60
# Look-back of ordinary runs on timestamp cursors: only the platform's commit lag (a record
# stamped during a request but visible when it commits, at most a request timeout later), since
# the cursor never passes the server clock at the start of a listing; filters are inclusive, so
# records stamped at the cursor are read again anyway. Longer look-backs (edits of records that
# can only be windowed on creation time, late-completing payments) run on "deep" runs, once per
# `deep_every_s`, and the periodic full refresh covers the rest.
RECENT_LOOKBACK_S = MINUTE_S


@dataclass(frozen=True)
class Incremental:
    strategy: Strategy = "full"
    cursor_field: str | None = None
    filter_param: str | None = None  # e.g. filter[updated_at_gte]
    lookback_s: int = 0  # look-back of deep runs (configurable: `lookback_days`)
    full_refresh_every_s: int | None = None  # periodic full refresh for look-back resources
    # ordinary runs look back only this far (never more than `lookback_s`) ...
    recent_lookback_s: int = RECENT_LOOKBACK_S
    # ... and a deep run with the full `lookback_s` comes this often: daily, an hour early so
    # that a nightly schedule's jitter does not skip a day (nightly runs are then all deep)
    deep_every_s: int = DAY_S - 3600
    order: ListOrder = "asc"  # how windowed listings are read (see ListOrder)
    # edits of older records show in no window, only in a full listing (no change filter or
    # sort: contacts, customers). A listing stopped across a due full listing starts over,
    # and its catch-up is that full listing (checkpoint.py)
    edits_only_in_full: bool = False


@dataclass(frozen=True)
class ChangeFeed:
    """A second, descending listing for a mutable field that has its own filter and sort.

    Orders have no `updated_at`, but fulfilment can come months after creation: listing
    `fulfilled_at_null=false` by `-fulfilled_at` until before the last cursor finds them all.
    """

    params: tuple[tuple[str, str], ...]
    sort: str  # "-<field>"
    field: str
    lookback_s: int = 3600


@dataclass(frozen=True)
class Resource:
    """One collection endpoint and how we read it."""

    name: str  # dlt resource name == primary table name
    path: str  # under /v1
    jtype: str  # JSON:API type of `data`
    meta: MetaShape = "default"
    takes_page_size: bool = True  # does the endpoint accept page[size]?
    sort: str | None = None  # stable ascending sort key, when the endpoint allows one
    site_scoped: bool = True  # send filter[site_id]
    incremental: Incremental = field(default_factory=Incremental)
    # include=... groups; "detail": one GET path/{id}?include=<group> per record and group (an
    # empty group: a plain single read, for what only the record's own read carries)
    include: tuple[tuple[str, ...], ...] = ()
    # smaller groups for records whose `include` read the platform answers with a 500 (it cannot
    # build some include combinations for large records); remembered per record in state
    include_split: tuple[tuple[str, ...], ...] = ()
    include_via: Literal["list", "detail"] = "list"
    # on incremental runs, re-read details only of records with one of these fields >= the
    # previous run's server time (new or changed since); full runs re-read all
    detail_if_changed: tuple[str, ...] = ()
    # re-read every record's detail periodically (`full_refresh_every_days`), for changes the
    # list record does not show; False: only new records and records whose list record changed
    detail_refresh: bool = True
    # a detail read's line array (its type's `lines`: a payout's, thousands of lines in one
    # body at `large`) is parsed and normalised in parts as it is read, never whole
    # (linestream.py; docs/performance.md#memory)
    stream_lines: bool = False
    # the single read authorises by site, as the list does: send the listing's
    # `filter[site_id]` on every detail read (a payout's, addendum A8)
    detail_site: bool = False
    change_feed: ChangeFeed | None = None  # incremental runs also read this (see ChangeFeed)
    finance: bool = False  # may be frozen by the `freeze_finance_schema` option
    # dimension tables a complete listing of this resource fully covers (for `_is_deleted`)
    owns: tuple[str, ...] = ()
    # OAuth scope a credential needs to read it (None: any token); a credential whose token
    # lists scopes without this one skips the resource with a notice
    scope: str | None = None
    # the setting users change when the platform serves this under another path (named in
    # the error when the path answers 404)
    path_setting: str | None = None
    single: bool = False  # GET path answers one object (not a list): a one-row table, replaced
    # how to read the same records when `path` answers 404 (remembered in state): another
    # endpoint's records and includes, keeping only the tables in `writes`
    fallback: Resource | None = None
    writes: tuple[str, ...] = ()  # tables kept from what is read (empty: all)

    @property
    def complete_tables(self) -> tuple[str, ...]:
        return self.owns or ((self.table,) if type_info(self.jtype).flags_deleted else ())

    @property
    def table(self) -> str:
        return type_info(self.jtype).table

    @property
    def reads_details(self) -> bool:
        """One single read per (new or changed) record, for what the list does not carry."""
        return bool(self.include) and self.include_via == "detail"

    @property
    def streamed_path(self) -> tuple[str, ...] | None:
        """Where a detail body holds the line array read as a stream (`stream_lines`)."""
        lines = type_info(self.jtype).lines
        if not self.stream_lines or lines is None:
            return None
        return ("data", "attributes", lines.attribute)

    @property
    def exact_decimals(self) -> bool:
        """Parse JSON numbers as Decimal (money in major units)."""
        return self.meta == "payouts"


ORDERS_WINDOW = Incremental(
    "created_since", "created_at", "filter[created_at_gteq]",
    lookback_s=14 * DAY_S, full_refresh_every_s=7 * DAY_S,
)
# order fulfilment comes late: each run reads what was fulfilled since the last one
FULFILMENT_FEED = ChangeFeed((("filter[fulfilled_at_null]", "false"),), "-fulfilled_at", "fulfilled_at")

RESOURCES: dict[str, Resource] = {
    r.name: r
    for r in [
        Resource("sites", "/sites", "sites", site_scoped=False),
        Resource(
            "contacts", "/contacts", "contacts", sort="created_at",
            incremental=Incremental(
                "created_in_last", "created_at", "filter[created_in_last]",
                lookback_s=30 * DAY_S, full_refresh_every_s=7 * DAY_S, order="desc",
                edits_only_in_full=True,
            ),
            scope="view:contacts",
        ),
        Resource(
            "customers", "/customers", "customers", sort="created_at",
            incremental=Incremental(
                "created_in_last", "created_at", "filter[created_in_last]",
                lookback_s=30 * DAY_S, full_refresh_every_s=7 * DAY_S, order="desc",
                edits_only_in_full=True,
            ),
            scope="view:customers",
        ),
        Resource("products", "/products", "products", scope="view:products"),
        Resource("offers", "/offers", "offers", scope="view:offers"),
        Resource(
            "courses", "/courses", "courses",
            include=(("modules", "lessons", "lessons.media"),), include_via="detail",
            include_split=(("modules",), ("lessons.media",)),
            owns=("courses", "modules", "lessons", "media"), scope="view:courses",
        ),
        Resource(
            "forms", "/forms", "forms", include=(("fields", "contact_tags"),), include_via="detail",
            owns=("forms", "fields"), scope="view:forms",
        ),
        Resource("custom_fields", "/custom_fields", "custom_fields", scope="view:custom_fields"),
        Resource(
            # submissions never change: newest first down to the last cursor
            "form_submissions", "/form_submissions", "form_submissions", sort="created_at",
            incremental=Incremental(
                "newest_first", "created_at", lookback_s=RECENT_LOOKBACK_S,
                full_refresh_every_s=7 * DAY_S, order="desc",
            ),
            scope="view:form_submissions",
        ),
        Resource(
            "purchases", "/purchases", "purchases", meta="purchases", sort="updated_at",
            incremental=Incremental(
                "updated_since", "updated_at", "filter[updated_at_gte]", lookback_s=3600,
            ),
            finance=True, scope="view:purchases",
        ),
        Resource(
            # order lines come from order_items (its `order` relationship): the list's
            # order_items link data is not kept, `orders_order_items` is the fallback's alone
            "orders", "/orders", "orders", sort="created_at", incremental=ORDERS_WINDOW,
            change_feed=FULFILMENT_FEED, finance=True, scope="view:orders", writes=("orders",),
        ),
        Resource(
            # the list has no created_at filter but sorts on it (addendum A2): newest first
            # down to the window, plus the fulfilment feed, like orders
            "order_items", "/order_items", "order_items", sort="created_at",
            incremental=Incremental(
                "newest_first", "created_at", lookback_s=14 * DAY_S,
                full_refresh_every_s=7 * DAY_S, order="desc",
            ),
            change_feed=FULFILMENT_FEED, finance=True, scope="view:orders",
            # a platform without the list: each new or changed order read with its items
            fallback=Resource(
                "order_items", "/orders", "orders", sort="created_at", incremental=ORDERS_WINDOW,
                include=(("order_items",),), include_via="detail",
                detail_if_changed=("created_at", "fulfilled_at"), change_feed=FULFILMENT_FEED,
                finance=True, scope="view:orders", writes=("order_items", "orders_order_items"),
            ),
        ),
        Resource(
            "transactions", "/transactions", "transactions",
            incremental=Incremental(
                # the list shows a payment once completed, stamped when it began: 2-day look-back
                "date_range", "created_at", "filter[start_date]", lookback_s=2 * DAY_S,
                full_refresh_every_s=7 * DAY_S, order="tail",
            ),
            finance=True, scope="view:transactions",
        ),
        Resource(
            "payouts", DEFAULT_PAYOUTS_PATH, PAYOUTS_TYPE,
            meta="payouts", takes_page_size=False,
            incremental=Incremental(
                # status moves pending -> in_transit -> paid within ~3 days; failures later
                "date_range", "initiated_date", "filter[start_date]", lookback_s=14 * DAY_S,
                full_refresh_every_s=7 * DAY_S, recent_lookback_s=3 * DAY_S, order="tail",
            ),
            # the detail itemises the payout (lines): read once per new payout and again only
            # when its list record (status) changed
            include=((),), include_via="detail", detail_refresh=False, stream_lines=True,
            detail_site=True,
            finance=True, scope="view:payouts", path_setting="payouts_path",
        ),
        Resource("contact_tags", "/contact_tags", "contact_tags", scope="view:contacts"),
        Resource(
            "blog_posts", "/blog_posts", "blog_posts",
            incremental=Incremental(
                "updated_since", "updated_at", "filter[updated_at_gt]", lookback_s=3600,
            ),
            scope="view:blog_posts",
        ),
        Resource("website_pages", "/website_pages", "website_pages", sort="created_at",
                 scope="view:website_pages"),
        Resource("hooks", "/hooks", "hooks"),
        Resource(
            # no filter on time, but sortable (addendum A5): edits and new notes, newest
            # first by updated_at down to the window; full listing every 7 days
            "contact_notes", "/contact_notes", "contact_notes", sort="created_at",
            incremental=Incremental(
                "newest_first", "updated_at", lookback_s=RECENT_LOOKBACK_S,
                full_refresh_every_s=7 * DAY_S, order="desc",
            ),
            scope="view:contacts",
        ),
        # no time filter or sort (addendum A5): small, listed in full, `_is_deleted`
        Resource("landing_pages", "/landing_pages", "landing_pages", scope="view:landing_pages"),
        Resource("podcasts", "/podcasts", "podcasts", scope="view:podcasts"),
        Resource("me", "/me", "me", site_scoped=False, single=True),
    ]
}
KNOWN_SCOPES = frozenset(r.scope for r in RESOURCES.values() if r.scope)

FINANCE_TABLES = frozenset(
    {"transactions", "payouts", "payout_lines", "purchases", "orders", "order_items"}
)


def get_resource(name: str) -> Resource:
    try:
        return RESOURCES[name]
    except KeyError:
        known = ", ".join(RESOURCES)
        raise ValueError(f"unknown resource {name!r}; known resources: {known}") from None


def with_paths(resource: Resource, payouts: str | None) -> Resource:
    """The resource with its path taken from settings (today: the payouts path, normalised by
    its setting's kind, `common.setting_kinds.api_path`)."""
    if resource.path_setting == "payouts_path" and payouts:
        return replace(resource, path=payouts)
    return resource
