"""The small per-site dimension tables: products, offers, courses (modules, lessons, media),
tags, custom fields, forms (fields), blog posts and website pages. Plain loops: they are small."""

from __future__ import annotations

import numpy as np

from creator_sync.sandbox import vocab as V
from creator_sync.sandbox.dataset import DAY, Store
from creator_sync.sandbox.gen_helpers import i64, obj
from creator_sync.sandbox.store import NULL

PRICES = (  # by payment type: one-time, monthly, annual, free
    (2900, 4900, 9900, 19900, 29900, 49900), (1900, 2900, 4900), (19900, 29900, 49900), (0,))


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
