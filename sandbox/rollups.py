"""Derived columns kept true by generation *and* activity: listed flags and settlement fields,
purchase roll-ups, customer links and member counts, customers' net revenue."""

from __future__ import annotations

import numpy as np

from creator_sync.sandbox import vocab as V
from creator_sync.sandbox.dataset import Store
from creator_sync.sandbox.gen_helpers import uniq
from creator_sync.sandbox.store import NULL

NULL_INT = np.iinfo(np.int64).min  # null in nullable integer columns


def settlement_columns(txn: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Listed flag and settlement fields: only platform_payments rows carry settlement."""
    action, state = txn["action"], txn["state"]
    listed = np.isin(action, V.LISTED_ACTIONS) & (state == 1)
    platform = (txn["provider"] == 0) & listed
    amount = txn["amount_in_cents"]
    settle = to_settlement(amount, txn["currency"])
    charge = np.isin(action, (0, 3))
    fee = np.where(charge, np.round(np.abs(settle) * 0.029).astype(np.int64) + 30,
                   np.where(action == 6, 1500, 0))
    pay_fee = np.where(charge, np.round(np.abs(amount) * 0.029).astype(np.int64) + 30,
                       np.where(action == 6, 1500, 0))
    return {
        "listed": listed,
        "settlement_amount": np.where(platform, settle, NULL_INT),
        "settlement_fee": np.where(platform, fee, NULL_INT),
        "payment_fee": np.where(platform, pay_fee, NULL_INT),
    }


def to_settlement(cents: np.ndarray, currency: np.ndarray) -> np.ndarray:
    """Cents in the settlement currency (USD) at the fixed rates, rounded half away from zero,
    so that a refund settles at exactly minus its charge."""
    cents = np.asarray(cents, np.int64)
    rate = np.asarray(V.FX_TO_USD_PPM, np.int64)[np.asarray(currency, np.int64)]
    return np.sign(cents) * ((np.abs(cents) * rate + 500_000) // 1_000_000)


def refresh_purchase_updated_at(store: Store, rows: np.ndarray | None = None) -> None:
    """A purchase's updated_at is its latest transaction or deactivation time."""
    purchases, txn = store.table("purchases"), store.table("transactions")
    pur = txn.cols["purchase"]
    has = pur >= 0
    latest = np.full(purchases.n, NULL, np.int64)
    np.maximum.at(latest, pur[has], txn.cols["created_at"][has])
    bundle = purchases.cols.get("bundle")  # a bundle's further purchases: its charge (A8)
    if bundle is not None:
        paid = np.flatnonzero(bundle != NULL)
        np.maximum.at(latest, paid, txn.cols["created_at"][bundle[paid]])
    updated = np.maximum(np.maximum(purchases.cols["created_at"], latest),
                         purchases.cols["deactivated_at"])
    purchases.cols["updated_at"] = updated
    charge = has & (txn.cols["action"] == 3) & (txn.cols["state"] == 1)
    purchases.cols["payments_made"] = np.bincount(pur[charge], minlength=purchases.n).astype(
        np.int64)
    purchases.touch()


def derive_customer_links(store: Store) -> None:
    """contacts.offers, customers.offers, customers.products and products' member counts."""
    purchases, customers = store.table("purchases"), store.table("customers")
    n_offers = store.table("offers").n
    granted = purchases.cols["customer"] * n_offers + purchases.cols["offer"]
    if store.revoked:  # an offer revoked through the API (deletes.py) is no longer the owner's
        keep = np.ones(purchases.n, dtype=bool)
        keep[np.fromiter(store.revoked, dtype=np.int64, count=len(store.revoked))] = False
        granted = granted[keep]
    key = uniq(granted)
    cust, offer = key // n_offers, key % n_offers
    store.link("customers.offers").set(cust, offer)
    store.link("contacts.offers").set(customers.cols["contact"][cust], offer)
    op = store.link("offers.products")
    order = np.argsort(op.parent, kind="stable")
    op_offer, op_product = op.parent[order], op.child[order]
    lo = np.searchsorted(op_offer, offer, "left")
    hi = np.searchsorted(op_offer, offer, "right")
    counts = hi - lo
    rep_cust = np.repeat(cust, counts)
    idx = np.repeat(lo, counts) + (np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts,
                                                                       counts))
    n_products = store.table("products").n
    key = uniq(rep_cust * n_products + op_product[idx])
    store.link("customers.products").set(key // n_products, key % n_products)
    products = store.table("products")
    products.cols["members"] = np.bincount(key % n_products, minlength=n_products).astype(np.int64)
    products.touch()


def recompute_net_revenue(store: Store) -> None:
    """net_revenue = sum of listed transactions; a change of it moves the customer's
    updated_at to the transaction's time (never backwards)."""
    customers, txn = store.table("customers"), store.table("transactions")
    listed = txn.cols["listed"]
    total = np.zeros(customers.n, np.int64)
    np.add.at(total, txn.cols["customer"][listed], txn.cols["amount_in_cents"][listed])
    latest = np.full(customers.n, NULL, np.int64)
    np.maximum.at(latest, txn.cols["customer"][listed], txn.cols["created_at"][listed])
    customers.cols["net_revenue_cents"] = total
    customers.cols["updated_at"] = np.maximum(customers.cols["updated_at"], latest)
    customers.touch()
