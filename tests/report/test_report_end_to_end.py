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
                "SELECT p.payout_id FROM analytics.payouts AS p "
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
