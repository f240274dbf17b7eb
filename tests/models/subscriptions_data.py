"""A small hand-built book of subscriptions whose movements, SaaS metrics and cohorts are worked
out by hand in test_saas_metrics.py. One site, USD, reporting zone UTC, as-of 2024-11-30; every
timestamp is at 12:00 UTC.

Customer  subscription (MRR)                            what happens
A         monthly 1000 from 2024-01-10                  cancels 2024-04-05 (canceled_by_customer)
B         monthly 2000 from 2024-02-15                  payment fails 2024-04-20 (payment_failed)
C         annual 12000 (1000 a month) from 2023-12-20   stays all year, charged once
D         monthly 1500 from 2024-01-05                  charged 2500 on 03-05, 2000 on 04-05
E         monthly 500 from 2024-01-12                   refunded 2024-02-10; a new 700 from 05-03
F         monthly 300 from 2024-03-01                   ends 2024-06-15 with no reason
G         800 and 200 from 2024-07-01                   ends both in August (cancel, then failure)
"""

from __future__ import annotations

from typing import Any

from models_helpers import Rows, ts

SITE = "3000000001"
A, B, C, D, E, F, G = (f"31000000{i:02d}" for i in range(1, 8))
NOON = "T12:00:00+00:00"


def _purchase(pid: str, customer: str, created: str, amount: int, payment_type: str = "subscription_monthly",
              deactivated: str | None = None, reason: str | None = None) -> dict[str, Any]:
    return {
        "id": pid, "site_id": SITE, "customer_id": customer, "created_at": ts(created + NOON),
        "payment_type": payment_type, "amount_in_cents": amount, "currency": "USD",
        "deactivated_at": ts(deactivated + NOON) if deactivated else None,
        "deactivation_reason": reason,
    }


# (purchase, customer, day, amount, action)
CHARGES = [
    ("PA", A, "2024-01-10", 1000, "subscription_charge"),
    ("PA", A, "2024-02-10", 1000, "subscription_charge"),
    ("PA", A, "2024-03-10", 1000, "subscription_charge"),
    ("PB", B, "2024-02-15", 2000, "subscription_charge"),
    ("PB", B, "2024-03-15", 2000, "subscription_charge"),
    ("PC", C, "2023-12-20", 12000, "subscription_charge"),
    ("PD", D, "2024-01-05", 1500, "subscription_charge"),
    ("PD", D, "2024-03-05", 2500, "subscription_charge"),
    ("PD", D, "2024-04-05", 2000, "subscription_charge"),
    ("PE1", E, "2024-01-12", 500, "subscription_charge"),
    ("PE1", E, "2024-02-10", -500, "refund"),
    ("PE2", E, "2024-05-03", 700, "subscription_charge"),
    ("PF", F, "2024-03-01", 300, "subscription_charge"),
    ("PF", F, "2024-04-01", 300, "subscription_charge"),
    ("PF", F, "2024-05-01", 300, "subscription_charge"),
    ("PF", F, "2024-06-01", 300, "subscription_charge"),
    ("PG1", G, "2024-07-01", 800, "subscription_charge"),
    ("PG2", G, "2024-07-01", 200, "subscription_charge"),
]


def subscription_rows() -> Rows:
    transactions, links = [], []
    for i, (purchase, customer, day, amount, action) in enumerate(CHARGES):
        tid = f"T{i:02d}"
        transactions.append({
            "id": tid, "site_id": SITE, "customer_id": customer, "created_at": ts(day + NOON),
            "action": action, "state": "succeeded", "amount_in_cents": amount, "currency": "USD",
        })
        links.append({"purchase_id": purchase, "transaction_id": tid, "site_id": SITE})
    return {
        "sites": [{"id": SITE, "name": "Main", "currency": "USD", "timezone": "UTC"}],
        "purchases": [
            _purchase("PA", A, "2024-01-10", 1000, deactivated="2024-04-05", reason="canceled_by_customer"),
            _purchase("PB", B, "2024-02-15", 2000, deactivated="2024-04-20", reason="payment_failed"),
            _purchase("PC", C, "2023-12-20", 12000, payment_type="subscription_annual"),
            _purchase("PD", D, "2024-01-05", 1500),
            _purchase("PE1", E, "2024-01-12", 500, deactivated="2024-02-10", reason="refunded"),
            _purchase("PE2", E, "2024-05-03", 700),
            _purchase("PF", F, "2024-03-01", 300, deactivated="2024-06-15"),
            _purchase("PG1", G, "2024-07-01", 800, deactivated="2024-08-03", reason="canceled_by_customer"),
            _purchase("PG2", G, "2024-07-01", 200, deactivated="2024-08-20", reason="payment_failed"),
        ],
        "transactions": transactions,
        "purchases_transactions": links,
    }
