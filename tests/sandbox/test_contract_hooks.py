"""Spec 4.5, 4.6 and 6: hook creation and validation, the hook routes, the six samples."""

from __future__ import annotations

import pytest
from sandbox_contract_helpers import assert_error, check_sample_shape, parse_ts

EVENTS = ["purchase", "payment_succeeded", "order_created", "form_submission", "tag_added", "tag_removed"]


def body(site_id: str, event: str = "purchase", target: str = "https://example.com/hooks", **extra) -> dict:
    attributes = {"event": event, "target_url": target, **extra}
    return {"data": {"type": "hooks", "attributes": attributes,
                     "relationships": {"site": {"data": {"id": site_id, "type": "sites"}}}}}


@pytest.fixture
def created(api):
    """Ids of hooks a test creates; deleted afterwards so the shared sandbox stays clean."""
    ids: list[str] = []
    yield ids
    for hook_id in ids:
        api.http.delete(api.url(f"hooks/{hook_id}"), headers=api.headers)


@pytest.mark.parametrize("event", EVENTS)
def test_create_read_list_delete(api, site_id, created, event):
    response = api.post_json("hooks", body(site_id, event, resource_id="3000000001"))
    assert response.status_code == 201, response.text
    data = response.json()["data"]
    created.append(data["id"])
    assert data["type"] == "hooks" and data["id"].isdigit() and int(data["id"]) > 2**31
    attributes = data["attributes"]
    assert attributes["event"] == event
    assert attributes["target_url"] == "https://example.com/hooks"
    assert attributes["resource_id"] == 3000000001  # an integer (A8), whatever was sent
    parse_ts(attributes["created_at"])
    parse_ts(attributes["updated_at"])
    assert data["relationships"]["site"]["data"] == {"id": site_id, "type": "sites"}

    read = api.get(f"hooks/{data['id']}")
    assert read["data"] == data
    listed = api.all("hooks")
    assert data["id"] in {h["id"] for h in listed}

    deleted = api.http.delete(api.url(f"hooks/{data['id']}"), headers=api.headers)
    assert deleted.status_code == 204
    assert_error(api.raw_get(f"hooks/{data['id']}"), 404)
    assert data["id"] not in {h["id"] for h in api.all("hooks")}
    assert_error(api.http.delete(api.url(f"hooks/{data['id']}"), headers=api.headers), 404)


@pytest.mark.parametrize("resource_id", [3000000002, "3000000002"], ids=["integer", "string"])
def test_resource_id_integer_or_string(api, site_id, created, resource_id):
    response = api.post_json("hooks", body(site_id, "tag_added", resource_id=resource_id))
    assert response.status_code == 201, response.text
    created.append(response.json()["data"]["id"])
    assert response.json()["data"]["attributes"]["resource_id"] == 3000000002  # A8: an integer


def test_wildcard_hook_has_null_resource_id(api, site_id, created):
    response = api.post_json("hooks", body(site_id, "purchase"))
    assert response.status_code == 201
    created.append(response.json()["data"]["id"])
    assert response.json()["data"]["attributes"]["resource_id"] is None


def _without(payload: dict, *path: str) -> dict:
    node = payload
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]
    return payload


BAD_BODIES = {
    "no-data": (lambda s: {}, "/data"),
    "data-not-object": (lambda s: {"data": []}, "/data"),
    "wrong-type": (lambda s: {**body(s), "data": {**body(s)["data"], "type": "webhooks"}}, "/data/type"),
    "no-type": (lambda s: _without(body(s), "data", "type"), "/data/type"),
    "no-event": (lambda s: _without(body(s), "data", "attributes", "event"), "/data/attributes/event"),
    "unknown-event": (lambda s: body(s, "refund_issued"), "/data/attributes/event"),
    "no-target": (lambda s: _without(body(s), "data", "attributes", "target_url"),
                  "/data/attributes/target_url"),
    "target-not-url": (lambda s: body(s, target="not a url"), "/data/attributes/target_url"),
    "target-ftp": (lambda s: body(s, target="ftp://example.com/x"), "/data/attributes/target_url"),
    "resource-id-object": (lambda s: body(s, resource_id={"id": 1}), "/data/attributes/resource_id"),
    "resource-id-word": (lambda s: body(s, resource_id="abc"), "/data/attributes/resource_id"),
    "no-site": (lambda s: _without(body(s), "data", "relationships"), "/data/relationships/site"),
    "site-wrong-type": (
        lambda s: {**body(s), "data": {**body(s)["data"], "relationships": {
            "site": {"data": {"id": s, "type": "contacts"}}}}},
        "/data/relationships/site",
    ),
}


@pytest.mark.parametrize("case", list(BAD_BODIES))
def test_invalid_bodies_are_422_with_pointer(api, site_id, case):
    make, pointer = BAD_BODIES[case]
    before = {h["id"] for h in api.all("hooks")}
    error = assert_error(api.post_json("hooks", make(site_id)), 422)
    assert error["source"]["pointer"].startswith(pointer), error
    assert {h["id"] for h in api.all("hooks")} == before, "a rejected hook must not be stored"


def test_unknown_site_is_rejected(api):
    response = api.post_json("hooks", body("2999999999"))
    assert response.status_code in (404, 422)
    assert_error(response, response.status_code, "/data/relationships/site")


def test_body_that_is_not_json(api):
    response = api.http.post(api.url("hooks"), content=b"{not json",
                             headers={**api.headers, "Content-Type": "application/vnd.api+json"})
    assert response.status_code in (400, 422)
    assert_error(response, response.status_code)


@pytest.mark.parametrize("event", EVENTS)
def test_samples(api, event):
    sample = api.get(f"hooks/{event}_sample")
    assert isinstance(sample, list) and sample
    check_sample_shape(event, sample)


def test_unknown_sample_is_404(api):
    assert_error(api.raw_get("hooks/refund_sample"), 404)


def test_non_json_content_type_is_415(api, site_id):
    response = api.http.post(api.url("hooks"), content=b"event=purchase",
                             headers={**api.headers, "Content-Type": "application/x-www-form-urlencoded"})
    assert_error(response, 415)


def test_hooks_list_is_paged_and_site_scoped(api, site_ids, created):
    for site in site_ids:
        response = api.post_json("hooks", body(site, "purchase"))
        assert response.status_code == 201
        created.append(response.json()["data"]["id"])
    first, second = created[-2:]
    listing = api.get("hooks", {"filter[site_id]": site_ids[0], "page[size]": 100})
    assert set(listing["meta"]) >= {"total_pages", "total_count", "current_page"}
    ids = {h["id"] for h in listing["data"]}
    assert first in ids and second not in ids
    assert all(h["relationships"]["site"]["data"]["id"] == site_ids[0] for h in listing["data"])
