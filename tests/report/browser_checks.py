"""Open a rendered report in headless Chromium and check it the way a reader would see it.

Shared by the fixture-warehouse test and the end-to-end test on sandbox data.
"""

from __future__ import annotations

import pathlib
from collections import defaultdict

import duckdb
from chromium_cdp import Chromium

from creator_sync.report.money import format_money

CHARTS_JS = """
[...document.querySelectorAll('figure.chart')].map(f => {
  const svg = f.querySelector('svg');
  const box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
  const marks = svg ? [...svg.querySelectorAll('g[id*="-mark"] path')].filter(p => {
    if (!(p.getAttribute('d') || '').trim()) return false;
    const b = p.getBBox();
    return b.width > 0 || b.height > 0;
  }).length : 0;
  return {testid: f.dataset.testid, currency: f.dataset.currency || f.dataset.siteId,
          width: box.width,
          height: box.height, marks};
})
"""

FIGURES_JS = """
[...document.querySelectorAll('[data-testid][data-value]')].map(e => ({
  testid: e.dataset.testid, currency: e.dataset.currency || null, value: e.dataset.value,
  method: e.dataset.method || null,
  text: e.innerText.trim(), visible: e.getBoundingClientRect().height > 0}))
"""


TILE_FIGURES = {
    "revenue-ex-tax-30d",
    "revenue-ex-tax-prior-30d",
    "mrr",
    "mrr-prior-month",
    "active-subscriptions",
    "unpaid-balance",
    "unreconciled-payouts-count",
}


def mart_headline(db: pathlib.Path) -> dict[str, dict[str | None, int]]:
    """The tiles' figures straight from the marts, written independently of report.data."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        q = {
            "revenue-ex-tax-30d": """
                SELECT currency, sum(revenue_ex_tax_in_cents) FROM analytics.revenue_daily
                WHERE date_day > (SELECT max(date_day) FROM analytics.revenue_daily) - 30
                GROUP BY ALL""",
            "revenue-ex-tax-prior-30d": """
                SELECT currency, sum(revenue_ex_tax_in_cents) FROM analytics.revenue_daily
                WHERE date_day <= (SELECT max(date_day) FROM analytics.revenue_daily) - 30
                  AND date_day > (SELECT max(date_day) FROM analytics.revenue_daily) - 60
                GROUP BY ALL""",
            "mrr": """
                SELECT currency, sum(mrr_in_cents) FROM analytics.mrr_monthly
                WHERE date_month = date_trunc('month', (SELECT max(date_day) FROM analytics.revenue_daily)) GROUP BY ALL""",
            "mrr-prior-month": """
                SELECT currency, sum(mrr_in_cents) FROM analytics.mrr_monthly
                WHERE date_month = date_trunc('month', (SELECT max(date_day)
                                                        FROM analytics.revenue_daily))
                                   - INTERVAL 1 MONTH
                GROUP BY ALL""",
            "active-subscriptions": """
                SELECT NULL, sum(active_subscriptions) FROM analytics.mrr_monthly
                WHERE date_month = date_trunc('month', (SELECT max(date_day) FROM analytics.revenue_daily))""",
            "unpaid-balance": """
                SELECT currency, sum(unpaid_balance_in_cents) FROM analytics.unpaid_balance
                GROUP BY ALL""",
            "unreconciled-payouts-count": """
                SELECT NULL, count(*) FILTER (WHERE NOT is_reconciled AND NOT is_rolled_forward)
                FROM analytics.payout_reconciliation""",
        }
        out = {
            name: {c: int(v or 0) for c, v in con.execute(sql).fetchall()}
            for name, sql in q.items()
        }
        if (
            out["active-subscriptions"] == {None: 0}
            and not con.execute("SELECT count(*) FROM analytics.mrr_monthly").fetchone()[0]
        ):
            out["active-subscriptions"] = {None: 0}
        return out
    finally:
        con.close()


def expected_charts(db: pathlib.Path) -> set[tuple[str, str]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        charts: set[tuple[str, str]] = set()
        for testid, sql in (
            ("chart-revenue-daily", "SELECT DISTINCT currency FROM analytics.revenue_daily"),
            ("chart-mrr-waterfall", "SELECT DISTINCT currency FROM analytics.mrr_monthly"),
            (
                "chart-top-offers",
                f"SELECT DISTINCT currency FROM analytics.offer_revenue_monthly "
                f"WHERE date_month = ({LAST_FULL_MONTH})",
            ),
            (
                "chart-products",
                f"SELECT DISTINCT currency FROM analytics.product_revenue_monthly "
                f"WHERE date_month = ({LAST_FULL_MONTH})",
            ),
            # one per site, keyed by the site
            ("chart-settlement-delay", "SELECT DISTINCT site_id FROM analytics.settlement_delay"),
        ):
            charts |= {(testid, c) for (c,) in con.execute(sql).fetchall()}
        return charts
    finally:
        con.close()


LAST_FULL_MONTH = """SELECT max(date_month) FROM analytics.revenue_monthly WHERE date_month NOT IN
    (SELECT date_month FROM analytics.revenue_monthly WHERE is_partial_month)"""


def mart_monthly(db: pathlib.Path) -> dict[tuple[str, str, str], int]:
    """The monthly sections' figures straight from the marts, keyed (testid, currency, month):
    revenue excl. tax and known fees per month, churned MRR of the last full month per kind."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        out: dict[tuple[str, str, str], int] = {}
        for currency, month, revenue, fees in con.execute(
            "SELECT currency, date_month, sum(revenue_ex_tax_in_cents), sum(known_fees_in_cents) "
            "FROM analytics.revenue_monthly GROUP BY ALL"
        ).fetchall():
            out[("summary-revenue-ex-tax", currency, month.isoformat())] = int(revenue)
            out[("summary-known-fees", currency, month.isoformat())] = int(fees)
        for currency, month, churned in con.execute(
            "SELECT currency, date_month, -sum(churned_mrr_in_cents) FROM analytics.mrr_monthly "
            "GROUP BY ALL"
        ).fetchall():
            out[("churn-total", currency, month.isoformat())] = int(churned)
        return out
    finally:
        con.close()


MONTHLY_JS = """
[...document.querySelectorAll('tr[data-testid="summary-month"], tr[data-testid="churn-month"]')]
  .flatMap(row => [...row.querySelectorAll('[data-value]')].map(cell => ({
     testid: cell.dataset.testid, currency: cell.dataset.currency, month: row.dataset.month,
     value: cell.dataset.value, text: cell.innerText.trim(),
     visible: cell.getBoundingClientRect().height > 0})))
"""

# the widest label a chart must show whole: the money no offer is credited with
LABELS_JS = """
[...document.querySelectorAll('figure.chart svg text')].map(t => t.textContent)
"""


def check_monthly_in_browser(browser: Chromium, db: pathlib.Path) -> list[dict]:
    """Every month row the page shows equals the marts, and is visible; no chart label is cut."""
    cells = browser.evaluate(MONTHLY_JS)
    expected = mart_monthly(db)
    checked = 0
    for cell in cells:
        key = (cell["testid"], cell["currency"], cell["month"])
        if key in expected:
            assert int(cell["value"]) == expected[key], (key, cell)
            assert cell["visible"], cell
            checked += 1
    assert checked, "no monthly figure was checked"
    labels = browser.evaluate(LABELS_JS)
    assert not [t for t in labels if t.endswith("…")], labels
    return cells


def check_report_in_browser(
    browser: Chromium, report: pathlib.Path, db: pathlib.Path, screenshot: pathlib.Path
) -> dict:
    """Load the page, then assert: no console errors, no requests but the file itself, every
    chart drawn, every headline figure equal to the marts (value and formatted text)."""
    url = browser.open(report)
    charts = browser.evaluate(CHARTS_JS)
    figures = browser.evaluate(FIGURES_JS)
    browser.screenshot(screenshot)
    errors = browser.console_errors()
    requests = browser.requested_urls()

    assert errors == [], f"console errors: {errors}"
    assert requests == [url], (
        f"network requests besides the file: {[r for r in requests if r != url]}"
    )

    assert {(c["testid"], c["currency"]) for c in charts} == expected_charts(db)
    for chart in charts:
        assert chart["width"] > 300 and chart["height"] > 50, chart
        assert chart["marks"] > 0, f"{chart['testid']} {chart['currency']} drew nothing"

    shown: dict[str, dict[str | None, int]] = defaultdict(dict)
    for figure in figures:
        if figure["testid"] in TILE_FIGURES:
            assert figure["visible"], figure
        if figure["testid"] in ("revenue-ex-tax-30d", "mrr", "unpaid-balance"):
            assert figure["text"] == format_money(int(figure["value"]), figure["currency"]), figure
        shown[figure["testid"]][figure["currency"]] = int(figure["value"])
    for name, values in mart_headline(db).items():
        if name in ("active-subscriptions", "unreconciled-payouts-count"):
            assert shown[name] == {None: values.get(None, 0)}
        elif name == "mrr-prior-month":
            # a currency without subscriptions last month has no row then: its prior MRR is 0
            assert shown[name] == {c: values.get(c, 0) for c in shown["mrr"]}, name
        else:
            assert shown[name] == values, name
    assert screenshot.stat().st_size > 10_000
    monthly = check_monthly_in_browser(browser, db)
    return {"charts": charts, "figures": figures, "monthly": monthly}
