"""The raw tables the models read, with the columns and types they rely on.

This is the one place that knows the warehouse contract (docs/architecture.md) on the models'
side. dlt only creates a column once it has seen a non-null value, and only creates a table once it
has seen a row, so a small or young account may lack some of them. The runner reads this table
to project every expected column, typed NULL when absent, so the SQL never breaks on a column
that simply has not appeared yet.
"""

from __future__ import annotations

from dataclasses import dataclass

TS = "timestamptz"
TEXT = "text"
BIG = "bigint"
BOOL = "boolean"
DEC = "decimal(38, 9)"
DBL = "double"
JSONT = "json"

# Columns every resource table carries (from the loader).
_META = {"_extracted_at": TS, "_dlt_load_id": TEXT}
_DIM = {**_META, "_is_deleted": BOOL}


def _link(parent: str, child: str) -> dict[str, str]:
    return {parent: TEXT, child: TEXT, "site_id": TEXT, "_dlt_load_id": TEXT}


@dataclass(frozen=True)
class SourceTable:
    """One raw table: its columns (name -> DuckDB type) and `key`, what names a record (staging
    keeps the latest extraction of each key). Any table may be absent: what the figures lack is
    said by `analytics.data_coverage`, not by a failed build."""

    name: str
    columns: dict[str, str]
    key: tuple[str, ...] = ("id",)
    # why a healthy sync may never create the table; None: its absence means data is missing
    absent_when: str | None = None


SOURCE_TABLES: dict[str, SourceTable] = {
    t.name: t
    for t in [
        SourceTable(
            "sites",
            {"id": TEXT, "name": TEXT, "subdomain": TEXT, "currency": TEXT, "timezone": TEXT,
             "created_at": TS, **_DIM},
        ),
        SourceTable(
            "customers",
            {"id": TEXT, "site_id": TEXT, "contact_id": TEXT, "name": TEXT, "email": TEXT,
             "external_user_id": TEXT, "net_revenue": DEC, "sign_in_count": BIG,
             "last_request_at": TS, "created_at": TS, "updated_at": TS, **_DIM},
        ),
        SourceTable(
            "products",
            {"id": TEXT, "site_id": TEXT, "title": TEXT, "status": TEXT, "publish_status": TEXT,
             "product_type_name": TEXT, "product_type_id": BIG, "created_at": TS, **_DIM},
        ),
        SourceTable(
            "offers",
            {"id": TEXT, "site_id": TEXT, "title": TEXT, "internal_title": TEXT, "currency": TEXT,
             "price_in_cents": BIG, "payment_type": TEXT, "subscription": BOOL,
             "recurring_offer": BOOL, "one_time": BOOL, "single": BOOL, "free": BOOL, **_DIM},
        ),
        SourceTable(
            "courses",
            {"id": TEXT, "site_id": TEXT, "title": TEXT, "created_at": TS, **_DIM},
        ),
        SourceTable(
            "modules",
            {"id": TEXT, "site_id": TEXT, "course_id": TEXT, "title": TEXT, "position": BIG,
             "publishing_option": TEXT, **_DIM},
        ),
        SourceTable(
            "lessons",
            {"id": TEXT, "site_id": TEXT, "course_id": TEXT, "module_id": TEXT, "title": TEXT,
             "position": BIG, "status": TEXT, "publishing_option": TEXT, **_DIM},
        ),
        SourceTable(
            "media",
            {"id": TEXT, "site_id": TEXT, "lesson_id": TEXT, "duration_in_minutes": DBL, **_DIM},
        ),
        SourceTable(
            "purchases",
            {"id": TEXT, "site_id": TEXT, "customer_id": TEXT, "offer_id": TEXT,
             "amount_in_cents": BIG, "currency": TEXT, "payment_type": TEXT,
             "multipay_payments_made": BIG, "quantity": BIG, "coupon_code": TEXT,
             "effective_start_at": TS, "deactivated_at": TS, "deactivation_reason": TEXT,
             "created_at": TS, "updated_at": TS, **_META},
        ),
        SourceTable(
            "orders",
            {"id": TEXT, "site_id": TEXT, "customer_id": TEXT, "order_number": BIG,
             "currency_code": TEXT, "fulfilled_at": TS, "created_at": TS,
             "total_price_in_cents": BIG, "subtotal_in_cents": BIG,
             "sales_tax_amount_in_cents": BIG, "discount_amount_in_cents": BIG, **_META},
        ),
        SourceTable(
            "order_items",
            {"id": TEXT, "site_id": TEXT, "order_id": TEXT, "quantity": BIG,
             "currency_code": TEXT, "item_type": TEXT, "item_id": BIG, "title": TEXT,
             "fulfilled_at": TS, "created_at": TS, "total_price_in_cents": BIG,
             "subtotal_in_cents": BIG, "sales_tax_amount_in_cents": BIG,
             "discount_amount_in_cents": BIG, **_META},
        ),
        SourceTable(
            "transactions",
            {"id": TEXT, "site_id": TEXT, "customer_id": TEXT, "offer_id": TEXT, "provider": TEXT,
             "action": TEXT, "state": TEXT, "payment_type": TEXT, "amount_in_cents": BIG,
             "sales_tax_in_cents": BIG, "payment_fee_in_cents": BIG, "currency": TEXT,
             "settlement_amount_in_cents": BIG, "settlement_fee_amount_in_cents": BIG,
             "settlement_currency": TEXT, "created_at": TS, **_META},
        ),
        SourceTable(
            "payouts",
            {"id": TEXT, "site_id": TEXT, "status": TEXT, "amount": DEC, "currency": TEXT,
             "initiated_date": TS, "estimated_arrival_date": TS, "bank_account": TEXT,
             # the amount as the API wrote it, where it was not whole cents (`amount` holds
             # it rounded half-even to the cent); absent until one such amount arrives
             "amount_raw": TEXT, **_META},
        ),
        SourceTable(
            # one row per resource: what its last sync did (docs/architecture.md); absent on
            # warehouses synced before it existed. `complete_through_at` (optional) is the
            # platform's clock when the last completed sync began listing the resource.
            "sync_resources",
            {"resource": TEXT, "status": TEXT, "reason": TEXT, "last_attempt_at": TS,
             "last_synced_at": TS, "rows_loaded": BIG, "complete_through_at": TS},
        ),
        SourceTable(
            # the records a sync set aside, a value that cannot be read (issue 40; written by
            # pipelines/rejected_records.py); absent until one is
            "rejected_records",
            {"resource": TEXT, "site_id": TEXT, "record_id": TEXT, "field": TEXT, "value": TEXT,
             "reason": TEXT, "rejected_at": TS},
            key=("resource", "site_id", "record_id"),
            absent_when="no sync has set a record aside",
        ),
        SourceTable(
            # per resource and site, the API's total its last complete listing read (issue 40;
            # written by pipelines/api_totals.py); absent until a sync writes one
            "api_totals",
            {"resource": TEXT, "site_id": TEXT, "table_name": TEXT, "api_total": BIG,
             "first_page_total": BIG, "read_at": TS, "listing_started_at": TS,
             "no_total_reason": TEXT},
            key=("resource", "site_id"),
            absent_when="no complete listing has read a total yet",
        ),
        # dlt's own record of loads: the fallback for when the data was synced
        SourceTable("_dlt_loads", {"load_id": TEXT, "status": BIG, "inserted_at": TS}),
        SourceTable(
            # one row per line of a payout detail (contract C2, docs/architecture.md); the
            # personal data and offer arrays of a line are not read by the models
            "payout_lines",
            {"payout_id": TEXT, "line_number": BIG, "site_id": TEXT, "transaction_type": TEXT,
             "pricing_type": TEXT, "amount": DEC, "sales_tax": DEC, "fee": DEC, "net": DEC,
             "currency": TEXT, "presented_amount": DEC, "presented_currency": TEXT,
             "exchange_rate": DEC, "customer_id": TEXT, "provider": TEXT, "payment_method": TEXT,
             "created_at": TS, "coupon_used": TEXT, "quantity": BIG, "order_number": TEXT,
             # money as written where it was not whole cents (see payouts' `amount_raw`)
             "amount_raw": TEXT, "sales_tax_raw": TEXT, "fee_raw": TEXT, "net_raw": TEXT,
             "presented_amount_raw": TEXT, **_META},
            key=("payout_id", "line_number"),
        ),
        SourceTable("customers_offers", _link("customer_id", "offer_id"),
                    absent_when="the customers list gives its offers as a link only (spec 2.2)"),
        SourceTable("customers_products", _link("customer_id", "product_id")),
        SourceTable("offers_products", _link("offer_id", "product_id")),
        # the payment of an order, as webhook deliveries name it (spec 2.10; lists do not)
        SourceTable("orders_payment_transactions", _link("order_id", "transaction_id"),
                    absent_when="only webhook deliveries (order_created) write it"),
        SourceTable("courses_offers", _link("course_id", "offer_id")),
        SourceTable("courses_modules", _link("course_id", "module_id")),
        SourceTable("courses_lessons", _link("course_id", "lesson_id")),
        SourceTable("modules_lessons", _link("module_id", "lesson_id")),
        SourceTable("lessons_media", _link("lesson_id", "media_id")),
        SourceTable(
            "purchases_transactions", _link("purchase_id", "transaction_id")
        ),
        SourceTable(
            "transactions_purchases", _link("transaction_id", "purchase_id")
        ),
        SourceTable("purchases_products", _link("purchase_id", "product_id")),
        SourceTable("orders_order_items", _link("order_id", "order_item_id"),
                    absent_when="only the fallback for a platform without the order_items list writes it"),
    ]
}
