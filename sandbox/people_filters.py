"""The contact and customer list filters (spec 4.3) under the live platform's names (addendum A6).

One set, written once with the subject (`contacts` or `customers`) as a parameter. Filters whose
answer the sandbox's data holds are computed; the others (events, assessments, newsletters,
email sequences, broadcasts, email activity, engagement bands) are accepted names that answer a
400 naming the filter and why, so that a client can tell them from a typo.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from creator_sync.sandbox import vocab as V
from creator_sync.sandbox.dataset import DAY, Store
from creator_sync.sandbox.errors import bad_param
from creator_sync.sandbox.filters import (
    Filter,
    compare,
    parse_bool,
    parse_cents,
    parse_id,
    parse_int,
    site_filter,
    text_match,
    texts,
)
from creator_sync.sandbox.store import NULL

BOOLEAN_WORDS = ("true", "false", "1", "0")
CONTAINS = ("name", "email", "phone_number", "address_line_1", "address_line_2", "address_city",
            "address_state", "address_country", "address_zip")
_BROADCASTS = ("sent", "no_sent", "no_delivered", "opened", "no_opened", "clicked", "no_clicked",
               "bounced", "no_bounced", "dropped", "no_dropped")
_NO_EMAIL_DATA = "the sandbox keeps no email delivery, open or click data"
NOT_EMULATED: dict[str, str] = {
    "mobile_phone_number_contains": "sandbox contacts have no mobile phone number",
    **{name: "the sandbox has no events" for name in ("registered_event_id",
                                                      "not_registered_event_id")},
    **{f"{kind}_assessment_id": "the sandbox has no assessments"
       for kind in ("completed", "passed", "failed")},
    **{name: "the sandbox has no newsletters or email sequences" for name in (
        "subscribed_newsletter_id", "unsubscribed_newsletter_id",
        "subscribed_email_sequence_id", "not_subscribed_email_sequence_id")},
    **{f"{kind}_email_broadcast_id": "the sandbox has no email broadcasts"
       for kind in _BROADCASTS},
    "no_sent_email_broadcast_ids": "the sandbox has no email broadcasts",
    **{name: _NO_EMAIL_DATA for name in (
        "opened_email_in_last", "not_opened_email_in_last", "delivered_email_in_last",
        "not_delivered_email_in_last", "clicked_email_in_last", "not_clicked_email_in_last",
        "complained_in_last", "manually_unsubscribed_in_last", "opted_out_in_last")},
    **{f"{band}_contacts_with_open_data": "engagement bands need email open data, which the "
       "sandbox does not keep" for band in ("healthy", "passive", "unengaged", "inactive")},
}


def _not_emulated(reason: str) -> Filter:
    def run(store: Store, value: str, parameter: str) -> np.ndarray:
        raise bad_param(parameter, f"{parameter} is a filter of the live platform that the "
                                   f"sandbox does not emulate: {reason}")
    return run


def _days(value: str, parameter: str) -> int:
    n = parse_int(value, parameter)
    if n < 0:
        raise bad_param(parameter, f"{parameter} must be a number of days >= 0, got {value!r}")
    return n


def _since(store: Store, value: str, parameter: str) -> int:
    return store.now - _days(value, parameter) * DAY


def person_filters(subject: str) -> dict[str, Filter]:
    """Every 4.3 filter for `contacts` or `customers`, by its A6 name."""

    def contact_rows(store: Store) -> np.ndarray:
        if subject == "contacts":
            return np.arange(store.tables["contacts"].n)
        return store.tables["customers"].cols["contact"]

    def customer_rows(store: Store) -> np.ndarray:
        if subject == "customers":
            return np.arange(store.tables["customers"].n)
        return store.tables["contacts"].cols["customer"]

    def of_contacts(store: Store, mask: np.ndarray) -> np.ndarray:
        """A mask over contacts as a mask over the subject."""
        return mask[contact_rows(store)]

    def of_customers(store: Store, mask: np.ndarray) -> np.ndarray:
        """A mask over customers as a mask over the subject (a contact without customer: no)."""
        rows = customer_rows(store)
        return np.where(rows >= 0, mask[np.maximum(rows, 0)], False) if len(mask) else \
            np.zeros(len(rows), bool)

    def flag(mask_fn: Callable[[Store], np.ndarray]) -> Filter:
        """A true/false filter of a mask over the subject."""
        def run(store: Store, value: str, parameter: str) -> np.ndarray:
            mask = mask_fn(store)
            return mask if parse_bool(value, parameter) else ~mask
        return run

    def negated(inner: Filter) -> Filter:
        return lambda store, value, parameter: ~inner(store, value, parameter)

    # -- lifecycle ---------------------------------------------------------------------------
    def created_in_last(store: Store, value: str, parameter: str) -> np.ndarray:
        return store.tables[subject].cols["created_at"] >= _since(store, value, parameter)

    def joined_in_last(store: Store, value: str, parameter: str) -> np.ndarray:
        """Became a customer (the customer record was created) in the last N days."""
        created = store.tables["customers"].cols["created_at"]
        return of_customers(store, created >= _since(store, value, parameter))

    def active_in_last(store: Store, value: str, parameter: str) -> np.ndarray:
        last = store.tables["customers"].cols["last_request_at"]
        return of_customers(store, (last != NULL) & (last >= _since(store, value, parameter)))

    def search(store: Store, value: str, parameter: str) -> np.ndarray:
        needle = value.strip().lower()
        names, _ = texts(store, "contacts", "name", lower=True)
        emails, _ = texts(store, "contacts", "email", lower=True)
        hit = (np.strings.find(names, needle) >= 0) | (np.strings.find(emails, needle) >= 0)
        return of_contacts(store, hit)

    def contains(attr: str) -> Filter:
        def run(store: Store, value: str, parameter: str) -> np.ndarray:
            arr, nulls = texts(store, "contacts", attr, lower=True)
            return of_contacts(store, text_match(arr, "cont", value.lower()) & ~nulls)
        return run

    # -- tags, offers, products, forms -------------------------------------------------------
    def linked(link_name: str, target: str, on: str) -> Filter:
        def run(store: Store, value: str, parameter: str) -> np.ndarray:
            row = parse_id(store, target, value, parameter)
            n = store.tables[on].n
            mask = store.link(link_name).has_child_mask(n, row) if row != NULL else \
                np.zeros(n, bool)
            return of_contacts(store, mask) if on == "contacts" else of_customers(store, mask)
        return run

    def all_tags(store: Store, value: str, parameter: str) -> np.ndarray:
        ids = [v for v in value.split(",") if v]
        if not ids:
            raise bad_param(parameter, f"{parameter} needs a tag id or a comma-separated list")
        n = store.tables["contacts"].n
        mask = np.ones(n, bool)
        for tag_id in ids:
            row = parse_id(store, "contact_tags", tag_id, parameter)
            mask &= store.link("contacts.tags").has_child_mask(n, row) if row != NULL else False
        return of_contacts(store, mask)

    def owners(store: Store, value: str, parameter: str, active: bool) -> np.ndarray:
        """Customers with a purchase (an active one when `active`) granting the product."""
        product = parse_id(store, "products", value, parameter)
        purchases = store.tables["purchases"].cols
        mask = np.zeros(store.tables["customers"].n, bool)
        if product == NULL:
            return mask
        granting = store.link("offers.products").parents(product)
        hit = np.isin(purchases["offer"], granting)
        if active:
            hit &= purchases["deactivated_at"] == NULL
        mask[purchases["customer"][hit]] = True
        return mask

    def active_product(store: Store, value: str, parameter: str) -> np.ndarray:
        return of_customers(store, owners(store, value, parameter, active=True))

    def previously_owned(store: Store, value: str, parameter: str) -> np.ndarray:
        """Owned the product once, through purchases that are all deactivated now."""
        ever = owners(store, value, parameter, active=False)
        return of_customers(store, ever & ~owners(store, value, parameter, active=True))

    def coupon(store: Store, value: str, parameter: str) -> np.ndarray:
        """`true`/`false`: used any coupon code (or not); otherwise the code itself."""
        purchases = store.tables["purchases"].cols
        want = parse_bool(value, parameter) if value.lower() in BOOLEAN_WORDS else None
        if want is None:
            codes = [c.lower() for c in V.COUPONS]
            code = codes.index(value.lower()) if value.lower() in codes else -2
            used = purchases["coupon"] == code
        else:
            used = purchases["coupon"] >= 0
        mask = np.zeros(store.tables["customers"].n, bool)
        mask[purchases["customer"][used]] = True
        got = of_customers(store, mask)
        return ~got if want is False else got

    def submitted(store: Store, value: str, parameter: str) -> np.ndarray:
        form = parse_id(store, "forms", value, parameter)
        subs = store.tables["form_submissions"].cols
        mask = np.zeros(store.tables["contacts"].n, bool)
        mask[subs["contact"][subs["form"] == form]] = True
        return of_contacts(store, mask)

    # -- revenue, subscription, bounces -------------------------------------------------------
    def revenue(op: str) -> Filter:
        def run(store: Store, value: str, parameter: str) -> np.ndarray:
            cents = parse_cents(value, parameter)
            rev = store.tables["customers"].cols["net_revenue_cents"]
            return of_customers(store, compare(rev, op, cents))
        return run

    def subscribed(store: Store) -> np.ndarray:
        return of_contacts(store, store.tables["contacts"].cols["subscribed"])

    def changed_in_last(to: bool) -> Filter:
        """Subscribed (`to`) or unsubscribed in the last N days: the last change of the
        contact's subscription went that way within the window."""
        def run(store: Store, value: str, parameter: str) -> np.ndarray:
            cols = store.tables["contacts"].cols
            at = cols["subscription_at"]
            mask = (cols["subscribed"] == to) & (at != NULL) & (at >= _since(store, value,
                                                                              parameter))
            return of_contacts(store, mask)
        return run

    def never_subscribed(store: Store) -> np.ndarray:
        cols = store.tables["contacts"].cols
        return of_contacts(store, ~cols["subscribed"] & (cols["subscription_at"] == NULL))

    def bounced_in_last(store: Store, value: str, parameter: str) -> np.ndarray:
        bounced = store.tables["customers"].cols["bounced_at"]
        return of_customers(store, (bounced != NULL) & (bounced >= _since(store, value,
                                                                          parameter)))

    def hard_bouncing(store: Store) -> np.ndarray:
        return of_customers(store, store.tables["customers"].cols["bounced_at"] != NULL)

    has_product = linked("customers.products", "products", "customers")
    filters: dict[str, Filter] = {
        "site_id": site_filter(subject),
        "search": search,
        "created_in_last": created_in_last,
        "not_created_in_last": negated(created_in_last),
        "is_hidden": flag(lambda store: np.zeros(store.tables[subject].n, bool)),
        "joined_in_last": joined_in_last,
        "active_in_last": active_in_last,
        "inactive_in_last": negated(active_in_last),
        **{f"{attr}_contains": contains(attr) for attr in CONTAINS},
        "has_tag_id": linked("contacts.tags", "contact_tags", "contacts"),
        "has_all_tag_id": all_tags,
        "has_no_tag_id": negated(linked("contacts.tags", "contact_tags", "contacts")),
        "has_offer_id": linked("customers.offers", "offers", "customers"),
        "has_no_offer_id": negated(linked("customers.offers", "offers", "customers")),
        "has_product_id": has_product,
        "has_active_product_id": active_product,
        "has_no_product_id": negated(has_product),
        "previously_owned_product_id": previously_owned,
        "used_coupon_code": coupon,
        "submitted_form_id": submitted,
        "no_submitted_form_id": negated(submitted),
        "net_revenue_equal_to": revenue("eq"),
        "net_revenue_greater_than": revenue("gt"),
        "net_revenue_less_than": revenue("lt"),
        "subscribed": flag(subscribed),
        "subscribed_in_last": changed_in_last(True),
        "unsubscribed_in_last": changed_in_last(False),
        "never_subscribed": flag(never_subscribed),
        "bounced_in_last": bounced_in_last,
        "is_hard_bouncing": flag(hard_bouncing),
    }
    filters.update({name: _not_emulated(reason) for name, reason in NOT_EMULATED.items()})
    return filters
