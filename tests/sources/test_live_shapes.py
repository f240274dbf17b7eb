"""The live platform's shapes, replayed through the source from hand-written cassettes.

`cassettes/live_payouts_and_order_items.yaml` was written from platform-addendum.md's tables (not
recorded): payouts under the brand word `acme`, a capitalised status, payout details whose lines
say `Sales` and carry `ORD-` order numbers, and a page of `/v1/order_items`. Like the live
document (A8), it refuses a payout detail read without `filter[site_id]`.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import duckdb
import httpx
import vcr

from creator_sync.pipelines.factory import resolve_warehouse
from creator_sync.pipelines.sync import run_sync, sync_settings
from creator_sync.sources.creator_platform.auth import Secret

CASSETTES = Path(__file__).parent / "cassettes"
SITE = "2200000000"


def replay(tmp_path: Path):
    recorder = vcr.VCR(cassette_library_dir=str(CASSETTES), record_mode="none",
                       match_on=("method", "path", "query"))
    settings = sync_settings(
        base_url="http://127.0.0.1:8765", client_id="sandbox", client_secret=Secret("unused-here"),
        warehouse=resolve_warehouse(duckdb=str(tmp_path / "wh.duckdb")),
        resources=("payouts", "order_items"), payouts_path="acme_payments_payouts",
        concurrency=1, detail_concurrency=1,
    )
    with recorder.use_cassette("live_payouts_and_order_items.yaml", allow_playback_repeats=True):
        result = run_sync(settings, show_progress=False)
    return result, settings.warehouse.duckdb_path


def test_brand_payouts_and_their_lines_replay_into_the_warehouse(tmp_path):
    result, db = replay(tmp_path)
    assert result.failed == {} and result.without_lines == {}
    with duckdb.connect(db, read_only=True) as con:
        payouts = con.execute("select id, status, amount, site_id from creator_platform.payouts "
                              "order by id").fetchall()
        assert payouts == [("3909531000", "paid", Decimal("91.44"), SITE),
                           ("3909532000", "in_transit", Decimal("14.55"), SITE)]
        lines = con.execute(
            "select payout_id, line_number, transaction_type, amount, fee, net, exchange_rate, "
            "presented_amount, presented_currency, customer_id, offer_ids, offer_titles, "
            "order_number, coupon_used from creator_platform.payout_lines order by 1, 2").fetchall()
        assert [(r[0], r[1], r[2]) for r in lines] == [
            ("3909531000", 1, "Sales"), ("3909531000", 2, "Sale"), ("3909531000", 3, "Adjustment"),
            ("3909532000", 1, "Sales"), ("3909532000", 2, "Refund")]
        sales = lines[0]
        assert sales[3:8] == (Decimal("49"), Decimal("1.72"), Decimal("47.28"),
                              Decimal("1.0888889"), Decimal("45"))
        assert sales[8] == "EUR" and sales[9] == "2400000017"
        assert json.loads(sales[10]) == [2600000003] and json.loads(sales[11]) == ["Watercolour Basics"]
        assert sales[12] == "ORD-12345" and lines[1][12] == "12346" and lines[2][12] is None
        assert lines[1][13] == "SPRING10" and json.loads(lines[1][10]) == [2600000004, 2600000005]
        # the platform's own account: Σ net == amount for every payout, to the cent
        assert con.execute(
            "select p.id, p.amount, sum(l.net) from creator_platform.payouts p join "
            "creator_platform.payout_lines l on l.payout_id = p.id group by 1, 2 "
            "having sum(l.net) <> p.amount").fetchall() == []


def test_the_replay_refuses_a_payout_detail_without_its_site():
    """The refusal the test above loads lines despite: the source must send the site."""
    recorder = vcr.VCR(cassette_library_dir=str(CASSETTES), record_mode="none",
                       match_on=("method", "path", "query"))
    with recorder.use_cassette("live_payouts_and_order_items.yaml", allow_playback_repeats=True):
        bare = httpx.get("http://127.0.0.1:8765/v1/acme_payments_payouts/3909531000")
        sited = httpx.get("http://127.0.0.1:8765/v1/acme_payments_payouts/3909531000",
                          params={"filter[site_id]": SITE})
    assert bare.status_code == 400 and "filter[site_id]" in bare.text
    assert sited.status_code == 200 and sited.json()["data"]["attributes"]["transactions"]


def test_an_order_items_page_replays_with_its_order(tmp_path):
    _, db = replay(tmp_path)
    with duckdb.connect(db, read_only=True) as con:
        rows = con.execute("select id, order_id, site_id, quantity, item_id, fulfilled_at, "
                           "total_price_in_cents from creator_platform.order_items order by id").fetchall()
    assert [(r[0], r[1], r[2], r[3], r[4]) for r in rows] == [
        ("3700000040", "3600000012", SITE, 1, 2500000003),
        ("3700000041", "3600000013", SITE, 2, 2500000007)]  # no site relationship: the filter's
    assert rows[0][5].isoformat() == "2026-02-26T09:20:00+00:00" and rows[1][5] is None
    assert rows[1][6] == 2000
