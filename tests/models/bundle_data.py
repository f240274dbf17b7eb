"""A hand-built site with bundled transactions (addendum A8), split across their offers by
test_catalog.py and built on both engines by test_postgres.py.

| txn | kind   | amount | pays (link table)                          | split            |
|-----|--------|--------|--------------------------------------------|------------------|
| B1  | charge | 4000   | PA (A, 3000), PB (B, 1000): transactions'  | 3000 / 1000      |
| B2  | charge | 1000   | PC (A), PD (B), PE (C), no amounts         | 333 / 333 / 334  |
| R2  | refund | -1000  | PC, PD, PE: B2's refund                    | -333 / -333 / -334 |
| P1  | charge | 500    | PF (A, 500): purchases' own link           | 500              |
| R1  | refund | -500   | PF                                         | -500             |
| O1  | charge | 777    | none: an order's payment                   | no offer         |

R2 is rounded down on its absolute amount, so both engines credit the same cents (DuckDB's //
truncates towards zero, PostgreSQL's floor does not).
"""

from __future__ import annotations

from models_helpers import ts

S = "3000000001"
AT = ts("2024-01-02T12:00:00+00:00")


def _txn(tid: str, amount: int, **extra) -> dict:
    return {"id": tid, "site_id": S, "created_at": AT, "action": "charge",
            "amount_in_cents": amount, "currency": "USD", **extra}


def _purchase(pid: str, offer: str, amount: int | None) -> dict:
    return {"id": pid, "site_id": S, "offer_id": offer, "customer_id": "U1",
            "amount_in_cents": amount, "currency": "USD", "created_at": AT}


def _link(tid: str, pid: str) -> dict:
    return {"transaction_id": tid, "purchase_id": pid, "site_id": S}


def bundle_rows() -> dict[str, list[dict]]:
    return {
        "transactions": [_txn("B1", 4000), _txn("B2", 1000), _txn("P1", 500, offer_id="A"),
                         _txn("O1", 777), _txn("R1", -500, action="refund"),
                         _txn("R2", -1000, action="refund")],
        "purchases": [_purchase("PA", "A", 3000), _purchase("PB", "B", 1000),
                      _purchase("PC", "A", None), _purchase("PD", "B", None),
                      _purchase("PE", "C", None), _purchase("PF", "A", 500)],
        "transactions_purchases": [_link("B1", "PA"), _link("B1", "PB"), _link("B2", "PC"),
                                   _link("B2", "PD"), _link("B2", "PE"), _link("R2", "PC"),
                                   _link("R2", "PD"), _link("R2", "PE")],
        "purchases_transactions": [{"purchase_id": "PF", "transaction_id": "P1", "site_id": S},
                                   {"purchase_id": "PF", "transaction_id": "R1", "site_id": S}],
    }
