"""The live document's deletes: contacts, contact notes, and the offer and tag relationships of
contacts and customers (docs/sandbox.md#deletes). Each test starts its own sandbox: deletes
change the data."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from sandbox_contract_helpers import Api, Receiver, assert_error, rel_ids


def _delete(api: Api, path: str, body: Any = None) -> httpx.Response:
    headers = {**api.headers, "Content-Type": "application/vnd.api+json"}
    content = None if body is None else json.dumps(body)
    return api.http.request("DELETE", api.url(path), content=content, headers=headers)


@pytest.fixture
def fresh(sandbox_factory: Any):
    def start(**options: Any) -> tuple[Any, Api]:
        options.setdefault("sites", 1)  # (lists of people need no site filter)
        handle = sandbox_factory(**options)
        return handle, Api(handle.base_url)
    return start


def _customer_contact(handle: Any, *, subscribed_here: bool) -> tuple[str, str]:
    """(contact id, customer id) of a customer with purchases, with (or without) an active
    subscription paid through the platform's payments (found in the store: the API does not
    say which processor a purchase's renewals go through)."""
    from creator_sync.sandbox.deletes import _platform_subscribers

    store = handle.store
    held = set(_platform_subscribers(store).tolist())
    buyers = set(store.tables["purchases"].cols["customer"].tolist())
    for row, contact in enumerate(store.tables["customers"].cols["contact"].tolist()):
        if contact >= 0 and row in buyers and (row in held) == subscribed_here:
            return (store.tables["contacts"].id_of(contact),
                    store.tables["customers"].id_of(row))
    raise AssertionError("no such customer in the sandbox")


def test_delete_contact_removes_it_its_notes_and_its_customer(fresh: Any) -> None:
    handle, api = fresh()
    contact_id, customer_id = _customer_contact(handle, subscribed_here=False)
    notes_before = api.ids("contact_notes", {"filter[contact_id]": contact_id})
    contacts_before = api.get("contacts")["meta"]["total_count"]
    response = _delete(api, f"contacts/{contact_id}")
    assert response.status_code == 200, response.text
    assert response.json() == {"data": {}}
    assert_error(api.raw_get(f"contacts/{contact_id}"), 404)
    assert_error(api.raw_get(f"customers/{customer_id}"), 404)
    assert contact_id not in api.ids("contacts")
    assert customer_id not in api.ids("customers")
    assert api.get("contacts")["meta"]["total_count"] == contacts_before - 1
    for note in notes_before:
        assert_error(api.raw_get(f"contact_notes/{note}"), 404)
    # the books stay: the customer's purchases still read, now inactive
    purchases = api.all("purchases", {"filter[customer_id]": customer_id})
    assert purchases and all(p["attributes"]["deactivated_at"] for p in purchases)
    # deleting again: the contact is unknown
    assert_error(_delete(api, f"contacts/{contact_id}"), 404)


def test_contact_with_a_platform_subscription_is_refused(fresh: Any) -> None:
    handle, api = fresh()
    contact_id, customer_id = _customer_contact(handle, subscribed_here=True)
    first = assert_error(_delete(api, f"contacts/{contact_id}"), 422)
    assert "Platform Payments subscriptions" in first["detail"]
    assert api.get(f"contacts/{contact_id}")["data"]["id"] == contact_id
    assert api.get(f"customers/{customer_id}")["data"]["id"] == customer_id


@pytest.mark.parametrize("rule", ["keep", "refuse"])
def test_customer_rule_is_an_option(fresh: Any, rule: str) -> None:
    handle, api = fresh(customer_on_contact_delete=rule)
    contact_id, customer_id = _customer_contact(handle, subscribed_here=False)
    response = _delete(api, f"contacts/{contact_id}")
    if rule == "refuse":
        assert_error(response, 422)
        assert api.get(f"contacts/{contact_id}")["data"]["id"] == contact_id
        return
    assert response.status_code == 200, response.text
    assert_error(api.raw_get(f"contacts/{contact_id}"), 404)
    customer = api.get(f"customers/{customer_id}")["data"]  # kept, without a contact
    assert customer["relationships"]["contact"]["data"] is None
    included = api.get(f"customers/{customer_id}", {"include": "contact"}).get("included", [])
    assert not [r for r in included if r["type"] == "contacts"]


def test_delete_contact_note(fresh: Any) -> None:
    _, api = fresh()
    note = api.all("contact_notes")[0]["id"]
    total = api.get("contact_notes")["meta"]["total_count"]
    response = _delete(api, f"contact_notes/{note}")
    assert response.status_code == 200, response.text
    assert_error(api.raw_get(f"contact_notes/{note}"), 404)
    assert api.get("contact_notes")["meta"]["total_count"] == total - 1
    assert_error(_delete(api, f"contact_notes/{note}"), 404)


def test_remove_tags_from_contact(fresh: Any) -> None:
    handle, api = fresh()
    receiver = Receiver()
    try:
        contact = next(c for c in api.all("contacts") if len(rel_ids(c, "tags")) >= 1)
        tags = rel_ids(contact, "tags")
        site = contact["relationships"]["site"]["data"]
        hook = api.post_json("hooks", {"data": {"type": "hooks", "attributes": {
            "event": "tag_removed", "target_url": receiver.url, "resource_id": tags[0]},
            "relationships": {"site": {"data": site}}}})
        assert hook.status_code == 201, hook.text
        response = _delete(api, f"contacts/{contact['id']}/relationships/tags",
                           {"data": [{"type": "contact_tags", "id": tags[0]}]})
        assert response.status_code == 200, response.text
        assert [t["id"] for t in response.json()["data"]] == tags[1:]
        after = api.get(f"contacts/{contact['id']}")["data"]
        assert rel_ids(after, "tags") == tags[1:]
        got = receiver.wait_for(lambda r: r)
        assert [r["body"]["event"] for r in got] == ["tag_removed"]
    finally:
        receiver.close()
    bad = _delete(api, f"contacts/{contact['id']}/relationships/tags",
                  {"data": [{"type": "offers", "id": tags[0]}]})
    assert_error(bad, 400)
    assert handle.store.deleted == {}


@pytest.mark.parametrize("owner", ["contacts", "customers"])
def test_revoke_offer(fresh: Any, owner: str) -> None:
    handle, api = fresh()
    contact_id, customer_id = _customer_contact(handle, subscribed_here=False)
    owner_id = contact_id if owner == "contacts" else customer_id
    offers = api.get(f"{owner}/{owner_id}/relationships/offers")["data"]
    assert offers
    offer = offers[0]["id"]
    response = _delete(api, f"{owner}/{owner_id}/relationships/offers",
                       {"data": [{"type": "offers", "id": offer}]})
    assert response.status_code == 200, response.text
    left = [o["id"] for o in response.json()["data"]]
    assert offer not in left
    assert left == [o["id"] for o in api.get(f"{owner}/{owner_id}/relationships/offers")["data"]]
    for purchase in api.all("purchases", {"filter[customer_id]": customer_id}):
        if purchase["relationships"]["offer"]["data"]["id"] == offer:
            assert purchase["attributes"]["deactivated_at"] is not None
    assert_error(_delete(api, f"{owner}/{owner_id}/relationships/offers",
                         {"data": [{"type": "offers", "id": "9999999999"}]}), 404)


def test_only_documented_deletes(fresh: Any) -> None:
    _, api = fresh()
    customer = api.all("customers")[0]["id"]
    assert _delete(api, f"customers/{customer}").status_code == 405
    assert _delete(api, "contacts").status_code == 405
    assert _delete(api, f"offers/{api.all('offers')[0]['id']}").status_code == 405


def test_activity_deletes_a_few_people_and_notes(fresh: Any) -> None:
    handle, api = fresh(delete_rate=0.05)
    contacts = set(api.ids("contacts"))
    notes = set(api.ids("contact_notes"))
    summary = handle.activity(200)
    assert summary.get("delete_contact", 0) >= 1 and summary.get("delete_note", 0) >= 1
    after_contacts, after_notes = set(api.ids("contacts")), set(api.ids("contact_notes"))
    gone = contacts - after_contacts
    assert len(gone) == summary["delete_contact"]
    notes_table = handle.store.tables["contact_notes"]
    deleted_notes = {notes_table.id_of(r) for r in handle.store.deleted["contact_notes"]}
    assert not deleted_notes & after_notes
    assert len(notes - after_notes) <= len(deleted_notes)
    for note in deleted_notes:
        assert_error(api.raw_get(f"contact_notes/{note}"), 404)
    for contact in gone:
        assert_error(api.raw_get(f"contacts/{contact}"), 404)
    # nothing activity did afterwards names a deleted person: webhook payloads render
    again = handle.activity(50)
    assert again["events"] == 50
    assert not gone & {r["relationships"]["contact"]["data"]["id"]
                       for r in api.all("contact_notes")}


def test_activity_deletes_nothing_by_default(fresh: Any) -> None:
    handle, api = fresh()
    contacts = set(api.ids("contacts"))
    summary = handle.activity(100)
    assert "delete_contact" not in summary
    assert contacts <= set(api.ids("contacts"))
