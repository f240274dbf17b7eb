"""Payout lines (contract C2) from payout details, against the in-memory API.

A payout is read at `/{id}` when it is new or its list record (status) changed; its lines land
in `payout_lines` (DECIMAL amounts, JSON offers, PII under `--pii`), replaced as a whole on a
re-read; a detail without `transactions` leaves its lines alone and the summary says so.
"""

from __future__ import annotations

import copy
import json
from decimal import Decimal

import duckdb
from fakeapi import record
from sandbox_helpers import sync

import creator_sync.pipelines.sync as sync_module
from creator_sync.pipelines.sync import format_summary, run_sync

SITE = "2147483650"
PATH = "acme_payments_payouts"  # the platform's brand word in the path and type (addendum A1)


def query(path, sql):
    with duckdb.connect(path, read_only=True) as con:
        return con.execute(sql).fetchall()


def line(kind: str, amount: str, fee: str, **extra) -> dict:
    return {
        "transaction_type": kind, "pricing_type": "one-time", "amount": Decimal(amount),
        "sales_tax": Decimal("0"), "fee": Decimal(fee), "net": Decimal(amount) - Decimal(fee),
        "currency": "USD", "presented_amount": Decimal(amount), "presented_currency": "USD",
        "exchange_rate": Decimal("1.0"), "customer_id": 2400000001, "customer_name": "Ada L",
        "customer_email": "ada@example.com", "offer_ids": [2600000001, 2600000002],
        "offer_titles": ["Course", "Bonus: \u00e9t\u00e9"], "provider": "platform_payments",
        "payment_method": "card", "created_at": "2025-04-28T10:00:00-05:00", "coupon_used": None,
        "quantity": 1, **extra,
    }


def payouts_world(api, lines_by_payout):
    api.collections[PATH] = []
    for pid, lines in lines_by_payout.items():
        amount = sum((ln["net"] for ln in lines), Decimal("0"))
        payout = record(PATH, pid, site=SITE, status="Paid", amount=float(amount), currency="USD",
                        initiated_date="2025-05-01T00:00:00Z",
                        estimated_arrival_date="2025-05-03T00:00:00Z", bank_account="****4242")
        api.collections[PATH].append(payout)
        detail = copy.deepcopy(payout)
        detail["attributes"]["transactions"] = [
            {k: (float(v) if isinstance(v, Decimal) else v) for k, v in ln.items()} for ln in lines]
        api.details[(PATH, pid)] = {"data": detail}


def detail_reads(api):
    return sorted(r.url.path for r in api.requests if r.url.path.startswith(f"/v1/{PATH}/"))


def test_lines_land_typed_and_replace_on_a_status_change(fake_api, settings_for):
    payouts_world(fake_api, {
        "3900000001": [line("Sales", "100.00", "3.20", order_number="ORD-12345"),
                       line("Refund", "-20.00", "0.00", order_number="12346")],
        "3900000002": [line("Adjustment", "-1.05", "0.00", customer_id=None, offer_ids=None)],
    })
    settings = settings_for(resources=("payouts",), payouts_path=f"/{PATH}")
    db = settings.warehouse.duckdb_path
    result = run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert result.failed == {} and result.without_lines == {}
    assert detail_reads(fake_api) == [f"/v1/{PATH}/3900000001", f"/v1/{PATH}/3900000002"]
    rows = query(db, "select payout_id, line_number, site_id, transaction_type, amount, fee, net, "
                     "customer_id, offer_ids, offer_titles, order_number, created_at, quantity "
                     "from creator_platform.payout_lines order by 1, 2")
    assert [r[:4] for r in rows] == [("3900000001", 1, SITE, "Sales"), ("3900000001", 2, SITE, "Refund"),
                                     ("3900000002", 1, SITE, "Adjustment")]
    first = rows[0]
    assert first[4:7] == (Decimal("100"), Decimal("3.2"), Decimal("96.8"))
    assert first[7] == "2400000001"  # an integer id, kept as text
    assert json.loads(first[8]) == [2600000001, 2600000002]
    assert json.loads(first[9]) == ["Course", "Bonus: \u00e9t\u00e9"]
    assert first[10] == "ORD-12345" and rows[1][10] == "12346"
    assert first[11].isoformat() == "2025-04-28T15:00:00+00:00" and first[12] == 1
    assert rows[2][7] is None and rows[2][8] is None
    types = dict(query(db, "select column_name, data_type from information_schema.columns "
                           "where table_name = 'payout_lines'"))
    assert types["amount"] == types["net"] == types["exchange_rate"] == "DECIMAL(38,9)"
    assert types["order_number"] == "VARCHAR" and types["line_number"] == "BIGINT"
    assert "transactions" not in {r[0] for r in query(
        db, "select column_name from information_schema.columns where table_name = 'payouts'")}
    # Σ net == amount, to the cent, for every payout
    assert query(db, "select count(*) from creator_platform.payouts p join (select payout_id, "
                     "sum(net) net from creator_platform.payout_lines group by 1) l "
                     "on l.payout_id = p.id where l.net <> p.amount") == [(0,)]

    # nothing changed: no detail read
    fake_api.requests.clear()
    run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert detail_reads(fake_api) == []

    # payout 1 fails and the platform re-itemises it with one line: read once, stale line gone
    fake_api.collections[PATH][0]["attributes"]["status"] = "Failed"
    detail = fake_api.details[(PATH, "3900000001")]["data"]
    detail["attributes"]["status"] = "Failed"
    detail["attributes"]["transactions"] = detail["attributes"]["transactions"][:1]
    fake_api.requests.clear()
    run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert detail_reads(fake_api) == [f"/v1/{PATH}/3900000001"]
    assert query(db, "select payout_id, line_number from creator_platform.payout_lines order by 1, 2") == [
        ("3900000001", 1), ("3900000002", 1)]
    assert query(db, "select status from creator_platform.payouts where id = '3900000001'") == [("failed",)]

    # an empty array clears its lines (no marker row is left behind)
    fake_api.collections[PATH][1]["attributes"]["status"] = "Canceled"
    detail = fake_api.details[(PATH, "3900000002")]["data"]
    detail["attributes"]["transactions"] = []
    run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert query(db, "select payout_id, line_number from creator_platform.payout_lines order by 1, 2") == [
        ("3900000001", 1)]


def test_customer_name_and_email_fall_under_pii(fake_api, settings_for):
    payouts_world(fake_api, {"3900000001": [line("Sale", "10.00", "0.50")]})
    settings = settings_for(resources=("payouts",), payouts_path=f"/{PATH}", pii="hash")
    run_sync(settings, transport=fake_api.transport(), show_progress=False)
    (name, email), = query(settings.warehouse.duckdb_path,
                           "select customer_name, customer_email from creator_platform.payout_lines")
    assert len(name) == len(email) == 64 and "@" not in email and "Ada" not in name
    dropped = settings_for(resources=("payouts",), payouts_path=f"/{PATH}", pii="drop",
                           full_refresh=True)
    run_sync(dropped, transport=fake_api.transport(), show_progress=False)
    cols = {r[0] for r in query(settings.warehouse.duckdb_path, "select column_name from "
                                "information_schema.columns where table_name = 'payout_lines'")}
    assert "customer_email" not in cols and "customer_name" not in cols and "net" in cols


def test_a_detail_without_transactions_is_counted_and_leaves_lines_alone(fake_api, settings_for):
    payouts_world(fake_api, {"3900000001": [line("Sale", "10.00", "0.50")],
                             "3900000002": [line("Sale", "20.00", "1.00")]})
    del fake_api.details[(PATH, "3900000002")]["data"]["attributes"]["transactions"]
    settings = settings_for(resources=("payouts",), payouts_path=f"/{PATH}")
    result = run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert result.failed == {} and result.without_lines == {"payouts": 1}
    assert "payouts: 1 detail read(s) carried no lines" in format_summary(result)
    assert query(settings.warehouse.duckdb_path,
                 "select distinct payout_id from creator_platform.payout_lines") == [("3900000001",)]


# ------------------------------------------------------------- first load: append, then merge
def _dispositions(db) -> dict[str, str]:
    raw = query(db, "select schema from creator_platform._dlt_version order by inserted_at desc limit 1")
    return {t: v.get("write_disposition") for t, v in json.loads(raw[0][0])["tables"].items()}


def _lines(db) -> list[tuple]:
    return query(db, "select payout_id, line_number, site_id, transaction_type, amount, fee, net, "
                     "customer_id, offer_ids, order_number, created_at from creator_platform.payout_lines "
                     "order by payout_id, line_number")


def test_first_load_appends_lines_and_equals_a_merge_load_and_stays_right_after_activity(
    sandbox_factory, tmp_path, monkeypatch
):
    """At `large` a first load's merge of `payout_lines` ran out of memory
    (docs/performance.md#memory): with
    nothing to merge into it is appended, deduped on (payout_id, line_number); later runs merge
    only this run's lines (the staging table holds them alone)."""
    sandbox = sandbox_factory(sites=2)
    only = {"resources": ("payouts",)}
    appended, merged = tmp_path / "append.duckdb", tmp_path / "merge.duckdb"
    first = sync(sandbox, appended, **only)
    assert _dispositions(appended)["payout_lines"] == "append"
    lines = _lines(appended)
    assert first.tables["payout_lines"][0] == len(lines) > 0
    assert query(appended, "select count(*) - count(distinct (payout_id, line_number)) "
                           "from creator_platform.payout_lines") == [(0,)]

    with monkeypatch.context() as patched:  # the destination's tables unknown: everything merges
        patched.setattr(sync_module, "kept_tables", lambda *a, **k: None)
        sync(sandbox, merged, **only)
    assert _dispositions(merged)["payout_lines"] == "merge"
    assert _lines(merged) == lines  # row for row

    sandbox.activity(300)  # new sales, so new payouts and their lines
    again = sync(sandbox, appended, **only)
    assert _dispositions(appended)["payout_lines"] == "merge"
    new_lines = again.tables["payout_lines"][0] + again.tables["payout_lines"][1]
    assert 0 < new_lines < len(lines) + new_lines
    # the merge staged this run's lines only, not the whole table
    staged = query(appended, "select count(*) from creator_platform_staging.payout_lines")[0][0]
    assert 0 < staged < len(_lines(appended))
    reference = tmp_path / "reference.duckdb"
    sync(sandbox, reference, **only)
    assert _lines(appended) == _lines(reference)
    assert query(appended, "select count(*) - count(distinct (payout_id, line_number)) "
                           "from creator_platform.payout_lines") == [(0,)]
