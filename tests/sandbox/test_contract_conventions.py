"""Spec 1.1 conventions: pagination, links, meta shapes, page-size limits, site scoping."""

from __future__ import annotations

import math
from urllib.parse import parse_qs, urlsplit

import pytest
from sandbox_contract_helpers import META_SHAPE, SITE_COLLECTIONS, assert_error

PAGED = [c for c in SITE_COLLECTIONS if c != "platform_payments_payouts"]


def _page_of(url: str) -> int:
    query = parse_qs(urlsplit(url).query)
    return int(query.get("page[number]", ["1"])[0])


def _check_links(api, links: dict, current: int, last: int) -> None:
    for key in ("self", "first", "prev", "next", "last"):
        assert key in links, f"links.{key} missing"
    for key in ("self", "first", "last"):
        url = links[key]
        assert url.startswith(api.base_url + "/v1/"), f"links.{key} not absolute with /v1: {url}"
    assert _page_of(links["self"]) == current
    assert _page_of(links["first"]) == 1
    assert _page_of(links["last"]) == last
    if current == 1:
        assert links["prev"] is None
    else:
        assert links["prev"].startswith(api.base_url + "/v1/")
        assert _page_of(links["prev"]) == current - 1
    if current >= last:
        assert links["next"] is None
    else:
        assert links["next"].startswith(api.base_url + "/v1/")
        assert _page_of(links["next"]) == current + 1


@pytest.mark.parametrize("collection", SITE_COLLECTIONS)
def test_walk_every_page_with_links_and_meta(api, catalog, site_id, collection):
    """Following `next` visits every record once; links and meta agree on every page."""
    expected = [r["id"] for r in catalog.all(collection, site_id)]
    assert expected, f"{collection}: the tiny sandbox should hold records"
    shape = META_SHAPE[collection]
    params = {"filter[site_id]": site_id}
    size = None
    if shape != "payouts":
        size = max(1, min(7, len(expected) // 3 or 1))
        params["page[size]"] = size
    seen: list[str] = []
    for number, body in enumerate(api.pages(collection, params), start=1):
        assert set(body) >= {"data", "links", "meta"}
        assert all(r["type"] == collection for r in body["data"])  # type = collection name
        meta = body["meta"]
        if shape == "default":
            assert set(meta) >= {"total_pages", "total_count", "current_page"}
            assert meta["current_page"] == number
            assert meta["total_count"] == len(expected)
            assert meta["total_pages"] == math.ceil(len(expected) / size)
            last = meta["total_pages"]
        elif shape == "purchases":
            assert set(meta) >= {"count", "total_count", "total_pages"}
            assert "current_page" not in meta
            assert meta["count"] == len(body["data"])
            assert meta["total_count"] == len(expected)
            assert meta["total_pages"] == math.ceil(len(expected) / size)
            last = meta["total_pages"]
        else:
            assert set(meta) >= {"total", "pagination"}
            pagination = meta["pagination"]
            assert set(pagination) >= {"current", "first", "prev", "next", "last", "records"}
            assert meta["total"] == len(expected)
            assert pagination["current"] == number
            assert pagination["first"] == 1
            # `records` counts this page's records (meta.total holds the total).
            assert pagination["records"] == len(body["data"])
            last = pagination["last"]
            assert pagination["prev"] == (None if number == 1 else number - 1)
            assert pagination["next"] == (None if number == last else number + 1)
        for key in ("total_pages", "total_count", "current_page", "count", "total"):
            if key in meta:
                assert type(meta[key]) is int, f"meta.{key} must be an integer"
        _check_links(api, body["links"], number, last)
        if size is not None and number < last:
            assert len(body["data"]) == size
        seen.extend(r["id"] for r in body["data"])
    assert len(seen) == len(set(seen)), "a record appeared on two pages"
    assert sorted(seen) == sorted(expected)


@pytest.mark.parametrize("collection", PAGED)
def test_links_keep_filters_sort_and_page_size(api, site_id, collection):
    sort = {"contacts": "-email", "purchases": "-effective_start_at", "orders": "created_at",
            "customers": "-net_revenue"}.get(collection)
    params = {"filter[site_id]": site_id, "page[size]": 1, **({"sort": sort} if sort else {})}
    body = api.get(collection, params)
    for key in ("self", "first", "last", "next"):
        query = parse_qs(urlsplit(body["links"][key]).query)
        assert query.get("filter[site_id]") == [site_id], body["links"][key]
        assert query.get("page[size]") == ["1"], body["links"][key]
        if sort:
            assert query.get("sort") == [sort], body["links"][key]


def test_default_page_size_is_25_and_max_is_100(api, catalog, site_id):
    total = len(catalog.all("contacts", site_id)) + len(catalog.all("transactions", site_id))
    assert total > 25
    for collection in ("contacts", "transactions"):
        count = len(catalog.all(collection, site_id))
        body = api.get(collection, {"filter[site_id]": site_id})
        assert len(body["data"]) == min(25, count)
        body = api.get(collection, {"filter[site_id]": site_id, "page[size]": 100})
        assert len(body["data"]) == min(100, count)
    response = api.raw_get("contacts", {"filter[site_id]": site_id, "page[size]": 101})
    assert_error(response, 400, ("page", "size"))


@pytest.mark.parametrize(
    ("param", "value"),
    [
        ("page[number]", "0"),
        ("page[number]", "-1"),
        ("page[number]", "abc"),
        ("page[number]", "1.5"),
        ("page[size]", "0"),
        ("page[size]", "-5"),
        ("page[size]", "ten"),
    ],
)
@pytest.mark.parametrize("collection", ["contacts", "purchases", "orders"])
def test_bad_page_parameters_are_400(api, site_id, collection, param, value):
    response = api.raw_get(collection, {"filter[site_id]": site_id, param: value})
    assert_error(response, 400, ("page", "number" if "number" in param else "size"))


def test_payouts_accept_only_page_number(api, site_id):
    response = api.raw_get("platform_payments_payouts", {"filter[site_id]": site_id, "page[size]": 5})
    assert_error(response, 400, ("page", "size"))
    response = api.raw_get("platform_payments_payouts", {"filter[site_id]": site_id, "page[number]": "x"})
    assert_error(response, 400, ("page", "number"))


def test_page_past_the_end_is_an_empty_list(api, catalog, site_id):
    count = len(catalog.all("contacts", site_id))
    body = api.get("contacts", {"filter[site_id]": site_id, "page[size]": 10, "page[number]": 999})
    assert body["data"] == []
    assert body["meta"]["total_count"] == count
    assert body["links"]["next"] is None


@pytest.mark.parametrize("collection", ["contacts", "customers", "platform_payments_payouts"])
def test_site_filter_required_with_several_sites(api, collection):
    response = api.raw_get(collection)
    assert_error(response, 400, "site_id")


@pytest.mark.parametrize(
    "collection", [c for c in SITE_COLLECTIONS if c not in ("contacts", "customers", "platform_payments_payouts")]
)
def test_site_filter_optional_elsewhere_and_partitions(api, catalog, site_ids, collection):
    """Without the filter every site's records come back; with it, exactly that site's."""
    union = sorted(r["id"] for s in site_ids for r in catalog.all(collection, s))
    assert sorted(api.ids(collection)) == union
    first, second = ({r["id"] for r in catalog.all(collection, s)} for s in site_ids)
    assert not first & second


def test_site_filter_optional_for_contacts_with_one_site(sandbox_factory):
    from sandbox_contract_helpers import Api

    handle = sandbox_factory(scale="tiny", sites=1, seed=7)
    api = Api(handle.base_url)
    try:
        sites = api.all("sites")
        assert len(sites) == 1
        for collection in ("contacts", "customers"):
            assert sorted(api.ids(collection)) == sorted(
                api.ids(collection, {"filter[site_id]": sites[0]["id"]})
            )
        assert_error(api.raw_get("platform_payments_payouts"), 400, "site_id")
    finally:
        api.close()


def test_unknown_site_gives_empty_list(api):
    body = api.get("platform_payments_payouts", {"filter[site_id]": "999999999999"})
    assert body["data"] == []


def test_every_response_carries_the_sandbox_clock(api, site_id):
    """Architecture "Sandbox clock": the Date header is the frozen clock (default
    2026-03-01T12:00:00Z for the session sandbox), on successes and errors alike."""
    from email.utils import parsedate_to_datetime

    responses = [
        api.raw_get("contacts", {"filter[site_id]": site_id}),
        api.raw_get("contacts"),  # 400
        api.http.get(api.url("sites")),  # 401
        api.raw_get("contacts/2999999999"),  # 404
        api.token(client_id="sandbox", client_secret="sandbox-secret", grant_type="client_credentials"),
    ]
    for response in responses:
        assert parsedate_to_datetime(response.headers["date"]).isoformat() == "2026-03-01T12:00:00+00:00"
        assert response.headers["content-type"].startswith(("application/json", "application/vnd.api+json"))


@pytest.mark.parametrize(("path", "param"), [("contacts", "colour"), ("purchases", "page[offset]"),
                                             ("orders", "include"), ("transactions", "sort_by")])
def test_unknown_query_parameter_is_400(api, site_id, path, param):
    response = api.raw_get(path, {"filter[site_id]": site_id, param: "1"})
    assert_error(response, 400, param)


@pytest.mark.parametrize("collection", ["contacts", "customers", "orders", "platform_payments_payouts"])
def test_well_formed_unknown_site_is_an_empty_list(api, collection):
    body = api.get(collection, {"filter[site_id]": "2999999999"})
    assert body["data"] == []
    assert body["links"]["prev"] is None and body["links"]["next"] is None
    meta = body["meta"]
    if "total_count" in meta:
        assert meta["total_count"] == 0 and meta["total_pages"] == 0
    else:
        assert meta["total"] == 0


@pytest.mark.parametrize(("method", "path"), [("POST", "contacts"), ("DELETE", "contacts"),
                                              ("PUT", "sites"), ("GET", "oauth/token")])
def test_wrong_method_is_405(api, method, path):
    response = api.http.request(method, api.url(path), headers=api.headers)
    assert_error(response, 405)


def test_page_number_bounds(api, site_id):
    """FINDINGS #5: page numbers run from 1 to 2^31 - 1; past the end is an empty page."""
    body = api.get("contacts", {"filter[site_id]": site_id, "page[number]": 2**31 - 1})
    assert body["data"] == []
    assert_error(api.raw_get("contacts", {"filter[site_id]": site_id, "page[number]": 2**31}), 400,
                 ("page", "number"))


@pytest.mark.parametrize("path", ["/oauth/token", "/contacts", "/v2/contacts", "/api/v1/contacts"])
def test_every_route_is_under_v1(api, path):
    """Spec 9: the version is the first path segment on every endpoint, token endpoint included."""
    response = api.http.request("POST" if "oauth" in path else "GET", api.base_url + path,
                                headers=api.headers)
    assert_error(response, 404)
