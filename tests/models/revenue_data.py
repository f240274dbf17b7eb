"""A hand-built account for the revenue marts of issue 39, worked out by hand in
test_revenue_marts.py: an annual plan (tax included, Stripe: no fee stated) half refunded in its
third month, a monthly plan (the platform's processor: fee stated), an order paid through PayPal
(one item a product, one an offer of two products) and a sale nothing names."""

from __future__ import annotations

import datetime as dt
from typing import Any

from models_helpers import Rows, ts

S = "3000000001"
C1, C2, C3, C4 = "3100000001", "3100000002", "3100000003", "3100000004"
O_ANNUAL, O_MONTHLY = "3200000001", "3200000002"
PR1, PR2 = "3300000001", "3300000002"
AS_OF = dt.date(2024, 3, 31)


def _txn(tid: str, customer: str, created: str, action: str, amount: int, tax: int,
         provider: str, fee: int | None = None, payment_type: str = "one_time") -> dict[str, Any]:
    row = {"id": tid, "site_id": S, "customer_id": customer, "created_at": ts(created),
           "action": action, "state": "succeeded", "amount_in_cents": amount,
           "sales_tax_in_cents": tax, "currency": "usd", "provider": provider,
           "payment_type": payment_type}
    if fee is not None:
        row["payment_fee_in_cents"] = fee
    return row


def account() -> Rows:
    """An annual plan (tax included, Stripe: no fee stated) half refunded in its third month, a
    monthly plan (the platform's processor: fee stated), an order paid through PayPal (one item
    a product, one an offer of two products) and a sale nothing names."""
    noon = "T12:00:00+00:00"
    return {
        "sites": [{"id": S, "name": "Main", "currency": "USD", "timezone": "UTC"}],
        "customers": [{"id": c, "site_id": S} for c in (C1, C2, C3, C4)],
        "products": [{"id": PR1, "site_id": S, "title": "Course A"},
                     {"id": PR2, "site_id": S, "title": "Course B"}],
        "offers": [
            {"id": O_ANNUAL, "site_id": S, "title": "Yearly", "currency": "USD",
             "price_in_cents": 12600, "payment_type": "subscription_annual", "subscription": True},
            {"id": O_MONTHLY, "site_id": S, "title": "Monthly", "currency": "USD",
             "price_in_cents": 1000, "payment_type": "subscription_monthly", "subscription": True},
        ],
        "offers_products": [{"offer_id": O_ANNUAL, "product_id": PR1, "site_id": S},
                            {"offer_id": O_ANNUAL, "product_id": PR2, "site_id": S},
                            {"offer_id": O_MONTHLY, "product_id": PR2, "site_id": S}],
        "purchases": [
            {"id": "P1", "site_id": S, "customer_id": C1, "offer_id": O_ANNUAL,
             "created_at": ts(f"2024-01-16{noon}"), "payment_type": "subscription_annual",
             "amount_in_cents": 12600, "currency": "USD"},
            {"id": "P2", "site_id": S, "customer_id": C2, "offer_id": O_MONTHLY,
             "created_at": ts(f"2024-01-31{noon}"), "payment_type": "subscription_monthly",
             "amount_in_cents": 1000, "currency": "USD"},
        ],
        "purchases_products": [{"purchase_id": "P1", "product_id": PR1, "site_id": S},
                               {"purchase_id": "P1", "product_id": PR2, "site_id": S},
                               {"purchase_id": "P2", "product_id": PR2, "site_id": S}],
        "purchases_transactions": [
            {"purchase_id": "P1", "transaction_id": "T1", "site_id": S},
            {"purchase_id": "P1", "transaction_id": "T3", "site_id": S},
            {"purchase_id": "P2", "transaction_id": "T2", "site_id": S},
        ],
        "orders": [{"id": "9001", "site_id": S, "customer_id": C3, "order_number": 1001,
                    "currency_code": "usd", "created_at": ts("2024-02-10T12:00:30+00:00"),
                    "total_price_in_cents": 2160, "subtotal_in_cents": 2000,
                    "sales_tax_amount_in_cents": 160, "discount_amount_in_cents": 0}],
        "order_items": [
            {"id": "9101", "site_id": S, "order_id": "9001", "quantity": 1, "currency_code": "usd",
             "item_type": "Product", "item_id": int(PR1), "total_price_in_cents": 1080},
            {"id": "9102", "site_id": S, "order_id": "9001", "quantity": 1, "currency_code": "usd",
             "item_type": "Offer", "item_id": int(O_ANNUAL), "total_price_in_cents": 1080},
        ],
        "transactions": [
            _txn("T1", C1, f"2024-01-16{noon}", "subscription_charge", 12600, 600, "stripe",
                 payment_type="subscription_annual"),
            _txn("T2", C2, f"2024-01-31{noon}", "subscription_charge", 1000, 0,
                 "platform_payments", fee=59, payment_type="subscription_monthly"),
            _txn("T3", C1, f"2024-03-10{noon}", "refund", -6300, -300, "stripe",
                 payment_type="subscription_annual"),
            _txn("T4", C3, "2024-02-10T12:00:30+00:00", "charge", 2160, 160, "paypal"),
            _txn("T5", C4, f"2024-03-05{noon}", "charge", 500, 0, "platform_payments", fee=15),
        ],
    }
