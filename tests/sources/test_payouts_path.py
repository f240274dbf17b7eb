"""The payouts path found, not asked for (issue 32, point 2; addendum A1): the brand word from
the host, then from the processor transactions name, then `platform`; one request confirms
each candidate; every candidate answering 404 finds nothing."""

from __future__ import annotations

import httpx
import pytest

from creator_sync.sources.creator_platform import api_client
from creator_sync.sources.creator_platform.payouts_path import (
    Candidate,
    find_payouts_path,
    host_words,
    processor_words,
)

SITE = "2200000000"


@pytest.mark.parametrize(("url", "words"), [
    ("https://api.acme.com", ["acme"]),
    ("https://api.acme.com/v1/", ["acme"]),
    ("https://acme.example.com", ["acme"]),
    ("https://api.my-school.io", ["myschool", "my", "school"]),
    ("http://127.0.0.1:8787", []),
    ("http://[::1]:8787", []),
    ("http://localhost:8787", []),
])
def test_host_words(url: str, words: list[str]) -> None:
    assert host_words(url) == words


def test_processor_words_compare_names_normalised() -> None:
    # A8: lower case, spaces and underscores alike; other processors name no brand
    assert processor_words(["stripe", "acme_payments", "Acme Payments", None, "paypal",
                            "Big School Payments", 7]) == ["acme", "bigschool"]


def test_the_processor_in_transactions_names_the_brand_of_a_loopback_sandbox(sandbox_factory):
    handle = sandbox_factory(brand="acme", sites=1)
    with api_client(handle.base_url, "sandbox", "sandbox-secret") as client:
        client.tokens.access_token()
        before = client.stats.requests
        found = find_payouts_path(client, SITE)
        spent = client.stats.requests - before
    assert found.path == "/acme_payments_payouts"
    assert found.source == "the processor named in transactions"
    assert found.tried == ("/acme_payments_payouts",)
    assert spent == 2  # one page of transactions, one confirming request


def test_the_default_sandbox_is_found_at_the_base_specs_path(sandbox_factory):
    handle = sandbox_factory(sites=1)  # brand `platform`: transactions name platform_payments
    with api_client(handle.base_url, "sandbox", "sandbox-secret") as client:
        found = find_payouts_path(client, SITE)
    assert found.path == "/platform_payments_payouts"


def _api(served: str, requests: list[str]) -> httpx.MockTransport:
    """A platform serving payouts at `served` only; transactions name no processor."""

    def handle(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        requests.append(path)
        if path.endswith("/oauth/token"):
            return httpx.Response(200, json={"access_token": "t", "expires_in": 3600})
        if path == "/v1/transactions":
            return httpx.Response(200, json={"data": [
                {"id": "1", "type": "transactions", "attributes": {"provider": "stripe"}}]})
        if path == f"/v1{served}":
            return httpx.Response(200, json={"data": [], "meta": {}})
        return httpx.Response(404, json={"errors": [{"status": "404", "title": "Not Found"}]})

    return httpx.MockTransport(handle)


def test_the_host_is_tried_first_and_one_request_confirms_it():
    requests: list[str] = []
    with api_client("https://api.zeta.com", "id", "secret",
                    transport=_api("/zeta_payments_payouts", requests)) as client:
        found = find_payouts_path(client, SITE)
    assert found.path == "/zeta_payments_payouts" and found.source == "the API host name"
    assert [p for p in requests if "oauth" not in p] == ["/v1/zeta_payments_payouts"]


def test_a_configured_path_is_checked_first():
    requests: list[str] = []
    with api_client("https://api.zeta.com", "id", "secret",
                    transport=_api("/custom_payouts", requests)) as client:
        found = find_payouts_path(client, SITE, first=[Candidate("/custom_payouts", "yours")])
    assert (found.path, found.source) == ("/custom_payouts", "yours")


def test_the_base_specs_word_comes_last():
    requests: list[str] = []
    with api_client("https://api.zeta.com", "id", "secret",
                    transport=_api("/platform_payments_payouts", requests)) as client:
        found = find_payouts_path(client, SITE)
    assert (found.path, found.source) == ("/platform_payments_payouts", "the base spec's word")
    assert [p for p in requests if "oauth" not in p] == [
        "/v1/zeta_payments_payouts", "/v1/transactions", "/v1/platform_payments_payouts"]


def test_every_candidate_answering_404_finds_nothing():
    requests: list[str] = []
    with api_client("https://api.zeta.com", "id", "secret",
                    transport=_api("/nowhere", requests)) as client:
        found = find_payouts_path(client, SITE)
    assert found.path is None
    assert found.tried == ("/zeta_payments_payouts", "/platform_payments_payouts")
