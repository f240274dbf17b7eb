"""Seeded, vectorised generator of a consistent account.

`NULL_INT` is re-exported for callers that read nullable integer columns.

One `numpy.random.Generator(PCG64(seed))` drives everything in a fixed order, so the same seed,
scale, site count and clock give byte-identical data. Big tables are built column-wise here and
in `gen_sales`, their times at the pace of `gen_pace`; the small dimension tables in
`gen_catalog`; derived columns in `rollups`.
"""

from __future__ import annotations

import numpy as np

from creator_sync.sandbox import vocab as V
from creator_sync.sandbox.bundles import add_bundles
from creator_sync.sandbox.dataset import DAY, DIMENSIONS, SCALES, Store
from creator_sync.sandbox.gen_catalog import _dimensions
from creator_sync.sandbox.gen_helpers import i64, uniq
from creator_sync.sandbox.gen_live import live_collections
from creator_sync.sandbox.gen_pace import Pace, spread_choice
from creator_sync.sandbox.gen_sales import _orders, _purchases_and_transactions
from creator_sync.sandbox.payouts import rebuild_payouts
from creator_sync.sandbox.rollups import NULL_INT, derive_customer_links, recompute_net_revenue
from creator_sync.sandbox.store import NULL

__all__ = ["NULL_INT", "generate"]

HISTORY_DAYS = 548  # about 18 months of data before the clock
CURRENCY_SHARES = (0.7, 0.2, 0.1)  # customers buying in USD, EUR, GBP
CONVERSION = 0.45  # contacts who become customers (those whose purchase is still to come are not)


def generate(
    seed: int, scale: str, sites: int, now: int, settlement_delay_days: int = 2,
    payout_corrections: bool = False,
) -> Store:
    if scale not in SCALES:
        raise ValueError(f"unknown scale {scale!r}; choose one of {', '.join(SCALES)}")
    if sites < 1 or sites > 999:
        raise ValueError(f"sites must be between 1 and 999, got {sites}")
    rng = np.random.Generator(np.random.PCG64(seed))
    store = Store(seed=seed, scale=scale, now=now, settlement_delay_days=settlement_delay_days,
                  payout_corrections=payout_corrections)
    start = now - HISTORY_DAYS * DAY
    pace = Pace(start, now)
    _sites(store, rng, sites, start)
    _dimensions(store, rng, sites, start, DIMENSIONS[scale])
    _contacts(store, rng, pace, SCALES[scale], sites)
    _customers(store, rng)
    txn = _purchases_and_transactions(store, rng, pace)
    _orders(store, rng, pace, txn)
    add_bundles(store)
    _form_submissions(store, rng, pace)
    _tags(store, rng)
    live_collections(store, pace, sites, DIMENSIONS[scale])
    derive_customer_links(store)
    recompute_net_revenue(store)
    _hooks(store)
    rebuild_payouts(store)
    return store


def _sites(store: Store, rng: np.random.Generator, count: int, start: int) -> None:
    created = start - rng.integers(30, 400, count) * DAY
    # last edited some weeks after creation (no draw: the seeded stream stays as it was)
    updated = created + (np.arange(count) * 37 % 90 + 10) * DAY
    store.new_table("sites").set_columns({
        "created_at": i64(created),
        "updated_at": i64(updated),
        "timezone": rng.integers(0, len(V.TIMEZONES), count).astype(np.int8),
    })
    blogs = store.new_table("blogs")
    blogs.set_columns({"site": np.arange(count, dtype=np.int64), "created_at": i64(created)})


def _contacts(store: Store, rng: np.random.Generator, pace: Pace, total: int, sites: int) -> None:
    now = store.now
    n = total
    created = pace.spread(rng, pace.start, now - 3600, n)
    site = spread_choice(rng, n, (1 / sites,) * sites).astype(np.int64)  # sites alike, at any time
    latest = min(n, 3 * sites)
    site[n - latest:] = np.arange(latest) % sites  # every site has recent sign-ups
    # an edit after the clock has not happened yet: the contact is as it was created
    updated = created + (rng.exponential(15.0, n) * DAY).astype(np.int64)
    updated = np.where((rng.random(n) < 0.3) | (updated > now - 60), created, updated)
    store.new_table("contacts").set_columns({
        "site": site,
        "created_at": created,
        "updated_at": updated,
        "first": rng.integers(0, len(V.FIRST_NAMES), n).astype(np.int16),
        "last": rng.integers(0, len(V.LAST_NAMES), n).astype(np.int16),
        "place": rng.integers(0, len(V.PLACES), n).astype(np.int16),
        "has_phone": rng.random(n) < 0.7,
        "has_business": rng.random(n) < 0.1,
        "subscribed": rng.random(n) < 0.62,
        "c1": rng.integers(0, len(V.COMPANIES), n).astype(np.int8),
        "c2": rng.integers(0, len(V.ROLES), n).astype(np.int8),
        "c3": rng.integers(0, len(V.REFERRALS), n).astype(np.int8),
        "customer": np.full(n, NULL, np.int64),
    })


def _customers(store: Store, rng: np.random.Generator) -> None:
    contacts = store.table("contacts")
    now = store.now
    n = contacts.n
    chosen = np.flatnonzero(spread_choice(rng, n, (1 - CONVERSION, CONVERSION)))
    delay = (rng.random(len(chosen)) * 30 * DAY * (rng.random(len(chosen)) < 0.5)).astype(np.int64)
    created = contacts.cols["created_at"][chosen] + delay
    # a contact who buys only after the clock is not a customer yet
    converted = created <= now - 120
    chosen, created = chosen[converted], created[converted]
    m = len(chosen)
    order = np.argsort(created, kind="stable")
    chosen, created = chosen[order], created[order]
    contacts.cols["customer"][chosen] = np.arange(m)
    last_request = created + ((now - created) * rng.random(m)).astype(np.int64)
    last_request[rng.random(m) < 0.1] = NULL
    bounced = np.where(rng.random(m) < 0.03, created + DAY, NULL)
    store.new_table("customers").set_columns({
        "contact": chosen.astype(np.int64),
        "site": contacts.cols["site"][chosen],
        "created_at": created,
        "updated_at": created.copy(),
        "currency": spread_choice(rng, m, CURRENCY_SHARES).astype(np.int8),
        "has_ext": rng.random(m) < 0.5,
        "has_avatar": rng.random(m) < 0.6,
        "has_socials": rng.random(m) < 0.4,
        "has_bio": rng.random(m) < 0.3,
        "sign_in_count": rng.integers(0, 120, m).astype(np.int64),
        "last_request_at": last_request,
        "bounced_at": bounced.astype(np.int64),
        "net_revenue_cents": np.zeros(m, np.int64),
    })


def _form_submissions(store: Store, rng: np.random.Generator, pace: Pace) -> None:
    """Submissions, each by a contact some days after signing up (`Pace.after`)."""
    contacts, forms = store.table("contacts"), store.table("forms")
    now = store.now
    count = max(1, round(contacts.n * 0.2))
    contact, created = pace.after(rng, contacts.cols["created_at"], now - 60, count, 5.0)
    order = np.argsort(created, kind="stable")
    contact, created = contact[order], created[order]
    site = contacts.cols["site"][contact]
    form = np.empty(count, np.int64)
    for s in uniq(site).tolist():
        rows = np.flatnonzero(site == s)
        pool = np.flatnonzero(forms.cols["site"] == s)
        form[rows] = pool[rng.integers(0, len(pool), len(rows))]
    store.new_table("form_submissions").set_columns({
        "contact": contact.astype(np.int64), "form": form, "site": site, "created_at": created})


def _tags(store: Store, rng: np.random.Generator) -> None:
    contacts, tags = store.table("contacts"), store.table("contact_tags")
    per_site = int((tags.cols["site"] == 0).sum())
    k = rng.integers(0, 4, contacts.n)
    parent = np.repeat(np.arange(contacts.n), k)
    child = contacts.cols["site"][parent] * per_site + rng.integers(0, per_site, len(parent))
    key = uniq(parent * (tags.n + 1) + child)
    store.link("contacts.tags").set(key // (tags.n + 1), key % (tags.n + 1))


def _hooks(store: Store) -> None:
    store.new_table("hooks").set_columns({
        "site": np.empty(0, np.int64), "event": np.empty(0, np.int8),
        "target_url": np.empty(0, object), "resource_id": np.empty(0, object),
        "created_at": np.empty(0, np.int64), "updated_at": np.empty(0, np.int64),
        "deleted": np.empty(0, bool),
    })
