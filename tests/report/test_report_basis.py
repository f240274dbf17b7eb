"""What the report says its figures are built on (issue 12, points 8 and 9): resources that were
not loaded, stale data, a partial last day, the build's time zone and settlement delay, "figures
through" apart from "last sync", and offers labelled with their site."""

from __future__ import annotations

import dataclasses
import datetime as dt
import pathlib
from collections import defaultdict

import duckdb
import pytest
from click.testing import CliRunner
from report_fixtures import (
    AS_OF,
    MONTHLY_MARTS,
    SITES,
    SYNCED_AT,
    Elements,
    build_warehouse,
    coverage_row,
    coverage_rows,
    revenue_rows,
    write_coverage,
)

from creator_sync.models.adapters import DuckDBAdapter
from creator_sync.report.cli import report_command
from creator_sync.report.data import load_report_data
from creator_sync.report.money import format_money
from creator_sync.report.page import render_page

# an hour after the fixture's sync: fresh, unless a test says otherwise
NOW = SYNCED_AT + dt.timedelta(hours=1)
LIMIT = dt.timedelta(days=2)
NOT_FOUND_404 = (
    "/platform_payments_payouts answered 404 at https://api.example.com/v1/platform_payments_"
    "payouts: set payouts_path (--payouts-path) to your platform's /<brand>_payments_payouts"
)


def warehouse_with(
    tmp_path: pathlib.Path, rows: list[tuple], *, empty: tuple[str, ...] = (), **build: object
) -> pathlib.Path:
    """The fixture warehouse with other coverage rows (and build parameters), and the given
    marts emptied as a build on missing raw tables would leave them."""
    path = build_warehouse(tmp_path / "w.duckdb")
    con = duckdb.connect(str(path))
    write_coverage(con, rows, **build)
    for mart in empty:
        con.execute(f"DELETE FROM analytics.{mart}")
    con.close()
    return path


def page(
    path: pathlib.Path,
    now: dt.datetime = NOW,
    limit: dt.timedelta = LIMIT,
    charts: bool = False,
    **kw: object,
) -> str:
    """The rendered page; without `charts` the series are left out (drawing them is slow)."""
    con = DuckDBAdapter(str(path), read_only=True)
    try:
        data = load_report_data(con, stale_after=limit, **kw)
    finally:
        con.close()
    if not charts:
        data = dataclasses.replace(
            data, revenue={}, mrr={}, payouts={p: [] for p in data.payouts}, offers={},
            products={}, settlement_delay=[],
        )
    return render_page(data, generated_at=now)


def elements(html: str) -> Elements:
    parser = Elements()
    parser.feed(html)
    return parser


def replaced(resource: str, **changes: object) -> list[tuple]:
    """The fixture's coverage rows with one resource's row rebuilt."""
    base = {r[0]: r for r in coverage_rows()}
    base[resource] = coverage_row(resource, **changes)
    return list(base.values())


def net(first: dt.date, last: dt.date) -> dict[str, int]:
    totals: dict[str, int] = defaultdict(int)
    for _site, currency, day, *_, value, _tax, _revenue_ex_tax in revenue_rows():
        if first <= day <= last:
            totals[currency] += value
    return dict(totals)


PAYOUT_MARTS = ("fct_payouts", "payout_reconciliation", "payout_transactions", "unpaid_balance")


@pytest.mark.parametrize(
    ("row", "said"),
    [
        (
            {"records": 0, "status": "failed", "reason": NOT_FOUND_404, "synced": None,
             "through": None, "newest": None},
            f"Payouts: not loaded (last sync: failed: {NOT_FOUND_404})",
        ),
        (
            {"records": 0, "status": "skipped", "synced": None, "through": None, "newest": None,
             "reason": "the credential's scopes do not cover view:payouts"},
            "Payouts: not loaded (last sync: skipped: the credential's scopes do not cover "
            "view:payouts)",
        ),
        (
            {"records": 0, "newest": None},
            "Payouts: not loaded (last sync: synced 2026-04-01 00:30 UTC, found none; if the "
            "account has payouts, check payouts_path (--payouts-path))",
        ),
        (
            {"records": 0, "status": None, "attempt": None, "synced": None, "through": None,
             "newest": None},
            "Payouts: not loaded (never synced (left out by --resources, or no sync has run))",
        ),
    ],
    ids=["failed-404", "skipped-scopes", "empty-path", "excluded"],
)
def test_payouts_not_loaded_are_named_never_zeroed(
    tmp_path: pathlib.Path, row: dict, said: str
) -> None:
    path = warehouse_with(tmp_path, replaced("payouts", **row), empty=PAYOUT_MARTS)
    html = page(path)
    found = elements(html)
    problems = [text for attrs, text in found.by_testid("coverage-problem")]
    assert problems == [said]
    # no unpaid balance and no "every payout reconciles (0 payouts)" built on a missing table
    assert not found.by_testid("unpaid-balance") and not found.by_testid("unreconciled-none")
    assert "Every payout reconciles" not in html
    unavailable = [text for _, text in found.by_testid("unavailable")]
    # the unpaid and unreconciled tiles, the section
    assert unavailable == ["Not available: payouts not loaded."] * 3
    # revenue does not depend on payouts: still shown
    assert found.by_testid("revenue-ex-tax-30d")
    resources = {a["data-resource"]: a for a, _ in found.by_testid("coverage-resource")}
    resource = resources["payouts"]
    assert resource["data-loaded"] == "false" and resource["class"] == "alert"


def test_transactions_not_loaded_take_revenue_and_payout_figures_with_them(
    tmp_path: pathlib.Path,
) -> None:
    rows = replaced("transactions", records=0, status="failed", reason="503 after 8 attempts",
                    synced=None, through=None, newest=None)
    path = warehouse_with(tmp_path, rows, empty=("revenue_daily", *MONTHLY_MARTS))
    found = elements(page(path))
    assert [t for _, t in found.by_testid("coverage-problem")] == [
        "Transactions: not loaded (last sync: failed: 503 after 8 attempts)"
    ]
    assert not found.by_testid("revenue-ex-tax-30d") and not found.by_testid("unpaid-balance")
    reasons = [t for _, t in found.by_testid("unavailable")]
    # the revenue tile and section, the unpaid and unreconciled tiles, the reconciliation,
    # the offers, the monthly summary, the products
    assert reasons.count("Not available: transactions not loaded.") == 8
    assert found.by_testid("mrr")  # MRR is built on purchases


def test_a_resource_whose_last_sync_failed_keeps_its_figures_and_says_so(
    tmp_path: pathlib.Path,
) -> None:
    synced = SYNCED_AT - dt.timedelta(hours=20)
    rows = replaced("payouts", records=20, status="failed", reason="503 after 8 attempts",
                    synced=synced, through=synced)
    found = elements(page(warehouse_with(tmp_path, rows)))
    assert [t for _, t in found.by_testid("coverage-problem")] == [
        "Payouts: 20 loaded, synced through 2026-03-31 04:30 UTC; last sync: failed: "
        "503 after 8 attempts"
    ]
    assert found.by_testid("unpaid-balance")


def test_stale_when_the_newest_record_is_older_than_the_limit(tmp_path: pathlib.Path) -> None:
    path = warehouse_with(tmp_path, coverage_rows())
    newest = dt.datetime(2026, 3, 31, 23, 10, tzinfo=dt.UTC)
    later = newest + dt.timedelta(days=3)
    found = elements(page(path, now=later))
    stale = [t for _, t in found.by_testid("stale")]
    assert stale[0] == (
        "STALE: the newest record (a transaction of 2026-03-31 23:10 UTC) is 3 days old, beyond "
        "the limit of 2 days (--stale-after-days)"
    )
    ((basis, _),) = found.by_testid("basis")
    assert basis["class"] == "basis stale"
    assert not elements(page(path, now=later, limit=dt.timedelta(days=4))).by_testid("stale")
    assert not elements(page(path)).by_testid("stale")


def test_a_resource_not_synced_within_the_limit_is_stale(tmp_path: pathlib.Path) -> None:
    old = SYNCED_AT - dt.timedelta(days=4)
    rows = replaced("payouts", records=20, synced=old, attempt=old, through=old,
                    newest=dt.datetime(2026, 3, 19, 9, tzinfo=dt.UTC))
    found = elements(page(warehouse_with(tmp_path, rows)))
    assert [t for _, t in found.by_testid("stale")] == [
        "STALE: payouts last synced 4 days ago, beyond the limit of 2 days (--stale-after-days)"
    ]


def test_a_platform_clock_behind_the_wall_clock_is_not_staleness(tmp_path: pathlib.Path) -> None:
    """A sandbox with a fixed clock: the sync ran now, the platform said it was March 31."""
    platform = dt.datetime(2026, 3, 31, 23, 30, tzinfo=dt.UTC)
    wall = dt.datetime(2026, 11, 23, 20, 0, tzinfo=dt.UTC)
    rows = [
        coverage_row(r, n, attempt=wall, synced=wall, through=platform)
        for r, n in (("transactions", 42), ("purchases", 30), ("payouts", 20))
    ]
    found = elements(page(warehouse_with(tmp_path, rows), now=wall + dt.timedelta(minutes=5)))
    assert not found.by_testid("stale")


def test_a_partial_last_day_is_marked_and_left_out_of_the_comparisons(
    tmp_path: pathlib.Path,
) -> None:
    through = dt.datetime(2026, 3, 31, 15, 0, tzinfo=dt.UTC)  # the sync listed until 15:00
    rows = [
        coverage_row(r, n, through=through, newest=through - dt.timedelta(minutes=5))
        for r, n in (("transactions", 42), ("purchases", 30), ("payouts", 20))
    ]
    path = warehouse_with(tmp_path, rows)
    con = DuckDBAdapter(str(path), read_only=True)
    data = load_report_data(con, stale_after=LIMIT)
    con.close()
    window = data.headline.window
    assert (window.last_day, window.end, window.partial_day) == (
        AS_OF, AS_OF - dt.timedelta(days=1), AS_OF
    )
    end = AS_OF - dt.timedelta(days=1)
    assert data.headline.net_30d == net(end - dt.timedelta(days=29), end)
    assert data.headline.net_prior_30d == net(end - dt.timedelta(days=59), end - dt.timedelta(days=30))

    html = render_page(data, generated_at=NOW)
    found = elements(html)
    ((through_attrs, _),) = found.by_testid("figures-through")
    assert through_attrs["data-date"] == "2026-03-30"
    assert through_attrs["data-partial-day"] == "2026-03-31"
    assert "2026-03-31 is partial: the transactions reach 2026-03-31 15:00 UTC" in html
    assert "Revenue excl. tax, 30 days to 2026-03-30" in html
    assert "2026-03-31 is partial and not counted" in html
    chart = html[html.index('data-testid="chart-revenue-daily" data-currency="USD"') :]
    chart = chart[: chart.index("</figure>")]
    assert ">Partial day<" in chart
    # the caption's total is the complete days', as the tile's (issue 39, item 4)
    usd = [r for r in revenue_rows() if r[1] == "USD"]
    complete = sum(r[6] for r in usd if dt.date(2026, 1, 1) <= r[2] < AS_OF)
    partial = sum(r[6] for r in usd if r[2] == AS_OF)
    assert (
        f"USD: 2026-01-01 to 2026-03-30, net incl. tax {format_money(complete, 'USD')}; "
        f"2026-03-31 is partial (so far {format_money(partial, 'USD')}), shaded and not counted"
    ) in chart


def test_the_reporting_zone_decides_whether_the_last_day_is_complete(
    tmp_path: pathlib.Path,
) -> None:
    """02:00 UTC on April 1 is after March 31 in UTC, but still March 31 in New York."""
    through = dt.datetime(2026, 4, 1, 2, 0, tzinfo=dt.UTC)
    rows = [coverage_row(r, n, through=through) for r, n in
            (("transactions", 42), ("purchases", 30), ("payouts", 20))]
    for zone, partial in (("UTC", None), ("America/New_York", "2026-03-31")):
        folder = tmp_path / zone.replace("/", "-")
        folder.mkdir()
        path = warehouse_with(folder, rows, timezone=zone)
        ((attrs, _),) = elements(page(path)).by_testid("figures-through")
        assert attrs.get("data-partial-day") == partial


def test_the_build_parameters_are_stated_and_last_sync_is_not_a_reporting_day(
    tmp_path: pathlib.Path,
) -> None:
    path = warehouse_with(tmp_path, coverage_rows(), timezone="Europe/Berlin",
                          settlement_delay_days=3)
    html = page(path)
    found = elements(html)
    ((build, text),) = found.by_testid("build-parameters")
    assert (build["data-timezone"], build["data-settlement-delay-days"]) == ("Europe/Berlin", "3")
    assert "Europe/Berlin" in text or "Europe/Berlin" in html
    assert "settlement delay <strong>3 days</strong>" in html
    ((through, _),) = found.by_testid("figures-through")
    ((last, _),) = found.by_testid("last-sync")
    # two different things, stated in different units: a reporting day and an instant
    assert through["data-date"] == AS_OF.isoformat()
    assert last["data-at"] == "2026-04-01T00:30:00+00:00"
    assert "the last complete day in the reporting time zone <strong>Europe/Berlin</strong>" in html
    assert (
        "<strong>2026-04-01 00:30 UTC</strong>, 1 hour before this report: when creator-sync last "
        "loaded the platform's data (not a day the figures reach)" in html
    )
    header = html[html.index("<header>") : html.index("</header>")]
    assert "through" not in header  # the header no longer carries a bare "figures through"
    assert "reporting day in Europe/Berlin" in html  # the daily chart says its zone


def test_models_older_than_the_last_sync_are_flagged(tmp_path: pathlib.Path) -> None:
    path = warehouse_with(tmp_path, coverage_rows())
    con = duckdb.connect(str(path))
    con.execute("INSERT INTO creator_platform._dlt_loads VALUES "
                "('4', 'creator_platform', 0, TIMESTAMPTZ '2026-04-01 06:00:00+00')")
    con.close()
    ((_, text),) = elements(page(path, now=NOW + dt.timedelta(hours=6))).by_testid(
        "models-outdated"
    )
    assert "synced at 2026-04-01 06:00 UTC, after these models were built" in text


def test_what_the_transactions_lack_is_said(tmp_path: pathlib.Path) -> None:
    """Addendum A7: far fewer transactions than the purchases suggest."""
    rows = replaced("transactions", records=3, missing=103_997)
    found = elements(page(warehouse_with(tmp_path, rows)))
    ((_, note),) = found.by_testid("a7-note")
    assert note == (
        "103,997 paid purchases have no transaction loaded: revenue counts only the transactions "
        "the platform listed."
    )
    counts = {a["data-resource"]: a["data-value"] for a, _ in found.by_testid("coverage-resource")}
    assert counts == {"transactions": "3", "purchases": "30", "payouts": "20"}


def test_offers_carry_their_site_when_there_are_several(warehouse: pathlib.Path) -> None:
    html = page(warehouse, charts=True)
    rows = elements(html).by_testid("top-offer")
    assert {a["data-site-id"] for a, _ in rows} == set(SITES)
    assert "<th>Site</th>" in html and "<td>Pine &amp; Co</td>" in html
    assert "Coaching\u00a0·\u00a0Pine\u00a0&amp;\u00a0Co" in html  # the chart label, unbroken
    one_site = page(warehouse, charts=True, site_id=SITES[1])
    assert "<th>Site</th>" not in one_site and "Coaching\u00a0·" not in one_site


def test_staleness_limit_is_a_flag_and_a_config_key(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    series = ("revenue_daily", "mrr_monthly", *MONTHLY_MARTS, *PAYOUT_MARTS)
    path = warehouse_with(tmp_path, coverage_rows(), empty=series)  # no charts: fast
    out = tmp_path / "r.html"
    args = ["--duckdb", str(path), "--out", str(out)]
    runner = CliRunner()
    # the fixture's newest record is months before today: stale on the default limit
    assert runner.invoke(report_command, args).exit_code == 0
    assert 'data-testid="stale"' in out.read_text()
    assert runner.invoke(report_command, [*args, "--stale-after-days", "3650"]).exit_code == 0
    assert 'data-testid="stale"' not in out.read_text()
    monkeypatch.setenv("CREATOR_SYNC__STALE_AFTER_DAYS", "3650")
    assert runner.invoke(report_command, args).exit_code == 0
    assert 'data-testid="stale"' not in out.read_text()

    bad_flag = runner.invoke(report_command, [*args, "--stale-after-days", "0"])
    assert bad_flag.exit_code == 2 and "--stale-after-days" in bad_flag.output
    monkeypatch.setenv("CREATOR_SYNC__STALE_AFTER_DAYS", "soon")
    bad_key = runner.invoke(report_command, args)
    assert bad_key.exit_code == 2
    assert "stale_after_days must be a number greater than 0 and at most 3650, got soon " \
        "[env=CREATOR_SYNC__STALE_AFTER_DAYS]" in bad_key.output
