"""What the platform's deletes do to the account: contacts, notes, offer grants and tags.

One set of rules for `DELETE` requests (app.py) and activity, so that a test and a live demo
see the same platform. The live OpenAPI document fixes the routes and one rule (a contact with
an active subscription paid through the platform's own payments cannot be deleted: 422); the
rest follows what real accounts show and is a sandbox option where it is a choice
(`customer_on_contact_delete`, docs/sandbox.md#deletes):

- a deleted contact's notes, form submissions and tag links go with it;
- its customer goes too ("delete", the default), stays without a contact ("keep"), or the
  delete is refused with 422 ("refuse");
- a deleted customer's active purchases are deactivated (access ends, no more renewals);
  its purchases, orders and transactions stay: they are the account's books;
- a revoked offer deactivates the owner's active purchases of it, which no longer make it one
  of the owner's offers.

Rows are never removed (ids are row numbers): `Store.deleted` hides them from lists and reads.
"""

from __future__ import annotations

import numpy as np

from creator_sync.sandbox import rollups as G
from creator_sync.sandbox import vocab as V
from creator_sync.sandbox.dataset import Store
from creator_sync.sandbox.errors import ApiError
from creator_sync.sandbox.options import CUSTOMER_RULES
from creator_sync.sandbox.store import NULL

PLATFORM = V.PROVIDERS.index("platform_payments")
SUBSCRIPTIONS = (V.PAYMENT_TYPES.index("subscription_monthly"),
                 V.PAYMENT_TYPES.index("subscription_annual"))
ENDED_BY_DELETE = V.DEACTIVATION_REASONS.index("canceled_by_customer")

Event = tuple[str, int, int]  # (webhook event, row, extra row), as activity's


def deletable_contacts(store: Store, rule: str) -> np.ndarray:
    """Rows of the contacts a delete may remove now (alive, and not refused by a rule)."""
    contacts = store.tables["contacts"].cols
    ok = store.alive("contacts").copy()
    customer = contacts["customer"]
    if rule == "refuse":
        ok &= customer == NULL
    held = _platform_subscribers(store)
    ok &= ~np.isin(customer, held[held != NULL])
    return np.flatnonzero(ok)


def _platform_subscribers(store: Store) -> np.ndarray:
    """Customer rows with an active subscription paid through the platform's payments."""
    purchases, txn = store.tables["purchases"].cols, store.tables["transactions"].cols
    active = (purchases["deactivated_at"] == NULL) & np.isin(purchases["ptype"], SUBSCRIPTIONS)
    paid_here = txn["purchase"][(txn["provider"] == PLATFORM) & (txn["purchase"] >= 0)]
    rows = np.intersect1d(np.flatnonzero(active), paid_here)
    return np.unique(purchases["customer"][rows])


def delete_contact(store: Store, row: int, rule: str) -> None:
    """Delete a contact (and, by `rule`, its customer); raises the platform's 422 when refused."""
    contacts = store.tables["contacts"]
    customer = int(contacts.cols["customer"][row])
    if customer != NULL:
        if customer in _platform_subscribers(store).tolist():
            raise ApiError(422, "contact has active Platform Payments subscriptions; cancel "
                                "them before deleting the contact", pointer="/data")
        if rule == "refuse":
            raise ApiError(422, "contact is a customer; the sandbox runs with "
                                "customer_on_contact_delete=refuse", pointer="/data")
    _gone(store, "contacts", [row])
    links = store.link("contacts.tags")  # (no tag_removed hook: the contact is gone)
    keep = links.parent != row
    links.set(links.parent[keep], links.child[keep])
    notes = store.fk_children("contact_notes", "contact", row)
    _gone(store, "contact_notes", notes.tolist())
    submissions = store.fk_children("form_submissions", "contact", row)
    _gone(store, "form_submissions", submissions.tolist())
    if customer != NULL:
        if rule == "keep":
            _stamp(store, "customers", customer)
            store.tables["customers"].cols["contact"][customer] = NULL
        else:
            _end_purchases(store, _active_purchases(store, customer))
            _gone(store, "customers", [customer])


def delete_note(store: Store, row: int) -> None:
    _gone(store, "contact_notes", [row])


def revoke_offers(store: Store, customer: int, offers: list[int]) -> None:
    """End the customer's active purchases of `offers`: those offers are no longer theirs."""
    if customer == NULL:
        return
    purchases = store.tables["purchases"].cols
    rows = _active_purchases(store, customer)
    rows = rows[np.isin(purchases["offer"][rows], offers)]
    revoked = np.flatnonzero(np.isin(purchases["offer"], offers)
                             & (purchases["customer"] == customer))
    _end_purchases(store, rows)
    store.revoked.update(revoked.tolist())
    _stamp(store, "customers", customer)


def remove_tags(store: Store, contact: int, tags: list[int]) -> list[Event]:
    links = store.link("contacts.tags")
    events = [("tag_removed", contact, t) for t in tags if links.remove(contact, t)]
    if events:
        _stamp(store, "contacts", contact)
    return events


def finish(store: Store) -> None:
    """Derived columns and links after a change (the same as after activity)."""
    G.refresh_purchase_updated_at(store)
    G.derive_customer_links(store)
    store.data_version += 1


def _active_purchases(store: Store, customer: int) -> np.ndarray:
    purchases = store.tables["purchases"].cols
    return np.flatnonzero((purchases["customer"] == customer)
                          & (purchases["deactivated_at"] == NULL))


def _end_purchases(store: Store, rows: np.ndarray) -> None:
    if not len(rows):
        return
    purchases = store.tables["purchases"]
    purchases.cols["deactivated_at"][rows] = store.now
    purchases.cols["reason"][rows] = ENDED_BY_DELETE
    purchases.touch()


def _stamp(store: Store, type_name: str, row: int) -> None:
    table = store.tables[type_name]
    table.cols["updated_at"][row] = max(int(table.cols["updated_at"][row]), store.now)
    table.touch()


def _gone(store: Store, type_name: str, rows: list[int]) -> None:
    if rows:
        store.deleted.setdefault(type_name, set()).update(int(r) for r in rows)
        store.tables[type_name].touch()


__all__ = [
    "CUSTOMER_RULES",
    "deletable_contacts",
    "delete_contact",
    "delete_note",
    "finish",
    "remove_tags",
    "revoke_offers",
]
