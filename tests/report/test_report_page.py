"""The HTML file: self-contained, exact figures with stable hooks, every unreconciled payout."""

from __future__ import annotations

import datetime as dt
import pathlib
import re
import subprocess
import sys

import duckdb
import pytest
from click.testing import CliRunner
from report_fixtures import MONTHLY_MARTS, SITES, Elements, build_warehouse

from creator_sync.report.cli import report_command
from creator_sync.report.money import format_money
from creator_sync.report.render import write_report


@pytest.fixture(scope="module")
def page(warehouse: pathlib.Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    out = write_report(str(warehouse), str(tmp_path_factory.mktemp("page") / "report.html"))
    return out.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def elements(page: str) -> Elements:
    parser = Elements()
    parser.feed(page)
    return parser


def test_page_is_self_contained(page: str, elements: Elements) -> None:
    assert page.startswith("<!DOCTYPE html>")
    assert not any(tag in ("script", "link", "img", "iframe", "object") for tag, _ in elements.tags)
    assert not re.search(r"""(src|href)\s*=\s*["'](?!#)""", page), "no external references"
    assert "@import" not in page and "url(http" not in page
    assert "default-src 'none'" in page  # CSP: even a stray reference could not load


def test_svg_ids_are_unique_across_charts(page: str) -> None:
    ids = re.findall(r'(?<![\w-])id="([^"]+)"', page)  # not data-offer-id and the like
    assert ids and len(ids) == len(set(ids))
    for ref in re.findall(r"url\(#([^)]+)\)", page):
        assert ref in ids, f"dangling reference #{ref}"


def test_tiles_carry_exact_cents_and_show_them_formatted(
    warehouse: pathlib.Path, elements: Elements
) -> None:
    con = duckdb.connect(str(warehouse), read_only=True)
    net = dict(
        con.execute("""
        SELECT currency, sum(revenue_ex_tax_in_cents) FROM analytics.revenue_daily
        WHERE date_day > (SELECT max(date_day) FROM analytics.revenue_daily) - 30
        GROUP BY currency""").fetchall()
    )
    con.close()
    tiles = {
        a["data-currency"]: (int(a["data-value"]), text)
        for a, text in elements.by_testid("revenue-ex-tax-30d")
    }
    assert {c: v for c, (v, _) in tiles.items()} == net
    for currency, (value, text) in tiles.items():
        assert text == format_money(value, currency)
    unpaid = elements.by_testid("unpaid-balance")
    assert [(a["data-currency"], a["data-value"], t) for a, t in unpaid] == [
        ("USD", "123457", "$1,234.57")
    ]


def test_every_unreconciled_payout_is_listed_with_its_lines(elements: Elements) -> None:
    rows = elements.by_testid("unreconciled-payout")
    assert [
        (a["data-payout-id"], a["data-method"], a["data-difference"], a["data-adjustments"],
         a["data-unexplained"], a["data-fees"])
        for a, _ in rows
    ] == [(f"{SITES[0]}004", "itemised", "-75", "-75", str(700 - 75), "120")]
    lines = [
        (a["data-line-number"], a["data-line-type"], a["data-matched"], a.get("data-match-rule"),
         a.get("class"))
        for a, _ in elements.by_testid("payout-line")
    ]
    assert lines == [
        ("1", "sale", "true", "same_minute", None),
        ("2", "sale", "true", "same_minute", None),
        ("3", "sale", "false", None, "alert"),  # an unmatched sale keeps it from reconciling
        ("4", "adjustment", "false", None, None),  # an adjustment is explained as one
    ]
    ((count, text),) = elements.by_testid("payout-lines-count")
    assert (count["data-matched"], count["data-unmatched"]) == ("2", "2")
    assert text.startswith("4 (2 matched")
    assert not elements.by_testid("payout-transaction")  # itemised: its lines, not the rule's
    cells = [
        t
        for i, (tag, _) in enumerate(elements.tags)
        if tag == "td"
        for t in [elements.text.get(i, "")]
    ]
    assert "Maple Academy" in cells  # the site by name, not only its id
    assert not elements.by_testid("unreconciled-none")


def test_charts_per_section_and_currency(elements: Elements) -> None:
    charts = [
        (a["data-testid"], a.get("data-currency") or a.get("data-site-id"))
        for t, a in elements.tags
        if t == "figure"
    ]
    assert charts == [
        ("chart-revenue-daily", "EUR"),
        ("chart-revenue-daily", "USD"),
        ("chart-mrr-waterfall", "EUR"),
        ("chart-mrr-waterfall", "USD"),
        ("chart-products", "EUR"),
        ("chart-products", "USD"),
        ("chart-top-offers", "EUR"),
        ("chart-top-offers", "USD"),
        ("chart-settlement-delay", SITES[0]),  # one per site
        ("chart-settlement-delay", SITES[1]),
    ]


def test_header_names_the_sites(page: str) -> None:
    assert "all sites: Maple Academy, Pine &amp; Co" in page


def test_dollar_signs_in_titles_stay_text_in_charts(page: str) -> None:
    chart = page[page.index('data-testid="chart-top-offers" data-currency="USD"') :]
    svg = chart[: chart.index("</svg>")].replace("\u00a0", " ")  # the site's no-break spaces
    assert ">Membership $5 / $50 · Maple Academy<" in svg


def test_offer_titles_are_escaped(page: str) -> None:
    assert "Course <A>" not in page
    assert "Course &lt;A&gt; &amp; &quot;friends&quot;" in page


def test_all_reconciled_says_so(tmp_path: pathlib.Path) -> None:
    path = build_warehouse(tmp_path / "w.duckdb")
    con = duckdb.connect(str(path))
    con.execute(
        "UPDATE analytics.payout_reconciliation SET is_reconciled = true, difference_in_cents = 0"
    )
    con.close()
    html = write_report(str(path), str(tmp_path / "r.html"), site_id=SITES[0]).read_text()
    assert 'data-testid="unreconciled-none"' in html
    assert "Every payout reconciles to the cent (10 payouts)" in html


def test_cli_writes_the_file_and_reports_its_path(
    warehouse: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    out = tmp_path / "nested" / "report.html"
    result = CliRunner().invoke(
        report_command,
        [
            "--duckdb",
            str(warehouse),
            "--out",
            str(out),
            "--site-id",
            SITES[0],
            "--since",
            "2026-03-01",
        ],
    )
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"report written to {out.resolve()}"
    html = out.read_text()
    assert f"site Maple Academy ({SITES[0]})" in html and "charts since 2026-03-01" in html
    assert [p.name for p in out.parent.iterdir()] == ["report.html"]  # no temp file left behind


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--duckdb", "missing.duckdb"], "missing.duckdb: no such DuckDB file"),
        (["--since", "31/03/2026"], "Invalid value for '--since'"),
    ],
)
def test_cli_rejects_bad_input_clearly(
    args: list[str], message: str, warehouse: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    if "--duckdb" not in args:
        args = ["--duckdb", str(warehouse), *args]
    result = CliRunner().invoke(report_command, [*args, "--out", str(tmp_path / "r.html")])
    assert result.exit_code != 0
    assert message in result.output
    assert not (tmp_path / "r.html").exists()


def test_failed_render_keeps_the_previous_report(
    warehouse: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    out = tmp_path / "report.html"
    out.write_text("<!DOCTYPE html><p>yesterday's report</p>")
    before = out.read_bytes()
    result = CliRunner().invoke(
        report_command, ["--duckdb", str(warehouse), "--out", str(out), "--site-id", "nope"]
    )
    assert result.exit_code == 2 and "site 'nope'" in result.output  # a usage error
    assert out.read_bytes() == before


def test_same_data_gives_the_same_page(
    page: str, warehouse: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    again = write_report(str(warehouse), str(tmp_path / "b.html")).read_text()
    generated = re.compile(r"generated [^<·]*")
    assert generated.sub("", page) == generated.sub("", again)


def test_empty_marts_render_without_charts(tmp_path: pathlib.Path) -> None:
    path = build_warehouse(tmp_path / "w.duckdb")
    con = duckdb.connect(str(path))
    for mart in (
        "revenue_daily",
        "mrr_monthly",
        "fct_payouts",
        "payout_reconciliation",
        "payout_transactions",
        "fct_payout_lines",
        "settlement_delay",
        "unpaid_balance",
        "offer_performance",
        *MONTHLY_MARTS,
    ):
        con.execute(f"DELETE FROM analytics.{mart}")
    con.close()
    html = write_report(str(path), str(tmp_path / "r.html")).read_text()
    assert "<svg" not in html
    assert (
        "No revenue in this range." in html
        and "Every payout reconciles to the cent (0 payouts)" in html
    )
    assert dt.date.today().isoformat() not in html.split("generated")[0]


def test_a_database_locked_by_a_running_sync_is_a_clear_error(tmp_path: pathlib.Path) -> None:
    path = build_warehouse(tmp_path / "w.duckdb")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('locked', flush=True); "
            "time.sleep(30)",
            str(path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        result = CliRunner().invoke(
            report_command, ["--duckdb", str(path), "--out", str(tmp_path / "r.html")]
        )
    finally:
        holder.kill()
        holder.wait(timeout=10)
    assert result.exit_code == 1
    assert f"{path}: cannot open the database read-only (is a sync" in result.output
    assert not (tmp_path / "r.html").exists()


def test_a_destination_the_models_cannot_build_is_a_usage_error(tmp_path: pathlib.Path) -> None:
    result = CliRunner().invoke(
        report_command, ["--destination", "bigquery", "--out", str(tmp_path / "r.html")]
    )
    assert result.exit_code == 2
    assert "the report reads duckdb or postgres, not 'bigquery' [flag=--destination]" in result.output
    with pytest.MonkeyPatch.context() as env:
        env.setenv("CREATOR_SYNC__DESTINATION", "bigquery")
        env.chdir(tmp_path)
        from_config = CliRunner().invoke(report_command, ["--out", str(tmp_path / "r.html")])
    assert from_config.exit_code == 2
    assert "the report reads duckdb or postgres, not 'bigquery'" in from_config.output
    assert not (tmp_path / "r.html").exists()


def test_a_site_the_warehouse_does_not_have_exits_2_naming_its_sites(
    warehouse: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    result = CliRunner().invoke(
        report_command,
        ["--duckdb", str(warehouse), "--site-id", "999", "--out", str(tmp_path / "r.html")],
    )
    assert result.exit_code == 2, result.output
    assert "site '999'" in result.output and "[flag=--site-id]" in result.output
    assert all(site in result.output for site in SITES)
    assert not (tmp_path / "r.html").exists()


def test_postgres_without_credentials_is_a_configuration_error(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("CREATOR_SYNC_POSTGRES_DSN", "DESTINATION__POSTGRES__CREDENTIALS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        report_command, ["--destination", "postgres", "--out", str(tmp_path / "r.html")]
    )
    assert result.exit_code == 2, result.output
    assert "no postgres credentials found" in result.output
    assert "[flag=--postgres-dsn]" in result.output
