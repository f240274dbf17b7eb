"""Addendum A8's smaller points: default orders and page size, the token's media type, podcast
values, and the documented filters that used to answer 400."""

from __future__ import annotations

import httpx
import pytest
from sandbox_contract_helpers import Api, assert_error, parse_ts

CLIENT = {"grant_type": "client_credentials", "client_id": "sandbox",
          "client_secret": "sandbox-secret"}


@pytest.mark.parametrize("path", ["contacts", "customers", "contact_notes"])
def test_people_and_notes_list_newest_first_without_a_sort(api, site_id, path):
    body = api.get(path, {"filter[site_id]": site_id})
    created = [parse_ts(r["attributes"]["created_at"]) for r in body["data"]]
    assert len(created) > 1 and created == sorted(created, reverse=True), path
    oldest = api.get(path, {"filter[site_id]": site_id, "sort": "created_at"})["data"]
    assert parse_ts(oldest[0]["attributes"]["created_at"]) == min(
        parse_ts(r["attributes"]["created_at"]) for r in api.all(path, {"filter[site_id]": site_id}))


def test_contact_notes_default_to_20_per_page(sandbox_factory_module):
    sandbox = sandbox_factory_module(scale="demo", sites=1)
    api = Api(sandbox.base_url)
    try:
        body = api.get("contact_notes")
        assert len(body["data"]) == 20 < body["meta"]["total_count"]
        assert len(api.get("contact_notes", {"page[size]": 100})["data"]) > 20
        assert len(api.get("contacts")["data"]) != 20, "only contact notes default to 20"
    finally:
        api.close()


def test_the_token_endpoint_answers_plain_json(sandbox):
    response = httpx.post(f"{sandbox.api_url}/oauth/token", data=CLIENT)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json()["token_type"] == "Bearer"


def test_podcast_status_and_directories(api, catalog, site_ids):
    podcasts = [p for s in site_ids for p in catalog.all("podcasts", s)]
    assert podcasts
    assert {p["attributes"]["status"] for p in podcasts} <= {"ready", "importing", "failed"}
    directories = [d for p in podcasts for d in p["attributes"]["directories"]]
    assert directories and all(set(d) == {"id", "url", "config"} for d in directories)
    assert all(isinstance(d["config"], dict) for d in directories)


def test_sites_sort_and_contains_filters(api):
    sites = api.get("sites")["data"]
    titles = [s["attributes"]["title"] for s in sites]
    ordered = api.get("sites", {"sort": "-title"})["data"]
    assert [s["attributes"]["title"] for s in ordered] == sorted(titles, reverse=True)
    first = sites[0]["attributes"]
    word = first["title"].split()[0].lower()
    hits = api.get("sites", {"filter[title_cont]": word})["data"]
    assert sites[0]["id"] in {s["id"] for s in hits}
    assert all(word in s["attributes"]["title"].lower() for s in hits)
    sub = api.get("sites", {"filter[subdomain_cont]": first["subdomain"]})["data"]
    assert [s["id"] for s in sub] == [sites[0]["id"]]


def test_courses_publish_status_eq(api, sandbox, catalog, site_id):
    """A course is published as its product is (the sandbox's ground truth)."""
    store = sandbox.store
    courses, products = store.tables["courses"], store.tables["products"]
    publish = products.cols["publish"][courses.cols["product"]]
    listed = {c["id"] for c in catalog.all("courses", site_id)}
    seen = set()
    for code, status in enumerate(("published", "draft")):
        got = {c["id"] for c in api.all("courses", {"filter[site_id]": site_id,
                                                    "filter[publish_status_eq]": status})}
        want = {courses.id_of(r) for r in range(courses.n) if publish[r] == code} & listed
        assert got == want, status
        seen |= got
    assert seen == listed
    assert_error(api.raw_get("courses", {"filter[publish_status_eq]": "nope"}), 400,
                 "publish_status_eq")


def test_hooks_event_eq(api, site_id):
    made = api.post_json("hooks", {"data": {
        "type": "hooks", "attributes": {"event": "tag_added",
                                        "target_url": "https://example.com/a8"},
        "relationships": {"site": {"data": {"id": site_id, "type": "sites"}}}}})
    assert made.status_code in (200, 201)
    hooks = api.all("hooks", {"filter[event_eq]": "tag_added"})
    assert hooks and all(h["attributes"]["event"] == "tag_added" for h in hooks)
    assert made.json()["data"]["id"] in {h["id"] for h in hooks}
    assert all(h["attributes"]["event"] != "tag_added"
               for h in api.all("hooks", {"filter[event_eq]": "purchase"}))


def test_landing_pages_published(api, sandbox, site_id):
    pages = api.all("landing_pages", {"filter[site_id]": site_id})
    yes = {p["id"] for p in api.all("landing_pages", {"filter[site_id]": site_id,
                                                      "filter[published]": "true"})}
    no = {p["id"] for p in api.all("landing_pages", {"filter[site_id]": site_id,
                                                     "filter[published]": "false"})}
    assert yes | no == {p["id"] for p in pages} and not yes & no
    for page in pages:
        if page["id"] in yes:
            assert page["attributes"]["publish_at"] is not None


def test_podcasts_filters(api, catalog, site_id):
    podcasts = catalog.all("podcasts", site_id)
    title = podcasts[0]["attributes"]["title"]
    assert [p["id"] for p in api.all("podcasts", {"filter[site_id]": site_id,
                                                  "filter[title_eq]": title})] == [podcasts[0]["id"]]
    word = title.split()[-1].lower()
    hits = api.all("podcasts", {"filter[site_id]": site_id, "filter[title_cont]": word})
    assert podcasts[0]["id"] in {p["id"] for p in hits}
    for name in ("status", "show_type"):
        value = podcasts[0]["attributes"][name]
        got = api.all("podcasts", {"filter[site_id]": site_id, f"filter[{name}_eq]": value})
        assert {p["id"] for p in got} == {p["id"] for p in podcasts
                                          if p["attributes"][name] == value}


def test_products_exclude_product_types(api, catalog, site_id):
    products = catalog.all("products", site_id)
    kinds = {p["attributes"]["product_type_name"] for p in products}
    assert len(kinds) > 1
    drop = sorted(kinds)[:2]
    params = [("filter[site_id]", site_id)] + [("filter[exclude_product_types][]", k) for k in drop]
    kept = api.get("products", params)["data"]
    assert {p["id"] for p in kept} == {p["id"] for p in products
                                       if p["attributes"]["product_type_name"] not in drop}
