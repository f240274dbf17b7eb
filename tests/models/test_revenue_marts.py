"""Revenue excl. tax, fees never guessed, recognition and the deferred balance, revenue per offer
and product, and the transaction ledger (issue 39), each checked against figures computed
independently from the raw tables: on a hand-built account worked out by hand, and on the
synced sandbox.
"""

from __future__ import annotations

import datetime as dt
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

import duckdb
import pytest
from models_helpers import fetch_dicts
from revenue_data import AS_OF, O_ANNUAL, PR1, PR2, account
from revenue_recognition import monthly_recognition, raw_transactions

from creator_sync.models.runner import run_models


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> str:
    from models_helpers import write_raw

    path = write_raw(tmp_path_factory.mktemp("revenue") / "raw.duckdb", account())
    result = run_models(path, as_of=AS_OF, strict=True)
    assert all(t.passed for t in result.tests), [(t.name, t.sample[:2]) for t in result.failed_tests]
    return path


def by_month(path: str, mart: str, key: str) -> dict[tuple[dt.date, str], dict[str, Any]]:
    return {(r["date_month"], r[key]): r for r in fetch_dicts(path, f"select * from analytics.{mart}")}


def test_revenue_excludes_the_tax_the_amounts_include(built: str) -> None:
    months = {r["date_month"]: r for r in fetch_dicts(built, "select * from analytics.revenue_monthly")}
    jan, feb, mar = (months[dt.date(2024, m, 1)] for m in (1, 2, 3))
    assert (jan["net_in_cents"], jan["tax_in_cents"], jan["revenue_ex_tax_in_cents"]) == (13600, 600, 13000)
    assert (feb["net_in_cents"], feb["revenue_ex_tax_in_cents"]) == (2160, 2000)
    assert (mar["net_in_cents"], mar["tax_in_cents"], mar["revenue_ex_tax_in_cents"]) == (-5800, -300, -5500)


def test_a_fee_not_stated_is_null_never_zero(built: str) -> None:
    months = {r["date_month"]: r for r in fetch_dicts(built, "select * from analytics.revenue_monthly")}
    jan, feb, mar = (months[dt.date(2024, m, 1)] for m in (1, 2, 3))
    # T1 (Stripe) states no fee: January's fees are unknown, 59 of them are stated
    assert (jan["known_fees_in_cents"], jan["fee_unknown_transactions_count"]) == (59, 1)
    assert jan["fees_in_cents"] is None and jan["net_after_fees_in_cents"] is None
    assert (feb["known_fees_in_cents"], feb["fees_in_cents"], feb["fee_unknown_transactions_count"]) == (0, None, 1)
    assert (mar["known_fees_in_cents"], mar["fee_unknown_transactions_count"]) == (15, 1)
    days = {r["date_day"]: r for r in fetch_dicts(built, "select * from analytics.revenue_daily")}
    assert days[dt.date(2024, 1, 31)]["fees_in_cents"] == 59  # every fee of the day stated
    assert days[dt.date(2024, 1, 16)]["fees_in_cents"] is None
    assert days[dt.date(2024, 1, 17)]["fees_in_cents"] == 0  # no transaction: nothing unknown
    fees = {(r["provider"], r["date_month"]): r for r in fetch_dicts(built, "select * from analytics.fees_monthly")}
    stripe = fees[("stripe", dt.date(2024, 1, 1))]
    assert stripe["transaction_fees_in_cents"] is None and stripe["transaction_fee_rate"] is None
    assert stripe["fee_unavailable_reason"] == "stripe states no fee for 1 of 1 transactions"
    platform = fees[("platform_payments", dt.date(2024, 1, 1))]
    assert (platform["transaction_fees_in_cents"], platform["fee_unavailable_reason"]) == (59, None)
    ledger = {r["transaction_id"]: r for r in fetch_dicts(built, "select * from analytics.transaction_ledger")}
    assert {t: r["fee_in_cents"] for t, r in ledger.items()} == {
        "T1": None, "T2": 59, "T3": None, "T4": None, "T5": 15}


def test_an_annual_plan_is_earned_over_its_year_and_a_refund_reverses_what_is_left(built: str) -> None:
    months = {r["date_month"]: r for r in fetch_dicts(built, "select * from analytics.revenue_monthly")}
    got = {m.month: (r["recognized_revenue_in_cents"], r["deferred_revenue_in_cents"]) for m, r in months.items()}
    # T1: 12,000 excl. tax over the 366 days from 2024-01-16: 16 days of January earn
    # floor(12000 x 16 / 366) = 524; T2: 1,000 over the 29 days from 2024-01-31, 1 day in January.
    assert got[1] == (524 + 34, 12000 - 524 + 1000 - 34)
    # February: T1 through day 45 = 1475 (951 more), T2's 966 more, the order (2,000) on its day
    assert got[2] == (951 + 966 + 2000, 12000 - 1475)
    # 2024-03-10: T1 has earned floor(12000 x 55 / 366) = 1803; 10,197 is left to earn, so the
    # 6,000 refund is all taken from it, March's part in proportion: floor(6000 x 688 / 10197) = 404
    # (T1 earns 2491 - 1475 = 1016 in March); T5 500 on its day.
    assert got[3] == (1016 - 404 + 500, 12000 - 2491 - (6000 - 404))
    assert months[dt.date(2024, 3, 1)]["is_partial_month"] is False
    assert sum(r[0] for r in got.values()) + got[3][1] == sum(
        r["revenue_ex_tax_in_cents"] for r in months.values())


def test_offers_and_products_split_to_the_cent(built: str) -> None:
    products = by_month(built, "product_revenue_monthly", "product_id")
    jan, feb, mar = dt.date(2024, 1, 1), dt.date(2024, 2, 1), dt.date(2024, 3, 1)
    assert products[(jan, PR1)]["revenue_ex_tax_in_cents"] == 6000
    assert products[(jan, PR2)]["revenue_ex_tax_in_cents"] == 6000 + 1000
    # the order: its product item (1,000) and its offer item (1,000, across the offer's 2 products)
    assert products[(feb, PR1)]["revenue_ex_tax_in_cents"] == 1500
    assert products[(feb, PR2)]["revenue_ex_tax_in_cents"] == 500
    assert products[(mar, PR1)]["revenue_ex_tax_in_cents"] == -3000
    assert products[(mar, "(no product)")]["revenue_ex_tax_in_cents"] == 500
    assert products[(mar, "(no product)")]["is_unattributed"] is True
    offers = by_month(built, "offer_revenue_monthly", "offer_key")
    assert offers[(feb, O_ANNUAL)]["revenue_ex_tax_in_cents"] == 1000
    assert offers[(feb, "(no offer)")]["revenue_ex_tax_in_cents"] == 1000
    ledger = {r["transaction_id"]: r for r in fetch_dicts(built, "select * from analytics.transaction_ledger")}
    assert ledger["T4"]["order_id"] == "9001" and ledger["T1"]["purchase_ids"] == "P1"


def test_amounts_that_exclude_tax_are_revenue_as_they_are(tmp_path: Path) -> None:
    from models_helpers import write_raw

    path = write_raw(tmp_path / "raw.duckdb", account())
    run_models(path, as_of=AS_OF, amounts_include_tax=False)
    (row,) = fetch_dicts(path, "select sum(net_in_cents) as net, sum(revenue_ex_tax_in_cents) as ex "
                               "from analytics.revenue_daily")
    assert row["net"] == row["ex"] == 13600 + 2160 - 5800
    assert fetch_dicts(path, "select amounts_include_tax from analytics.build_metadata") == [
        {"amounts_include_tax": False}]


# ---- the synced sandbox --------------------------------------------------------------------


@pytest.fixture(scope="module")
def sandbox_built(sandbox_raw_duckdb: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("sandbox-revenue") / "warehouse.duckdb")
    shutil.copyfile(sandbox_raw_duckdb, path)
    result = run_models(path, strict=True)
    assert all(t.passed for t in result.tests), [(t.name, t.sample[:2]) for t in result.failed_tests]
    return path


def _fetch(path: str):
    con = duckdb.connect(path, read_only=True)
    con.execute("set TimeZone = 'UTC'")
    return con


def test_sandbox_revenue_without_tax_is_the_amounts_less_their_tax(sandbox_built: str) -> None:
    con = _fetch(sandbox_built)
    try:
        raw = dict(con.execute("""
            select upper(currency), sum(amount_in_cents - sales_tax_in_cents)
            from (select *, row_number() over (partition by id order by _extracted_at desc) as r
                  from creator_platform.transactions) where r = 1
            group by 1""").fetchall())
        taxed = con.execute("select count(*) from creator_platform.transactions "
                            "where sales_tax_in_cents <> 0").fetchone()[0]
        for mart in ("revenue_daily", "revenue_monthly", "transaction_ledger"):
            assert dict(con.execute(f"select currency, sum(revenue_ex_tax_in_cents) from analytics.{mart} "
                                    "group by 1").fetchall()) == raw, mart
    finally:
        con.close()
    assert taxed > 0  # the sandbox's amounts carry tax: the check is not vacuous


def test_sandbox_no_processor_without_stated_fees_shows_a_fee_of_0(sandbox_built: str) -> None:
    con = _fetch(sandbox_built)
    try:
        unstated = dict(con.execute("""
            select lower(provider), count(*) from creator_platform.transactions
            where payment_fee_in_cents is null group by 1""").fetchall())
        fees = con.execute("""
            select provider, sum(fee_unknown_transactions_count),
                   count(*) filter (where transaction_fees_in_cents is not null
                                    or transaction_fee_rate is not null),
                   count(*) filter (where fee_unavailable_reason is null)
            from analytics.fees_monthly where provider in (select unnest(?)) group by 1""",
            [list(unstated)]).fetchall()
        daily = con.execute("""
            select sum(fee_unknown_transactions_count),
                   count(*) filter (where fee_unknown_transactions_count > 0 and fees_in_cents is not null)
            from analytics.revenue_daily""").fetchone()
        monthly = con.execute("""
            select count(*) filter (where fee_unknown_transactions_count > 0
                                    and (fees_in_cents is not null or net_after_fees_in_cents is not null))
            from analytics.revenue_monthly""").fetchone()[0]
        ledger_nulls = con.execute("select count(*) from analytics.transaction_ledger "
                                   "where fee_in_cents is null").fetchone()[0]
    finally:
        con.close()
    assert set(unstated) >= {"stripe", "paypal"}
    assert {p: (n, shown, reasonless) for p, n, shown, reasonless in fees} == {
        p: (n, 0, 0) for p, n in unstated.items()}
    assert daily == (sum(unstated.values()), 0) and monthly == 0
    assert ledger_nulls == sum(unstated.values())


def test_sandbox_recognition_and_deferred_balance_match_the_raw_tables(sandbox_built: str) -> None:
    con = _fetch(sandbox_built)
    try:
        as_of = con.execute("select as_of_date from analytics.build_metadata").fetchone()[0]
        txns = raw_transactions(lambda sql: con.execute(sql).fetchall(), as_of)
        rows = con.execute("""
            select site_id, currency, date_month, recognized_revenue_in_cents,
                   deferred_revenue_in_cents from analytics.revenue_monthly""").fetchall()
    finally:
        con.close()
    expected = monthly_recognition(txns, [(s, c, m) for s, c, m, *_ in rows])
    assert {(s, c, m): (r, d) for s, c, m, r, d in rows} == expected
    assert any(d > 0 for _, _, _, _, d in rows)  # annual plans leave a deferred balance


def test_sandbox_offers_products_and_ledger_add_up(sandbox_built: str) -> None:
    months = {(r["site_id"], r["currency"], r["date_month"]): r["revenue_ex_tax_in_cents"]
              for r in fetch_dicts(sandbox_built, "select * from analytics.revenue_monthly")}
    for mart in ("offer_revenue_monthly", "product_revenue_monthly"):
        summed: dict[tuple, int] = defaultdict(int)
        for r in fetch_dicts(sandbox_built, f"select * from analytics.{mart}"):
            summed[(r["site_id"], r["currency"], r["date_month"])] += r["revenue_ex_tax_in_cents"]
        assert {k: v for k, v in months.items() if v or k in summed} == dict(summed), mart
    unattributed = sum(r["revenue_ex_tax_in_cents"] for r in fetch_dicts(
        sandbox_built, "select * from analytics.product_revenue_monthly where product_id = '(no product)'"))
    assert abs(unattributed) < 0.05 * sum(months.values())
    daily = fetch_dicts(sandbox_built, """
        select site_id, currency, date_day, net_in_cents, tax_in_cents, known_fees_in_cents
        from analytics.revenue_daily where transactions_count > 0 order by 1, 2, 3""")
    ledger = fetch_dicts(sandbox_built, """
        select site_id, currency, date_day, sum(amount_in_cents) as net_in_cents,
               sum(tax_in_cents) as tax_in_cents,
               cast(coalesce(sum(fee_in_cents), 0) as bigint) as known_fees_in_cents
        from analytics.transaction_ledger group by 1, 2, 3 order by 1, 2, 3""")
    assert ledger == daily
