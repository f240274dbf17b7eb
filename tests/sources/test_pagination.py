"""Pagination: meta shapes, concurrent ordered fetch, empty-page stop, never-ending guards."""

from __future__ import annotations

import pytest
from fakeapi import FakeApi, record

from creator_sync.sources.creator_platform import CreatorPlatformClient, api_client
from creator_sync.sources.creator_platform.auth import Secret
from creator_sync.sources.creator_platform.endpoints import RESOURCES
from creator_sync.sources.creator_platform.errors import BadResponseError, PaginationError
from creator_sync.sources.creator_platform.pagination import iter_pages, total_pages


def client_for(api: FakeApi, concurrency: int = 4) -> CreatorPlatformClient:
    return api_client("http://127.0.0.1:9", api.client_id, Secret(api.client_secret),
                      transport=api.transport(), concurrency=concurrency, backoff_initial=0.001)


def contacts_api(n: int) -> FakeApi:
    api = FakeApi()
    api.collections["contacts"] = [record("contacts", 3_000_000_000 + i) for i in range(n)]
    return api


@pytest.mark.parametrize(
    "meta, size, first_len, expected",
    [
        ({"total_pages": 7, "total_count": 650, "current_page": 1}, 100, 100, 7),  # default shape
        ({"count": 100, "total_count": 650, "total_pages": 7}, 100, 100, 7),  # purchases
        ({"total": 65, "pagination": {"current": 1, "first": 1, "prev": None, "next": 2, "last": 3, "records": 65}}, None, 25, 3),
        ({"total": 650}, 100, 100, 7),  # quirk: only the total count
        ({"total": 65}, None, 25, 3),  # quirk on an endpoint without page[size]
        ({}, 100, 100, None),
        (None, 100, 100, None),
        ({"total_pages": "7"}, 100, 100, None),  # a string is not trusted
    ],
)
def test_total_pages_from_every_meta_shape(meta, size, first_len, expected):
    assert total_pages(meta, page_size=size, first_page_len=first_len) == expected


def test_all_pages_in_order_and_links_never_followed():
    api = contacts_api(1050)
    with client_for(api) as client:
        pages = list(iter_pages(client, RESOURCES["contacts"], {"filter[site_id]": "1"}, page_size=100))
    ids = [r["id"] for p in pages for r in p.data]
    assert ids == [str(3_000_000_000 + i) for i in range(1050)]
    assert [p.number for p in pages] == list(range(1, 12))
    hosts = {r.url.host for r in api.requests}
    assert hosts == {"127.0.0.1"}  # the fake's links point at evil.example
    listed = [r for r in api.requests if r.url.path == "/v1/contacts"]
    assert all(r.url.params["page[size]"] == "100" for r in listed)
    assert len(listed) == 11  # page 11 is short: nothing can sit past it, no probe


def _list_calls(api: FakeApi) -> list[int]:
    return [int(r.url.params["page[number]"]) for r in api.requests if r.url.path == "/v1/contacts"]


def test_full_last_page_is_probed_once_more_when_records_arrived_during_the_listing():
    api = contacts_api(200)  # 2 full pages: a record created mid-sync may sit on page 3
    late = record("contacts", 3_000_000_200)

    def create_after_page_one(request):
        if request.url.params.get("page[number]") == "2" and late not in api.collections["contacts"]:
            api.collections["contacts"].append(late)  # page 2 now announces 201 records

    api.hook = create_after_page_one
    with client_for(api) as client:
        pages = list(iter_pages(client, RESOURCES["contacts"], {}, page_size=100))
    assert [len(p.data) for p in pages] == [100, 100, 1]
    assert sorted(_list_calls(api)) == [1, 2, 3]  # page 3 is short: the end


def test_full_last_page_whose_own_total_is_all_read_is_the_end():
    api = contacts_api(200)  # page 2's fresh total is 200: nothing can sit on page 3
    with client_for(api) as client:
        pages = list(iter_pages(client, RESOURCES["contacts"], {}, page_size=100))
    assert [len(p.data) for p in pages] == [100, 100]
    assert sorted(_list_calls(api)) == [1, 2]


def test_single_short_page_is_one_request():
    api = contacts_api(7)
    ends = []
    with client_for(api) as client:
        pages = list(iter_pages(client, RESOURCES["contacts"], {}, page_size=100, on_end=ends.append))
    assert [len(p.data) for p in pages] == [7]
    assert _list_calls(api) == [1]
    assert ends and ends[0].number == 1  # the drift check still gets the final meta


def test_count_only_meta_is_probed_past_the_computed_last_page():
    api = contacts_api(150)
    api.meta_shape = lambda name, n, size, total, pages: {"total": total}  # quirk: no page count
    with client_for(api) as client:
        pages = list(iter_pages(client, RESOURCES["contacts"], {}, page_size=100))
    assert [len(p.data) for p in pages] == [100, 50]
    assert sorted(_list_calls(api)) == [1, 2, 3]


def test_records_added_during_sync_are_picked_up_past_total_pages():
    api = contacts_api(200)
    calls = {"n": 0}

    def hook(request):
        if request.url.path == "/v1/contacts":
            calls["n"] += 1
            if calls["n"] == 2:  # after page 1 announced 2 pages, 150 more records arrive
                api.collections["contacts"].extend(record("contacts", 4_000_000_000 + i) for i in range(150))
        return None

    api.hook = hook
    with client_for(api, concurrency=1) as client:
        pages = list(iter_pages(client, RESOURCES["contacts"], {}, page_size=100))
    ids = [r["id"] for p in pages for r in p.data]
    assert len(ids) == 350 and len(set(ids)) == 350


def test_stops_on_empty_page_even_if_meta_lies():
    api = contacts_api(150)
    api.meta_shape = lambda *a: {"total_pages": 10**9, "total_count": 10**11}
    with client_for(api) as client:
        pages = list(iter_pages(client, RESOURCES["contacts"], {}, page_size=100))
    assert sum(len(p.data) for p in pages) == 150
    assert len([r for r in api.requests if r.url.path == "/v1/contacts"]) <= 2 + 4  # bounded read-ahead


def test_unknown_total_pages_reads_sequentially_until_empty():
    api = contacts_api(250)
    api.meta_shape = lambda *a: {}
    with client_for(api) as client:
        pages = list(iter_pages(client, RESOURCES["contacts"], {}, page_size=100))
    assert [len(p.data) for p in pages] == [100, 100, 50]


def test_server_ignoring_page_number_is_detected():
    api = contacts_api(250)
    api.meta_shape = lambda *a: {}

    def hook(request):
        if request.url.path == "/v1/contacts":
            # every page is page 1: a never-ending `next`
            params = dict(request.url.params)
            params["page[number]"] = "1"
            api.hook = None
            try:
                return api.handle(request.__class__("GET", request.url.copy_with(params=params), headers=request.headers))
            finally:
                api.hook = hook
        return None

    api.hook = hook
    with client_for(api) as client, pytest.raises(PaginationError, match="repeats page 1"):
        list(iter_pages(client, RESOURCES["contacts"], {}, page_size=100))


def test_hard_page_cap():
    api = contacts_api(500)
    api.meta_shape = lambda *a: {}
    with client_for(api) as client, pytest.raises(PaginationError, match="more than 3 pages"):
        list(iter_pages(client, RESOURCES["contacts"], {}, page_size=100, max_pages=3))


def test_payouts_send_no_page_size_and_use_pagination_meta():
    api = FakeApi()
    api.max_page_size = 25
    api.collections["platform_payments_payouts"] = [record("platform_payments_payouts", i, amount=1.1) for i in range(60)]
    api.meta_shape = lambda name, n, size, total, pages: {"total": total, "pagination": {"current": n, "last": pages, "records": total}}
    with client_for(api) as client:
        pages = list(iter_pages(client, RESOURCES["payouts"], {"filter[site_id]": "1"}, page_size=100))
    assert sum(len(p.data) for p in pages) == 60
    listed = [r for r in api.requests if "payouts" in r.url.path]
    assert all("page[size]" not in r.url.params for r in listed)


def test_page_without_data_list_is_a_clear_error():
    api = contacts_api(5)
    api.hook = lambda r: api._json(200, {"meta": {}}) if r.url.path == "/v1/contacts" else None
    with client_for(api) as client, pytest.raises(BadResponseError, match="no `data` list") as err:
        list(iter_pages(client, RESOURCES["contacts"], {}, page_size=100))
    assert "contacts" in str(err.value) and "page%5Bnumber%5D=1" not in str(err.value)


def test_page_size_steps_down_to_the_server_cap():
    api = contacts_api(35)

    def hook(request):
        size = request.url.params.get("page[size]")
        if request.url.path == "/v1/contacts" and size and int(size) > 10:
            return api._json(400, {"errors": [{"status": "400", "detail": f"page[size] must be at most 10, got {size}", "source": {"pointer": "page[size]"}}]})
        return None

    api.hook = hook
    with client_for(api) as client:
        pages = list(iter_pages(client, RESOURCES["contacts"], {}, page_size=100))
        assert client.page_size_caps == {"contacts": 10}
    assert [len(p.data) for p in pages] == [10, 10, 10, 5]
