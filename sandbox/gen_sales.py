"""Purchases, their transactions and orders, generated column-wise.

Every site is guaranteed the rare cases (refund, dispute, test, failed and pending transactions,
quantity 2, recent sales) so that even `tiny` exercises every path of the pipeline and models.
"""

from __future__ import annotations

import numpy as np

from creator_sync.sandbox import vocab as V
from creator_sync.sandbox.dataset import DAY, Store
from creator_sync.sandbox.gen_helpers import uniq
from creator_sync.sandbox.gen_pace import Pace, spread_choice
from creator_sync.sandbox.rollups import refresh_purchase_updated_at, settlement_columns
from creator_sync.sandbox.store import NULL

REPEAT_PURCHASES = 0.3  # purchases per customer after the first, on average
REPEAT_AFTER_DAYS = 90.0  # mean days from joining to a later purchase
ORDER_AFTER_DAYS = 60.0  # mean days from joining to an order
MONTHLY_CHURN = 0.16  # monthly subscribers who cancel at each renewal (~6 months on average)
RECENT_SALE_DAYS = 6  # days before the clock's own with a platform_payments sale on every site


def _pick_offers(store: Store, rng: np.random.Generator, site: np.ndarray,
                 currency: np.ndarray) -> np.ndarray:
    """For each (site, currency) draw a live offer of that site priced in that currency."""
    offers = store.table("offers")
    out = np.empty(len(site), np.int64)
    live = ~offers.cols["archived"]
    for s in uniq(site).tolist():
        for c in range(3):
            rows = np.flatnonzero((site == s) & (currency == c))
            if not len(rows):
                continue
            pool = np.flatnonzero(live & (offers.cols["site"] == s) & (offers.cols["currency"] == c))
            free = pool[offers.cols["ptype"][pool] == 3]
            paid = pool[offers.cols["ptype"][pool] != 3]
            draw = paid[spread_choice(rng, len(rows), (1 / len(paid),) * len(paid))]
            if len(free):
                use_free = rng.random(len(rows)) < 0.05
                draw[use_free] = free[rng.integers(0, len(free), int(use_free.sum()))]
            out[rows] = draw
    return out


def _purchases_and_transactions(
    store: Store, rng: np.random.Generator, pace: Pace
) -> dict[str, np.ndarray]:
    """Purchases, and their transactions (returned: the order payments are added later)."""
    customers, offers = store.table("customers"), store.table("offers")
    now = store.now
    m = customers.n
    joined = customers.cols["created_at"]
    # the first purchase when the customer joins; later ones some months after
    repeats = int(rng.poisson(REPEAT_PURCHASES, m).sum())
    later, later_at = pace.after(rng, joined, now - 120, repeats, REPEAT_AFTER_DAYS)
    cust = np.concatenate([np.arange(m), later])
    created = np.concatenate([joined, later_at])
    # a platform_payments sale on each of the last days of every site, so that pending and
    # in-transit payouts exist even at `tiny`
    forced, extra_cust, extra_at = _recent_sales(store, rng, cust, created)
    cust = np.concatenate([cust, extra_cust])
    created = np.concatenate([created, extra_at])
    forced_platform = np.zeros(len(cust), bool)
    forced_platform[forced] = True
    forced_platform[len(cust) - len(extra_cust):] = True
    order = np.argsort(created, kind="stable")
    cust, created, forced_platform = cust[order], created[order], forced_platform[order]
    p = len(cust)
    site = customers.cols["site"][cust]
    offer = _pick_offers(store, rng, site, customers.cols["currency"][cust])
    ptype = offers.cols["ptype"][offer]
    one = np.flatnonzero(ptype == 0)
    qty_two = at_least_one_per_site(rng.random(len(one)) < 0.05, site[one], rng)
    qty = np.ones(p, np.int64)
    qty[one[qty_two]] = 2
    amount = offers.cols["price_in_cents"][offer] * qty
    provider = rng.choice(3, p, p=[0.6, 0.3, 0.1]).astype(np.int8)
    provider[forced_platform] = 0
    deactivated = np.full(p, NULL, np.int64)
    reason = np.full(p, -1, np.int8)

    segments: list[dict[str, np.ndarray]] = []

    def add(rows: np.ndarray, at: np.ndarray, action: int, state: int, sign: int) -> None:
        segments.append({"purchase": rows, "created_at": at,
                         "action": np.full(len(rows), action, np.int8),
                         "state": np.full(len(rows), state, np.int8),
                         "sign": np.full(len(rows), sign, np.int64)})

    # one-time purchases: a charge; some (at least one per site) refunded, some disputed, days
    # later: only those whose day has come before the clock exist yet
    add(one, created[one], 0, 1, 1)
    r_at = created[one] + rng.integers(1, 20, len(one)) * DAY
    d_at = created[one] + rng.integers(10, 40, len(one)) * DAY
    r_due, d_due = r_at <= now - DAY, d_at <= now - DAY
    refunded = at_least_one_per_site((rng.random(len(one)) < 0.06) & r_due, site[one], rng,
                                     exclude=~r_due)
    disputed = at_least_one_per_site((rng.random(len(one)) < 0.012) & d_due & ~refunded,
                                     site[one], rng, exclude=refunded | ~d_due)
    refund = one[refunded]
    add(refund, r_at[refunded], 1, 1, -1)
    deactivated[refund], reason[refund] = r_at[refunded], 0
    dispute = one[disputed]
    add(dispute, d_at[disputed], 6, 1, -1)
    deactivated[dispute], reason[dispute] = d_at[disputed], 3
    # every site's payout lines show a refund and a dispute (A3's line types): the earliest of
    # each goes through the platform's processor when none drew it (no draw)
    for rows in (refund, dispute):
        for s in uniq(site[rows]).tolist():
            mine = rows[site[rows] == s]
            if not (provider[mine] == 0).any():
                provider[mine[0]] = 0

    # subscriptions: a subscription_charge each period until deactivated
    subs = np.flatnonzero((ptype == 1) | (ptype == 2))
    period = np.where(ptype[subs] == 1, 30, 365).astype(np.int64) * DAY
    lifetime = np.where(ptype[subs] == 1, rng.geometric(MONTHLY_CHURN, len(subs)),
                        rng.geometric(0.5, len(subs)))
    end = created[subs] + lifetime * period - rng.integers(1, 5, len(subs)) * DAY
    ended = end <= now - 60
    deactivated[subs[ended]] = end[ended]
    reason[subs[ended]] = np.where(rng.random(int(ended.sum())) < 0.8, 1, 2)
    stop = np.minimum(end, now - 60)
    charges = np.maximum((stop - created[subs] - 1) // period + 1, 1)
    rows = np.repeat(subs, charges)
    k = np.arange(len(rows)) - np.repeat(np.cumsum(charges) - charges, charges)
    at = created[rows] + k * np.repeat(period, charges)
    add(rows, at, 3, 1, 1)
    failed = at_least_one_per_site(rng.random(len(rows)) < 0.03, site[rows], rng)
    add(rows[failed], at[failed] - 3600, 3, 2, 1)
    add(subs, created[subs], 2, 1, 0)  # the internal `subscribe` record, amount 0

    # internal-only records: free purchases, tests, pending attempts
    free = np.flatnonzero(ptype == 3)
    add(free, created[free], 4, 1, 0)
    test = np.flatnonzero(at_least_one_per_site(rng.random(p) < 0.02, site, rng))
    add(test, created[test] + 30, 5, 1, 1)
    pending = np.flatnonzero(at_least_one_per_site(rng.random(p) < 0.01, site, rng))
    add(pending, created[pending] + 90, 0, 0, 1)

    seg = {k: np.concatenate([s[k] for s in segments]) for k in segments[0]}
    pur = seg["purchase"]
    t_amount = amount[pur] * seg["sign"]
    currency = offers.cols["currency"][offer][pur]
    tax = np.where((currency > 0) & (rng.random(len(pur)) < 0.3), np.round(t_amount / 6), 0)
    txn = {
        "purchase": pur.astype(np.int64),
        "customer": cust[pur].astype(np.int64),
        "offer": offer[pur].astype(np.int64),
        "order": np.full(len(pur), NULL, np.int64),
        "created_at": seg["created_at"].astype(np.int64),
        "action": seg["action"], "state": seg["state"],
        "provider": provider[pur],
        "currency": currency.astype(np.int8),
        "ptype": ptype[pur].astype(np.int8),
        "amount_in_cents": t_amount.astype(np.int64),
        "sales_tax_in_cents": tax.astype(np.int64),
    }
    store.new_table("purchases").set_columns({
        "customer": cust.astype(np.int64), "offer": offer, "site": site,
        "created_at": created, "updated_at": created.copy(), "amount_in_cents": amount,
        "quantity": qty, "currency": currency_of(offers, offer), "ptype": ptype.astype(np.int8),
        "deactivated_at": deactivated, "reason": reason,
        "opt_in": rng.random(p) < 0.55,
        "coupon": np.where(rng.random(p) < 0.15, rng.integers(0, len(V.COUPONS), p), -1
                           ).astype(np.int8),
        "source": rng.choice(4, p, p=[0.8, 0.08, 0.07, 0.05]).astype(np.int8),
        "referrer": np.where(rng.random(p) < 0.4, rng.integers(0, len(V.REFERRERS), p), -1
                             ).astype(np.int8),
        "zip": rng.integers(10000, 99999, p).astype(np.int64),
        "extra": rng.random(p) < 0.2,
    })
    return txn


def at_least_one_per_site(mask: np.ndarray, site: np.ndarray, rng: np.random.Generator,
                          exclude: np.ndarray | None = None) -> np.ndarray:
    """Make sure every site present has at least one True (so `tiny` shows every case)."""
    mask = mask.copy()
    for s in uniq(site).tolist():
        mine = site == s
        if exclude is not None:
            mine &= ~exclude
        if mine.any() and not (mask & mine).any():
            rows = np.flatnonzero(mine)
            mask[rows[rng.integers(0, len(rows))]] = True
    return mask


def _recent_sales(store: Store, rng: np.random.Generator, cust: np.ndarray,
                  created: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A platform_payments sale per site on each of the last `RECENT_SALE_DAYS` UTC days: one
    of that day's purchases where the site has one (the rows returned first), else one more
    purchase by a customer older than a week (its customer and time). Adding a sale where one
    exists would lift the last days above the pace of the business."""
    customers = store.table("customers")
    now = store.now
    site = customers.cols["site"][cust]
    today = now // DAY * DAY
    forced, custs, times = [], [], []
    for s in range(store.table("sites").n):
        pool = np.flatnonzero((customers.cols["site"] == s)
                              & (customers.cols["created_at"] < now - 7 * DAY))
        for d in range(1, RECENT_SALE_DAYS + 1):
            day = today - d * DAY
            that_day = np.flatnonzero((site == s) & (created >= day) & (created < day + DAY))
            if len(that_day):
                forced.append(int(that_day[rng.integers(0, len(that_day))]))
            elif len(pool):
                custs.append(int(pool[rng.integers(0, len(pool))]))
                times.append(day + int(rng.integers(0, DAY)))
    return (np.asarray(forced, np.int64), np.asarray(custs, np.int64),
            np.asarray(times, np.int64))


def currency_of(offers, offer_rows: np.ndarray) -> np.ndarray:
    return offers.cols["currency"][offer_rows].astype(np.int8)


def _orders(store: Store, rng: np.random.Generator, pace: Pace,
            txn: dict[str, np.ndarray]) -> None:
    """Orders, each by a customer some weeks after joining (`Pace.after`)."""
    customers, products = store.table("customers"), store.table("products")
    now = store.now
    count = max(1, round(store.table("contacts").n * 0.24))
    cust, created = pace.after(rng, customers.cols["created_at"], now - 120, count,
                               ORDER_AFTER_DAYS)
    order = np.argsort(created, kind="stable")
    cust, created = cust[order], created[order]
    site = customers.cols["site"][cust]
    number = np.zeros(count, np.int64)
    for s in uniq(site).tolist():
        rows = np.flatnonzero(site == s)
        number[rows] = 1001 + np.arange(len(rows))
    fulfilled = created + rng.integers(DAY // 2, 5 * DAY, count)
    # open orders: some never shipped, the latest not yet; at least one per site
    fulfilled[at_least_one_per_site((rng.random(count) < 0.15) | (fulfilled > now - 60), site,
                                    rng)] = NULL

    n_items = 1 + rng.binomial(2, 0.25, count)
    item_order = np.repeat(np.arange(count), n_items)
    k = len(item_order)
    live = np.flatnonzero(~products.cols["archived"])
    item_product = np.empty(k, np.int64)
    item_site = site[item_order]
    for s in uniq(item_site).tolist():
        rows = np.flatnonzero(item_site == s)
        pool = live[products.cols["site"][live] == s]
        item_product[rows] = pool[rng.integers(0, len(pool), len(rows))]
    unit = rng.integers(5, 150, k) * 100 - 1
    quantity = np.where(at_least_one_per_site(rng.random(k) < 0.2, item_site, rng), 2, 1
                        ).astype(np.int64)
    subtotal = unit * quantity
    discount = np.where(rng.random(k) < 0.1, np.minimum(500, subtotal // 2), 0)
    taxed = rng.random(count) < 0.25
    tax = np.where(taxed[item_order], np.round((subtotal - discount) * 0.08), 0).astype(np.int64)
    total = subtotal - discount + tax
    sums = {name: np.bincount(item_order, weights=arr, minlength=count).astype(np.int64)
            for name, arr in (("subtotal", subtotal), ("discount", discount), ("tax", tax),
                              ("total", total))}
    currency = customers.cols["currency"][cust].astype(np.int8)
    store.new_table("orders").set_columns({
        "customer": cust.astype(np.int64), "site": site, "created_at": created,
        "number": number, "fulfilled_at": fulfilled, "currency": currency,
        "subtotal": sums["subtotal"], "discount": sums["discount"], "tax": sums["tax"],
        "total": sums["total"],
    })
    kind, item = item_refs(store, np.arange(k), item_product)
    store.new_table("order_items").set_columns({
        "order": item_order.astype(np.int64), "site": item_site.astype(np.int64),
        "item_kind": kind, "item": item, "quantity": quantity,
        "subtotal": subtotal.astype(np.int64), "discount": discount.astype(np.int64),
        "tax": tax, "total": total.astype(np.int64), "created_at": created[item_order],
        "fulfilled_at": fulfilled[item_order], "currency": currency[item_order],
    })
    pay = {
        "purchase": np.full(count, NULL, np.int64), "customer": cust.astype(np.int64),
        "offer": np.full(count, NULL, np.int64), "order": np.arange(count, dtype=np.int64),
        "created_at": created.copy(), "action": np.zeros(count, np.int8),
        "state": np.ones(count, np.int8),
        "provider": rng.choice(3, count, p=[0.6, 0.3, 0.1]).astype(np.int8),
        "currency": currency, "ptype": np.zeros(count, np.int8),
        "amount_in_cents": sums["total"], "sales_tax_in_cents": sums["tax"],
    }
    merged = {k: np.concatenate([txn[k], pay[k]]) for k in txn}
    order = np.argsort(merged["created_at"], kind="stable")
    merged = {k: v[order] for k, v in merged.items()}
    merged.update(settlement_columns(merged))
    store.new_table("transactions").set_columns(merged)
    refresh_purchase_updated_at(store)


OFFER_ITEM_EVERY = 8  # about one order item in 8 sells an offer (item_type Offer), the rest a product


def item_refs(store: Store, rows: np.ndarray, products: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(item kind, item row) of order items: kind 0 is the product itself; for about one row in
    `OFFER_ITEM_EVERY` (a hash of the row, no draw, so the seeded stream is unchanged) kind 1, a
    live offer that sells that product, when it has one."""
    offers, link = store.table("offers"), store.link("offers.products")
    live = ~offers.cols["archived"][link.parent]
    sold, offer = link.child[live], link.parent[live]
    order = np.lexsort((offer, sold))
    sold, offer = sold[order], offer[order]
    kind = np.zeros(len(rows), np.int8)
    item = np.asarray(products, np.int64).copy()
    if not len(sold):
        return kind, item
    pos = np.minimum(np.searchsorted(sold, item), len(sold) - 1)
    mixed = (np.asarray(rows, np.uint64) * np.uint64(2654435761)) % np.uint64(2**32)
    use = ((mixed % np.uint64(OFFER_ITEM_EVERY)) == 0) & (sold[pos] == item)
    kind[use] = 1
    item[use] = offer[pos[use]]
    return kind, item
