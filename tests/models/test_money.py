"""One money formatter for the terminal and the report, with each currency's ISO 4217 minor
units: yen have no decimals, dinars three, and no amount passes through float."""

from __future__ import annotations

import pytest

from creator_sync.models.headline import format_cents
from creator_sync.models.money import MINOR_UNITS, format_money, format_per_currency, minor_units


@pytest.mark.parametrize(
    ("cents", "currency", "report", "terminal"),
    [
        (123456, "USD", "$1,234.56", "USD 1,234.56"),
        (-123456, "EUR", "−€1,234.56", "-EUR 1,234.56"),
        (1500, "JPY", "¥1,500", "JPY 1,500"),  # zero decimals: the minor unit is the yen
        (-1500, "jpy", "−¥1,500", "-JPY 1,500"),
        (1234567, "KRW", "1,234,567 KRW", "KRW 1,234,567"),
        (5, "CLP", "5 CLP", "CLP 5"),
        (1234, "KWD", "1.234 KWD", "KWD 1.234"),  # three decimals
        (1, "BHD", "0.001 BHD", "BHD 0.001"),
        (-100500, "JOD", "−100.500 JOD", "-JOD 100.500"),
        (7, "OMR", "0.007 OMR", "OMR 0.007"),
        (12345, "TND", "12.345 TND", "TND 12.345"),
        (12345, "CLF", "1.2345 CLF", "CLF 1.2345"),  # four
        (250, "CHF", "2.50 CHF", "CHF 2.50"),  # not listed: two
        (2**53 + 1, "USD", "$90,071,992,547,409.93", "USD 90,071,992,547,409.93"),
    ],
)
def test_one_formatter_two_presentations(
    cents: int, currency: str, report: str, terminal: str
) -> None:
    assert format_money(cents, currency) == report
    assert format_money(cents, currency, plain=True) == terminal
    assert format_cents(cents, currency) == terminal  # what `creator-sync models` prints


def test_minor_units_are_iso_4217() -> None:
    assert [minor_units(c) for c in ("JPY", "KRW", "VND", "BHD", "KWD", "JOD", "OMR", "TND")] == [
        0, 0, 0, 3, 3, 3, 3, 3
    ]
    assert minor_units("USD") == minor_units("HUF") == minor_units("XYZ") == 2
    assert "USD" not in MINOR_UNITS  # 2 is the default, written once


def test_signed_and_per_currency() -> None:
    assert format_money(5, "USD", signed=True) == "+$0.05"
    assert format_money(-5, "JPY", signed=True, plain=True) == "-JPY 5"
    assert format_per_currency({"USD": 7300, "JPY": 1500}, plain=True) == "JPY 1,500 | USD 73.00"
    assert format_per_currency({}) == "none"


def test_floats_are_refused() -> None:
    with pytest.raises(TypeError, match="integer cents"):
        format_money(12.5, "USD")  # type: ignore[arg-type]
