"""Money in the report is formatted from integer cents exactly, never through float, by the
same formatter as the command line's headline."""

from __future__ import annotations

import pathlib
from decimal import Decimal

import duckdb
import pytest
from report_fixtures import SITES, Elements, build_warehouse

from creator_sync.models.headline import format_headline, headline_figures
from creator_sync.report.money import format_count, format_money, format_percent_change, to_major
from creator_sync.report.render import write_report


@pytest.mark.parametrize(
    ("cents", "currency", "expected"),
    [
        (0, "USD", "$0.00"),
        (1, "USD", "$0.01"),
        (123456, "USD", "$1,234.56"),
        (-123456, "EUR", "−€1,234.56"),
        (99_999, "GBP", "£999.99"),
        (1500, "JPY", "¥1,500"),  # zero-decimal currency: cents are yen
        (250, "chf", "2.50 CHF"),  # unknown symbol: ISO code after the amount, upper-cased
        # Beyond float's 53-bit mantissa: a float would print ...992.00 or ...993.00 wrongly.
        (2**53 + 1, "USD", "$90,071,992,547,409.93"),
        (10**20 + 7, "USD", "$1,000,000,000,000,000,000.07"),
    ],
)
def test_format_money_is_exact(cents: int, currency: str, expected: str) -> None:
    assert format_money(cents, currency) == expected


def test_signed_format_marks_gains_and_losses() -> None:
    assert format_money(5, "USD", signed=True) == "+$0.05"
    assert format_money(-5, "USD", signed=True) == "−$0.05"
    assert format_money(0, "USD", signed=True) == "$0.00"


def test_to_major_is_a_decimal_and_refuses_floats() -> None:
    assert to_major(123456, "USD") == Decimal("1234.56")
    with pytest.raises(TypeError, match="integer cents"):
        to_major(12.5, "USD")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="integer cents"):
        to_major(True, "USD")


@pytest.mark.parametrize(
    ("current", "prior", "expected"),
    [
        (110, 100, "+10.0%"),
        (90, 100, "−10.0%"),
        (100, 100, "0.0%"),
        (5, 0, None),
        (1, 3, "−66.7%"),
        (-50, -100, "+50.0%"),
    ],
)
def test_percent_change(current: int, prior: int, expected: str | None) -> None:
    assert format_percent_change(current, prior) == expected


def test_format_count() -> None:
    assert format_count(1234567) == "1,234,567"


def test_cli_headline_and_report_format_each_currency_alike(tmp_path: pathlib.Path) -> None:
    """One warehouse holding yen, dinars and dollars: `creator-sync models` prints the amounts
    with each currency's minor units (JPY none, KWD three), and the report's tiles show the
    same amounts, through the one formatter."""
    path = build_warehouse(tmp_path / "w.duckdb")
    con = duckdb.connect(str(path))
    con.execute(
        "INSERT INTO analytics.unpaid_balance VALUES "
        f"('{SITES[0]}', 'JPY', 1500), ('{SITES[0]}', 'KWD', 1234), ('{SITES[1]}', 'JPY', 1)"
    )
    con.close()
    printed = format_headline(headline_figures(str(path)))
    (unpaid,) = [line for line in printed if line.startswith("Settled, not yet paid out:")]
    assert unpaid.startswith(
        "Settled, not yet paid out: JPY 1,501 | KWD 1.234 | USD 1,234.57 (settlement delay"
    )
    found = Elements()
    found.feed(write_report(str(path), str(tmp_path / "r.html")).read_text())
    tiles = [(a["data-currency"], a["data-value"], text) for a, text in found.by_testid("unpaid-balance")]
    assert tiles == [
        ("JPY", "1501", "¥1,501"),
        ("KWD", "1234", "1.234 KWD"),
        ("USD", "123457", "$1,234.57"),
    ]
