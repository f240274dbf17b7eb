"""A hand-built site with itemised payouts (payout_lines, contracts C2/C3) whose figures are
worked out by hand in test_known_answer_lines.py.

Site S settles in USD. Payouts are initiated at 00:00 UTC. As-of 2024-05-10, reporting zone UTC.
Net settlement = settlement amount - settlement fee (cents):

| txn | customer | UTC time         | kind          | amount       | settled | fee | net   |
|-----|----------|------------------|---------------|--------------|---------|-----|-------|
| TA1 | A        | May 1 10:00:05   | charge        | 5000 USD     | 5000    | 175 | 4825  |
| TB1 | B        | May 1 11:15:00   | charge        | 4000 EUR     | 4320    | 155 | 4165  |
| TC1 | C        | May 1 14:30:10   | charge        | 1999 USD     | 1999    |  88 | 1911  |
| TC2 | C        | May 1 14:30:40   | charge        | 1999 USD     | 1999    |  88 | 1911  |
| TD1 | D        | May 2 09:00:00   | charge (order 1001) | 2500 USD | 2500  | 103 | 2397  |
| TA3 | A        | May 2 12:00:00   | charge        | 1000 USD     | 1000    |  59 |  941  |
| TA2 | A        | May 2 12:00:30   | refund        | -1000 USD    | -1000   |   0 | -1000 |
| TS1 | E        | May 3 16:00:00   | charge (stripe, not settled by the platform; fee 88) | 2000 USD |
| TF1 | F        | May 4 10:00:00   | charge        | 1500 USD     | 1500    |  74 | 1426  |
| TE1 | E        | May 6 08:00:00   | charge        | 3000 USD     | 3000    | 117 | 2883  |

Payouts and their lines (`Sales`, `sale`, `SALES`, `Refund`, `REFUND` and `Adjustment` as sent):
- PO1 May 4 paid $132.86: TA1 (`Sales`), TB1 (EUR 40.00 presented, USD 43.20 settled, rate
  1.08), TC1 and TC2 (both lines dated 14:30:00: two identical purchases in one minute), an
  adjustment of -2.50 that no transaction stands behind (dated May 3 18:00), and a sale of 7.77
  to customer G whom no listed transaction has.
- PO2 May 5 failed $23.38: TD1 (order `ORD-1001`, the line dated 09:02:30), then A's refund and
  A's new sale, both lines dated 12:00:00 with the refund listed first.
- PO3 May 6 paid $23.38: the same three again (order number `1001`), as PO2 failed.
- PO4 May 8 pending $14.26: its lines were never read.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from known_answer_data import _txn
from models_helpers import Rows, ts

S = "3000000010"
A, B, C, D, E, F, G = (f"31000001{i:02d}" for i in range(1, 8))


def _payout(pid: str, day: str, amount: str, status: str) -> dict[str, Any]:
    return {
        "id": pid, "site_id": S, "currency": "usd", "status": status, "amount": Decimal(amount),
        "initiated_date": ts(f"2024-05-{day}T00:00:00+00:00"),
        "estimated_arrival_date": ts(f"2024-05-{day}T00:00:00+00:00"),
    }


def _line(payout: str, n: int, kind: str, customer: str | None, created: str, amount: str,
          fee: str, presented: tuple[str, str] | None = None, rate: str = "1.0",
          order: str | None = None) -> dict[str, Any]:
    """One line as the source writes it (C2): decimals in major units, net = amount - fee; values
    written for people, as the platform writes them (A8: `Platform Payments`, `Visa`)."""
    amount_d, fee_d = Decimal(amount), Decimal(fee)
    shown, shown_currency = presented or (amount, "USD")
    return {
        "payout_id": payout, "line_number": n, "site_id": S, "transaction_type": kind,
        "pricing_type": "One Time", "amount": amount_d, "sales_tax": Decimal("0"),
        "fee": fee_d, "net": amount_d - fee_d, "currency": "USD",
        "presented_amount": Decimal(shown), "presented_currency": shown_currency,
        "exchange_rate": Decimal(rate), "customer_id": customer, "provider": "Platform Payments",
        "payment_method": "Visa", "created_at": ts(f"2024-05-{created}+00:00"), "quantity": 1,
        "order_number": order,
    }


def _again(payout: str, order: str, types: tuple[str, str, str]) -> list[dict[str, Any]]:
    """The three May 2 lines, listed by PO2 (failed) and again by PO3."""
    sale, refund, sale_again = types
    return [
        _line(payout, 1, sale, D, "02T09:02:30", "25.00", "1.03", order=order),
        _line(payout, 2, refund, A, "02T12:00:00", "-10.00", "0"),
        _line(payout, 3, sale_again, A, "02T12:00:00", "10.00", "0.59"),
    ]


def lines_rows() -> Rows:
    return {
        "sites": [{"id": S, "name": "Lines", "currency": "USD", "timezone": "UTC"}],
        "customers": [{"id": c, "site_id": S} for c in (A, B, C, D, E, F, G)],
        "transactions": [
            _txn("TA1", S, A, "2024-05-01T10:00:05+00:00", "charge", 5000, "USD", 5000, 175),
            _txn("TB1", S, B, "2024-05-01T11:15:00+00:00", "charge", 4000, "EUR", 4320, 155,
                 fee=144),
            _txn("TC1", S, C, "2024-05-01T14:30:10+00:00", "charge", 1999, "USD", 1999, 88),
            _txn("TC2", S, C, "2024-05-01T14:30:40+00:00", "charge", 1999, "USD", 1999, 88),
            _txn("TD1", S, D, "2024-05-02T09:00:00+00:00", "charge", 2500, "USD", 2500, 103),
            _txn("TA3", S, A, "2024-05-02T12:00:00+00:00", "charge", 1000, "USD", 1000, 59),
            _txn("TA2", S, A, "2024-05-02T12:00:30+00:00", "refund", -1000, "USD", -1000, 0),
            _txn("TS1", S, E, "2024-05-03T16:00:00+00:00", "charge", 2000, "USD", fee=88),
            _txn("TF1", S, F, "2024-05-04T10:00:00+00:00", "charge", 1500, "USD", 1500, 74),
            _txn("TE1", S, E, "2024-05-06T08:00:00+00:00", "charge", 3000, "USD", 3000, 117),
        ],
        "orders": [
            {"id": "OR1", "site_id": S, "customer_id": D, "order_number": 1001,
             "currency_code": "USD", "created_at": ts("2024-05-02T09:00:00+00:00"),
             "total_price_in_cents": 2500, "subtotal_in_cents": 2500,
             "discount_amount_in_cents": 0, "sales_tax_amount_in_cents": 0},
        ],
        "payouts": [
            _payout("PO1", "04", "132.86", "paid"),
            _payout("PO2", "05", "23.38", "failed"),
            _payout("PO3", "06", "23.38", "paid"),
            _payout("PO4", "08", "14.26", "pending"),
        ],
        "payout_lines": [
            _line("PO1", 1, "Sales", A, "01T10:00:05", "50.00", "1.75"),
            _line("PO1", 2, "Sale", B, "01T11:15:00", "43.20", "1.55",
                  presented=("40.00", "EUR"), rate="1.08"),
            _line("PO1", 3, "Sale", C, "01T14:30:00", "19.99", "0.88"),
            _line("PO1", 4, "Sale", C, "01T14:30:00", "19.99", "0.88"),
            _line("PO1", 5, "Adjustment", None, "03T18:00:00", "-2.50", "0"),
            _line("PO1", 6, "sale", G, "01T16:00:00", "7.77", "0.53"),
            *_again("PO2", "ORD-1001", ("Sale", "Refund", "Sale")),
            *_again("PO3", "1001", ("SALES", "REFUND", "Sale")),
        ],
    }
