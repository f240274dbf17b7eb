"""A small hand-built raw dataset whose figures are worked out by hand in test_known_answer.py.

Site S1 (settlement USD) sells in USD and EUR; site S2 sells in GBP. Reporting zone UTC,
settlement delay 2 days, as-of 2024-03-31. Every timestamp is at 12:00 UTC unless noted, so the
reporting day is the UTC day.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from models_helpers import Rows, ts

S1, S2 = "3000000001", "3000000002"
C1, C2, C3, C4, C5, C6 = (f"31000000{i:02d}" for i in range(1, 7))
O_MONTHLY, O_EBOOK, O_ANNUAL, O_GBP = "3200000001", "3200000002", "3200000003", "3200000004"


def _txn(
    tid: str, site: str | None, customer: str | None, created: str, action: str, amount: int,
    currency: str, settlement: int | None = None, settlement_fee: int | None = None,
    fee: int = 0, tax: int = 0, offer: str | None = None, **extra: Any,
) -> dict[str, Any]:
    row = {
        "id": tid, "site_id": site, "customer_id": customer, "offer_id": offer,
        "created_at": ts(created), "action": action, "state": "succeeded",
        "amount_in_cents": amount, "currency": currency, "sales_tax_in_cents": tax,
        "payment_fee_in_cents": fee,
        "provider": "platform_payments" if settlement is not None else "stripe",
    }
    if settlement is not None:
        row.update(settlement_amount_in_cents=settlement,
                   settlement_fee_amount_in_cents=settlement_fee, settlement_currency="usd")
    row.update(extra)
    return row


def _purchase(pid: str, customer: str, offer: str, created: str, payment_type: str,
              amount: int, currency: str, deactivated: str | None = None) -> dict[str, Any]:
    return {
        "id": pid, "site_id": S1, "customer_id": customer, "offer_id": offer,
        "created_at": ts(created), "payment_type": payment_type, "amount_in_cents": amount,
        "currency": currency, "deactivated_at": ts(deactivated) if deactivated else None,
    }


def _payout(pid: str, initiated: str, amount: str, status: str) -> dict[str, Any]:
    return {
        "id": pid, "site_id": S1, "currency": "usd", "status": status,
        "amount": Decimal(amount), "initiated_date": ts(f"{initiated}T09:00:00+00:00"),
        "estimated_arrival_date": ts(f"{initiated}T09:00:00+00:00"),
    }


def known_answer_rows() -> Rows:
    noon = "T12:00:00+00:00"
    return {
        "sites": [
            {"id": S1, "name": "Main", "currency": "USD", "timezone": "UTC"},
            {"id": S2, "name": "UK", "currency": "USD", "timezone": "UTC"},
        ],
        "customers": [
            {"id": C1, "site_id": S1, "email": "c1@example.com", "net_revenue": Decimal("25.00")},
            {"id": C2, "site_id": S1, "email": "c2@example.com", "net_revenue": Decimal("39.99")},
            {"id": C3, "site_id": S1, "email": "c3@example.com", "net_revenue": Decimal("120.00")},
            {"id": C4, "site_id": S1, "email": "c4@example.com", "net_revenue": Decimal("28.00")},
            {"id": C5, "site_id": S1, "email": "c5@example.com", "net_revenue": Decimal("80.00")},
            {"id": C6, "site_id": S2, "email": "c6@example.com", "net_revenue": Decimal("9.99")},
        ],
        "offers": [
            {"id": O_MONTHLY, "site_id": S1, "title": "Club", "currency": "USD",
             "price_in_cents": 1000, "payment_type": "subscription_monthly", "subscription": True},
            {"id": O_EBOOK, "site_id": S1, "title": "Ebook", "currency": "EUR",
             "price_in_cents": 5000, "payment_type": "one_time", "subscription": False},
            {"id": O_ANNUAL, "site_id": S1, "title": "Club yearly", "currency": "USD",
             "price_in_cents": 12000, "payment_type": "subscription_annual", "subscription": True},
            {"id": O_GBP, "site_id": S2, "title": "Guide", "currency": "GBP",
             "price_in_cents": 999, "payment_type": "one_time", "subscription": False},
        ],
        "purchases": [
            _purchase("P1", C1, O_MONTHLY, f"2024-01-10{noon}", "subscription_monthly", 1000, "USD",
                      deactivated=f"2024-03-20{noon}"),
            _purchase("P2", C2, O_EBOOK, "2024-01-15T03:00:00+00:00", "one_time", 5000, "EUR"),
            _purchase("P3", C3, O_ANNUAL, f"2024-02-05{noon}", "subscription_annual", 12000, "USD"),
            _purchase("P4", C4, O_MONTHLY, f"2024-01-20{noon}", "subscription_monthly", 2000, "USD",
                      deactivated=f"2024-02-15{noon}"),
            _purchase("P5", C4, O_MONTHLY, f"2024-03-05{noon}", "subscription_monthly", 800, "USD"),
            _purchase("P6", C5, O_MONTHLY, f"2024-01-25{noon}", "subscription_monthly", 3000, "USD"),
        ],
        "transactions": [
            # An older extraction of T1 with a wrong amount: staging must keep the latest one.
            _txn("T1", S1, C1, f"2024-01-10{noon}", "subscription_charge", 999, "USD", 999, 59,
                 fee=59, tax=100, _extracted_at=ts("2024-01-11T00:00:00+00:00")),
            _txn("T1", S1, C1, f"2024-01-10{noon}", "subscription_charge", 1000, "USD", 1000, 59,
                 fee=59, tax=100),
            _txn("T2", S1, C2, "2024-01-15T03:00:00+00:00", "charge", 5000, "eur", 5400, 175,
                 fee=175),
            _txn("T8", S1, C4, f"2024-01-20{noon}", "subscription_charge", 2000, "USD", 2000, 88,
                 fee=88),
            _txn("T9", S1, C5, f"2024-01-25{noon}", "subscription_charge", 3000, "USD"),
            _txn("T4", S1, C3, f"2024-02-05{noon}", "subscription_charge", 12000, "USD", 12000,
                 378, fee=378),
            _txn("T3", S1, C1, f"2024-02-10{noon}", "subscription_charge", 1500, "USD", 1500, 74,
                 fee=74),
            _txn("T5", S1, C2, "2024-02-20T10:00:00+00:00", "refund", -1000, "EUR", -1080, 0),
            _txn("T10", S1, C5, f"2024-02-25{noon}", "subscription_charge", 2500, "USD"),
            _txn("T6", S1, C1, f"2024-03-02{noon}", "dispute", -1500, "USD", -1500, 0),
            # no currency on T11: it is resolved from its purchase P5 (USD)
            _txn("T11", S1, C4, f"2024-03-05{noon}", "subscription_charge", 800, None, 800, 53,
                 fee=53),
            # a failed attempt (e.g. delivered by a webhook): never revenue, never settled
            _txn("T15", S1, C4, f"2024-03-15{noon}", "charge", 7777, "USD", 7777, 0,
                 state="failed"),
            _txn("T7", S1, C1, f"2024-03-10{noon}", "subscription_charge", 1500, "USD", 1500, 74,
                 fee=74),
            _txn("T14", S2, C6, f"2024-03-15{noon}", "charge", 999, "GBP", offer=O_GBP),
            # no site on T12 (as a webhook may deliver it): its customer C5 is on S1
            _txn("T12", None, C5, f"2024-03-25{noon}", "subscription_charge", 2500, "USD"),
            _txn("T13", S1, None, f"2024-03-28{noon}", "charge", 4000, "USD", 4000, 146, fee=146),
        ],
        "purchases_transactions": [
            {"purchase_id": p, "transaction_id": t, "site_id": S1}
            for p, t in [("P1", "T1"), ("P1", "T3"), ("P1", "T6"), ("P1", "T7"), ("P2", "T2"), ("P5", "T15"),
                         ("P2", "T5"), ("P3", "T4"), ("P4", "T8"), ("P5", "T11"), ("P6", "T9"),
                         ("P6", "T10"), ("P6", "T12")]
        ] + [{"purchase_id": "P1", "transaction_id": "T1", "site_id": S1}],  # a duplicate link
        "payouts": [
            _payout("PO1", "2024-01-20", "61.66", "Paid"),
            _payout("PO2", "2024-02-01", "19.12", "failed"),
            _payout("PO3", "2024-02-08", "135.34", "paid"),
            _payout("PO4", "2024-03-12", "10.20", "paid"),
            _payout("PO5", "2024-03-31", "38.54", "pending"),
        ],
        "orders": [
            {"id": "OR1", "site_id": S1, "customer_id": C2, "order_number": 1,
             "currency_code": "EUR", "created_at": ts("2024-01-15T03:00:00+00:00"),
             "fulfilled_at": ts("2024-01-15T03:30:00+00:00"), "total_price_in_cents": 5000,
             "subtotal_in_cents": 5500, "discount_amount_in_cents": 500,
             "sales_tax_amount_in_cents": 0},
            {"id": "OR2", "site_id": S1, "customer_id": C2, "order_number": 2,
             "currency_code": "EUR", "created_at": ts(f"2024-01-15{noon}"),
             "total_price_in_cents": 1001, "subtotal_in_cents": 1001,
             "discount_amount_in_cents": 0, "sales_tax_amount_in_cents": 0},
        ],
        "order_items": [
            {"id": "OI1", "site_id": S1, "order_id": "OR1", "quantity": 2, "title": "Ebook"},
            {"id": "OI2", "site_id": S1, "quantity": 1, "title": "Stickers"},
            {"id": "OI3", "site_id": S1, "order_id": "OR2", "quantity": 1, "title": "Ebook"},
        ],
        "orders_order_items": [{"order_id": "OR1", "order_item_id": "OI2", "site_id": S1}],
    }
