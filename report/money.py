"""Figures as text in the report: money through `models.money` (the one formatter, which knows
each currency's minor units), plus the percent changes and counts only the report shows.
"""

from __future__ import annotations

from decimal import Decimal

from creator_sync.models.money import (
    MINOR_UNITS,
    MINUS,
    SYMBOLS,
    format_money,
    minor_units,
    to_major,
)

__all__ = [
    "MINOR_UNITS",
    "MINUS",
    "SYMBOLS",
    "format_count",
    "format_money",
    "format_percent_change",
    "minor_units",
    "to_major",
]


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
