"""Addendum A8: transactions name their purchases; a bundled transaction is one charge for
several purchases of different offers, with `offer` null and `include=purchases` accepted."""

from __future__ import annotations

from sandbox_contract_helpers import assert_error, rel_id, rel_ids


def bundles(catalog, site_id):
    purchases = catalog.by_id("purchases", site_id)
    out = []
    for tx in catalog.all("transactions", site_id):
        paid = rel_ids(tx, "purchases")
        if len(paid) > 1:
            out.append((tx, [purchases[p] for p in paid]))
    return out


def test_every_site_has_bundled_transactions(catalog, each_site):
    found = bundles(catalog, each_site)
    assert found, "no bundle on this site"
    for tx, paid in found:
        assert rel_id(tx, "offer") is None, "the deprecated offer is null on a bundle"
        offers = [rel_id(p, "offer") for p in paid]
        assert len(set(offers)) == len(offers), "a bundle buys different offers"
        # A8: a bundled transaction's amount is the sum of its purchases' amounts
        assert tx["attributes"]["amount_in_cents"] == sum(
            p["attributes"]["amount_in_cents"] for p in paid)
        for purchase in paid:
            assert tx["id"] in rel_ids(purchase, "transactions")
            assert rel_id(purchase, "customer") == rel_id(tx, "customer")


def test_a_single_offer_transaction_names_one_purchase_and_its_offer(catalog, site_id):
    purchases = catalog.by_id("purchases", site_id)
    singles = [tx for tx in catalog.all("transactions", site_id)
               if len(rel_ids(tx, "purchases")) == 1]
    assert singles
    for tx in singles:
        (purchase,) = rel_ids(tx, "purchases")
        assert rel_id(tx, "offer") == rel_id(purchases[purchase], "offer")


def test_bundles_are_a_few_percent_of_charges(sandbox_factory_module):
    """The demo account: bundles are a small share of the listed charges, not a token one."""
    sandbox = sandbox_factory_module(scale="demo", sites=2)
    txn = sandbox.store.tables["transactions"].cols
    purchases = sandbox.store.tables["purchases"].cols
    charges = int((txn["listed"] & (txn["amount_in_cents"] > 0)).sum())
    bundled = len({int(b) for b in purchases["bundle"].tolist() if b >= 0})
    assert 0.01 <= bundled / charges <= 0.05, (bundled, charges)


def test_single_read_includes_the_purchases(api, catalog, site_id):
    tx, paid = bundles(catalog, site_id)[0]
    body = api.get(f"transactions/{tx['id']}", {"include": "customer,purchases"})
    included = {(r["type"], r["id"]) for r in body["included"]}
    assert {("purchases", p["id"]) for p in paid} <= included
    assert ("customers", rel_id(tx, "customer")) in included
    assert body["data"]["relationships"]["purchases"]["data"] == tx["relationships"]["purchases"]["data"]
    assert_error(api.raw_get(f"transactions/{tx['id']}", {"include": "widgets"}), 400, "include")
