"""The collections the live platform adds (addendum A5): contact notes, landing pages, podcasts.

They draw from their own generator, `PCG64([seed, LIVE_STREAM])`, so that the seeded stream of
every other table (and so its data) is the same as before they existed. Notes belong to existing
contacts and carry their site; landing pages and podcasts are a few per site.
"""

from __future__ import annotations

import numpy as np

from creator_sync.sandbox import vocab as V
from creator_sync.sandbox.dataset import DAY, Store
from creator_sync.sandbox.gen_helpers import i64, obj
from creator_sync.sandbox.gen_pace import Pace
from creator_sync.sandbox.store import NULL

LIVE_STREAM = 1
NOTE_SHARE = 0.12  # notes per contact, on average
EDITED_SHARE = 0.3  # notes edited after they were written
UNSUBSCRIBED_SHARE = 0.4  # contacts not subscribed now that were once (the rest never were)


def live_collections(store: Store, pace: Pace, sites: int,
                     dims: tuple[int, int, int, int, int]) -> None:
    rng = np.random.Generator(np.random.PCG64([store.seed, LIVE_STREAM]))
    _contact_notes(store, rng, pace)
    _landing_pages(store, rng, sites, pace.start, dims[4])
    _podcasts(store, rng, sites, pace.start, max(2, dims[2]))
    _subscription_changes(store, rng)
    _a_bounce_per_site(store)


def _contact_notes(store: Store, rng: np.random.Generator, pace: Pace) -> None:
    """Notes, each about a contact some weeks after signing up (`Pace.after`); an edit that
    would come after the clock has not happened yet."""
    contacts = store.table("contacts").cols
    now = store.now
    count = max(2, round(len(contacts["site"]) * NOTE_SHARE))
    contact, created = pace.after(rng, contacts["created_at"], now - 60, count, 20.0)
    edited = rng.random(count) < EDITED_SHARE
    updated = created + (rng.exponential(10, count) * DAY).astype(np.int64)
    updated = np.where(edited & (updated <= now - 60), updated, created)
    order = np.argsort(created, kind="stable")
    store.new_table("contact_notes").set_columns({
        "contact": i64(contact[order]), "site": i64(contacts["site"][contact[order]]),
        "created_at": i64(created[order]), "updated_at": i64(updated[order]),
        "text": rng.integers(0, len(V.NOTE_TEXTS), count).astype(np.int8)[order],
        "word": rng.integers(0, len(V.PRODUCT_WORDS), count).astype(np.int8)[order],
    })


def _landing_pages(store: Store, rng: np.random.Generator, sites: int, start: int,
                   per_site: int) -> None:
    L: dict[str, list] = {k: [] for k in ("site", "title", "created_at", "updated_at",
                                          "publish_at", "number")}
    for s in range(sites):
        for j in range(per_site):
            word = V.PRODUCT_WORDS[(s * 5 + j * 3) % len(V.PRODUCT_WORDS)]
            kind = V.LANDING_KINDS[(s + j) % len(V.LANDING_KINDS)]
            created = int(start + rng.integers(0, 480) * DAY + rng.integers(0, DAY))
            L["site"].append(s)
            L["title"].append(f"{word} {kind}")
            L["created_at"].append(created)
            L["updated_at"].append(created + int(rng.integers(0, 40)) * DAY)
            delay, draft = int(rng.integers(1, 10)), rng.random() < 0.3
            # the last page of each site is a draft: even `tiny` shows a null publish_at
            L["publish_at"].append(NULL if draft or j == per_site - 1 else created + delay * DAY)
            L["number"].append(j)
    store.new_table("landing_pages").set_columns({
        **{k: i64(v) for k, v in L.items() if k != "title"}, "title": obj(L["title"])})


def _podcasts(store: Store, rng: np.random.Generator, sites: int, start: int,
              per_site: int) -> None:
    P: dict[str, list] = {k: [] for k in (
        "site", "title", "word", "language", "status", "show_type", "migrated", "public",
        "ready", "created_at", "updated_at", "category_mask")}
    for s in range(sites):
        for j in range(per_site):
            word = (s * 7 + j * 4 + 3) % len(V.PRODUCT_WORDS)
            fmt = V.PODCAST_FORMATS[(s + j) % len(V.PODCAST_FORMATS)]
            created = int(start + rng.integers(0, 400) * DAY + rng.integers(0, DAY))
            P["site"].append(s)
            P["title"].append(fmt.format(word=V.PRODUCT_WORDS[word]))
            P["word"].append(word)
            P["language"].append(0 if rng.random() < 0.7 else int(rng.integers(1, 4)))
            P["status"].append(0 if rng.random() < 0.8 else 1)
            P["show_type"].append(int(rng.random() < 0.25))
            P["migrated"].append(bool(rng.random() < 0.2))
            P["public"].append(bool(rng.random() < 0.85))
            P["ready"].append(bool(rng.random() < 0.9))
            P["created_at"].append(created)
            P["updated_at"].append(created + int(rng.integers(0, 60)) * DAY)
            # a bit mask over PODCAST_CATEGORIES: one to three categories
            picks = rng.choice(len(V.PODCAST_CATEGORIES), int(rng.integers(1, 4)), replace=False)
            P["category_mask"].append(int(sum(1 << int(k) for k in picks)))
    store.new_table("podcasts").set_columns({
        "site": i64(P["site"]), "title": obj(P["title"]), "word": i64(P["word"]),
        "language": np.asarray(P["language"], np.int8),
        "status": np.asarray(P["status"], np.int8),
        "show_type": np.asarray(P["show_type"], np.int8),
        **{k: np.asarray(P[k], bool) for k in ("migrated", "public", "ready")},
        "created_at": i64(P["created_at"]), "updated_at": i64(P["updated_at"]),
        "category_mask": i64(P["category_mask"]),
    })


def _subscription_changes(store: Store, rng: np.random.Generator) -> None:
    """`subscription_at`: when a contact's subscription last changed (A6's subscribed_in_last,
    unsubscribed_in_last, never_subscribed). Subscribed contacts opted in when they signed up;
    some of the others unsubscribed later; the rest never subscribed (NULL)."""
    contacts = store.table("contacts")
    cols = contacts.cols
    n = len(cols["created_at"])
    once = rng.random(n) < UNSUBSCRIBED_SHARE
    left = np.minimum(cols["created_at"] + (rng.exponential(60, n) * DAY).astype(np.int64),
                      store.now - 60)
    left = np.maximum(left, cols["created_at"])
    cols["subscription_at"] = np.where(cols["subscribed"], cols["created_at"],
                                       np.where(once, left, NULL)).astype(np.int64)
    contacts.touch()


def _a_bounce_per_site(store: Store) -> None:
    """Every site has a customer whose email bounces (A6's is_hard_bouncing, bounced_in_last):
    where none drew one, the site's first customer bounced the day after it joined."""
    customers = store.table("customers")
    cols = customers.cols
    for site in range(store.table("sites").n):
        mine = np.flatnonzero(cols["site"] == site)
        if len(mine) and not (cols["bounced_at"][mine] != NULL).any():
            cols["bounced_at"][mine[0]] = cols["created_at"][mine[0]] + DAY
    customers.touch()
