"""Known answers: the marts built from known_answer_data.py equal figures worked out by hand.

Reporting zone UTC, settlement delay 2 days, as-of 2024-03-31. Amounts in cents.
"""

from __future__ import annotations

import datetime as dt

import pytest
from known_answer_data import C1, C2, C4, S1, S2, known_answer_rows
from models_helpers import fetch_dicts

from creator_sync.models.headline import format_cents, format_headline
from creator_sync.models.runner import headline_figures, run_models

AS_OF = dt.date(2024, 3, 31)
D = dt.date


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, object]:
    from models_helpers import write_raw

    path = write_raw(tmp_path_factory.mktemp("kat") / "kat.duckdb", known_answer_rows())
    result = run_models(path, as_of=AS_OF)
    return path, result


def _rows(path: str, sql: str) -> list[dict]:
    return fetch_dicts(path, sql)


def test_revenue_totals_per_site_and_currency(built: tuple[str, object]) -> None:
    path, _ = built
    totals = {
        (r["site_id"], r["currency"]): r
        for r in _rows(path, """
            select site_id, currency, sum(gross_in_cents) as gross, sum(refunds_in_cents) as refunds,
                sum(disputes_in_cents) as disputes, sum(net_in_cents) as net,
                sum(new_in_cents) as new, sum(recurring_in_cents) as recurring,
                sum(tax_in_cents) as tax, sum(fees_in_cents) as fees,
                sum(transactions_count) as n, count(*) as days
            from analytics.revenue_daily group by site_id, currency""")
    }
    usd = totals[(S1, "USD")]
    # gross = T1 1000 + T8 2000 + T9 3000 + T4 12000 + T3 1500 + T10 2500 + T11 800 + T7 1500
    #       + T12 2500 + T13 4000 = 30800 (T1 counted once: its older extraction said 999)
    assert usd["gross"] == 30800
    assert usd["disputes"] == -1500  # T6
    assert usd["refunds"] == 0
    assert usd["net"] == 30800 - 1500 == 29300
    # recurring = charges of subscription purchases after their first: T3 1500 (P1 #2),
    # T7 1500 (P1 #3), T10 2500 (P6 #2), T12 2500 (P6 #3) = 8000; new = 30800 - 8000 = 22800
    assert usd["recurring"] == 8000
    assert usd["new"] == 22800
    assert usd["tax"] == 100  # T1 only
    assert usd["fees"] == 59 + 88 + 378 + 74 + 53 + 74 + 146 == 872
    assert usd["n"] == 11
    # spine: Jan 10..31 (22 days) + Feb 2024 (29) + Mar (31) = 82 rows
    assert usd["days"] == 82

    eur = totals[(S1, "EUR")]
    # T2 5000 (currency sent as "eur"), T5 refund -1000
    assert (eur["gross"], eur["refunds"], eur["net"], eur["new"]) == (5000, -1000, 4000, 5000)
    assert eur["days"] == 17 + 29 + 31  # Jan 15..31, Feb, Mar

    gbp = totals[(S2, "GBP")]
    assert (gbp["net"], gbp["days"]) == (999, 17)  # T14; Mar 15..31
    assert len(totals) == 3  # never a row mixing currencies


def test_revenue_daily_days_with_nothing_are_zero(built: tuple[str, object]) -> None:
    path, _ = built
    (row,) = _rows(path, f"""select * from analytics.revenue_daily
        where site_id = '{S1}' and currency = 'USD' and date_day = date '2024-01-11'""")
    assert row["net_in_cents"] == 0 and row["transactions_count"] == 0
    (row,) = _rows(path, f"""select * from analytics.revenue_daily
        where site_id = '{S1}' and currency = 'USD' and date_day = date '2024-03-02'""")
    assert (row["disputes_in_cents"], row["net_in_cents"]) == (-1500, -1500)


def test_mrr_monthly(built: tuple[str, object]) -> None:
    path, _ = built
    rows = _rows(path, "select * from analytics.mrr_monthly order by date_month")
    assert [(r["site_id"], r["currency"]) for r in rows] == [(S1, "USD")] * 3
    jan, feb, mar = rows
    # Month-end snapshots, priced at the latest charge before the snapshot:
    # Jan: C1 P1 1000 + C4 P4 2000 + C5 P6 3000 = 6000, all new.
    assert (jan["date_month"], jan["mrr_in_cents"], jan["new_mrr_in_cents"]) == (D(2024, 1, 1), 6000, 6000)
    assert (jan["active_subscriptions"], jan["churn_rate"]) == (3, None)
    # Feb: C1 1500 (T3, +500 expansion), C3 P3 annual 12000/12 = 1000 (new), C4 0 (P4
    # deactivated Feb 15: -2000 churned), C5 2500 (T10, -500 contraction).
    # 6000 + 1000 + 500 - 500 - 2000 = 5000; churn rate = 1 churned / 3 paying at start.
    assert feb["mrr_in_cents"] == 5000
    assert (feb["new_mrr_in_cents"], feb["expansion_mrr_in_cents"]) == (1000, 500)
    assert (feb["contraction_mrr_in_cents"], feb["churned_mrr_in_cents"]) == (-500, -2000)
    assert feb["reactivation_mrr_in_cents"] == 0
    assert feb["churn_rate"] == pytest.approx(1 / 3)
    # Mar: C1 0 (P1 deactivated Mar 20: -1500 churned), C3 1000, C4 800 (P5, reactivation),
    # C5 2500. 5000 - 1500 + 800 = 4300; churn 1 of 3 (C1, C3, C5 paid at the start).
    assert mar["mrr_in_cents"] == 4300
    assert (mar["churned_mrr_in_cents"], mar["reactivation_mrr_in_cents"]) == (-1500, 800)
    assert (mar["new_mrr_in_cents"], mar["expansion_mrr_in_cents"], mar["contraction_mrr_in_cents"]) == (0, 0, 0)
    assert mar["active_subscriptions"] == 3  # P3, P5, P6
    assert mar["churn_rate"] == pytest.approx(1 / 3)


def test_payout_reconciliation(built: tuple[str, object]) -> None:
    path, _ = built
    rec = {r["payout_id"]: r for r in _rows(path, "select * from analytics.payout_reconciliation")}
    # Net settlement (settlement - settlement fee) payable on created day (UTC) + 2:
    #   T1 1000-59=941 on Jan 12; T2 5400-175=5225 on Jan 17; T8 2000-88=1912 on Jan 22;
    #   T4 12000-378=11622 on Feb 7; T3 1500-74=1426 on Feb 12; T5 -1080 on Feb 22;
    #   T6 -1500 on Mar 4; T11 800-53=747 on Mar 7; T7 1426 on Mar 12; T13 4000-146=3854 on Mar 30
    # PO1 Jan 20 (paid): T1 + T2 = 6166 = $61.66.
    assert (rec["PO1"]["expected_amount_in_cents"], rec["PO1"]["transactions_count"]) == (6166, 2)
    assert rec["PO1"]["status"] == "paid"  # "Paid" from the API, compared case-insensitively
    # PO2 Feb 1 (failed): T8 = 1912; its funds roll forward.
    assert (rec["PO2"]["expected_amount_in_cents"], rec["PO2"]["is_rolled_forward"]) == (1912, True)
    # PO3 Feb 8 (paid): carries after PO1 (PO2 failed): T8 1912 + T4 11622 = 13534.
    assert (rec["PO3"]["expected_amount_in_cents"], rec["PO3"]["transactions_count"]) == (13534, 2)
    # PO4 Mar 12 (paid $10.20): T3 1426 - T5 1080 - T6 1500 + T11 747 + T7 1426 = 1019 -> 1 cent off.
    assert rec["PO4"]["expected_amount_in_cents"] == 1019
    assert (rec["PO4"]["difference_in_cents"], rec["PO4"]["is_reconciled"]) == (1, False)
    assert rec["PO4"]["transactions_count"] == 5
    # PO5 Mar 31 (pending): T13 3854.
    assert rec["PO5"]["expected_amount_in_cents"] == 3854
    assert all(rec[p]["is_reconciled"] for p in ("PO1", "PO2", "PO3", "PO5"))

    items = _rows(path, "select payout_id, transaction_id from analytics.payout_transactions")
    assert ("PO2", "T8") in {(r["payout_id"], r["transaction_id"]) for r in items}
    assert ("PO3", "T8") in {(r["payout_id"], r["transaction_id"]) for r in items}
    assert len(items) == 2 + 1 + 2 + 5 + 1


def test_unpaid_balance(built: tuple[str, object]) -> None:
    path, _ = built
    (row,) = _rows(path, "select * from analytics.unpaid_balance")
    # settled by Mar 31: 941+5225+1912+11622+1426-1080-1500+747+1426+3854 = 24573
    assert row["settled_in_cents"] == 24573
    # in paid payouts: PO1 6166 + PO3 13534 + PO4 1019 = 20719
    assert row["paid_out_in_cents"] == 20719
    # T13 is in the pending PO5: unpaid 24573 - 20719 = 3854, all of it in transit
    assert (row["unpaid_balance_in_cents"], row["in_transit_in_cents"]) == (3854, 3854)
    assert row["awaiting_payout_in_cents"] == 0


def test_customers_recompute_net_revenue(built: tuple[str, object]) -> None:
    path, _ = built
    customers = {r["customer_id"]: r for r in _rows(path, "select * from analytics.dim_customers")}
    # C1: T1 1000 + T3 1500 - T6 1500 + T7 1500 = 2500; the API says "25.00"
    assert customers[C1]["lifetime_net_revenue_in_cents"] == 2500
    assert customers[C1]["net_revenue_difference_in_cents"] == 0
    # C2: T2 5000 - T5 1000 = 4000 EUR; the API says "39.99": difference -1 cent
    assert (customers[C2]["currency"], customers[C2]["net_revenue_difference_in_cents"]) == ("EUR", -1)
    # C4: two purchases (P4 deactivated, P5 active)
    assert (customers[C4]["purchases_count"], customers[C4]["active_subscriptions"]) == (2, 1)
    assert customers[C4]["first_purchase_at"].date() == D(2024, 1, 20)
    assert customers[C4]["last_purchase_at"].date() == D(2024, 3, 5)


def test_orders(built: tuple[str, object]) -> None:
    path, _ = built
    orders = {r["order_id"]: r for r in _rows(path, "select * from analytics.fct_orders")}
    # OR1: OI1 quantity 2 + OI2 quantity 1 (linked through orders_order_items only)
    assert (orders["OR1"]["items_count"], orders["OR1"]["order_lines_count"]) == (3, 2)
    assert orders["OR1"]["fulfilment_latency_seconds"] == 30 * 60
    assert (orders["OR1"]["customer_order_seq"], orders["OR1"]["is_repeat_customer"]) == (1, False)
    assert (orders["OR2"]["customer_order_seq"], orders["OR2"]["is_repeat_customer"]) == (2, True)
    assert orders["OR2"]["is_fulfilled"] is False
    (day,) = _rows(path, "select * from analytics.orders_daily where orders_count > 0")
    # 5000 + 1001 = 6001 over 2 orders: AOV 3000.5 rounds half up to 3001
    assert (day["total_in_cents"], day["aov_in_cents"]) == (6001, 3001)


def test_headline_figures(built: tuple[str, object]) -> None:
    path, _ = built
    figures = headline_figures(path)
    assert figures["as_of_date"] == AS_OF
    # Mar 2..31 USD: T6 -1500 + T11 800 + T7 1500 + T12 2500 + T13 4000 = 7300
    assert figures["net_revenue_last_30_days_in_cents"] == {"EUR": 0, "GBP": 999, "USD": 7300}
    assert figures["mrr_in_cents"] == {"USD": 4300}
    assert figures["unreconciled_payouts"] == 1  # PO4
    lines = format_headline(figures)
    (revenue,) = [line for line in lines if line.startswith("Revenue excl. tax, 30 days ")]
    assert "USD 73.00" in revenue and "GBP 9.99" in revenue
    assert "MRR on 2024-03-31: USD 43.00 from 3 active subscriptions" in lines
    assert format_cents(-123456789, "EUR") == "-EUR 1,234,567.89"


def test_build_reports_the_two_planted_warnings(built: tuple[str, object]) -> None:
    _, result = built
    assert not result.failed_tests
    assert sorted(t.name for t in result.warnings) == [
        "customers_net_revenue_matches_api", "paid_payouts_reconcile",
    ]


def test_unpaid_balance_as_of_an_earlier_day(raw_db) -> None:
    path = raw_db(known_answer_rows())
    run_models(path, as_of=D(2024, 2, 10))
    (row,) = _rows(path, "select * from analytics.unpaid_balance")
    # payable by Feb 10: T1 941 + T2 5225 + T8 1912 + T4 11622 = 19700, all in PO1 and PO3
    assert (row["settled_in_cents"], row["paid_out_in_cents"]) == (19700, 19700)
    assert row["unpaid_balance_in_cents"] == 0
    # payable later: T3 1426 - T5 1080 - T6 1500 + T11 747 + T7 1426 + T13 3854 = 4873
    assert row["not_yet_settled_in_cents"] == 4873
    # PO4 and PO5 (Mar 12, Mar 31) do not exist yet on Feb 10
    assert row["in_transit_in_cents"] == 0
