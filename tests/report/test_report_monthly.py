"""The monthly sections (issue 39): each figure against the fixture marts, worked out here
independently of report.data, and how the page labels them."""

from __future__ import annotations

import datetime as dt
import pathlib
import re
from collections import defaultdict
from decimal import Decimal

import pytest
from report_fixtures import (
    CHURN_ROWS,
    MONTHS,
    OFFER_MONTH_ROWS,
    PRODUCT_COUNT,
    SITES,
    Elements,
    mrr_rows,
    product_month_rows,
    revenue_rows,
)

from creator_sync.models.adapters import DuckDBAdapter
from creator_sync.report.charts import RevenueDay, revenue_chart, wrap_label
from creator_sync.report.data import NO_OFFER, NO_PRODUCT, TOP_PRODUCTS, load_report_data
from creator_sync.report.money import format_money
from creator_sync.report.page import render_page

MARCH = MONTHS[2]
NOW = dt.datetime(2026, 4, 1, 1, 0, tzinfo=dt.UTC)


def load(path: pathlib.Path, **options):
    con = DuckDBAdapter(str(path), read_only=True)
    try:
        return load_report_data(con, stale_after=dt.timedelta(days=3650), **options)
    finally:
        con.close()


@pytest.fixture(scope="module")
def data(warehouse: pathlib.Path):
    return load(warehouse)


@pytest.fixture(scope="module")
def html(data) -> str:
    return render_page(data, generated_at=NOW)


def test_summary_revenue_tax_refunds_per_currency_and_month(data) -> None:
    """Each month's money is the sum of the daily rows of every site in that currency."""
    expected: dict[tuple[str, dt.date], list[int]] = defaultdict(lambda: [0, 0, 0])
    for _, currency, day, _, refunds, disputes, _, tax, ex_tax in revenue_rows():
        row = expected[(currency, day.replace(day=1))]
        row[0] += ex_tax
        row[1] += tax
        row[2] += refunds + disputes
    shown = {
        (c, m.date_month): [m.revenue_ex_tax, m.tax, m.refunds + m.disputes]
        for c, months in data.summary.items()
        for m in months
    }
    assert shown == dict(expected)
    assert [m.date_month for m in data.summary["USD"]] == list(MONTHS)


def test_fees_are_known_only_where_every_transaction_stated_one(data) -> None:
    """USD adds a site whose processor states no fee: its fees are unknown, never 0; EUR
    states every fee."""
    usd = {m.date_month: m for m in data.summary["USD"]}[MARCH]
    site1_march = [r for r in revenue_rows() if r[0] == SITES[0] and r[1] == "USD"
                   and r[2].month == 3]
    assert usd.known_fees == sum(r[3] // 40 for r in site1_march)
    days = len(site1_march)
    assert usd.fee_unknown_transactions == 1 + days  # one of site 1's, all of site 2's
    assert usd.fees is None
    eur = {m.date_month: m for m in data.summary["EUR"]}[MARCH]
    assert eur.fee_unknown_transactions == 0 and eur.fees == eur.known_fees > 0


def test_arr_and_nrr_add_the_sites_components_before_dividing(data) -> None:
    """NRR per currency is Σ(opening + expansion + contraction + churn) / Σ opening over the
    sites: a ratio of sums, which differs from the average of the sites' ratios here."""
    by_key = {(r[0], r[1], r[2]): r for r in mrr_rows()}
    march = {m.date_month: m for m in data.summary["USD"]}[MARCH]
    opening = retained = 0
    ratios = []
    for site in SITES:
        row = by_key[(site, "USD", MARCH)]
        previous = by_key[(site, "USD", MONTHS[1])][3]
        kept = previous + row[5] + row[6] + row[7]  # expansion, contraction, churned
        opening, retained = opening + previous, retained + kept
        ratios.append(Decimal(kept) / previous)
    assert (march.opening_mrr, march.retained_mrr) == (opening, retained)
    assert march.nrr == Decimal(retained) / Decimal(opening)
    assert march.nrr != sum(ratios) / len(ratios)
    assert march.arr == 12 * sum(by_key[(s, "USD", MARCH)][3] for s in SITES)
    january = {m.date_month: m for m in data.summary["USD"]}[MONTHS[0]]
    assert january.nrr is None  # no opening MRR: no ratio, not 0 %


def test_churned_mrr_by_kind_adds_up_to_mrr_monthly(data) -> None:
    march = {m.date_month: m for m in data.churn["USD"]}[MARCH]
    assert march.by_kind == {
        "payment_failed": 4_900,
        "unknown": 4_900,  # the platform gave no reason
        "voluntary": 3_000,
        "refunded_or_disputed": 6_800,
    }
    churned = {(c, m): 0 for _, c, m, *_ in mrr_rows()}
    for _, currency, month, _, _, _, _, churn, *_ in mrr_rows():
        churned[(currency, month)] -= churn
    for currency, months in data.churn.items():
        for m in months:
            assert m.total == churned[(currency, m.date_month)], (currency, m.date_month)
    assert len(CHURN_ROWS) == sum(sum(m.customers.values()) for ms in data.churn.values()
                                  for m in ms)


def test_products_of_the_last_full_month_top_and_rest(data, html: str) -> None:
    products = data.products["USD"]
    march_rows = [r for r in product_month_rows() if r[1] == "USD" and r[2] == MARCH]
    assert len(products) == PRODUCT_COUNT + 1  # and the (no product) row; not February's
    assert sum(p.revenue_ex_tax for p in products) == sum(r[6] for r in march_rows)
    assert [p.revenue_ex_tax for p in products] == sorted(
        (r[6] for r in march_rows), reverse=True
    )
    assert products[-1].title == NO_PRODUCT and products[-1].is_unattributed
    found = Elements()
    found.feed(html)
    shown = [a for a, _ in found.by_testid("product-revenue") if a["data-currency"] == "USD"]
    assert len(shown) == TOP_PRODUCTS
    (rest,) = [a for a, _ in found.by_testid("product-revenue-rest")]
    (total,) = [a for a, _ in found.by_testid("product-revenue-total")
                if a["data-currency"] == "USD"]
    assert int(rest["data-value"]) == sum(p.revenue_ex_tax for p in products[TOP_PRODUCTS:])
    assert int(total["data-value"]) == sum(r[6] for r in march_rows)
    assert "Revenue by product, March 2026" in html


def test_top_offers_label_the_money_no_offer_is_credited_with_in_full(html: str) -> None:
    chart = html[html.index('data-testid="chart-top-offers" data-currency="USD"'):]
    svg = chart[: chart.index("</svg>")]
    words = " ".join(re.findall(r">([^<>]+)</text>", svg))
    assert " ".join(wrap_label(NO_OFFER).split()) in " ".join(words.split())
    assert "…" not in html
    assert "Top offers by revenue excl. tax, March 2026" in html
    assert "February only" not in html  # February's offer: not the last full month
    assert sum(r[7] for r in OFFER_MONTH_ROWS if r[1] == "USD" and r[2] == MARCH) > 0


def test_summary_table_labels_and_fee_wording(warehouse: pathlib.Path, html: str) -> None:
    found = Elements()
    found.feed(html)
    heads = re.findall(r"<th[^>]*>([^<]+)</th>", html[html.index('data-testid="summary-table"'):])
    assert heads[:7] == ["Month", "Revenue excl. tax", "Tax", "Refunds and disputes", "Fees",
                         "ARR", "NRR"]
    # USD March: site 2's processor states no fee
    fee_cells = [
        (a, t) for a, t in found.by_testid("summary-known-fees")
        if a["data-currency"] == "USD" and int(a["data-unknown"]) > 0
    ]
    assert fee_cells and all("known" in t for _, t in fee_cells)
    assert "transactions without a stated fee" in html
    # a site whose processor states no fee at all: "unknown", never a 0
    only = render_page(load(warehouse, site_id=SITES[1]), generated_at=NOW)
    row = only[only.index('data-testid="summary-known-fees"'):]
    row = row[: row.index("</td>")]
    assert ">unknown<" in row and format_money(0, "USD") not in row
    nrr = [a for a, _ in found.by_testid("summary-nrr") if a["data-currency"] == "USD"]
    assert {a.get("data-ratio") is None for a in nrr} == {True, False}  # January has none


def test_a_partial_day_does_not_set_the_daily_charts_axis() -> None:
    """30 ordinary days then a partial day ten times bigger: the axis stops near the
    ordinary days' top, not the spike's."""
    start = dt.date(2026, 3, 1)
    days = [RevenueDay(start + dt.timedelta(days=i), 10_000, -500, 0, 9_500) for i in range(30)]
    spike = RevenueDay(start + dt.timedelta(days=30), 100_000, 0, 0, 100_000)
    svg = revenue_chart("USD", [*days, spike], "rev-USD", partial_day=spike.date_day)
    assert max(_ticks(svg)) < 200  # dollars: the ordinary days reach $100
    unscaled = revenue_chart("USD", [*days, spike], "rev-USD")  # not marked partial
    assert max(_ticks(unscaled)) >= 900


def _ticks(svg: str) -> list[float]:
    """The y axis's tick values in dollars (`$150`, `$1.2k`, `−$5`)."""
    values = []
    for sign, number, unit in re.findall(r">(−?)\$([\d.]+)(k?)</text>", svg):
        value = float(number) * (1000 if unit else 1)
        values.append(-value if sign else value)
    return values


def test_purchases_not_loaded_take_arr_nrr_and_churn_but_not_revenue(
    tmp_path: pathlib.Path,
) -> None:
    """ARR, NRR and churn are built on purchases: not loaded, they give the reason, while the
    month's revenue (built on transactions) stays."""
    import duckdb
    from report_fixtures import build_warehouse, coverage_row, coverage_rows, write_coverage

    rows = [r for r in coverage_rows() if r[0] != "purchases"]
    rows.append(coverage_row("purchases", 0, status="failed", reason="403", synced=None,
                             through=None, newest=None))
    path = build_warehouse(tmp_path / "w.duckdb")
    con = duckdb.connect(str(path))
    write_coverage(con, rows)
    con.close()
    html = render_page(load(path), generated_at=NOW)
    found = Elements()
    found.feed(html)
    assert not found.by_testid("summary-arr") and not found.by_testid("churn-month")
    assert found.by_testid("summary-revenue-ex-tax")
    assert "Not available: ARR and NRR: purchases not loaded." in html
