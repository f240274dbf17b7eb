"""Seeded, vectorised generator of a consistent account.

One `numpy.random.Generator(PCG64(seed))` drives everything in a fixed order, so the same seed,
scale, site count and clock give byte-identical data. Big tables are built column-wise; the
small dimension tables (products, offers, forms, courses...) with plain loops.
"""

from __future__ import annotations

import numpy as np

from sandbox import vocab as V
from sandbox.dataset import DAY, DIMENSIONS, SCALES, Store
from sandbox.payouts import rebuild_payouts
from sandbox.store import NULL

HISTORY_DAYS = 548  # about 18 months of data before the clock
PRICES = (  # by payment type: one-time, monthly, annual, free
    (2900, 4900, 9900, 19900, 29900, 49900), (1900, 2900, 4900), (19900, 29900, 49900), (0,))


def uniq(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values (numpy 2's hashing `np.unique` is several times slower here)."""
    ordered = np.sort(values, kind="stable")
    if not len(ordered):
        return ordered
    keep = np.empty(len(ordered), bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


def obj(values: list) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def i64(values) -> np.ndarray:
    return np.asarray(values, dtype=np.int64)


def generate(
    seed: int, scale: str, sites: int, now: int, settlement_delay_days: int = 2
) -> Store:
    if scale not in SCALES:
        raise ValueError(f"unknown scale {scale!r}; choose one of {', '.join(SCALES)}")
    if sites < 1 or sites > 999:
        raise ValueError(f"sites must be between 1 and 999, got {sites}")
    rng = np.random.Generator(np.random.PCG64(seed))
    store = Store(seed=seed, scale=scale, now=now, settlement_delay_days=settlement_delay_days)
    start = now - HISTORY_DAYS * DAY
    _sites(store, rng, sites, start)
    _dimensions(store, rng, sites, start, DIMENSIONS[scale])
    _contacts(store, rng, SCALES[scale], sites, start)
    _customers(store, rng)
    txn = _purchases_and_transactions(store, rng)
    _orders(store, rng, txn)
    _form_submissions(store, rng)
    _tags(store, rng)
    derive_customer_links(store)
    recompute_net_revenue(store)
    _hooks(store)
    rebuild_payouts(store)
    return store


def _sites(store: Store, rng: np.random.Generator, count: int, start: int) -> None:
    created = start - rng.integers(30, 400, count) * DAY
    store.new_table("sites").set_columns({
        "created_at": i64(created),
        "timezone": rng.integers(0, len(V.TIMEZONES), count).astype(np.int8),
    })
    blogs = store.new_table("blogs")
    blogs.set_columns({"site": np.arange(count, dtype=np.int64), "created_at": i64(created)})


def _dimensions(
    store: Store, rng: np.random.Generator, sites: int, start: int,
    dims: tuple[int, int, int, int, int],
) -> None:
    n_products, n_tags, n_forms, n_posts, n_pages = dims
    P: dict[str, list] = {k: [] for k in (
        "site", "title", "status", "ptype", "publish", "created_at", "archived", "thumb")}
    OF: dict[str, list] = {k: [] for k in (
        "site", "title", "currency", "price", "ptype", "archived", "created_at", "internal",
        "image", "method")}
    offer_products: list[tuple[int, int]] = []
    for s in range(sites):
        base_p = len(P["site"])
        for j in range(n_products):
            word = V.PRODUCT_WORDS[(s * 7 + j) % len(V.PRODUCT_WORDS)]
            kind = V.PRODUCT_KINDS[(s + j) % len(V.PRODUCT_KINDS)]
            P["site"].append(s)
            P["title"].append(f"{word} {kind}" + (f" {j // 20 + 1}" if j >= 20 else ""))
            P["status"].append(int(rng.integers(0, 2)))
            P["ptype"].append(0 if j % 2 == 0 else int(rng.integers(1, 4)))
            P["publish"].append(0 if rng.random() < 0.85 else 1)
            P["created_at"].append(int(start - rng.integers(1, 200) * DAY))
            P["archived"].append(j >= 3 and rng.random() < 0.08)
            P["thumb"].append(rng.random() < 0.8)
        # offers: every site sells in USD, EUR and GBP, one-time and subscriptions, plus a free one
        plan = [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (2, 0), (0, 3)]
        extra = max(0, int(n_products * 1.7) - len(plan))
        plan += [(int(rng.choice(3, p=[0.6, 0.25, 0.15])), int(rng.integers(0, 3)))
                 for _ in range(extra)]
        for k, (cur, ptype) in enumerate(plan):
            row = len(OF["site"])
            product = base_p + (k % n_products)
            OF["site"].append(s)
            word = P["title"][product]
            label = ("", " Monthly", " Annual", " Free Preview")[ptype]
            OF["title"].append(f"{word}{label}" + (f" ({V.CURRENCIES[cur]})" if cur else ""))
            OF["currency"].append(cur)
            OF["price"].append(int(rng.choice(PRICES[ptype])))
            OF["ptype"].append(ptype)
            OF["archived"].append(k >= len(plan) - 1 and k >= 8 and rng.random() < 0.5)
            OF["created_at"].append(int(P["created_at"][product] + rng.integers(0, 5) * DAY))
            OF["internal"].append(f"{word} offer {k}" if rng.random() < 0.5 else None)
            OF["image"].append(rng.random() < 0.6)
            OF["method"].append(int(rng.integers(0, 3)))
            offer_products.append((row, product))
            if n_products > 1 and rng.random() < 0.3:
                other = base_p + int(rng.integers(0, n_products))
                if other != product:
                    offer_products.append((row, other))
    products = store.new_table("products")
    products.set_columns({
        "site": i64(P["site"]), "title": obj(P["title"]),
        "status": np.asarray(P["status"], np.int8), "ptype": np.asarray(P["ptype"], np.int8),
        "publish": np.asarray(P["publish"], np.int8), "created_at": i64(P["created_at"]),
        "archived": np.asarray(P["archived"], bool), "thumb": np.asarray(P["thumb"], bool),
        "members": np.zeros(len(P["site"]), np.int64),
    })
    offers = store.new_table("offers")
    offers.set_columns({
        "site": i64(OF["site"]), "title": obj(OF["title"]),
        "currency": np.asarray(OF["currency"], np.int8), "price_in_cents": i64(OF["price"]),
        "ptype": np.asarray(OF["ptype"], np.int8), "archived": np.asarray(OF["archived"], bool),
        "created_at": i64(OF["created_at"]), "internal_title": obj(OF["internal"]),
        "image": np.asarray(OF["image"], bool), "method": np.asarray(OF["method"], np.int8),
    })
    pairs = np.asarray(offer_products, dtype=np.int64)
    store.link("offers.products").set(pairs[:, 0], pairs[:, 1])

    _courses(store, rng, products)
    _tags_forms_fields(store, rng, sites, start, n_tags, n_forms, offers)
    _content(store, rng, sites, start, n_posts, n_pages)


def _courses(store: Store, rng: np.random.Generator, products) -> None:
    course_products = np.flatnonzero(products.cols["ptype"] == 0)
    C: dict[str, list] = {"product": [], "site": [], "created_at": []}
    M: dict[str, list] = {"course": [], "position": [], "publish": []}
    L: dict[str, list] = {"module": [], "course": [], "position": [], "status": [], "publish": []}
    D: dict[str, list] = {"lesson": [], "duration": [], "kind": []}
    seen_sites: set[int] = set()
    for p in course_products.tolist():
        site = int(products.cols["site"][p])
        course = len(C["product"])
        C["product"].append(p)
        C["site"].append(site)
        C["created_at"].append(int(products.cols["created_at"][p]))
        big = site not in seen_sites  # the first course of each site has > 30 lessons
        seen_sites.add(site)
        n_modules = 6 if big else int(rng.integers(2, 5))
        for m in range(n_modules):
            module = len(M["course"])
            M["course"].append(course)
            M["position"].append(m + 1)
            M["publish"].append(0 if rng.random() < 0.9 else 1)
            n_lessons = 6 if big else int(rng.integers(2, 5))
            for k in range(n_lessons):
                lesson = len(L["module"])
                L["module"].append(module)
                L["course"].append(course)
                L["position"].append(k + 1)
                L["status"].append(0 if rng.random() < 0.95 else int(rng.integers(1, 3)))
                L["publish"].append(1 if rng.random() < 0.8 else int(rng.choice([0, 2, 3])))
                for _ in range(1 if rng.random() < 0.7 else 2):
                    D["lesson"].append(lesson)
                    D["duration"].append(round(float(rng.uniform(0.5, 45.0)), 2))
                    D["kind"].append(int(rng.integers(0, len(V.MEDIA_KINDS))))
    store.new_table("courses").set_columns({k: i64(v) for k, v in C.items()})
    store.new_table("modules").set_columns({
        "course": i64(M["course"]), "position": i64(M["position"]),
        "publish": np.asarray(M["publish"], np.int8)})
    store.new_table("lessons").set_columns({
        "module": i64(L["module"]), "course": i64(L["course"]), "position": i64(L["position"]),
        "status": np.asarray(L["status"], np.int8), "publish": np.asarray(L["publish"], np.int8)})
    store.new_table("media").set_columns({
        "lesson": i64(D["lesson"]), "duration": np.asarray(D["duration"], np.float64),
        "kind": np.asarray(D["kind"], np.int8)})
    # courses.offers: the offers that sell the course's product
    op = store.link("offers.products")
    product_to_course = {p: c for c, p in enumerate(C["product"])}
    pairs = [(product_to_course[p], o) for o, p in zip(op.parent.tolist(), op.child.tolist(),
                                                       strict=True) if p in product_to_course]
    arr = np.asarray(pairs or np.empty((0, 2)), dtype=np.int64).reshape(-1, 2)
    store.link("courses.offers").set(arr[:, 0], arr[:, 1])


def _tags_forms_fields(
    store: Store, rng: np.random.Generator, sites: int, start: int, n_tags: int, n_forms: int,
    offers,
) -> None:
    T: dict[str, list] = {"site": [], "word": [], "archived": [], "created_at": []}
    for s in range(sites):
        for j in range(n_tags):
            T["site"].append(s)
            T["word"].append(j)
            T["archived"].append(j >= 3 and rng.random() < 0.07)
            T["created_at"].append(int(start - rng.integers(1, 100) * DAY))
    store.new_table("contact_tags").set_columns({
        "site": i64(T["site"]), "word": i64(T["word"]),
        "archived": np.asarray(T["archived"], bool), "created_at": i64(T["created_at"])})

    CF: dict[str, list] = {"site": [], "slot": [], "ftype": [], "required": []}
    for s in range(sites):
        for slot in range(3):
            CF["site"].append(s)
            CF["slot"].append(slot)
            CF["ftype"].append(0 if slot != 1 else 5)
            CF["required"].append(slot == 0 and s % 2 == 0)
    store.new_table("custom_fields").set_columns({
        "site": i64(CF["site"]), "slot": i64(CF["slot"]), "ftype": i64(CF["ftype"]),
        "required": np.asarray(CF["required"], bool)})

    F: dict[str, list] = {"site": [], "default": [], "offer": [], "created_at": [],
                          "updated_at": [], "hook": [], "number": []}
    FD: dict[str, list] = {"form": [], "kind": [], "required": [], "editable": [],
                           "created_at": [], "handle_no": []}
    form_tags: list[tuple[int, int]] = []
    offer_sites = offers.cols["site"]
    for s in range(sites):
        site_offers = np.flatnonzero(offer_sites == s)
        for j in range(n_forms):
            form = len(F["site"])
            created = int(start - rng.integers(1, 150) * DAY)
            F["site"].append(s)
            F["default"].append(j == 0)
            F["offer"].append(int(rng.choice(site_offers)) if rng.random() < 0.4 else NULL)
            F["created_at"].append(created)
            F["updated_at"].append(created + int(rng.integers(0, 90)) * DAY)
            F["hook"].append(rng.random() < 0.3)
            F["number"].append(j)
            kinds = [0, 2] + [int(k) for k in rng.choice([1, 3, 4, 5, 6, 7, 8],
                                                        int(rng.integers(1, 4)), replace=False)]
            for pos, kind in enumerate(kinds):
                FD["form"].append(form)
                FD["kind"].append(kind)
                FD["required"].append(pos < 2)
                FD["editable"].append(pos >= 2)
                FD["created_at"].append(created)
                FD["handle_no"].append(j)
            for tag in rng.choice(n_tags, int(rng.integers(0, 3)), replace=False).tolist():
                form_tags.append((form, s * n_tags + int(tag)))
    store.new_table("forms").set_columns({
        "site": i64(F["site"]), "default": np.asarray(F["default"], bool),
        "offer": i64(F["offer"]), "created_at": i64(F["created_at"]),
        "updated_at": i64(F["updated_at"]), "hook": np.asarray(F["hook"], bool),
        "number": i64(F["number"])})
    store.new_table("fields").set_columns({
        "form": i64(FD["form"]), "kind": np.asarray(FD["kind"], np.int8),
        "required": np.asarray(FD["required"], bool),
        "editable": np.asarray(FD["editable"], bool), "created_at": i64(FD["created_at"]),
        "handle_no": i64(FD["handle_no"])})
    arr = np.asarray(form_tags or np.empty((0, 2)), dtype=np.int64).reshape(-1, 2)
    store.link("forms.contact_tags").set(arr[:, 0], arr[:, 1])


def _content(
    store: Store, rng: np.random.Generator, sites: int, start: int, n_posts: int, n_pages: int
) -> None:
    B: dict[str, list] = {"blog": [], "created_at": [], "updated_at": [], "published_at": [],
                          "topic": [], "number": []}
    W: dict[str, list] = {"site": [], "created_at": [], "updated_at": [], "number": []}
    for s in range(sites):
        for j in range(n_posts):
            created = int(start + rng.integers(0, 500) * DAY + rng.integers(0, DAY))
            B["blog"].append(s)
            B["created_at"].append(created)
            B["updated_at"].append(created + int(rng.integers(0, 20)) * DAY)
            B["published_at"].append(created + 3600 if rng.random() < 0.85 else NULL)
            B["topic"].append(int(rng.integers(0, len(V.PRODUCT_WORDS))))
            B["number"].append(j)
        for j in range(n_pages):
            created = int(start - rng.integers(0, 100) * DAY)
            W["site"].append(s)
            W["created_at"].append(created)
            W["updated_at"].append(created + int(rng.integers(0, 300)) * DAY)
            W["number"].append(j)
    store.new_table("blog_posts").set_columns({k: i64(v) for k, v in B.items()})
    store.new_table("website_pages").set_columns({k: i64(v) for k, v in W.items()})


def _contacts(store: Store, rng: np.random.Generator, total: int, sites: int, start: int) -> None:
    now = store.now
    n = total
    created = start + ((now - 3600 - start) * rng.random(n) ** 0.8).astype(np.int64)
    site = rng.integers(0, sites, n).astype(np.int64)
    recent = max(3 * sites, n // 20)  # a steady trickle of new contacts in the last 30 days
    created[-recent:] = now - (rng.random(recent) * 29 * DAY).astype(np.int64) - 3600
    site[-recent:] = np.arange(recent) % sites
    order = np.argsort(created, kind="stable")
    created, site = created[order], site[order]
    updated = np.minimum(created + (rng.exponential(15.0, n) * DAY).astype(np.int64), now - 60)
    updated = np.where(rng.random(n) < 0.3, created, np.maximum(updated, created))
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
    recent = contacts.cols["created_at"] >= now - 30 * DAY
    chosen = np.flatnonzero((rng.random(n) < 0.4) | (recent & (rng.random(n) < 0.6)))
    m = len(chosen)
    delay = (rng.random(m) * 30 * DAY * (rng.random(m) < 0.5)).astype(np.int64)
    created = np.minimum(contacts.cols["created_at"][chosen] + delay, now - 120)
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
        "currency": rng.choice(3, m, p=[0.7, 0.2, 0.1]).astype(np.int8),
        "has_ext": rng.random(m) < 0.5,
        "has_avatar": rng.random(m) < 0.6,
        "has_socials": rng.random(m) < 0.4,
        "has_bio": rng.random(m) < 0.3,
        "sign_in_count": rng.integers(0, 120, m).astype(np.int64),
        "last_request_at": last_request,
        "bounced_at": bounced.astype(np.int64),
        "net_revenue_cents": np.zeros(m, np.int64),
    })


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
            draw = paid[rng.integers(0, len(paid), len(rows))]
            if len(free):
                use_free = rng.random(len(rows)) < 0.05
                draw[use_free] = free[rng.integers(0, len(free), int(use_free.sum()))]
            out[rows] = draw
    return out


def _purchases_and_transactions(
    store: Store, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """Purchases, and their transactions (returned: the order payments are added later)."""
    customers, offers = store.table("customers"), store.table("offers")
    now = store.now
    m = customers.n
    per = 1 + rng.poisson(0.3, m)
    cust = np.repeat(np.arange(m), per)
    first = np.ones(len(cust), bool)
    first[1:] = cust[1:] != cust[:-1]
    c_created = customers.cols["created_at"][cust]
    created = np.where(first, c_created,
                       c_created + ((now - 60 - c_created) * rng.random(len(cust))).astype(np.int64))
    # recent platform_payments sales on each of the last days of every site, so that pending
    # and in-transit payouts exist even at `tiny`
    extra_cust, extra_at = _recent_sales(store, rng)
    cust = np.concatenate([cust, extra_cust])
    created = np.concatenate([created, extra_at])
    forced_platform = np.zeros(len(cust), bool)
    forced_platform[len(cust) - len(extra_cust):] = True
    order = np.argsort(created, kind="stable")
    cust, created, forced_platform = cust[order], created[order], forced_platform[order]
    p = len(cust)
    site = customers.cols["site"][cust]
    offer = _pick_offers(store, rng, site, customers.cols["currency"][cust])
    ptype = offers.cols["ptype"][offer]
    one = np.flatnonzero(ptype == 0)
    old_one = one[created[one] < now - 45 * DAY]
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

    # one-time purchases: a charge; some (at least one per site) refunded, some disputed
    add(one, created[one], 0, 1, 1)
    refunded = at_least_one_per_site(rng.random(len(old_one)) < 0.06, site[old_one], rng)
    disputed = at_least_one_per_site((rng.random(len(old_one)) < 0.012) & ~refunded,
                                     site[old_one], rng, exclude=refunded)
    refund = old_one[refunded]
    r_at = created[refund] + rng.integers(1, 20, len(refund)) * DAY
    add(refund, r_at, 1, 1, -1)
    deactivated[refund], reason[refund] = r_at, 0
    dispute = old_one[disputed]
    d_at = created[dispute] + rng.integers(10, 40, len(dispute)) * DAY
    add(dispute, d_at, 6, 1, -1)
    deactivated[dispute], reason[dispute] = d_at, 3

    # subscriptions: a subscription_charge each period until deactivated
    subs = np.flatnonzero((ptype == 1) | (ptype == 2))
    period = np.where(ptype[subs] == 1, 30, 365).astype(np.int64) * DAY
    lifetime = np.where(ptype[subs] == 1, rng.geometric(0.12, len(subs)),
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


def _recent_sales(store: Store, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One sale per site on each of the last 6 days, by customers older than a week."""
    customers = store.table("customers")
    now = store.now
    custs, times = [], []
    for s in range(store.table("sites").n):
        pool = np.flatnonzero((customers.cols["site"] == s)
                              & (customers.cols["created_at"] < now - 7 * DAY))
        if not len(pool):
            continue
        for d in range(1, 7):
            custs.append(int(pool[rng.integers(0, len(pool))]))
            times.append(now - d * DAY + int(rng.integers(0, 3600)))
    return np.asarray(custs, np.int64), np.asarray(times, np.int64)


def currency_of(offers, offer_rows: np.ndarray) -> np.ndarray:
    return offers.cols["currency"][offer_rows].astype(np.int8)


def _orders(store: Store, rng: np.random.Generator, txn: dict[str, np.ndarray]) -> None:
    customers, products = store.table("customers"), store.table("products")
    now = store.now
    count = max(1, round(store.table("contacts").n * 0.24))
    cust = rng.integers(0, customers.n, count)
    c_created = customers.cols["created_at"][cust]
    created = c_created + ((now - 120 - c_created) * rng.random(count)).astype(np.int64)
    order = np.argsort(created, kind="stable")
    cust, created = cust[order], created[order]
    site = customers.cols["site"][cust]
    number = np.zeros(count, np.int64)
    for s in uniq(site).tolist():
        rows = np.flatnonzero(site == s)
        number[rows] = 1001 + np.arange(len(rows))
    fulfilled = created + rng.integers(DAY // 2, 5 * DAY, count)
    fulfilled[(rng.random(count) < 0.15) | (fulfilled > now - 60)] = NULL

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
    quantity = np.where(rng.random(k) < 0.8, 1, 2).astype(np.int64)
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
    store.new_table("order_items").set_columns({
        "order": item_order.astype(np.int64), "product": item_product, "quantity": quantity,
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


def settlement_columns(txn: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Listed flag and settlement fields: only platform_payments rows carry settlement."""
    action, state = txn["action"], txn["state"]
    listed = np.isin(action, V.LISTED_ACTIONS) & (state == 1)
    platform = (txn["provider"] == 0) & listed
    amount = txn["amount_in_cents"]
    rate = np.asarray(V.FX_TO_USD_PPM, np.int64)[txn["currency"]]
    settle = (amount * rate + np.where(amount >= 0, 500_000, -500_000)) // 1_000_000
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


NULL_INT = np.iinfo(np.int64).min  # null in nullable integer columns


def refresh_purchase_updated_at(store: Store, rows: np.ndarray | None = None) -> None:
    """A purchase's updated_at is its latest transaction or deactivation time."""
    purchases, txn = store.table("purchases"), store.table("transactions")
    pur = txn.cols["purchase"]
    has = pur >= 0
    latest = np.full(purchases.n, NULL, np.int64)
    np.maximum.at(latest, pur[has], txn.cols["created_at"][has])
    updated = np.maximum(np.maximum(purchases.cols["created_at"], latest),
                         purchases.cols["deactivated_at"])
    purchases.cols["updated_at"] = updated
    charge = has & (txn.cols["action"] == 3) & (txn.cols["state"] == 1)
    purchases.cols["payments_made"] = np.bincount(pur[charge], minlength=purchases.n).astype(
        np.int64)
    purchases.touch()


def _form_submissions(store: Store, rng: np.random.Generator) -> None:
    contacts, forms = store.table("contacts"), store.table("forms")
    now = store.now
    count = max(1, round(contacts.n * 0.2))
    contact = rng.integers(0, contacts.n, count)
    c_created = contacts.cols["created_at"][contact]
    created = np.minimum(c_created + (rng.exponential(5, count) * DAY).astype(np.int64), now - 60)
    created = np.maximum(created, c_created)
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


def derive_customer_links(store: Store) -> None:
    """contacts.offers, customers.offers, customers.products and products' member counts."""
    purchases, customers = store.table("purchases"), store.table("customers")
    n_offers = store.table("offers").n
    key = uniq(purchases.cols["customer"] * n_offers + purchases.cols["offer"])
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
    customers, txn = store.table("customers"), store.table("transactions")
    listed = txn.cols["listed"]
    total = np.zeros(customers.n, np.int64)
    np.add.at(total, txn.cols["customer"][listed], txn.cols["amount_in_cents"][listed])
    customers.cols["net_revenue_cents"] = total
    customers.touch()


def _hooks(store: Store) -> None:
    store.new_table("hooks").set_columns({
        "site": np.empty(0, np.int64), "event": np.empty(0, np.int8),
        "target_url": np.empty(0, object), "resource_id": np.empty(0, object),
        "created_at": np.empty(0, np.int64), "updated_at": np.empty(0, np.int64),
        "deleted": np.empty(0, bool),
    })
