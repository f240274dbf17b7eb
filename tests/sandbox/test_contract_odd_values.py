"""Values that surprise and filters refused (issue 40): `--quirks` writes money and rates as a
platform computing in floats does and net revenue as the live document does;
`--unreadable-amounts` serves a value no sync can read; `--refuse-filters` answers a list
filter with a 400; the token endpoint answers `application/json`, its errors included."""

from __future__ import annotations

from decimal import Decimal

import pytest
from sandbox_contract_helpers import Api, assert_error, loads

PAYOUTS = "platform_payments_payouts"


def _lines(api: Api, site: str, payouts: list[dict]) -> list[list[dict]]:
    return [api.get(f"{PAYOUTS}/{payout['id']}", {"filter[site_id]": site})
            ["data"]["attributes"]["transactions"] for payout in payouts]


def _pairs(want: list[list[dict]], got: list[list[dict]]) -> list[tuple[dict, dict]]:
    """Lines of the same transactions (--quirks also appends fee corrections to some payouts)."""
    return [pair for w, g in zip(want, got, strict=True) for pair in zip(w, g, strict=False)]


def test_quirks_write_float_noise_and_long_rates_on_payout_lines(sandbox_factory):
    plain, quirky = Api(sandbox_factory().base_url), Api(sandbox_factory(quirks=True).base_url)
    try:
        site = plain.ids("sites")[0]
        payouts = plain.all(PAYOUTS, {"filter[site_id]": site})
        pairs = _pairs(_lines(plain, site, payouts), _lines(quirky, site, payouts))
    finally:
        plain.close()
        quirky.close()
    assert len(pairs) > 20
    noisy = [(w, g) for w, g in pairs if g["amount"] != w["amount"]]
    long_rates = [g["exchange_rate"] for _, g in pairs
                  if -g["exchange_rate"].as_tuple().exponent > 9]
    assert noisy and long_rates, "no float noise served under --quirks"
    for w, g in noisy:  # the same cents, written with float noise
        assert str(g["amount"]) == f"{w['amount']:.2f}00000000000003"
        assert g["amount"].quantize(Decimal("0.01")) == w["amount"]
    assert {str(r) for r in long_rates} <= {"1.080000000345678912", "1.270000000345678912"}
    for w, g in pairs:  # a rate differs only by digits past the ones the plain rate has
        assert str(g["exchange_rate"]).startswith(str(w["exchange_rate"]))


def test_quirks_write_net_revenue_as_the_document_does(sandbox_factory):
    plain, quirky = Api(sandbox_factory().base_url), Api(sandbox_factory(quirks=True).base_url)
    try:
        sites = plain.ids("sites")
        want = {c["id"]: c["attributes"]["net_revenue"] for s in sites
                for c in plain.all("customers", {"filter[site_id]": s})}
        got = {c["id"]: c["attributes"]["net_revenue"] for s in sites
               for c in quirky.all("customers", {"filter[site_id]": s})}
    finally:
        plain.close()
        quirky.close()
    kinds = {type(v) for v in got.values()}
    assert kinds == {str, int}, kinds  # `"0.0"`, `"12.34"` and `10000`
    for rid, text in want.items():
        value = got[rid]
        assert Decimal(str(value)) == Decimal(text)  # the same amount in major units
        if text == "0.00":
            assert value == "0.0"
        elif text.endswith(".00"):
            assert value == int(text[:-3])


def test_unreadable_amounts_serve_n_a_on_the_first_payouts(sandbox_factory):
    api = Api(sandbox_factory(unreadable_amounts=2).base_url)
    try:
        amounts = [p["attributes"]["amount"] for site in api.ids("sites")
                   for p in api.all(PAYOUTS, {"filter[site_id]": site})]
        site, bad = next((site, p) for site in api.ids("sites")
                         for p in api.all(PAYOUTS, {"filter[site_id]": site})
                         if p["attributes"]["amount"] == "n/a")
        detail = api.get(f"{PAYOUTS}/{bad['id']}", {"filter[site_id]": site})
    finally:
        api.close()
    assert amounts.count("n/a") == 2
    assert all(isinstance(a, Decimal) for a in amounts if a != "n/a")
    assert detail["data"]["attributes"]["amount"] == "n/a"  # the single read says the same


def test_refused_filters_answer_400_naming_the_filter(sandbox_factory):
    api = Api(sandbox_factory(refuse_filters="blog_posts:updated_at_gt").base_url)
    try:
        refused = api.raw_get("blog_posts", {"filter[updated_at_gt]": "2026-01-01T00:00:00Z"})
        other = api.raw_get("blog_posts", {"filter[updated_at_gte]": "2026-01-01T00:00:00Z"})
        plain = api.raw_get("blog_posts")
    finally:
        api.close()
    error = assert_error(refused, 400, "filter[updated_at_gt]")
    assert "updated_at_gt" in error["detail"]
    assert other.status_code == 200 and plain.status_code == 200


@pytest.mark.parametrize("form", [
    {"grant_type": "client_credentials", "client_id": "sandbox", "client_secret": "wrong"},
    {"grant_type": "password_please"},
])
def test_token_endpoint_errors_are_plain_json(sandbox_factory, form):
    api = Api(sandbox_factory().base_url, authenticate=False)
    try:
        response = api.token(**form)
    finally:
        api.close()
    assert response.status_code in (400, 401)
    assert response.headers["content-type"].split(";")[0] == "application/json"
    body = loads(response.content)
    assert isinstance(body["error"], str) and body["error"]  # errors_authentication_failed
