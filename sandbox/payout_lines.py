"""A payout's lines (addendum A3): `attributes.transactions` of `GET /v1/<brand>_payments_payouts/{id}`.

One plain object per transaction the payout rule assigns to the payout (`payouts.line_rows`),
built column-wise like `render`. Amounts are decimal major units of the settlement currency;
`presented_*` are the transaction's own amount and currency; `exchange_rate` is the fixed rate
applied, so `amount == round(presented_amount * exchange_rate, 2)` (half away from zero).
"""

from __future__ import annotations

import numpy as np
import orjson

from creator_sync.sandbox import vocab as V
from creator_sync.sandbox.bundles import offers_paid
from creator_sync.sandbox.dataset import DAY
from creator_sync.sandbox.jsonapi import RenderContext, decimals, iso_many
from creator_sync.sandbox.payouts import line_rows
from creator_sync.sandbox.rollups import to_settlement
from creator_sync.sandbox.schema import PAYOUTS
from creator_sync.sandbox.store import NULL
from creator_sync.sandbox.virtuals import cents_text

SETTLEMENT_CURRENCY = "USD"


def line_provider(provider: int, brand: str) -> str:
    """The processor as a line writes it (A8): `Platform Payments` under the brand word."""
    return V.LINE_PROVIDERS[provider].format(brand=brand.capitalize())


def rate_text(ppm: int) -> str:
    """1_080_000 -> '1.08'; 1_000_000 -> '1.0' (a JSON number, exact)."""
    whole, frac = divmod(ppm, 1_000_000)
    return f"{whole}.{f'{frac:06d}'.rstrip('0') or '0'}"


RATES = [rate_text(ppm) for ppm in V.FX_TO_USD_PPM]


def payout_lines(ctx: RenderContext, payout_row: int) -> list[dict]:
    store = ctx.store
    lines = _transaction_lines(ctx, line_rows(store, payout_row))
    payouts = store.table(PAYOUTS).cols
    correction = int(payouts["correction_cents"][payout_row])
    if correction:
        due = (int(payouts["day"][payout_row]) - store.settlement_delay_days) * DAY
        lines.append(_correction_line(correction, due, line_provider(0, ctx.brand)))
    return lines


def _order_quantities(ctx: RenderContext, orders: np.ndarray) -> np.ndarray:
    """Total item quantity of each order row (NULL rows give 0)."""
    keys, kids = ctx.store.fk_index("order_items", "order")
    qty = ctx.store.table("order_items").cols["quantity"][kids]
    csum = np.concatenate([[0], np.cumsum(qty)])
    lo = np.searchsorted(keys, orders, "left")
    hi = np.searchsorted(keys, orders, "right")
    return np.where(orders == NULL, 0, csum[hi] - csum[lo])


def _transaction_lines(ctx: RenderContext, rows: np.ndarray) -> list[dict]:
    store = ctx.store
    t = store.table("transactions").cols
    customers, offers = store.table("customers"), store.table("offers")
    purchases, orders = store.table("purchases").cols, store.table("orders").cols
    currency = t["currency"][rows].astype(np.int64)
    amount = t["settlement_amount"][rows]
    fee = t["settlement_fee"][rows]
    customer = t["customer"][rows]
    purchase = t["purchase"][rows]
    order = t["order"][rows]
    has_purchase = purchase != NULL
    safe_purchase = np.maximum(purchase, 0)
    coupon = np.where(has_purchase, purchases["coupon"][safe_purchase], -1)
    quantity = np.where(has_purchase, purchases["quantity"][safe_purchase],
                        np.maximum(_order_quantities(ctx, order), 1))
    numbers = np.where(order != NULL, orders["number"][np.maximum(order, 0)], NULL)
    sale = "Sales" if ctx.quirks else V.LINE_TYPES[0]
    kinds = {action: sale if word == "Sale" else word for action, word in V.LINE_TYPES.items()}
    paid = offers_paid(store, rows)  # a bundle's line names every offer it paid for
    columns = {
        "transaction_type": [kinds[a] for a in t["action"][rows].tolist()],
        "pricing_type": [V.LINE_PRICING_TYPES[p] for p in t["ptype"][rows].tolist()],
        "amount": decimals(amount.tolist()),
        "sales_tax": decimals(to_settlement(t["sales_tax_in_cents"][rows], currency).tolist()),
        "fee": decimals(fee.tolist()),
        "net": decimals((amount - fee).tolist()),
        "currency": [SETTLEMENT_CURRENCY] * len(rows),
        "presented_amount": decimals(t["amount_in_cents"][rows].tolist()),
        "presented_currency": [V.CURRENCIES[c] for c in currency.tolist()],
        "exchange_rate": [_fragment(RATES[c]) for c in currency.tolist()],
        "customer_id": [int(i) for i in customers.ids(customer)],
        "customer_name": customers.values("name", customer),
        "customer_email": customers.values("email", customer),
        "offer_ids": [[int(i) for i in offers.ids(np.asarray(o, np.int64))] for o in paid],
        "offer_titles": [[offers.cols["title"][r] for r in o] for o in paid],
        "provider": [line_provider(p, ctx.brand) for p in t["provider"][rows].tolist()],
        "payment_method": [V.PAYMENT_METHODS[(c * 7919 + 3) % len(V.PAYMENT_METHODS)]
                           for c in customer.tolist()],
        "created_at": iso_many(t["created_at"][rows].tolist(), None),
        "coupon_used": [None if c < 0 else V.COUPONS[c] for c in coupon.tolist()],
        "quantity": quantity.tolist(),
        "order_number": [None if n == NULL else _order_number(ctx, n) for n in numbers.tolist()],
    }
    if ctx.quirks:
        _float_noise(columns, rows, amount.tolist(), currency.tolist())
    names = list(columns)
    return [dict(zip(names, values, strict=True))
            for values in zip(*columns.values(), strict=True)]


NOISE_EVERY = 7  # --quirks: one transaction in 7 is written with float noise on its line
RATE_NOISE = "0000000345678912"  # 1.08 -> 1.080000000345678912: more places than a column holds


def _float_noise(columns: dict[str, list], rows: np.ndarray, cents: list[int],
                 currencies: list[int]) -> None:
    """--quirks: amounts and rates as a platform that computes in binary floats writes them:
    an amount `3.30` as `3.3000000000000003`, a rate `1.08` with more digits than any column
    holds (`1.080000000345678912`). The amounts are the same cents, and the rate still gives
    them (`amount == round(presented_amount * exchange_rate, 2)`)."""
    for k, row in enumerate(rows.tolist()):
        if row % NOISE_EVERY:
            continue
        if cents[k]:
            columns["amount"][k] = _fragment(cents_text(cents[k]) + "00000000000003")
        if currencies[k]:  # a converted line (currency 0, USD, has the rate 1.0)
            columns["exchange_rate"][k] = _fragment(RATES[currencies[k]] + RATE_NOISE)


def _order_number(ctx: RenderContext, number: int) -> str:
    return f"ORD-{number}" if ctx.quirks else str(number)


def _fragment(text: str) -> orjson.Fragment:
    return orjson.Fragment(text.encode())


def _correction_line(cents: int, due: int, provider: str) -> dict:
    """A fee correction no transaction stands behind (--quirks): amount 0, fee -cents, so its
    net is +cents; dated at the start of the day its funds became due."""
    zero = decimals([0])[0]
    return {
        "transaction_type": "Adjustment", "pricing_type": None, "amount": zero,
        "sales_tax": zero, "fee": decimals([-cents])[0], "net": decimals([cents])[0],
        "currency": SETTLEMENT_CURRENCY, "presented_amount": zero,
        "presented_currency": SETTLEMENT_CURRENCY, "exchange_rate": _fragment(RATES[0]),
        "customer_id": None, "customer_name": None, "customer_email": None, "offer_ids": [],
        "offer_titles": [], "provider": provider, "payment_method": None,
        "created_at": iso_many([due], None)[0], "coupon_used": None, "quantity": 1,
        "order_number": None,
    }
