"""Sandbox options: determinism per seed, --now, page-size limits, --latency-ms, --rate-limit,
--fault-rate (each fault kind, deterministic per seed) and --quirks (each quirk visible)."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from sandbox_contract_helpers import Api, assert_error, parse_ts, rel_ids

SNAPSHOT_PATHS = [
    ("sites", {}),
    ("contacts", {"page[size]": 50, "sort": "-created_at"}),
    ("purchases", {"page[size]": 50, "page[number]": 2}),
    ("transactions", {"page[size]": 100}),
    ("platform_payments_payouts", {}),
    ("offers", {}),
    ("hooks/order_created_sample", None),
]


def _snapshot(handle) -> dict[str, bytes]:
    api = Api(handle.base_url)
    try:
        site = api.all("sites")[0]["id"]
        out = {}
        for path, params in SNAPSHOT_PATHS:
            query = None if params is None else {**params, "filter[site_id]": site}
            if path == "sites":
                query = None
            response = api.raw_get(path, query)
            assert response.status_code == 200, (path, response.text[:300])
            out[path] = response.content.replace(handle.base_url.encode(), b"BASE")
        course = api.all("courses")[0]["id"]
        response = api.raw_get(f"courses/{course}", {"include": "modules,lessons.media,offers"})
        out["course"] = response.content.replace(handle.base_url.encode(), b"BASE")
        return out
    finally:
        api.close()


def test_same_seed_same_bytes_other_seed_other_bytes(sandbox_factory):
    first = _snapshot(sandbox_factory(scale="tiny", seed=101))
    again = _snapshot(sandbox_factory(scale="tiny", seed=101))
    other = _snapshot(sandbox_factory(scale="tiny", seed=102))
    for key in first:
        assert first[key] == again[key], f"{key} differs for the same seed"
    differing = [key for key in first if first[key] != other[key]]
    assert len(differing) >= len(first) - 2, f"seeds 101 and 102 agree on too much: {differing}"


def test_now_fixes_the_clock_and_the_data_window(sandbox_factory):
    now = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
    handle = sandbox_factory(scale="tiny", seed=3, now="2025-03-01T12:00:00Z")
    api = Api(handle.base_url)
    try:
        assert abs((api.server_now() - now).total_seconds()) < 1
        site = api.all("sites")[0]["id"]
        created = [parse_ts(t["attributes"]["created_at"]) for t in api.all("transactions", {"filter[site_id]": site})]
        assert max(created) <= now
        assert min(created) >= now - timedelta(days=18 * 31 + 1)
        time.sleep(1.1)
        assert abs((api.server_now() - now).total_seconds()) < 1, "the clock must stay frozen"
    finally:
        api.close()


def test_page_size_options(sandbox_factory):
    handle = sandbox_factory(scale="tiny", seed=4, page_size_default=10, page_size_max=20)
    api = Api(handle.base_url)
    try:
        site = api.get("sites")["data"][0]["id"]
        assert len(api.get("contacts", {"filter[site_id]": site})["data"]) == 10
        assert len(api.get("contacts", {"filter[site_id]": site, "page[size]": 20})["data"]) == 20
        assert_error(api.raw_get("contacts", {"filter[site_id]": site, "page[size]": 21}), 400, "size")
    finally:
        api.close()


def test_latency_is_added(sandbox_factory):
    handle = sandbox_factory(scale="tiny", seed=4, latency_ms=300)
    api = Api(handle.base_url)
    try:
        started = time.monotonic()
        api.raw_get("sites")
        assert time.monotonic() - started >= 0.3
    finally:
        api.close()


def test_rate_limit_429_with_retry_after(sandbox_factory):
    handle = sandbox_factory(scale="tiny", seed=5, rate_limit=5)
    api = Api(handle.base_url)
    limited = None
    try:
        statuses = []
        limited_response = None
        for _ in range(8):
            response = api.raw_get("sites")
            statuses.append(response.status_code)
            if response.status_code == 429:
                limited_response = response
        assert 429 in statuses, statuses
        assert statuses.count(200) <= 5, statuses
        assert statuses[:statuses.index(429)] == [200] * statuses.index(429)
        assert_error(limited_response, 429)
        retry_after = limited_response.headers.get("retry-after")
        assert retry_after is not None and retry_after.isdigit() and 1 <= int(retry_after) <= 60
        limited = Api(handle.base_url, "limited", "limited-secret")
        assert limited.raw_get("sites").status_code == 200, "the limit is per client"
        same_client = Api(handle.base_url)
        try:
            assert same_client.raw_get("sites").status_code == 429, "a new session shares the budget"
        finally:
            same_client.close()
    finally:
        api.close()
        if limited:
            limited.close()


def test_rate_limit_without_retry_after(sandbox_factory):
    handle = sandbox_factory(scale="tiny", seed=5, rate_limit=3, retry_after=False)
    api = Api(handle.base_url)
    try:
        responses = [api.raw_get("sites") for _ in range(6)]
        limited = [r for r in responses if r.status_code == 429]
        assert limited
        assert all("retry-after" not in r.headers for r in limited)
    finally:
        api.close()


# ---- faults ---------------------------------------------------------------------------------

FAULT_TIMEOUT = 1.0


def _classify(http: httpx.Client, url: str, headers: dict, params: dict) -> str:
    try:
        response = http.get(url, headers=headers, params=params, timeout=FAULT_TIMEOUT)
    except httpx.TimeoutException:
        return "slow"
    except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError, httpx.ConnectError):
        return "reset"
    if response.status_code in (500, 502, 503):
        return f"http{response.status_code}"
    if response.status_code != 200:
        return f"other{response.status_code}"
    text = response.text
    if "html" in response.headers.get("content-type", "") or text.lstrip().startswith("<"):
        return "html"
    try:
        json.loads(text)
    except ValueError:
        return "truncated"
    return "ok"


def _fault_run(handle, requests: int) -> list[str]:
    with httpx.Client() as http:
        token = None
        for _ in range(50):
            try:
                response = http.post(handle.base_url + "/v1/oauth/token", timeout=FAULT_TIMEOUT,
                                     data={"client_id": "sandbox", "client_secret": "sandbox-secret",
                                           "grant_type": "client_credentials"})
                token = response.json()["access_token"]
                break
            except (httpx.HTTPError, ValueError, KeyError):
                continue
        assert token, "never got a token through the faults"
        headers = {"Authorization": f"Bearer {token}"}
        outcomes = []
        for number in range(requests):
            # 20 distinct requests, each seen three times: the fault depends on the repeat count.
            params = {"page[number]": 1 + number % 2, "page[size]": 1 + (number % 20) // 2}
            outcomes.append(_classify(http, handle.base_url + "/v1/sites", headers, params))
        return outcomes


@pytest.fixture(scope="module")
def fault_runs(sandbox_factory_module):
    one = _fault_run(sandbox_factory_module(scale="tiny", seed=77, fault_rate=0.5, fault_slow_seconds=2), 60)
    two = _fault_run(sandbox_factory_module(scale="tiny", seed=77, fault_rate=0.5, fault_slow_seconds=2), 60)
    three = _fault_run(sandbox_factory_module(scale="tiny", seed=78, fault_rate=0.5, fault_slow_seconds=2), 60)
    return one, two, three


@pytest.mark.parametrize("kind", ["http500", "http502", "http503", "reset", "truncated", "html", "slow"])
def test_each_fault_kind_occurs(fault_runs, kind):
    assert kind in fault_runs[0], fault_runs[0]


def test_fault_rate_is_roughly_honoured(fault_runs):
    outcomes = fault_runs[0]
    faulted = sum(o != "ok" for o in outcomes) / len(outcomes)
    assert 0.3 <= faulted <= 0.7, outcomes
    assert not [o for o in outcomes if o.startswith("other")], outcomes


def test_faults_are_deterministic_per_seed(fault_runs):
    one, two, three = fault_runs
    assert one == two
    assert one != three


def test_fault_errors_use_the_error_object(sandbox_factory):
    handle = sandbox_factory(scale="tiny", seed=80, fault_rate=1.0, fault_slow_seconds=0.1)
    seen: set[int] = set()
    with httpx.Client() as http:
        for number in range(60):
            try:
                response = http.get(handle.base_url + "/v1/sites", params={"page[number]": number + 1},
                                    timeout=FAULT_TIMEOUT)
            except httpx.HTTPError:
                continue
            if response.status_code in (500, 502, 503):
                assert_error(response, response.status_code)
                seen.add(response.status_code)
    assert seen == {500, 502, 503}


def test_a_retry_of_a_faulted_request_can_succeed(sandbox_factory):
    handle = sandbox_factory(scale="tiny", seed=79, fault_rate=0.5, fault_slow_seconds=2)
    with httpx.Client() as http:
        for _ in range(50):
            try:
                response = http.post(handle.base_url + "/v1/oauth/token", timeout=FAULT_TIMEOUT,
                                     data={"client_id": "sandbox", "client_secret": "sandbox-secret",
                                           "grant_type": "client_credentials"})
                token = response.json()["access_token"]
                break
            except (httpx.HTTPError, ValueError, KeyError):
                continue
        headers = {"Authorization": f"Bearer {token}"}
        outcomes = [_classify(http, handle.base_url + "/v1/sites", headers, {"page[size]": 2})
                    for _ in range(12)]
    assert "ok" in outcomes and set(outcomes) != {"ok"}, outcomes


# ---- quirks ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def quirky(sandbox_factory_module):
    plain = sandbox_factory_module(scale="tiny", seed=55)
    odd = sandbox_factory_module(scale="tiny", seed=55, quirks=True)
    plain_api, odd_api = Api(plain.base_url), Api(odd.base_url)
    yield plain_api, odd_api
    plain_api.close()
    odd_api.close()


LISTS = ["contacts", "customers", "products", "offers", "purchases", "orders", "transactions",
         "form_submissions", "contact_tags", "platform_payments_payouts"]


def _first_pages(api):
    site = api.get("sites")["data"][0]["id"]
    return {name: api.get(name, {"filter[site_id]": site}) for name in LISTS}


def test_quirk_meta_reduced_to_total(quirky):
    plain, odd = quirky
    plain_pages, odd_pages = _first_pages(plain), _first_pages(odd)
    reduced = [n for n, body in odd_pages.items() if set(body["meta"]) == {"total"}]
    assert sorted(reduced) == sorted(LISTS), "documented: every list's meta is reduced"
    for name in reduced:
        meta = plain_pages[name]["meta"]
        total = meta.get("total_count", meta.get("total"))
        assert odd_pages[name]["meta"]["total"] == total


def test_quirk_links_point_at_another_host(quirky):
    """Foreign-host `/api/v1` links still name the same page, so a client can map them back."""
    from urllib.parse import parse_qs, urlsplit

    plain, odd = quirky
    plain_pages, odd_pages = _first_pages(plain), _first_pages(odd)
    foreign = 0
    for name, body in odd_pages.items():
        for key in ("self", "first", "next", "last"):
            url, normal = body["links"].get(key), plain_pages[name]["links"].get(key)
            if url is None or url.startswith(odd.base_url):
                continue
            foreign += 1
            got, want = urlsplit(url), urlsplit(normal)
            assert "/api/v1/" in got.path and got.netloc != want.netloc, url
            assert got.path.replace("/api/v1/", "/v1/") == want.path, (url, normal)
            assert parse_qs(got.query) == parse_qs(want.query), (url, normal)
    assert foreign, "no link points at another host"


def test_quirk_non_z_offsets_same_instants(quirky):
    plain, odd = quirky
    plain_pages, odd_pages = _first_pages(plain), _first_pages(odd)
    offsets = 0
    for name in LISTS:
        plain_by_id = {r["id"]: r for r in plain_pages[name]["data"]}
        for record in odd_pages[name]["data"]:
            for key, value in record["attributes"].items():
                if isinstance(value, str) and (key.endswith("_at") or key.endswith("_date")):
                    if not value.endswith("Z"):
                        offsets += 1
                        assert not value.endswith(("+00:00", "-00:00")), value
                    if record["id"] in plain_by_id:
                        assert parse_ts(value) == parse_ts(plain_by_id[record["id"]]["attributes"][key])
    assert offsets, "no timestamp with a non-Z offset"


def test_quirk_offsets_follow_the_documented_rule(quirky):
    """Documented: records whose id is divisible by 5 carry `-05:00`, the rest `Z`."""
    _, odd = quirky
    seen = 0
    for name, body in _first_pages(odd).items():
        for record in body["data"]:
            for key, value in record["attributes"].items():
                if isinstance(value, str) and (key.endswith("_at") or key.endswith("_date")):
                    want = "-05:00" if int(record["id"]) % 5 == 0 else "Z"
                    assert value.endswith(want), (name, record["id"], key, value)
                    seen += 1
    assert seen


def test_quirk_capitalised_payout_status(quirky):
    _, odd = quirky
    site = odd.get("sites")["data"][0]["id"]
    statuses = {p["attributes"]["status"] for p in odd.get("platform_payments_payouts", {"filter[site_id]": site})["data"]}
    assert any(s[:1].isupper() for s in statuses), statuses
    assert {s.lower() for s in statuses} <= {"pending", "in_transit", "paid", "failed", "canceled"}
    lower = odd.get("platform_payments_payouts", {"filter[site_id]": site, "filter[status]": "paid"})["data"]
    assert lower and all(p["attributes"]["status"].lower() == "paid" for p in lower)


def test_quirk_course_reads(sandbox_factory):
    """Some course reads put `included` inside `data`; large courses (over 30 lessons) answer 500
    when `lessons.media` is combined with another include (documented choice, FINDINGS #3), while
    `lessons.media` alone still answers so that a client can survive by splitting includes."""
    plain = Api(sandbox_factory(scale="tiny", seed=42).base_url)
    odd = Api(sandbox_factory(scale="tiny", seed=42, quirks=True).base_url)
    inside, ok_sizes, failed_sizes = 0, [], []
    try:
        for course in plain.get("courses", {"page[size]": 100})["data"]:
            lessons = len(rel_ids(plain.get(f"courses/{course['id']}")["data"], "lessons"))
            body = odd.raw_get(f"courses/{course['id']}", {"include": "modules"})
            assert body.status_code == 200
            document = body.json()
            assert "included" in document["data"] and "included" not in document, \
                "documented: every course read with include nests `included` in `data`"
            inside += 1
            response = odd.raw_get(f"courses/{course['id']}", {"include": "modules,lessons.media"})
            if response.status_code == 500:
                assert_error(response, 500, "include")
                failed_sizes.append(lessons)
            else:
                assert response.status_code == 200
                ok_sizes.append(lessons)
            alone = odd.raw_get(f"courses/{course['id']}", {"include": "lessons.media"})
            assert alone.status_code == 200, "lessons.media alone must stay readable"
            assert plain.raw_get(f"courses/{course['id']}",
                                 {"include": "modules,lessons.media"}).status_code == 200
    finally:
        plain.close()
        odd.close()
    assert inside, "no course read with included inside data"
    assert failed_sizes, "no large course failed on include=modules,lessons.media"
    assert ok_sizes, "small courses must still answer"
    assert min(failed_sizes) > 30 >= max(ok_sizes), (failed_sizes, ok_sizes)


def test_quirks_off_by_default(quirky):
    plain, _ = quirky
    for name, body in _first_pages(plain).items():
        assert set(body["meta"]) != {"total"}, name
        assert body["links"]["self"].startswith(plain.base_url + "/v1/")


def test_sites_option_spreads_records(sandbox_factory):
    api = Api(sandbox_factory(scale="tiny", seed=6, sites=3).base_url)
    try:
        sites = [s["id"] for s in api.get("sites")["data"]]
        assert len(sites) == 3
        for site in sites:
            for collection in ("contacts", "transactions", "platform_payments_payouts"):
                assert api.get(collection, {"filter[site_id]": site})["data"], (site, collection)
    finally:
        api.close()
