"""Odd client input never breaks the server: each answer is a 2xx, or a 4xx with the section 7
error object, never a 5xx or a dropped connection."""

from __future__ import annotations

import pytest
from sandbox_contract_helpers import assert_error

ODD = [
    ("contacts", [("page[number]", "99999999999999999999")]),  # FINDINGS #5
    ("contacts", [("page[size]", "1e2")]),
    ("contacts", [("page[size]", "1"), ("page[size]", "2")]),
    ("contacts", [("filter[created_in_last]", "1e309")]),
    ("contacts", [("filter[created_in_last]", "99999999999")]),
    ("contacts", [("filter[search]", "\x00")]),
    ("contacts", [("filter[search]", "é" * 2000)]),
    ("contacts", [("filter[search]", "%' OR 1=1 --")]),
    ("contacts", [("filter[site_id]", " ")]),
    ("contacts", [("filter[site_id]", "")]),
    ("contacts", [("filter[site_id]", "99999999999999999999999")]),
    ("contacts", [("filter[]", "x")]),
    ("contacts", [("filter", "x")]),
    ("contacts", [("fields[contacts]", "")]),
    ("contacts", [("sort", "-")]),
    ("purchases", [("filter[amount_in_cents_gt]", "9" * 40)]),
    ("purchases", [("filter[created_at_gt]", "2025-02-30T00:00:00Z")]),
    ("purchases", [("filter[created_at_gt]", "2025-01-01T00:00:00+25:00")]),
    ("orders", [("filter[currency_code_in]", ",,,")]),
    ("transactions", [("filter[start_date]", "2025-12-31"), ("filter[end_date]", "2025-01-01")]),
    ("platform_payments_payouts", [("filter[status]", "PAID")]),
    ("contacts/2200000000", []),
    ("contacts/%20", []),
    ("contacts/" + "9" * 50, []),
    ("customers/2300000001", [("include", "contact.customer.contact")]),
    ("hooks/_sample", []),
    ("contacts", [("page[size]", "99999999999999999999")]),
    ("customers", [("filter[has_offer_id]", "99999999999999999999")]),
    ("contacts", [("filter[has_tag_id]", "-1")]),
    ("transactions", [("filter[customer_id]", "99999999999999999999")]),
    ("orders", [("filter[order_number_eq]", "9" * 30)]),
    ("orders", [("filter[total_price_in_cents_gt]", "-" + "9" * 30)]),
    ("purchases", [("filter[quantity_lt]", "9" * 30)]),
    ("purchases", [("filter[customer_id]", "2" * 25)]),
    ("form_submissions", [("filter[form_id]", "9" * 25)]),
    ("customers", [("filter[net_revenue_gt]", "1e400")]),
    ("customers", [("filter[net_revenue_gt]", "NaN")]),
    ("contacts", [("filter[with_all_tag_ids]", "9" * 25)]),
    ("platform_payments_payouts", [("page[number]", "9" * 25)]),  # FINDINGS #5
]


@pytest.mark.parametrize(("path", "params"), ODD, ids=[f"{p}-{i}" for i, (p, _) in enumerate(ODD)])
def test_odd_input_gets_a_clean_answer(api, site_id, path, params):
    query = list(params)
    if "/" not in path and not any(k == "filter[site_id]" for k, _ in query):
        query.append(("filter[site_id]", site_id))
    response = api.raw_get(path, query)
    assert response.status_code < 500, f"{response.status_code}: {response.text[:300]}"
    if response.status_code >= 400:
        assert_error(response, response.status_code)


def _hook(site_id: str, **attributes) -> dict:
    base = {"event": "purchase", "target_url": "https://example.com/h"}
    return {"data": {"type": "hooks", "attributes": {**base, **attributes},
                     "relationships": {"site": {"data": {"id": site_id, "type": "sites"}}}}}


ODD_HOOKS = [
    {"resource_id": 10**30},
    {"resource_id": -5},
    {"resource_id": 1.5},
    {"resource_id": True},
    {"event": 5},
    {"event": None},
    {"target_url": "https://example.com/" + "a" * 10000},
    {"target_url": "http://"},
    {"target_url": ["https://example.com"]},
]


@pytest.mark.parametrize("attributes", ODD_HOOKS, ids=[str(i) for i in range(len(ODD_HOOKS))])
def test_odd_hook_bodies_get_a_clean_answer(api, site_id, attributes):
    response = api.post_json("hooks", _hook(site_id, **attributes))
    if response.status_code == 201:
        api.http.delete(api.url(f"hooks/{response.json()['data']['id']}"), headers=api.headers)
        return
    assert_error(response, 422, "/data")


@pytest.mark.parametrize(
    "form",
    [
        {"grant_type": "refresh_token", "refresh_token": "x" * 20000},
        {"grant_type": "refresh_token", "refresh_token": "a.b.c"},
        {"grant_type": "client_credentials", "client_id": "é" * 100, "client_secret": "x"},
        {"grant_type": "client_credentials", "client_id": "sandbox", "client_secret": "x" * 5000},
    ],
    ids=["long-refresh", "fake-jwt", "unicode-client", "long-secret"],
)
def test_odd_token_requests_get_a_clean_answer(api, form):
    response = api.token(**form)
    assert response.status_code in (400, 401), response.text[:300]
    assert_error(response, response.status_code)


@pytest.mark.parametrize("header", ["Bearer a.b.c", "Bearer " + "x" * 8000, "Bearer\tabc"])
def test_odd_bearer_headers_are_401(api, header):
    response = api.http.get(api.url("sites"), headers={"Authorization": header})
    assert_error(response, 401)


@pytest.mark.parametrize("body", [{"count": -1}, {"count": 100001}, {"count": 1.5}, []])
def test_bad_activity_requests_are_rejected(sandbox_factory, body):
    import httpx

    handle = sandbox_factory(scale="tiny", seed=27)
    response = httpx.post(handle.base_url + "/_sandbox/activity", json=body, timeout=30)
    assert response.status_code in (400, 422), response.text[:300]
    assert_error(response, response.status_code)
