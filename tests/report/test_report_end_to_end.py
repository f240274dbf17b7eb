"""Sandbox -> sync -> models -> report -> Chromium: the report on real pipeline output."""

from __future__ import annotations

import pathlib
import shutil

import duckdb
import pytest
from browser_checks import check_report_in_browser
from chromium_cdp import Chromium

from creator_sync.report.data import LATEST_UNRECONCILED
from creator_sync.report.render import write_report

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def synced(synced_sandbox, tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """The run's one sync of the shared tiny sandbox, copied and modelled."""
    from creator_sync.models.runner import run_models

    db = tmp_path_factory.mktemp("report-e2e") / "warehouse.duckdb"
    shutil.copyfile(synced_sandbox.path, db)
    run_models(str(db), dataset="creator_platform")
    return db


def test_report_on_sandbox_data_in_chromium(
    chromium: Chromium, synced: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    report = write_report(str(synced), str(tmp_path / "report.html"))
    seen = check_report_in_browser(chromium, report, synced, tmp_path / "report.png")

    con = duckdb.connect(str(synced), read_only=True)
    try:
        # the latest LATEST_UNRECONCILED payouts that do not reconcile, by UTC day, then id
        unreconciled = {
            pid
            for (pid,) in con.execute(
                "SELECT p.payout_id FROM analytics.fct_payouts AS p "
                "LEFT JOIN analytics.payout_reconciliation AS r USING (payout_id) "
                "WHERE NOT coalesce(r.is_reconciled, false) "
                "ORDER BY (p.initiated_at AT TIME ZONE 'UTC')::DATE DESC, p.payout_id DESC "
                "LIMIT ?",
                [LATEST_UNRECONCILED],
            ).fetchall()
        }
        paid_unreconciled = con.execute(
            "SELECT count(*) FROM analytics.payout_reconciliation "
            "WHERE NOT is_reconciled AND lower(status) = 'paid'"
        ).fetchone()[0]
        loads = con.execute(
            "SELECT count(*) FROM creator_platform._dlt_loads WHERE status = 0"
        ).fetchone()[0]
    finally:
        con.close()

    # The report's tiles and the figures `creator-sync demo` prints are the same numbers.
    from creator_sync.models.headline import headline_figures

    printed = headline_figures(str(synced))
    shown: dict[str, dict[str | None, int]] = {}
    for figure in seen["figures"]:
        shown.setdefault(figure["testid"], {})[figure["currency"]] = int(figure["value"])
    assert shown["revenue-ex-tax-30d"] == printed["revenue_ex_tax_last_30_days_in_cents"]
    assert shown["mrr"] == printed["mrr_in_cents"]
    assert shown["active-subscriptions"] == {None: printed["active_subscriptions"]}
    assert shown["unpaid-balance"] == printed["unpaid_balance_in_cents"]
    assert shown["unreconciled-payouts-count"] == {None: printed["unreconciled_payouts"]}
    methods = {f["method"]: int(f["value"]) for f in seen["figures"]
               if f["testid"] == "tile-reconciliation-method"}
    assert methods == {m: c.payouts for m, c in printed["reconciliation_methods"].items()}

    html = report.read_text()
    listed = {chunk.split('"', 1)[0] for chunk in html.split('data-payout-id="')[1:]}
    assert listed == unreconciled
    assert paid_unreconciled == 0, "on sandbox data every paid payout reconciles to the cent"
    assert loads > 0 and 'data-testid="last-sync" data-at="' in html
    # tiny sandbox data covers every section: revenue, MRR, payouts and offers
    assert {c["testid"] for c in seen["charts"]} == {
        "chart-revenue-daily",
        "chart-mrr-waterfall",
        "chart-settlement-delay",
        "chart-top-offers",
        "chart-products",
    }


def test_monthly_sections_equal_the_marts_on_sandbox_data(synced: pathlib.Path) -> None:
    """On real pipeline output, each monthly figure against SQL of its own: NRR by another
    algebra (MRR less new and reactivation is what the opening MRR kept), ARR as 12 × MRR,
    churn kinds against mrr_monthly, products and offers against revenue_monthly."""
    from decimal import Decimal

    from creator_sync.models.adapters import DuckDBAdapter
    from creator_sync.report.data import load_report_data

    adapter = DuckDBAdapter(str(synced), read_only=True)
    try:
        data = load_report_data(adapter)
    finally:
        adapter.close()
    con = duckdb.connect(str(synced), read_only=True)
    try:
        mrr = {
            (c, m): (int(kept), int(opening), int(total), int(churned))
            for c, m, kept, opening, total, churned in con.execute(
                "SELECT currency, date_month, "
                "sum(mrr_in_cents - new_mrr_in_cents - reactivation_mrr_in_cents), "
                "sum(previous_mrr_in_cents), sum(mrr_in_cents), -sum(churned_mrr_in_cents) "
                "FROM analytics.mrr_monthly GROUP BY ALL"
            ).fetchall()
        }
        month = data.last_full_month
        assert month is not None
        revenue = dict(con.execute(
            "SELECT currency, sum(revenue_ex_tax_in_cents) FROM analytics.revenue_monthly "
            "WHERE date_month = ? GROUP BY ALL", [month]).fetchall())
        no_offer = dict(con.execute(
            "SELECT currency, sum(revenue_ex_tax_in_cents) FROM analytics.offer_revenue_monthly "
            "WHERE date_month = ? AND offer_id IS NULL GROUP BY ALL", [month]).fetchall())
    finally:
        con.close()
    checked = 0
    for currency, months in data.summary.items():
        for m in months:
            kept, opening, total, _ = mrr.get((currency, m.date_month), (0, 0, 0, 0))
            assert m.arr == (12 * total if (currency, m.date_month) in mrr else None)
            if opening:
                assert m.nrr == Decimal(kept) / Decimal(opening), (currency, m.date_month)
                checked += 1
    assert checked > 0
    for currency, months in data.churn.items():
        for c in months:
            assert c.total == mrr[(currency, c.date_month)][3], (currency, c.date_month)
    assert {c: sum(p.revenue_ex_tax for p in ps) for c, ps in data.products.items()} == {
        c: int(v) for c, v in revenue.items() if int(v)}  # (a currency without sales: no rows)
    for currency, offers in data.offers.items():
        shown = [o.revenue_ex_tax for o in offers if o.is_unattributed]
        if shown:
            assert shown == [int(no_offer[currency])]
