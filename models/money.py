"""Money as text, exactly, for every place that shows it: `creator-sync models`/`demo` print it
and the report renders it, through the one `format_money` here.

Amounts arrive as integer minor units (the marts' `*_in_cents`; the API sends the smallest unit,
so JPY "cents" are yen). They are turned into major units through `Decimal`, never float, with
the currency's ISO 4217 minor units, so ¥1,500 is never printed as JPY 15.00 and 1.234 KWD keeps
its three decimals. It lives in `models` because the report sits above the models and the
models never import the report.
"""

from __future__ import annotations

from decimal import Decimal

# ISO 4217 minor units wherever they are not 2 (the 2024 list; funds codes included).
MINOR_UNITS: dict[str, int] = {
    **dict.fromkeys(
        (
            "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI",
            "VND", "VUV", "XAF", "XOF", "XPF",
        ),
        0,
    ),
    **dict.fromkeys(("BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"), 3),
    **dict.fromkeys(("CLF", "UYW"), 4),
}
DEFAULT_MINOR_UNITS = 2

# Symbols the report shows before the amount; any other code is shown after it ("2.50 CHF").
SYMBOLS: dict[str, str] = {
    "USD": "$",
    "EUR": "€",
    "GBP": "£",
    "JPY": "¥",
    "CAD": "CA$",
    "AUD": "A$",
}

MINUS = "−"  # U+2212: a real minus sign lines up with digits in tabular figures


def minor_units(currency: str) -> int:
    """Decimal places of `currency` (ISO 4217), 2 when the code is not listed as different."""
    return MINOR_UNITS.get(currency.upper(), DEFAULT_MINOR_UNITS)


def to_major(cents: int, currency: str) -> Decimal:
    """Minor units as an exact Decimal amount in major units."""
    if isinstance(cents, bool) or not isinstance(cents, int):
        raise TypeError(f"money must be integer cents, got {type(cents).__name__}: {cents!r}")
    return Decimal(cents).scaleb(-minor_units(currency))


def format_money(cents: int, currency: str, *, signed: bool = False, plain: bool = False) -> str:
    """`-123456, "USD"` -> `−$1,234.56` (the report), or with `plain` -> `-USD 1,234.56` (a
    terminal: ISO code first, ASCII minus, so it greps and pastes). `signed` adds `+` to positive
    amounts (for changes)."""
    code = currency.upper()
    digits = minor_units(code)
    body = f"{abs(to_major(cents, code)):,.{digits}f}"
    if plain:
        text, minus = f"{code} {body}", "-"
    else:
        symbol = SYMBOLS.get(code)
        text, minus = (f"{symbol}{body}" if symbol else f"{body} {code}"), MINUS
    if cents < 0:
        return minus + text
    if signed and cents > 0:
        return "+" + text
    return text


def format_per_currency(per_currency: dict[str, int], *, plain: bool = False) -> str:
    """`{"USD": 7300, "GBP": 999}` -> `GBP 9.99 | USD 73.00`: never summed across currencies."""
    return " | ".join(
        format_money(v, c, plain=plain) for c, v in sorted(per_currency.items())
    ) or "none"
