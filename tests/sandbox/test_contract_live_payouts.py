"""Addendum A1 and A3 (contracts C1, C3): payouts under the platform's brand word, and payout
details whose `transactions` lines itemise every payout.

Lines carry no transaction id (A3), so each is tied to a listed transaction by customer, time and
amounts; the expected lines of a payout are recomputed from `/v1/transactions` with the
settlement rule, independently of the sandbox's code."""

from __future__ import annotations

import itertools
import re
from collections import Counter
from decimal import Decimal

import httpx
import pytest
from sandbox_contract_helpers import (
    Api,
    assert_error,
    check_payout_lines,
    expected_payout_lines,
    line_key,
    line_type,
    number,
    parse_ts,
    payout_details,
    rel_id,
    transaction_key,
)

PATH = "platform_payments_payouts"
ACME = "acme_payments_payouts"
SAMPLES = ("purchase", "payment_succeeded", "order_created", "form_submission", "tag_added",
           "tag_removed")


# ---- A1: the brand word -----------------------------------------------------------------------

def test_the_default_word_is_platform_and_other_words_are_404(api, site_id):
    assert api.get(PATH, {"filter[site_id]": site_id})["data"]
    for path in (ACME, "payments_payouts", "stripe_payments_payouts", "platform_payouts"):
        assert_error(api.raw_get(path, {"filter[site_id]": site_id}), 404)


@pytest.fixture(scope="module")
def acme(sandbox_factory_module):
    """The session sandbox's data (same seed, scale, sites and clock) under the word `acme`."""
    handle = sandbox_factory_module(brand="acme")
    client = Api(handle.base_url)
    yield client
    client.close()


def test_brand_word_moves_the_payouts_path_and_type(acme, api, site_ids):
    for site in site_ids:
        ours = acme.all(ACME, {"filter[site_id]": site})
        plain = api.all(PATH, {"filter[site_id]": site})
        assert [p["id"] for p in ours] == [p["id"] for p in plain] and ours
        for mine, theirs in zip(ours, plain, strict=True):
            assert mine["type"] == ACME and theirs["type"] == PATH
            assert mine["attributes"] == theirs["attributes"]
            assert mine["relationships"] == theirs["relationships"]
    body = acme.get(ACME, {"filter[site_id]": site_ids[0]})
    for name in ("self", "first", "last", "next"):
        assert f"/v1/{ACME}?" in body["links"][name], body["links"][name]
    assert_error(acme.raw_get(PATH, {"filter[site_id]": site_ids[0]}), 404)
    assert_error(acme.raw_get("other_payments_payouts", {"filter[site_id]": site_ids[0]}), 404)


def test_brand_word_detail_equals_the_default_detail(acme, api, site_id):
    payout = api.all(PATH, {"filter[site_id]": site_id})[4]
    ours = acme.get(f"{ACME}/{payout['id']}")
    plain = api.get(f"{PATH}/{payout['id']}")
    assert ours["data"]["type"] == ACME
    assert ours["links"]["self"].endswith(f"/v1/{ACME}/{payout['id']}")
    # the lines name the platform's own processor as its transactions do, after the brand
    expected = {**plain["data"]["attributes"]}
    expected["transactions"] = [
        {**line, "provider": "acme_payments" if line["provider"] == "platform_payments"
         else line["provider"]} for line in expected["transactions"]]
    assert any(line["provider"] == "acme_payments" for line in ours["data"]["attributes"][
        "transactions"])
    assert ours["data"]["attributes"] == expected
    assert_error(acme.raw_get(f"{PATH}/{payout['id']}"), 404)


def test_brand_word_names_the_sparse_fieldset(acme, site_id):
    listed = acme.get(ACME, {"filter[site_id]": site_id, f"fields[{ACME}]": "status,amount"})
    assert all(set(p["attributes"]) == {"status", "amount"} for p in listed["data"])
    payout = listed["data"][0]["id"]
    only_lines = acme.get(f"{ACME}/{payout}", {f"fields[{ACME}]": "transactions"})
    assert set(only_lines["data"]["attributes"]) == {"transactions"}
    no_lines = acme.get(f"{ACME}/{payout}", {f"fields[{ACME}]": "status"})
    assert set(no_lines["data"]["attributes"]) == {"status"}
    ignored = acme.get(f"{ACME}/{payout}", {f"fields[{PATH}]": "status"})
    assert "transactions" in ignored["data"]["attributes"], "fields of an absent type are ignored"
    error = assert_error(acme.raw_get(ACME, {"filter[site_id]": site_id,
                                             f"fields[{ACME}]": "nope"}), 400)
    assert ACME in error["source"]["pointer"]


def test_no_response_names_the_default_word_under_another_brand(acme, site_id):
    bodies = [acme.raw_get("sites").text, acme.raw_get(ACME, {"filter[site_id]": site_id}).text]
    payout = acme.get(ACME, {"filter[site_id]": site_id})["data"][0]["id"]
    bodies.append(acme.raw_get(f"{ACME}/{payout}").text)
    bodies += [acme.raw_get(f"hooks/{event}_sample").text for event in SAMPLES]
    assert all(PATH not in body for body in bodies), "the default payouts word leaked"
    assert all("platform_payments" not in body for body in bodies), "the default processor leaked"


def test_transactions_name_the_processor_after_the_brand(acme, api, site_id):
    """Issue 32: the platform's own processor is `<brand>_payments` in transactions (what the
    sync reads the brand word from); the other processors and every other value are unchanged."""
    ours = acme.all("transactions", {"filter[site_id]": site_id})
    plain = api.all("transactions", {"filter[site_id]": site_id})
    assert [t["id"] for t in ours] == [t["id"] for t in plain]
    providers = Counter(t["attributes"]["provider"] for t in ours)
    assert providers["acme_payments"] and not providers["platform_payments"]
    for mine, theirs in zip(ours, plain, strict=True):
        expected = {**theirs["attributes"]}
        if expected["provider"] == "platform_payments":
            expected["provider"] = "acme_payments"
        assert mine["attributes"] == expected


def test_payout_detail_accepts_its_site_and_refuses_another(api, site_ids):
    payout = api.all(PATH, {"filter[site_id]": site_ids[0]})[0]["id"]
    assert api.get(f"{PATH}/{payout}", {"filter[site_id]": site_ids[0]})["data"]["id"] == payout
    assert_error(api.raw_get(f"{PATH}/{payout}", {"filter[site_id]": site_ids[1]}), 404)
    assert_error(api.raw_get(f"{PATH}/{payout}", {"filter[status]": "paid"}), 400, "status")


# ---- A3: payout lines (tiny, the session sandbox) --------------------------------------------

def test_every_payout_is_itemised_and_its_lines_add_up(api, each_site):
    """Σ net == amount to the cent, and the lines are exactly the rule's transactions, for every
    payout, failed and canceled ones included (C3)."""
    stats = check_payout_lines(api, each_site)
    assert stats["payouts"] >= 10 and stats["lines"] > stats["payouts"]
    assert stats["rolled"] >= 2, "tiny shows failed and canceled payouts"
    assert stats["corrections"] == 0, "only --quirks adds lines no transaction stands behind"


@pytest.fixture(scope="module")
def itemised(sandbox):
    """(site, payouts, details, transactions by line key) of both sites of the session sandbox."""
    client = Api(sandbox.base_url)
    out = []
    for site in [s["id"] for s in client.all("sites")]:
        payouts = client.all(PATH, {"filter[site_id]": site})
        transactions = client.all("transactions", {"filter[site_id]": site})
        by_key = {transaction_key(t): t for t in transactions}
        out.append((site, payouts, payout_details(client, PATH, payouts), by_key))
    client.close()
    return out


def test_line_types_amounts_and_currencies(itemised):
    seen: Counter[str] = Counter()
    foreign = 0
    for _, _, details, by_key in itemised:
        for attrs in details.values():
            for line in attrs["transactions"]:
                tx = by_key[line_key(line)]["attributes"]
                seen[line["transaction_type"]] += 1
                assert line["currency"] == tx["settlement_currency"] == "USD"
                assert number(line["presented_amount"]) * 100 == tx["amount_in_cents"]
                assert line["presented_currency"] == tx["currency"]
                assert line["provider"] == tx["provider"]
                assert line["pricing_type"] == tx["payment_type"], "documented choice"
                if line["presented_currency"] != "USD":
                    foreign += 1
                    assert number(line["exchange_rate"]) != 1
    assert set(seen) == {"Sale", "Refund", "Adjustment"}, seen
    assert foreign, "no line converted from another currency"


def test_lines_name_the_customer_offers_coupon_and_order(api, itemised):
    orders_seen = offers_seen = coupons_seen = 0
    for site, _, details, by_key in itemised:
        customers = {c["id"]: c["attributes"] for c in api.all("customers", {"filter[site_id]": site})}
        offers = {o["id"]: o["attributes"] for o in api.all("offers", {"filter[site_id]": site})}
        purchase_of = {}
        for purchase in api.all("purchases", {"filter[site_id]": site}):
            for tx_id in [t["id"] for t in purchase["relationships"]["transactions"]["data"]]:
                purchase_of[tx_id] = purchase["attributes"]
        orders = api.all("orders", {"filter[site_id]": site})
        for attrs in details.values():
            for line in attrs["transactions"]:
                tx = by_key[line_key(line)]
                customer = customers[str(line["customer_id"])]
                assert (line["customer_name"], line["customer_email"]) == (
                    customer["name"], customer["email"])
                offer = rel_id(tx, "offer")
                if offer is None:  # an order's payment: the line names the order
                    match = [o for o in orders
                             if str(o["attributes"]["order_number"]) == line["order_number"]]
                    assert len(match) == 1, line
                    order = match[0]
                    assert rel_id(order, "customer") == str(line["customer_id"])
                    assert parse_ts(order["attributes"]["created_at"]) == parse_ts(line["created_at"])
                    assert order["attributes"]["total_price_in_cents"] == tx["attributes"]["amount_in_cents"]
                    assert line["offer_ids"] == [] and line["coupon_used"] is None
                    orders_seen += 1
                    continue
                assert line["order_number"] is None, "a purchase without an order"
                assert line["offer_ids"] == [int(offer)]
                if offer in offers:  # archived offers are not listed
                    assert line["offer_titles"] == [offers[offer]["title"]]
                    offers_seen += 1
                purchase = purchase_of[tx["id"]]
                assert line["coupon_used"] == purchase["coupon_code"]
                assert line["quantity"] == purchase["quantity"]
                coupons_seen += line["coupon_used"] is not None
    assert orders_seen and offers_seen and coupons_seen, (orders_seen, offers_seen, coupons_seen)


def test_failed_payouts_lines_come_again_on_the_next_payout(itemised):
    rolled = 0
    for _, payouts, details, _ in itemised:
        ordered = sorted(payouts, key=lambda p: parse_ts(p["attributes"]["initiated_date"]))
        carried: Counter = Counter()
        for payout, following in itertools.pairwise(ordered):
            keys = Counter(line_key(line) for line in details[payout["id"]]["transactions"])
            if payout["attributes"]["status"] in ("failed", "canceled"):
                rolled += 1
                later = Counter(line_key(line) for line in details[following["id"]]["transactions"])
                assert not keys - later, "a failed payout's transactions roll into the next one"
            else:
                carried += keys
        assert all(n == 1 for n in carried.values()), "a transaction on two carried payouts"
    assert rolled >= 2


# ---- scale, quirks, activity -----------------------------------------------------------------

def test_lines_add_up_at_demo_scale(sandbox_factory_module):
    client = Api(sandbox_factory_module(scale="demo", seed=11).base_url)
    try:
        for site in [s["id"] for s in client.all("sites")]:
            stats = check_payout_lines(client, site)
            assert stats["payouts"] > 100 and stats["rolled"] >= 2, stats
    finally:
        client.close()


@pytest.fixture(scope="module")
def quirky(sandbox_factory_module):
    client = Api(sandbox_factory_module(quirks=True, seed=8).base_url)
    yield client
    client.close()


def test_quirks_add_fee_corrections_that_are_the_whole_residual(quirky):
    corrections = 0
    for site in [s["id"] for s in quirky.all("sites")]:
        corrections += check_payout_lines(quirky, site, quirks=True)["corrections"]
    assert corrections >= 2, "some payouts carry an adjustment no transaction stands behind"


def test_quirks_write_sales_order_numbers_and_capitalised_status(quirky):
    site = quirky.all("sites")[0]["id"]
    payouts = quirky.all(PATH, {"filter[site_id]": site})
    details = payout_details(quirky, PATH, payouts)
    words: Counter[str] = Counter()
    numbers = 0
    for payout in payouts:
        attrs = details[payout["id"]]
        assert attrs["status"] == payout["attributes"]["status"]
        assert attrs["status"][0].isupper(), attrs["status"]
        for line in attrs["transactions"]:
            words[line["transaction_type"]] += 1
            if line["order_number"] is not None:
                numbers += 1
                assert re.fullmatch(r"ORD-\d+", line["order_number"]), line["order_number"]
    assert words["Sales"] and not words["Sale"], words
    assert {line_type(w) for w in words} <= {"sale", "refund", "adjustment"}
    assert numbers


def test_quirk_corrections_are_deterministic_per_seed(sandbox_factory_module, quirky):
    again = Api(sandbox_factory_module(quirks=True, seed=8).base_url)
    try:
        site = quirky.all("sites")[0]["id"]
        payouts = quirky.all(PATH, {"filter[site_id]": site})
        first = payout_details(quirky, PATH, payouts)
        second = payout_details(again, PATH, payouts)
        assert first == second
    finally:
        again.close()


def _activity(client: Api, count: int, advance: int = 0) -> None:
    response = httpx.post(client.base_url + "/_sandbox/activity",
                          json={"count": count, "advance_seconds": advance}, timeout=120)
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("options", [{}, {"settlement_delay_days": 0}, {"quirks": True}],
                         ids=["default", "no-delay", "quirks"])
def test_lines_stay_consistent_after_activity(sandbox_factory, options):
    """Activity moves data and the clock; payouts are recomputed and their lines follow."""
    client = Api(sandbox_factory(**options).base_url)
    try:
        sites = [s["id"] for s in client.all("sites")]
        before = {s: {p["id"] for p in client.all(PATH, {"filter[site_id]": s})} for s in sites}
        for _ in range(3):
            _activity(client, 25, advance=86_400)
            for site in sites:
                check_payout_lines(client, site,
                                   delay_days=options.get("settlement_delay_days", 2),
                                   quirks=options.get("quirks", False))
        after = {s: {p["id"] for p in client.all(PATH, {"filter[site_id]": s})} for s in sites}
        assert any(after[s] - before[s] for s in sites), "activity made no new payout"
    finally:
        client.close()


def test_a_settled_transaction_is_on_exactly_one_carried_payout(api, each_site):
    """Each payable transaction up to the last carried payout is on exactly one carried payout
    (the rule recomputed here, then compared with the served lines)."""
    transactions = api.all("transactions", {"filter[site_id]": each_site})
    payouts = api.all(PATH, {"filter[site_id]": each_site})
    expected = expected_payout_lines(transactions, payouts)
    carried = [p for p in payouts if p["attributes"]["status"] not in ("failed", "canceled")]
    on_lines = Counter(transaction_key(t) for p in carried for t in expected[p["id"]])
    details = payout_details(api, PATH, carried)
    served = Counter(line_key(line) for d in details.values() for line in d["transactions"])
    assert served == on_lines
    assert max(served.values()) == 1
    total = sum((number(d["amount"]) for d in details.values()), Decimal(0))
    assert total == sum((number(line["net"]) for d in details.values()
                         for line in d["transactions"]), Decimal(0))
