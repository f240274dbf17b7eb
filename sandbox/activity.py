"""`POST /_sandbox/activity`: advance the data and the clock deterministically.

Call k of the process draws from `PCG64([seed, k])`, so the same seed and the same sequence of
activity calls give the same data. Each event moves the clock by `seconds_per_event`; new rows
are stamped with the moving clock, so ids stay in creation order. New rows are collected in a
batch and appended once per call (appending per event would copy the big columns every time).
"""

from __future__ import annotations

import heapq

import numpy as np

from creator_sync.sandbox import deletes
from creator_sync.sandbox import rollups as G
from creator_sync.sandbox import vocab as V
from creator_sync.sandbox.dataset import DAY, Store
from creator_sync.sandbox.gen_sales import item_refs
from creator_sync.sandbox.payouts import rebuild_payouts
from creator_sync.sandbox.store import NULL

KINDS = (  # relative weights; sales dominate so that payouts keep flowing even at `tiny`
    ("contact", 0.14), ("purchase", 0.28), ("refund", 0.03),
    ("deactivate", 0.04), ("order", 0.09), ("tag_added", 0.10), ("tag_removed", 0.07),
    ("form", 0.09), ("update", 0.10), ("fulfil", 0.06), ("note", 0.05), ("content", 0.03),
)

# new sales mostly go through the platform's own processor, so payouts keep flowing
ACTIVITY_PROVIDERS = (0.75, 0.2, 0.05)


class Batch:
    """New rows per table (appended at the end of the call) with read-through lookups."""

    def __init__(self, store: Store):
        self.store = store
        self.rows: dict[str, list[dict]] = {}

    def add(self, type_name: str, values: dict) -> int:
        pending = self.rows.setdefault(type_name, [])
        pending.append(values)
        return self.store.tables[type_name].n + len(pending) - 1

    def get(self, type_name: str, row: int, column: str):
        table = self.store.tables[type_name]
        if row >= table.n:
            return self.rows[type_name][row - table.n][column]
        return table.cols[column][row].item()

    def set(self, type_name: str, row: int, column: str, value) -> None:
        table = self.store.tables[type_name]
        if row >= table.n:
            self.rows[type_name][row - table.n][column] = value
        else:
            table.cols[column][row] = value
            table.touch()

    def count(self, type_name: str) -> int:
        return self.store.tables[type_name].n + len(self.rows.get(type_name, []))

    def flush(self) -> None:
        for type_name in ("contacts", "customers", "purchases", "orders", "order_items",
                          "transactions", "form_submissions", "contact_notes"):
            pending = self.rows.get(type_name)
            if not pending:
                continue
            columns = {k: [r[k] for r in pending] for k in pending[0]}
            if type_name == "transactions":
                arrays = {k: np.asarray(v) for k, v in columns.items()}
                arrays["currency"] = arrays["currency"].astype(np.int8)
                arrays["action"] = arrays["action"].astype(np.int8)
                arrays["state"] = arrays["state"].astype(np.int8)
                arrays["provider"] = arrays["provider"].astype(np.int8)
                columns.update({k: v.tolist() for k, v in G.settlement_columns(arrays).items()})
            self.store.tables[type_name].append(columns)


class Activity:
    def __init__(self, store: Store, seed: int, seconds_per_event: int = 3600,
                 delete_rate: float = 0.0, customer_rule: str = "delete"):
        self.store = store
        self.delete_rate = delete_rate  # deletes.py; 0 in the internals' tests by default
        self.customer_rule = customer_rule
        self.seed = seed
        self.step = seconds_per_event
        self._due: list[tuple[int, int]] = []
        self._until = 0

    def run(self, count: int, advance_seconds: int = 0) -> tuple[dict, list[tuple[str, int, int]]]:
        """Apply `count` events; returns a summary and the webhook events (event, row, extra)."""
        store = self.store
        with store.lock:
            rng = np.random.Generator(np.random.PCG64([self.seed, store.activity_calls]))
            store.activity_calls += 1
            batch = Batch(store)
            events: list[tuple[str, int, int]] = []
            summary: dict[str, int] = {}
            names = [k for k, _ in KINDS]
            weights = np.asarray([w for _, w in KINDS])
            # every kind once (in a seeded order) when the call is big enough, then weighted
            sequence = [names[k] for k in rng.permutation(len(names))][:count]
            draws = rng.choice(len(names), max(0, count - len(sequence)),
                               p=weights / weights.sum())
            sequence += [names[int(k)] for k in draws]
            until = store.now + count * self.step + advance_seconds
            due = self._due_renewals(until)
            self._due, self._until = due, until  # new subscriptions join the schedule
            for kind in sequence:
                tick = store.now + self.step
                self._renew(due, until, tick, batch, events, summary)
                store.now = tick
                done = getattr(self, f"_{kind}")(rng, batch, events)
                if done:
                    summary[kind] = summary.get(kind, 0) + 1
            end = store.now + advance_seconds
            self._renew(due, until, end, batch, events, summary)
            store.now = end
            batch.flush()
            # deletes draw from their own stream: the same seed gives the same events whatever
            # the delete rate
            drng = np.random.Generator(np.random.PCG64([self.seed, store.activity_calls, 1]))
            summary.update(self._delete_some(drng, count, events))
            G.refresh_purchase_updated_at(store)
            G.derive_customer_links(store)
            G.recompute_net_revenue(store)
            rebuild_payouts(store)
            store.data_version += 1
            summary["events"] = count
            summary["now"] = store.now
            return summary, events

    # -- helpers ---------------------------------------------------------------------------
    def _pick(self, rng: np.random.Generator, n: int) -> int:
        """Bias towards recent rows: activity mostly touches recent customers and contacts."""
        return int(n - 1 - min(n - 1, int(rng.exponential(max(1.0, n / 5)))))

    def _pick_contact(self, rng: np.random.Generator, n: int) -> int:
        """`_pick` among contacts not deleted (the same draw as `_pick` when none is)."""
        for _ in range(8):
            row = self._pick(rng, n)
            if not self.store.is_deleted("contacts", row):
                return row
        return n - 1 if n > self.store.tables["contacts"].n else int(
            np.flatnonzero(self.store.alive("contacts"))[-1])

    def _delete_some(self, rng: np.random.Generator, count: int,
                     events: list[tuple[str, int, int]]) -> dict[str, int]:
        """Delete a few contacts and notes, as real accounts do (`delete_rate` per event),
        never a person this call's webhook events name (their payloads render them)."""
        store, out = self.store, {}
        if not self.delete_rate or not count:
            return out
        n_contacts, n_notes = (int(k) for k in rng.binomial(count, self.delete_rate, 2))
        pool = np.setdiff1d(deletes.deletable_contacts(store, self.customer_rule),
                            _named_contacts(store, events))
        for row in rng.choice(pool, min(n_contacts, len(pool)), replace=False).tolist():
            deletes.delete_contact(store, int(row), self.customer_rule)
            out["delete_contact"] = out.get("delete_contact", 0) + 1
        notes = np.flatnonzero(store.alive("contact_notes"))
        for row in rng.choice(notes, min(n_notes, len(notes)), replace=False).tolist():
            deletes.delete_note(store, int(row))
            out["delete_note"] = out.get("delete_note", 0) + 1
        return out

    def _new_contact(self, rng: np.random.Generator, batch: Batch) -> int:
        store = self.store
        row = batch.add("contacts", {
            "site": int(rng.integers(0, store.tables["sites"].n)), "created_at": store.now,
            "updated_at": store.now, "first": int(rng.integers(0, 32)),
            "last": int(rng.integers(0, 28)), "place": int(rng.integers(0, 12)),
            "has_phone": bool(rng.random() < 0.7), "has_business": False,
            "subscribed": bool(rng.random() < 0.6), "c1": 0, "c2": 0, "c3": 0, "customer": NULL,
            "subscription_at": NULL,
        })
        if batch.get("contacts", row, "subscribed"):  # opted in when signing up
            batch.set("contacts", row, "subscription_at", store.now)
        return row

    def _customer_for(self, rng: np.random.Generator, batch: Batch, contact: int) -> int:
        existing = batch.get("contacts", contact, "customer")
        if existing != NULL:
            return existing
        store = self.store
        customer = batch.add("customers", {
            "contact": contact, "site": batch.get("contacts", contact, "site"),
            "created_at": store.now, "updated_at": store.now,
            "currency": int(rng.choice(3, p=[0.7, 0.2, 0.1])), "has_ext": False,
            "has_avatar": False, "has_socials": False, "has_bio": False, "sign_in_count": 1,
            "last_request_at": store.now, "bounced_at": NULL, "net_revenue_cents": 0,
        })
        batch.set("contacts", contact, "customer", customer)
        batch.set("contacts", contact, "updated_at", store.now)
        return customer

    def _transaction(self, batch: Batch, *, purchase: int, customer: int, offer: int,
                     order: int, action: int, amount: int, currency: int, provider: int,
                     ptype: int, tax: int = 0, state: int = 1) -> int:
        return batch.add("transactions", {
            "purchase": purchase, "customer": customer, "offer": offer, "order": order,
            "created_at": self.store.now, "action": action, "state": state,
            "provider": provider, "currency": currency, "ptype": ptype,
            "amount_in_cents": amount, "sales_tax_in_cents": tax,
        })

    # -- events ----------------------------------------------------------------------------
    def _contact(self, rng, batch: Batch, events) -> bool:
        contact = self._new_contact(rng, batch)
        if rng.random() < 0.5:
            self._submit(rng, batch, events, contact)
        return True

    def _purchase(self, rng, batch: Batch, events) -> bool:
        store = self.store
        if rng.random() < 0.4:
            contact = self._new_contact(rng, batch)
        else:
            contact = self._pick_contact(rng, batch.count("contacts"))
        customer = self._customer_for(rng, batch, contact)
        site = batch.get("customers", customer, "site")
        currency = batch.get("customers", customer, "currency")
        offers = store.tables["offers"].cols
        pool = np.flatnonzero((offers["site"] == site) & (offers["currency"] == currency)
                              & ~offers["archived"] & (offers["ptype"] != 3))
        offer = int(pool[rng.integers(0, len(pool))])
        ptype = int(offers["ptype"][offer])
        amount = int(offers["price_in_cents"][offer])
        provider = int(rng.choice(3, p=ACTIVITY_PROVIDERS))
        purchase = batch.add("purchases", {
            "customer": customer, "offer": offer, "site": site, "created_at": store.now,
            "updated_at": store.now, "amount_in_cents": amount, "quantity": 1,
            "currency": currency, "ptype": ptype, "deactivated_at": NULL, "reason": -1,
            "opt_in": bool(rng.random() < 0.5), "coupon": -1, "source": 0, "referrer": -1,
            "zip": int(rng.integers(10000, 99999)), "extra": False, "payments_made": 0,
            "bundle": NULL,
        })
        txn = self._transaction(batch, purchase=purchase, customer=customer, offer=offer,
                                order=NULL, action=3 if ptype in (1, 2) else 0, amount=amount,
                                currency=currency, provider=provider, ptype=ptype)
        batch.set("customers", customer, "updated_at", store.now)
        batch.set("contacts", contact, "updated_at", store.now)  # its offers changed
        events.append(("purchase", purchase, NULL))
        events.append(("payment_succeeded", txn, NULL))
        if ptype in (1, 2):
            following = store.now + int(_period(np.asarray([ptype]))[0])
            if following <= self._until:
                heapq.heappush(self._due, (following, purchase))
        return True

    def _active_purchases(self, kinds: tuple[int, ...]) -> np.ndarray:
        cols = self.store.tables["purchases"].cols
        return np.flatnonzero((cols["deactivated_at"] == NULL) & np.isin(cols["ptype"], kinds))

    def _purchase_txn_facts(self, batch: Batch, purchase: int) -> dict:
        """What a new transaction of `purchase` copies (works for rows still in the batch)."""
        def get(column: str) -> int:
            return int(batch.get("purchases", purchase, column))

        if purchase < self.store.tables["purchases"].n:
            txns = self.store.fk_children("transactions", "purchase", purchase)
            bundle = int(self.store.tables["purchases"].cols["bundle"][purchase])
            if not len(txns) and bundle != NULL:  # a bundle's purchase: its charge's processor
                txns = np.asarray([bundle])
            provider = int(self.store.tables["transactions"].cols["provider"][txns[0]]) \
                if len(txns) else 0
        else:
            provider = next((r["provider"] for r in batch.rows.get("transactions", [])
                             if r["purchase"] == purchase), 0)
        return {"customer": get("customer"), "offer": get("offer"), "currency": get("currency"),
                "ptype": get("ptype"), "amount": get("amount_in_cents"), "provider": provider}

    def _due_renewals(self, until: int) -> list[tuple[int, int]]:
        """Heap of (due time, purchase) of active subscriptions whose next charge (last
        successful charge + 30 or 365 days) falls on or before `until`."""
        purchases, txn = self.store.tables["purchases"].cols, self.store.tables["transactions"].cols
        charged = (txn["action"] == 3) & (txn["state"] == 1) & (txn["purchase"] >= 0)
        last = purchases["created_at"].copy()
        np.maximum.at(last, txn["purchase"][charged], txn["created_at"][charged])
        subs = np.flatnonzero(np.isin(purchases["ptype"], (1, 2))
                              & (purchases["deactivated_at"] == NULL))
        due = last[subs] + _period(purchases["ptype"][subs])
        keep = due <= until
        heap = list(zip(due[keep].tolist(), subs[keep].tolist(), strict=True))
        heapq.heapify(heap)
        return heap

    def _renew(self, due: list[tuple[int, int]], until: int, to: int, batch: Batch, events,
               summary: dict[str, int]) -> None:
        """Charge, at its due time, every subscription falling due while the clock moves from
        now to `to` (renewals run on schedule; overdue ones are charged now). Stamps never go
        below the clock, so ids stay in creation order."""
        store = self.store
        while due and due[0][0] <= to:
            when, purchase = heapq.heappop(due)
            store.now = max(store.now, when)
            if batch.get("purchases", purchase, "deactivated_at") != NULL:
                continue
            f = self._purchase_txn_facts(batch, purchase)
            txn = self._transaction(batch, purchase=purchase, customer=f["customer"],
                                    offer=f["offer"], order=NULL, action=3, amount=f["amount"],
                                    currency=f["currency"], provider=f["provider"],
                                    ptype=f["ptype"])
            events.append(("payment_succeeded", txn, NULL))
            summary["renewal"] = summary.get("renewal", 0) + 1
            following = store.now + int(_period(np.asarray([f["ptype"]]))[0])
            if following <= until:
                heapq.heappush(due, (following, purchase))

    def _refund(self, rng, batch: Batch, events) -> bool:
        one = self._active_purchases((0,))
        if not len(one):
            return False
        purchase = int(one[self._pick(rng, len(one))])
        f = self._purchase_txn_facts(batch, purchase)
        self._transaction(batch, purchase=purchase, customer=f["customer"], offer=f["offer"],
                          order=NULL, action=1, amount=-f["amount"], currency=f["currency"],
                          provider=f["provider"], ptype=f["ptype"])
        batch.set("purchases", purchase, "deactivated_at", self.store.now)
        batch.set("purchases", purchase, "reason", 0)
        return True

    def _deactivate(self, rng, batch: Batch, events) -> bool:
        subs = self._active_purchases((1, 2))
        if not len(subs):
            return False
        purchase = int(subs[int(rng.integers(0, len(subs)))])
        batch.set("purchases", purchase, "deactivated_at", self.store.now)
        batch.set("purchases", purchase, "reason", 1)
        return True

    def _order(self, rng, batch: Batch, events) -> bool:
        store = self.store
        contact = self._pick_contact(rng, batch.count("contacts"))
        customer = self._customer_for(rng, batch, contact)
        site = batch.get("customers", customer, "site")
        currency = batch.get("customers", customer, "currency")
        products = store.tables["products"].cols
        pool = np.flatnonzero((products["site"] == site) & ~products["archived"])
        number = 1001 + int((store.tables["orders"].cols["site"] == site).sum()) + sum(
            1 for r in batch.rows.get("orders", []) if r["site"] == site)
        order = batch.count("orders")
        totals = {"subtotal": 0, "discount": 0, "tax": 0, "total": 0}
        for _ in range(1 + int(rng.binomial(2, 0.25))):
            qty = 1 if rng.random() < 0.8 else 2
            subtotal = (int(rng.integers(5, 150)) * 100 - 1) * qty
            item = {"subtotal": subtotal, "discount": 0, "tax": 0, "total": subtotal}
            row = batch.count("order_items")
            kind, ref = item_refs(store, np.asarray([row]),
                                  np.asarray([pool[rng.integers(0, len(pool))]]))
            batch.add("order_items", {
                "order": order, "site": site, "item_kind": int(kind[0]), "item": int(ref[0]),
                "quantity": qty, **item, "created_at": store.now, "fulfilled_at": NULL,
                "currency": currency})
            for key in totals:
                totals[key] += item[key]
        batch.add("orders", {"customer": customer, "site": site, "created_at": store.now,
                             "number": number, "fulfilled_at": NULL, "currency": currency,
                             **totals})
        txn = self._transaction(batch, purchase=NULL, customer=customer, offer=NULL, order=order,
                                action=0, amount=totals["total"], currency=currency,
                                provider=int(rng.choice(3, p=ACTIVITY_PROVIDERS)), ptype=0)
        events.append(("order_created", order, NULL))
        events.append(("payment_succeeded", txn, NULL))
        return True

    def _fulfil(self, rng, batch: Batch, events) -> bool:
        """Fulfil the oldest open order (orders have no updated_at: syncs must look back)."""
        store = self.store
        orders = store.tables["orders"].cols
        open_rows = np.flatnonzero(orders["fulfilled_at"] == NULL)
        if not len(open_rows):
            return False
        order = int(open_rows[min(len(open_rows) - 1, int(rng.integers(0, 3)))])
        batch.set("orders", order, "fulfilled_at", store.now)
        for item in store.fk_children("order_items", "order", order).tolist():
            batch.set("order_items", item, "fulfilled_at", store.now)
        return True

    def _tag_added(self, rng, batch: Batch, events) -> bool:
        store = self.store
        contacts = store.tables["contacts"]
        contact = self._pick_contact(rng, contacts.n)
        site = int(contacts.cols["site"][contact])
        tags = store.tables["contact_tags"].cols
        pool = np.flatnonzero((tags["site"] == site) & ~tags["archived"])
        for _ in range(8):  # popular tags first; try another when the contact already has it
            tag = int(pool[min(len(pool) - 1, int(rng.exponential(len(pool) / 3)))])
            if store.link("contacts.tags").add(contact, tag):
                break
        else:
            return False
        batch.set("contacts", contact, "updated_at", store.now)
        events.append(("tag_added", contact, tag))
        return True

    def _tag_removed(self, rng, batch: Batch, events) -> bool:
        store = self.store
        links = store.link("contacts.tags")
        if not len(links.parent):
            return False
        k = int(rng.integers(0, len(links.parent)))
        contact, tag = int(links.parent[k]), int(links.child[k])
        links.remove(contact, tag)
        batch.set("contacts", contact, "updated_at", store.now)
        events.append(("tag_removed", contact, tag))
        return True

    def _form(self, rng, batch: Batch, events) -> bool:
        contact = self._pick_contact(rng, batch.count("contacts"))
        self._submit(rng, batch, events, contact)
        return True

    def _submit(self, rng, batch: Batch, events, contact: int) -> None:
        store = self.store
        site = batch.get("contacts", contact, "site")
        forms = np.flatnonzero(store.tables["forms"].cols["site"] == site)
        row = batch.add("form_submissions", {
            "contact": contact, "form": int(forms[rng.integers(0, len(forms))]), "site": site,
            "created_at": store.now})
        events.append(("form_submission", row, NULL))

    def _update(self, rng, batch: Batch, events) -> bool:
        store = self.store
        contact = self._pick_contact(rng, store.tables["contacts"].n)
        batch.set("contacts", contact, "updated_at", store.now)
        batch.set("contacts", contact, "subscribed",
                  not bool(store.tables["contacts"].cols["subscribed"][contact]))
        batch.set("contacts", contact, "subscription_at", store.now)
        customer = int(store.tables["contacts"].cols["customer"][contact])
        if customer != NULL:
            batch.set("customers", customer, "updated_at", store.now)
            batch.set("customers", customer, "last_request_at", store.now)
        return True


    def _note(self, rng, batch: Batch, events) -> bool:
        """A note on a (mostly recent) contact; sometimes an edit of an existing note instead."""
        store = self.store
        notes = store.tables["contact_notes"]
        if notes.n and rng.random() < 0.4:
            row = self._pick(rng, notes.n)
            if store.is_deleted("contact_notes", row):
                return False
            batch.set("contact_notes", row, "updated_at", store.now)
            return True
        contact = self._pick_contact(rng, batch.count("contacts"))
        batch.add("contact_notes", {
            "contact": contact, "site": batch.get("contacts", contact, "site"),
            "created_at": store.now, "updated_at": store.now,
            "text": int(rng.integers(0, len(V.NOTE_TEXTS))),
            "word": int(rng.integers(0, len(V.PRODUCT_WORDS)))})
        return True

    def _content(self, rng, batch: Batch, events) -> bool:
        """The owner edits a landing page (publishing it when it was a draft) or a podcast."""
        store = self.store
        name = "landing_pages" if rng.random() < 0.6 else "podcasts"
        table = store.tables[name]
        if not table.n:
            return False
        row = int(rng.integers(0, table.n))
        batch.set(name, row, "updated_at", store.now)
        if name == "landing_pages" and table.cols["publish_at"][row] == NULL:
            batch.set(name, row, "publish_at", store.now)
        return True


def _named_contacts(store: Store, events: list[tuple[str, int, int]]) -> np.ndarray:
    """Contact rows the webhook events of a call name (directly or through their customer)."""
    t = store.tables
    contact_of = t["customers"].cols["contact"]
    out: list[int] = []
    for event, row, _ in events:
        if event in ("tag_added", "tag_removed"):
            out.append(row)
        elif event == "form_submission":
            out.append(int(t["form_submissions"].cols["contact"][row]))
        else:
            subject = {"purchase": "purchases", "payment_succeeded": "transactions",
                       "order_created": "orders"}[event]
            out.append(int(contact_of[int(t[subject].cols["customer"][row])]))
    return np.asarray(out, dtype=np.int64)


def _period(ptype: np.ndarray) -> np.ndarray:
    """Billing period in seconds: 30 days for monthly (1), 365 for annual (2)."""
    return np.where(np.asarray(ptype) == 1, 30, 365).astype(np.int64) * DAY


__all__ = ["Activity"]
