"""Money in the report is formatted from integer cents exactly, never through float."""

from __future__ import annotations

from decimal import Decimal

import pytest

from report.money import format_count, format_money, format_percent_change, to_major


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
