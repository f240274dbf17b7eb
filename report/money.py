"""Exact money formatting for the report.

Amounts arrive as integer cents. They are formatted through `Decimal`, never float, so a tile
always shows the cent the mart holds (a float would print 0.1 + 0.2 style surprises on large
sums).
"""

from __future__ import annotations

from decimal import Decimal

# Symbols shown before the amount; any other ISO code is shown after it ("1,234.00 CHF").
SYMBOLS: dict[str, str] = {
    "USD": "$",
    "EUR": "€",
    "GBP": "£",
    "JPY": "¥",
    "CAD": "CA$",
    "AUD": "A$",
}

# Minor units per currency where they are not 2 (ISO 4217). The API always sends `*_in_cents`,
# i.e. the smallest unit, so JPY cents are yen.
MINOR_UNITS: dict[str, int] = {"JPY": 0, "KRW": 0, "HUF": 2, "KWD": 3, "BHD": 3}

MINUS = "−"  # U+2212: a real minus sign lines up with digits in tabular figures


def to_major(cents: int, currency: str) -> Decimal:
    """Cents as an exact Decimal amount in major units."""
    if isinstance(cents, bool) or not isinstance(cents, int):
        raise TypeError(f"money must be integer cents, got {type(cents).__name__}: {cents!r}")
    digits = MINOR_UNITS.get(currency.upper(), 2)
    return Decimal(cents).scaleb(-digits)


def format_money(cents: int, currency: str, *, signed: bool = False) -> str:
    """`-123456, "USD"` -> `−$1,234.56`; `signed` adds `+` to positive amounts (for changes)."""
    code = currency.upper()
    amount = to_major(cents, code)
    digits = MINOR_UNITS.get(code, 2)
    body = f"{abs(amount):,.{digits}f}"
    symbol = SYMBOLS.get(code)
    text = f"{symbol}{body}" if symbol else f"{body} {code}"
    if cents < 0:
        return MINUS + text
    if signed and cents > 0:
        return "+" + text
    return text


def format_percent_change(current: int, prior: int) -> str | None:
    """Change from `prior` to `current` as `+12.3%`; None when there is no prior to compare."""
    if prior == 0:
        return None
    change = (Decimal(current - prior) * 100 / abs(Decimal(prior))).quantize(Decimal("0.1"))
    if change == 0:
        return "0.0%"
    sign = "+" if change > 0 else MINUS
    return f"{sign}{abs(change)}%"


def format_count(value: int) -> str:
    """Thousands separators for counts (rows, subscriptions)."""
    return f"{value:,}"
