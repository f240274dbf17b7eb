"""The request-log arithmetic behind the benchmark figures (fast, no sandbox)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from csbench import traffic
from csbench.measure import Request


def req(start: float, end: float, path: str = "/v1/contacts", query: str = "", status: int = 200,
        method: str = "GET") -> Request:  # fmt: skip
    return Request(start, end, method, path, query, status)


def test_peak_in_flight_counts_overlaps_not_requests() -> None:
    log = [req(0, 1), req(0.5, 1.5), req(0.9, 2), req(1.0, 3), req(2.5, 4)]
    # at t=0.95 three are open; a request ending exactly when another starts does not overlap
    assert traffic.peak_in_flight(log) == 3
    assert traffic.peak_in_flight([req(0, 1), req(1, 2), req(2, 3)]) == 1
    assert traffic.peak_in_flight([]) == 0


def test_achieved_rate_is_between_first_and_last_start() -> None:
    log = [req(10 + i * 0.1, 10 + i * 0.1 + 0.05) for i in range(601)]  # 10 per second
    assert traffic.achieved_per_minute(log) == pytest.approx(600.0)
    assert traffic.achieved_per_minute(log[:1]) != traffic.achieved_per_minute(log[:1])  # NaN


def test_pages_keep_start_order_and_skip_failures_and_posts() -> None:
    log = [
        req(2, 3, "/v1/contacts", "page%5Bnumber%5D=2"),
        req(1, 2, "/v1/contacts", "page%5Bnumber%5D=1"),
        req(0, 1, "/v1/oauth/token", method="POST"),
        req(3, 4, "/v1/orders/7", "include=order_items", status=429),
    ]
    assert traffic.pages(log) == [
        "/v1/contacts?page%5Bnumber%5D=1",
        "/v1/contacts?page%5Bnumber%5D=2",
    ]


def test_list_endpoints_are_resource_site_pairs_without_single_reads_or_auth() -> None:
    log = [
        req(0, 1, "/v1/sites"),
        req(0, 1, "/v1/contacts", "filter%5Bsite_id%5D=1&page%5Bnumber%5D=1"),
        req(0, 1, "/v1/contacts", "filter%5Bsite_id%5D=1&page%5Bnumber%5D=2"),
        req(0, 1, "/v1/contacts", "filter%5Bsite_id%5D=2&page%5Bnumber%5D=1"),
        req(0, 1, "/v1/orders/9", "include=order_items"),
        req(0, 1, "/v1/oauth/token", method="POST"),
    ]
    assert traffic.list_endpoints(log) == {
        ("/v1/sites", ""),
        ("/v1/contacts", "1"),
        ("/v1/contacts", "2"),
    }
    assert [traffic.is_auth(r) for r in log].count(True) == 1


def test_first_pages_pick_page_one_per_endpoint() -> None:
    log = [
        req(2, 3, "/v1/contacts", "filter%5Bsite_id%5D=1&page%5Bnumber%5D=2"),
        req(1, 2, "/v1/contacts", "filter%5Bsite_id%5D=1&page%5Bnumber%5D=1"),
        req(0, 1, "/v1/platform_payments_payouts", "filter%5Bsite_id%5D=1"),
    ]
    assert traffic.first_pages(log) == {
        ("/v1/contacts", "1"): "filter%5Bsite_id%5D=1&page%5Bnumber%5D=1",
        ("/v1/platform_payments_payouts", "1"): "filter%5Bsite_id%5D=1",
    }


@pytest.mark.parametrize(
    ("meta", "total"),
    [
        ({"total_pages": 3, "total_count": 250, "current_page": 1}, 250),  # default shape
        ({"count": 100, "total_count": 7, "total_pages": 1}, 7),  # purchases
        ({"total": 12, "pagination": {"current": 1, "records": 12}}, 12),  # payouts
        ({"total": 5}, 5),  # quirk
        ({"pagination": {"records": 4}}, 4),
    ],
)
def test_total_from_every_meta_shape(meta: dict, total: int) -> None:
    assert traffic.total_from_meta(meta) == total


def test_total_from_meta_names_what_is_missing() -> None:
    with pytest.raises(ValueError, match="current_page"):
        traffic.total_from_meta({"current_page": 1})


def test_rate_use_counts_api_answers_per_minute_and_429_share() -> None:
    log = [req(0, 0.1, "/v1/oauth/token", method="POST")]  # own budget: left out
    log += [req(1 + i, 1.1 + i, "/v1/contacts") for i in range(60)]  # 60 answers from t=1
    log += [req(30, 30.1, "/v1/orders/1", status=429), req(31, 31.1, "/v1/orders/2", status=500)]
    log.append(req(70, 70.1, "/v1/orders/3", status=0))  # cut off at the bound: no answer
    bounded = traffic.rate_use(log, end_s=91.0)
    assert bounded.answered == 60 and bounded.refused == 1 and bounded.errors == 1
    assert bounded.per_minute == pytest.approx(40.0)  # 60 answers over t=1..91
    assert bounded.refused_share == pytest.approx(1 / 62)
    finished = traffic.rate_use(log)  # a run that ended by itself: up to its last request
    assert finished.per_minute == pytest.approx(60 / 59 * 60)  # 60 answers, t=1..60


def test_gave_up_counts_the_clients_own_log_lines(tmp_path) -> None:
    log = tmp_path / "last-sync.log"
    assert traffic.gave_up(log) == 0  # no log: nothing given up
    log.write_text("x INFO fine\ny WARNING creator_sync.client: gave up on GET /v1/a ...\n"
                   "z WARNING creator_sync.client: gave up on GET /v1/b ...\n")
    assert traffic.gave_up(log) == 2


def test_requests_by_endpoint_groups_single_reads_under_their_collection() -> None:
    log = [req(0, 1, "/v1/orders"), req(0, 1, "/v1/orders"), req(0, 1, "/v1/orders/1"),
           req(0, 1, "/v1/acme_payments_payouts/7"), req(0, 1, "/v1/acme_payments_payouts/8"),
           req(0, 1, "/v1/acme_payments_payouts/9"), req(0, 1, "/v1/me")]
    assert traffic.requests_by_endpoint(log) == {
        "/v1/acme_payments_payouts/{id}": 3, "/v1/orders": 2, "/v1/orders/{id}": 1, "/v1/me": 1}


def test_request_floor_counts_pages_at_the_largest_size_details_and_auth() -> None:
    import httpx
    from csbench.budget import request_floor

    totals = {"/v1/contacts": 250, "/v1/courses": 3, "/v1/hooks": 0}
    seen: list[httpx.Request] = []

    def serve(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        path = request.url.path
        if path == "/v1/me":
            return httpx.Response(200, json={"data": {"id": "1", "type": "users"}})
        if path.endswith("_payments_payouts"):  # no page[size]: its own pages
            meta = {"total": 60, "pagination": {"last": 3, "records": 60}}
            return httpx.Response(200, json={"data": [{}] * 25, "meta": meta})
        return httpx.Response(200, json={"data": [], "meta": {"total_count": totals[path]}})

    site = "filter%5Bsite_id%5D=1"
    log = [
        req(0, 1, "/v1/oauth/token", method="POST"), req(9, 10, "/v1/oauth/revoke", method="POST"),
        req(1, 2, "/v1/contacts", f"{site}&sort=created_at&page%5Bnumber%5D=1&page%5Bsize%5D=10"),
        req(2, 3, "/v1/contacts", f"{site}&sort=created_at&page%5Bnumber%5D=2&page%5Bsize%5D=10"),
        req(1, 2, "/v1/courses", f"{site}&page%5Bnumber%5D=1&page%5Bsize%5D=100"),
        req(1, 2, "/v1/courses/5", "include=modules"),
        req(1, 2, "/v1/hooks", f"{site}&page%5Bnumber%5D=1&page%5Bsize%5D=100"),
        req(1, 2, "/v1/acme_payments_payouts", f"{site}&page%5Bnumber%5D=1"),
        req(1, 2, "/v1/me"),
    ]
    floor = request_floor("http://api.test", "t", log, transport=httpx.MockTransport(serve))
    assert floor.per_endpoint == {
        "/v1/contacts[1]": 3, "/v1/courses[1]": 1, "/v1/hooks[1]": 1,
        "/v1/acme_payments_payouts[1]": 3, "/v1/me": 1}
    assert floor.detail_reads == 3 + 60  # one per course and per payout
    assert floor.auth == 2 and floor.total == 9 + 63 + 2
    contacts = next(r for r in seen if r.url.path == "/v1/contacts")
    assert contacts.url.params["page[size]"] == "100" and "sort" not in contacts.url.params
    payouts = next(r for r in seen if r.url.path.endswith("_payments_payouts"))
    assert "page[size]" not in payouts.url.params


def test_records_in_lists_and_single_record_endpoints() -> None:
    assert traffic.records_in({"data": [], "meta": {"total_count": 7}}) == 7
    assert traffic.records_in({"data": {"id": "1", "type": "users"}}) == 1  # /v1/me
    with pytest.raises(ValueError, match="no meta"):
        traffic.records_in({"data": []})
