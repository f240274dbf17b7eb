"""Bundled transactions (addendum A8): one charge that pays several purchases of different
offers bought together.

A transaction pays the purchase its `purchase` column names; a bundle pays more: each further
purchase it pays carries the transaction's row in its own `bundle` column (and has no
transaction of its own). So the link is many-to-many without a second copy of either side:
`paid_pairs` reads it, and `transactions.purchases` / `purchases.transactions` resolve through
it. A bundle's `offer` is null (the relationship is deprecated, filled only for single-offer
transactions) and its amount is the sum of its purchases' amounts.
"""

from __future__ import annotations

import numpy as np

from creator_sync.sandbox.dataset import Store
from creator_sync.sandbox.gen_sales import at_least_one_per_site
from creator_sync.sandbox.rollups import refresh_purchase_updated_at, settlement_columns
from creator_sync.sandbox.store import NULL

# share of the eligible one-time charges sold as a bundle (at least one per site): about 2 % of
# all listed charges, "a few percent" (subscription renewals are never bundles)
BUNDLE_RATE = 0.2
BUNDLE_SEED_SALT = 29  # bundles draw from their own stream: the rest of the account is unchanged


def paid_pairs(store: Store) -> tuple[np.ndarray, np.ndarray]:
    """(transaction row, purchase row) of every purchase a transaction pays."""
    own = store.tables["transactions"].cols["purchase"]
    paid = np.flatnonzero(own != NULL)
    bundle = store.tables["purchases"].cols.get("bundle")
    extra = np.flatnonzero(bundle != NULL) if bundle is not None else np.empty(0, np.int64)
    txn = np.concatenate([paid, bundle[extra] if bundle is not None else extra])
    return txn.astype(np.int64), np.concatenate([own[paid], extra]).astype(np.int64)


def paid_csr(store: Store, parent: str) -> tuple[np.ndarray, np.ndarray]:
    """(sorted parent rows, children): `parent` "transactions" gives each transaction's
    purchases, "purchases" each purchase's transactions; cached per version of both tables."""
    transactions, purchases = store.tables["transactions"], store.tables["purchases"]

    def build() -> tuple[np.ndarray, np.ndarray]:
        txn, pur = paid_pairs(store)
        keys, vals = (txn, pur) if parent == "transactions" else (pur, txn)
        order = np.lexsort((vals, keys))
        return keys[order], vals[order]

    key = ("paid", parent, purchases.version)
    return transactions.cached(key, build)  # type: ignore[return-value]


def offers_paid(store: Store, rows: np.ndarray) -> list[list[int]]:
    """The offer rows each transaction of `rows` pays for, in purchase order."""
    keys, vals = paid_csr(store, "transactions")
    offer = store.tables["purchases"].cols["offer"]
    lo = np.searchsorted(keys, rows, "left")
    hi = np.searchsorted(keys, rows, "right")
    return [offer[vals[a:b]].tolist() for a, b in zip(lo.tolist(), hi.tolist(), strict=True)]


ADD_ON_PRICES = (900, 1900, 2900)  # cents


def _add_on_offers(store: Store, rng: np.random.Generator) -> None:
    """One more one-time offer per one-time offer of the catalogue (`<title> Add-on`, same site,
    currency and products), so that every site has other offers to bundle with."""
    offers = store.tables["offers"]
    oc = offers.cols
    template = np.flatnonzero(~oc["archived"] & (oc["ptype"] == 0))
    if not len(template):
        return
    added = {name: col[template].copy() for name, col in oc.items()}
    added["title"] = np.asarray([f"{t} Add-on" for t in oc["title"][template].tolist()],
                                dtype=object)
    added["price_in_cents"] = rng.choice(ADD_ON_PRICES, len(template)).astype(np.int64)
    added["internal_title"] = np.full(len(template), None, dtype=object)
    first_new = offers.n
    offers.set_columns({name: np.concatenate([oc[name], added[name]]) for name in oc})
    link = store.link("offers.products")
    keys, vals = link.csr()
    lo = np.searchsorted(keys, template, "left")
    hi = np.searchsorted(keys, template, "right")
    parents = np.repeat(first_new + np.arange(len(template)), hi - lo)
    children = np.concatenate([vals[a:b] for a, b in zip(lo.tolist(), hi.tolist(), strict=True)])
    link.set(np.concatenate([link.parent, parents]), np.concatenate([link.child, children]))


def add_bundles(store: Store, rate: float = BUNDLE_RATE) -> None:
    """Turn about `rate` of the succeeded one-time charges (not refunded, disputed or part of an
    order) into bundles: each gains one or two purchases of other live paid one-time offers of
    its site and currency, bought at the same instant by the same customer."""
    purchases, transactions, offers = (store.tables["purchases"], store.tables["transactions"],
                                       store.tables["offers"])
    pc, tc, oc = purchases.cols, transactions.cols, offers.cols
    pc["bundle"] = np.full(purchases.n, NULL, np.int64)
    if rate <= 0:
        purchases.touch()
        return
    rng = np.random.Generator(np.random.PCG64([store.seed, BUNDLE_SEED_SALT]))
    _add_on_offers(store, rng)
    oc = offers.cols
    own = tc["purchase"]
    safe = np.maximum(own, 0)
    eligible = np.flatnonzero(
        (own != NULL) & (tc["action"] == 0) & (tc["state"] == 1) & (tc["order"] == NULL)
        & (pc["ptype"][safe] == 0) & (pc["quantity"][safe] == 1)
        & (pc["deactivated_at"][safe] == NULL))
    site = pc["site"][own[eligible]]
    chosen = eligible[at_least_one_per_site(rng.random(len(eligible)) < rate, site, rng)]
    live_paid = ~oc["archived"] & (oc["ptype"] == 0)
    parents, partner_offers = [], []
    for txn in chosen.tolist():
        first = int(own[txn])
        pool = np.flatnonzero(live_paid & (oc["site"] == pc["site"][first])
                              & (oc["currency"] == pc["currency"][first])
                              & (np.arange(offers.n) != pc["offer"][first]))
        if not len(pool):
            continue
        count = min(len(pool), 1 + int(rng.random() < 0.3))
        for offer in rng.choice(pool, count, replace=False).tolist():
            parents.append(txn)
            partner_offers.append(offer)
    if not parents:
        purchases.touch()
        return
    txn_rows = np.asarray(parents, np.int64)
    offer_rows = np.asarray(partner_offers, np.int64)
    template = own[txn_rows]
    added = {name: col[template].copy() for name, col in pc.items()}
    price = oc["price_in_cents"][offer_rows].astype(np.int64)
    added.update({
        "offer": offer_rows, "amount_in_cents": price, "quantity": np.ones(len(txn_rows), np.int64),
        "coupon": np.full(len(txn_rows), -1, added["coupon"].dtype), "bundle": txn_rows,
    })
    merged = {name: np.concatenate([pc[name], added[name]]) for name in pc}
    # ids stay in creation order: each new purchase right after its bundle's first purchase
    order = np.argsort(merged["created_at"], kind="stable")
    purchases.set_columns({name: col[order] for name, col in merged.items()})
    moved = np.empty(len(order), np.int64)
    moved[order] = np.arange(len(order))
    tc["purchase"] = np.where(own != NULL, moved[np.maximum(own, 0)], NULL)
    extra = np.zeros(transactions.n, np.int64)
    np.add.at(extra, txn_rows, price)
    tc["amount_in_cents"] = tc["amount_in_cents"] + extra
    tc["offer"] = np.where(extra > 0, NULL, tc["offer"])
    tc.update(settlement_columns(tc))
    transactions.touch()
    refresh_purchase_updated_at(store)  # what activity recomputes, from the start
