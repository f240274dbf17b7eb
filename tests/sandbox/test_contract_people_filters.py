"""Spec 4.3: the contact/customer filters whose names the spec leaves out. The names are the
sandbox's documented choice (the README's sandbox section); the meanings come from the spec and are
recomputed here from the listed data."""

from __future__ import annotations

from collections import defaultdict
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from sandbox_contract_helpers import check_filter, contains, parse_ts, pick_needle, rel_id, rel_ids

Record = dict[str, Any]
PEOPLE = ["contacts", "customers"]


class People:
    """Per-site facts about contacts and customers, keyed by the subject's id."""

    def __init__(self, api, catalog, site_id: str) -> None:
        self.contacts = catalog.by_id("contacts", site_id)
        self.customers = catalog.by_id("customers", site_id)
        self.contact_of = {c["id"]: rel_id(c, "contact") for c in self.customers.values()}
        self.customer_of = {c["id"]: rel_id(c, "customer") for c in self.contacts.values()}
        self.offers = {cid: set(rel_ids(api.get(f"customers/{cid}")["data"], "offers"))
                       for cid in self.customers}
        self.coupon = defaultdict(bool)
        for purchase in catalog.all("purchases", site_id):
            if purchase["attributes"]["coupon_code"]:
                self.coupon[rel_id(purchase, "customer")] = True
        self.submitted = defaultdict(set)
        by_email = {c["attributes"]["email"].lower(): c["id"] for c in self.contacts.values()}
        for submission in catalog.all("form_submissions", site_id):
            email = (submission["attributes"]["email"] or "").lower()
            if email in by_email:
                self.submitted[by_email[email]].add(rel_id(submission, "form"))

    def contact(self, subject: str, record: Record) -> Record:
        return record if subject == "contacts" else self.contacts[self.contact_of[record["id"]]]

    def customer(self, subject: str, record: Record) -> Record | None:
        if subject == "customers":
            return record
        cid = self.customer_of[record["id"]]
        return self.customers[cid] if cid else None


@pytest.fixture(scope="module")
def people(api, catalog, site_id) -> People:
    return People(api, catalog, site_id)


def _records(catalog, site_id: str, subject: str) -> list[Record]:
    return catalog.all(subject, site_id)


@pytest.mark.parametrize("subject", PEOPLE)
@pytest.mark.parametrize("attribute", ["name", "email", "phone_number", "business_number",
                                       "address_line_1", "address_city", "address_state",
                                       "address_country", "address_zip"])
def test_attribute_contains(api, catalog, site_id, people, subject, attribute):
    records = _records(catalog, site_id, subject)
    values = [people.contact(subject, r)["attributes"][attribute] for r in records]
    if not any(values):
        pytest.fail(f"no contact has {attribute}")
    needle = pick_needle(values)

    def predicate(r: Record) -> bool | None:
        return contains(attribute, needle)(people.contact(subject, r))

    check_filter(api, records, subject, site_id, {f"filter[{attribute}_cont]": needle}, predicate)


@pytest.mark.parametrize("subject", PEOPLE)
def test_not_created_in_last_is_the_complement(api, catalog, site_id, subject):
    records = _records(catalog, site_id, subject)
    now = api.server_now()
    ages = sorted((now - parse_ts(r["attributes"]["created_at"])).days for r in records)
    days = ages[len(ages) // 2] + 1
    cut = now - timedelta(days=days)

    def older(r: Record) -> bool | None:
        created = parse_ts(r["attributes"]["created_at"])
        return None if abs(created - cut) < timedelta(days=1) else created < cut

    got = check_filter(api, records, subject, site_id, {"filter[not_created_in_last]": days}, older)
    recent = set(api.ids(subject, {"filter[site_id]": site_id, "filter[created_in_last]": days}))
    assert got | recent == {r["id"] for r in records} and not got & recent


@pytest.mark.parametrize("subject", PEOPLE)
def test_active_and_inactive_in_last(api, catalog, site_id, people, subject):
    records = _records(catalog, site_id, subject)
    now = api.server_now()
    last = [c["attributes"]["last_request_at"] for c in people.customers.values()]
    ages = sorted((now - parse_ts(v)).days for v in last if v)
    assert ages, "no customer has last_request_at"
    days = ages[len(ages) // 2] + 1
    cut = now - timedelta(days=days)

    def active(r: Record) -> bool | None:
        customer = people.customer(subject, r)
        value = customer and customer["attributes"]["last_request_at"]
        if not value:
            return False
        seen = parse_ts(value)
        return None if abs(seen - cut) < timedelta(days=1) else seen > cut

    def inactive(r: Record) -> bool | None:
        result = active(r)
        return None if result is None else not result

    got = check_filter(api, records, subject, site_id, {"filter[active_in_last]": days}, active)
    other = check_filter(api, records, subject, site_id, {"filter[inactive_in_last]": days}, inactive)
    assert not got & other


@pytest.mark.parametrize("subject", PEOPLE)
def test_without_offer_id(api, catalog, site_id, people, subject):
    records = _records(catalog, site_id, subject)
    counts: dict[str, int] = defaultdict(int)
    for offers in people.offers.values():
        for offer in offers:
            counts[offer] += 1
    offer = max(counts, key=lambda o: (counts[o], o))

    def has(r: Record) -> bool:
        customer = people.customer(subject, r)
        return bool(customer) and offer in people.offers[customer["id"]]

    check_filter(api, records, subject, site_id, {"filter[without_offer_id]": offer}, lambda r: not has(r))


@pytest.mark.parametrize("subject", PEOPLE)
@pytest.mark.parametrize("flag", [True, False])
def test_used_coupon_code(api, catalog, site_id, people, subject, flag):
    records = _records(catalog, site_id, subject)

    def used(r: Record) -> bool:
        customer = people.customer(subject, r)
        return bool(customer) and people.coupon[customer["id"]]

    check_filter(api, records, subject, site_id, {"filter[used_coupon_code]": str(flag).lower()},
                 lambda r: used(r) is flag)


@pytest.mark.parametrize("subject", PEOPLE)
def test_tag_filters(api, catalog, site_id, people, subject):
    records = _records(catalog, site_id, subject)

    def tags(r: Record) -> set[str]:
        return set(rel_ids(people.contact(subject, r), "tags"))

    pairs = [sorted(tags(r))[:2] for r in records if len(tags(r)) >= 2]
    assert pairs, "no contact with two tags"
    first, second = pairs[0]
    check_filter(api, records, subject, site_id, {"filter[with_all_tag_ids]": f"{first},{second}"},
                 lambda r: {first, second} <= tags(r))
    check_filter(api, records, subject, site_id, {"filter[without_tag_id]": first},
                 lambda r: first not in tags(r))


@pytest.mark.parametrize("subject", PEOPLE)
def test_form_submission_filters(api, catalog, site_id, people, subject):
    records = _records(catalog, site_id, subject)
    forms = sorted({f for fs in people.submitted.values() for f in fs})
    assert forms, "no form submission matches a contact's email"
    form = forms[0]

    def submitted(r: Record) -> bool:
        return form in people.submitted[people.contact(subject, r)["id"]]

    check_filter(api, records, subject, site_id, {"filter[submitted_form_id]": form}, submitted)
    check_filter(api, records, subject, site_id, {"filter[not_submitted_form_id]": form},
                 lambda r: not submitted(r))


@pytest.mark.parametrize("subject", PEOPLE)
@pytest.mark.parametrize("op", ["eq", "gt", "lt"])
def test_net_revenue_filters(api, catalog, site_id, people, subject, op):
    records = _records(catalog, site_id, subject)
    revenues = sorted({Decimal(c["attributes"]["net_revenue"]) for c in people.customers.values()})
    bound = revenues[len(revenues) // 2]

    def predicate(r: Record) -> bool | None:
        customer = people.customer(subject, r)
        if customer is None:
            return None
        value = Decimal(customer["attributes"]["net_revenue"])
        return {"eq": value == bound, "gt": value > bound, "lt": value < bound}[op]

    check_filter(api, records, subject, site_id, {f"filter[net_revenue_{op}]": f"{bound:.2f}"}, predicate)


@pytest.mark.parametrize("subject", PEOPLE)
@pytest.mark.parametrize("flag", [True, False])
def test_subscribed(api, catalog, site_id, people, subject, flag):
    records = _records(catalog, site_id, subject)
    check_filter(api, records, subject, site_id, {"filter[subscribed]": str(flag).lower()},
                 lambda r: people.contact(subject, r)["attributes"]["subscribed"] is flag)
