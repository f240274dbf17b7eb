"""What the report reads from the marts: windows, filters, and clear errors on bad input."""

from __future__ import annotations

import datetime as dt
import pathlib
from collections import defaultdict

import duckdb
import pytest
from report_fixtures import (
    AS_OF,
    SITES,
    build_warehouse,
    mrr_rows,
    payout_line_rows,
    payout_rows,
    revenue_rows,
    settlement_delay_rows,
)

from creator_sync.common.settings import BadSetting
from creator_sync.models.adapters import DuckDBAdapter
from creator_sync.report.data import NO_OFFER, load_report_data
from creator_sync.report.errors import ReportError


def load(path: pathlib.Path, **options):
    con = DuckDBAdapter(str(path), read_only=True)
    try:
        return load_report_data(con, **options)
    finally:
        con.close()


def expected_net(
    first: dt.date, last: dt.date, site: str | None = None, *, ex_tax: bool = False
) -> dict[str, int]:
    """Net cash (tax included), or revenue excl. tax, of the fixture's days, per currency."""
    totals: dict[str, int] = defaultdict(int)
    for row_site, currency, day, *_, net, _tax, revenue_ex_tax in revenue_rows():
        if first <= day <= last and site in (None, row_site):
            totals[currency] += revenue_ex_tax if ex_tax else net
    return dict(totals)


def test_headline_windows_end_on_the_last_reported_day(warehouse: pathlib.Path) -> None:
    data = load(warehouse)
    h = data.headline
    assert h.window.last_day == h.window.end == AS_OF and h.window.partial_day is None
    assert h.net_30d == expected_net(AS_OF - dt.timedelta(days=29), AS_OF)
    # the tile's figure is revenue excl. tax: the fixture's tax is not in it
    assert h.revenue_30d == expected_net(AS_OF - dt.timedelta(days=29), AS_OF, ex_tax=True)
    assert h.revenue_30d != h.net_30d
    assert h.net_prior_30d == expected_net(
        AS_OF - dt.timedelta(days=59), AS_OF - dt.timedelta(days=30)
    )
    march = [r for r in mrr_rows() if r[2] == dt.date(2026, 3, 1)]
    assert h.mrr_month == dt.date(2026, 3, 1)
    assert h.mrr == {
        "EUR": sum(r[3] for r in march if r[1] == "EUR"),
        "USD": sum(r[3] for r in march if r[1] == "USD"),
    }
    february = [r for r in mrr_rows() if r[2] == dt.date(2026, 2, 1)]
    assert h.mrr_prior_month == {
        "EUR": sum(r[3] for r in february if r[1] == "EUR"),
        "USD": sum(r[3] for r in february if r[1] == "USD"),
    }
    assert h.active_subscriptions == {
        "EUR": sum(r[9] for r in march if r[1] == "EUR"),
        "USD": sum(r[9] for r in march if r[1] == "USD"),
    }
    assert h.unpaid_balance == {"USD": 123457}


def test_site_filter_scopes_every_figure(warehouse: pathlib.Path) -> None:
    data = load(warehouse, site_id=SITES[1])
    assert data.headline.net_30d == expected_net(AS_OF - dt.timedelta(days=29), AS_OF, SITES[1])
    assert set(data.revenue) == {"USD"}
    assert data.headline.unpaid_balance == {"USD": 1}
    assert {p.site_id for rows in data.payouts.values() for p in rows} == {SITES[1]}
    assert [o.title for o in data.offers["USD"]] == ["Coaching", NO_OFFER]
    assert data.unreconciled_items == {}


def test_since_limits_the_series_but_not_the_tiles(warehouse: pathlib.Path) -> None:
    full = load(warehouse)
    since = dt.date(2026, 3, 10)
    data = load(warehouse, since=since)
    assert data.headline == full.headline
    assert min(d.date_day for d in data.revenue["USD"]) == since
    assert [m.date_month for m in data.mrr["USD"]] == [dt.date(2026, 3, 1)]
    assert all(p.initiated_on >= since for rows in data.payouts.values() for p in rows)
    assert len(data.payouts["USD"]) < len(full.payouts["USD"])


def test_unreconciled_payouts_come_with_their_lines(warehouse: pathlib.Path) -> None:
    data = load(warehouse)
    short = [p for p in data.payouts["USD"] if not p.is_reconciled]
    # 150 cents short of its transactions; its lines carry a -75 adjustment: 75 short of them
    assert [(p.payout_id, p.method, p.difference, p.amount - p.expected) for p in short] == [
        (f"{SITES[0]}004", "itemised", -75, -75)
    ]
    (payout,) = short
    assert (payout.lines_count, payout.matched_lines, payout.unmatched_lines) == (4, 2, 2)
    assert (payout.adjustments, payout.unexplained, payout.fees) == (-75, 700 - 75, 120)
    items = data.unreconciled_items[payout.payout_id]
    expected_lines = [r for r in payout_line_rows() if r[0] == payout.payout_id]
    assert len(items.rows) == len(expected_lines) == payout.lines_count
    net = items.columns.index("net_in_cents")
    assert sum(row[net] for row in items.rows) == payout.expected
    matched = items.columns.index("is_matched")
    assert sum(1 for row in items.rows if row[matched]) == payout.matched_lines


def test_a_settlement_rule_payout_comes_with_its_transactions(tmp_path: pathlib.Path) -> None:
    path = build_warehouse(tmp_path / "w.duckdb")
    con = duckdb.connect(str(path))
    con.execute(
        "UPDATE analytics.payout_reconciliation SET is_reconciled = false, "
        "difference_in_cents = 5 WHERE payout_id = ?",
        [f"{SITES[1]}003"],
    )
    con.close()
    data = load(path)
    assert [p.payout_id for p in data.latest_unreconciled()] == [
        f"{SITES[0]}004", f"{SITES[1]}003"
    ]
    items = data.unreconciled_items[f"{SITES[1]}003"]
    assert items.columns[0] == "transaction_id"
    net = items.columns.index("net_settlement_in_cents")
    expected = [r for r in payout_rows()[2] if r[0] == f"{SITES[1]}003"]
    assert sum(row[net] for row in items.rows) == sum(r[-1] for r in expected)


def test_headline_counts_payouts_by_reconciliation_method(warehouse: pathlib.Path) -> None:
    h = load(warehouse).headline
    assert {m: (c.payouts, c.reconciled) for m, c in h.methods.items()} == {
        "itemised": (10, 9),
        "settlement_rule": (10, 10),
    }
    assert (h.unreconciled_payouts, h.payouts_count) == (1, 20)
    site2 = load(warehouse, site_id=SITES[1]).headline
    assert set(site2.methods) == {"settlement_rule"} and site2.unreconciled_payouts == 0


def test_settlement_delay_is_read_per_site_provider_and_month(warehouse: pathlib.Path) -> None:
    delay = load(warehouse).settlement_delay
    assert [(d.site_id, d.provider, d.date_month, d.p50, d.p95, d.max) for d in delay] == [
        (s, p, m, p50, p95, high)
        for s, p, m, _, p50, p95, high in sorted(settlement_delay_rows())
    ]
    since = load(warehouse, since=dt.date(2026, 3, 10), site_id=SITES[0]).settlement_delay
    assert [(d.site_id, d.date_month) for d in since] == [(SITES[0], dt.date(2026, 3, 1))]


def test_payout_scope_says_which_revenue_the_payouts_cover(warehouse: pathlib.Path) -> None:
    scope = load(warehouse).payout_scope
    assert [(r.provider, r.currency, r.covered, r.not_covered) for r in scope] == [
        ("paypal", "USD", 0, 25000), ("platform_payments", "USD", 1000000, 0)]
    assert "no payout" in scope[0].reason
    only = load(warehouse, site_id=SITES[0]).payout_scope
    assert [(r.provider, r.covered) for r in only] == [("platform_payments", 900000)]


def test_top_offers_rank_the_last_full_month_by_revenue_ex_tax(warehouse: pathlib.Path) -> None:
    """March, not all time (February's bigger offer is not there); the two sites' `(no offer)`
    money is one row, named in full."""
    data = load(warehouse)
    assert data.last_full_month == dt.date(2026, 3, 1)
    offers = data.offers
    assert [(o.offer_id, o.revenue_ex_tax, o.net, o.transactions) for o in offers["USD"]] == [
        ("4000000001", 1_000_001, 1_050_001, 12),
        ("4000000004", 500_000, 500_000, 5),
        ("", 320_000, 350_000, 10),
        ("4000000002", 250_000, 260_000, 30),
    ]
    assert offers["USD"][2].title == NO_OFFER and offers["USD"][2].is_unattributed
    assert [(o.title, o.revenue_ex_tax) for o in offers["EUR"]] == [("Bundle", 99_999)]


def test_freshness_reads_the_last_successful_load_and_row_counts(warehouse: pathlib.Path) -> None:
    fresh = load(warehouse).freshness
    assert fresh is not None and fresh.found
    # load 3 (status 1) did not complete: the last sync is load 2
    assert fresh.last_sync_at == dt.datetime(2026, 4, 1, 0, 30, tzinfo=dt.UTC)
    assert fresh.rows == {"customers": 7, "sites": 2, "transactions": 42}


def test_site_names_come_from_the_raw_sites_table(warehouse: pathlib.Path) -> None:
    assert load(warehouse).site_names == {SITES[0]: "Maple Academy", SITES[1]: "Pine & Co"}


def test_missing_raw_dataset_is_reported_not_fatal(tmp_path: pathlib.Path) -> None:
    path = build_warehouse(tmp_path / "w.duckdb", with_raw=False)
    data = load(path, dataset="nope")
    assert data.freshness is not None and not data.freshness.found
    assert data.freshness.dataset == "nope" and data.site_names == {}


def test_unknown_site_is_a_usage_error_naming_the_sites_present(warehouse: pathlib.Path) -> None:
    with pytest.raises(BadSetting, match=r"site '42'.*the sites it has: 2147483701, 2147483702") as caught:
        load(warehouse, site_id="42")
    assert caught.value.exit_code == 2 and "--site-id" in caught.value.format_message()


def test_missing_marts_and_columns_are_listed_together(tmp_path: pathlib.Path) -> None:
    path = build_warehouse(tmp_path / "w.duckdb")
    con = duckdb.connect(str(path))
    con.execute("DROP TABLE analytics.offer_revenue_monthly")
    con.execute("ALTER TABLE analytics.revenue_daily DROP COLUMN disputes_in_cents")
    con.close()
    with pytest.raises(ReportError) as caught:
        load(path)
    message = str(caught.value)
    assert str(path) in message
    assert "missing table analytics.offer_revenue_monthly" in message
    assert "analytics.revenue_daily lacks column(s) disputes_in_cents" in message
    assert "creator-sync models --duckdb" in message


def test_fractional_cents_fail_loudly_instead_of_rounding(tmp_path: pathlib.Path) -> None:
    path = build_warehouse(tmp_path / "w.duckdb")
    con = duckdb.connect(str(path))
    con.execute(
        "ALTER TABLE analytics.unpaid_balance ALTER unpaid_balance_in_cents TYPE DECIMAL(18, 2)"
    )
    con.execute(
        "UPDATE analytics.unpaid_balance SET unpaid_balance_in_cents = 0.5 WHERE site_id = ?",
        [SITES[1]],
    )
    con.close()
    with pytest.raises(ReportError, match=r"unpaid_balance_in_cents: expected integer cents"):
        load(path)


def test_a_payout_missing_from_the_reconciliation_is_listed_in_full(tmp_path: pathlib.Path) -> None:
    path = build_warehouse(tmp_path / "w.duckdb")
    con = duckdb.connect(str(path))
    con.execute(
        "DELETE FROM analytics.payout_reconciliation WHERE payout_id = ?", [f"{SITES[1]}002"]
    )
    con.close()
    data = load(path, site_id=SITES[1])
    [orphan] = [p for p in data.payouts["USD"] if not p.is_reconciled]
    assert orphan.payout_id == f"{SITES[1]}002"
    assert (orphan.expected, orphan.difference) == (0, orphan.amount)
    assert len(data.unreconciled_items[orphan.payout_id].rows) == 3
