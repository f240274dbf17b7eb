"""The few figures `creator-sync demo` and the report print first.

"Last 30 days" ends at the as-of date: the one given, else the last day of `revenue_daily`
(which ends at the latest transaction's day in the reporting zone, the build's as-of). A
frozen sandbox or a stale sync therefore still shows its own last 30 days, not an empty window.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from models.adapters import DuckDBAdapter

REQUIRED = ("revenue_daily", "mrr_monthly", "payout_reconciliation", "unpaid_balance")


def headline_figures_from(adapter: Any, as_of: dt.date | None = None) -> dict[str, Any]:
    missing = [m for m in REQUIRED if adapter.columns("analytics", m) is None]
    if missing:
        raise LookupError(
            f"{adapter.label}: analytics.{', analytics.'.join(missing)} not built: "
            "run `creator-sync models` first"
        )
    _, rows = adapter.fetch("select max(date_day) from analytics.revenue_daily")
    end: dt.date | None = as_of or (rows[0][0] if rows else None)
    figures: dict[str, Any] = {
        "as_of_date": end,
        "window_start_date": None,
        "net_revenue_last_30_days_in_cents": {},
        "mrr_month": None,
        "mrr_in_cents": {},
        "active_subscriptions": 0,
        "unreconciled_payouts": 0,
        "unpaid_balance_in_cents": {},
    }
    if end is not None:
        start = end - dt.timedelta(days=29)
        figures["window_start_date"] = start
        _, rows = adapter.fetch(
            "select currency, cast(sum(net_in_cents) as bigint) from analytics.revenue_daily "
            f"where date_day between cast('{start.isoformat()}' as date) "
            f"and cast('{end.isoformat()}' as date) group by currency order by currency"
        )
        figures["net_revenue_last_30_days_in_cents"] = {c: int(v) for c, v in rows}
        month = end.replace(day=1)
        _, rows = adapter.fetch(
            "select currency, cast(sum(mrr_in_cents) as bigint), "
            "cast(sum(active_subscriptions) as bigint) from analytics.mrr_monthly "
            f"where date_month = cast('{month.isoformat()}' as date) "
            "group by currency order by currency"
        )
        figures["mrr_month"] = month
        figures["mrr_in_cents"] = {c: int(v) for c, v, _ in rows}
        figures["active_subscriptions"] = sum(int(n) for _, _, n in rows)
    _, rows = adapter.fetch(
        "select count(*) from analytics.payout_reconciliation "
        "where not is_reconciled and not is_rolled_forward"
    )
    figures["unreconciled_payouts"] = int(rows[0][0])
    _, rows = adapter.fetch(
        "select currency, cast(sum(unpaid_balance_in_cents) as bigint) "
        "from analytics.unpaid_balance group by currency order by currency"
    )
    figures["unpaid_balance_in_cents"] = {c: int(v) for c, v in rows}
    return figures


def headline_figures(duckdb_path: str, as_of: dt.date | None = None) -> dict[str, Any]:
    """Net revenue of the last 30 days and MRR of the as-of month per currency (never summed
    across currencies), and the count of payouts whose amount does not match the rule."""
    adapter = DuckDBAdapter(duckdb_path, read_only=True)
    try:
        return headline_figures_from(adapter, as_of)
    finally:
        adapter.close()


def format_cents(cents: int, currency: str) -> str:
    """`123456, "USD"` -> `USD 1,234.56`, in integer arithmetic (no float ever touches money)."""
    sign = "-" if cents < 0 else ""
    major, minor = divmod(abs(int(cents)), 100)
    return f"{sign}{currency} {major:,}.{minor:02d}"


def format_headline(figures: dict[str, Any]) -> list[str]:
    """The headline figures as the lines `creator-sync demo` prints."""

    def money(per_currency: dict[str, int]) -> str:
        return " | ".join(format_cents(v, c) for c, v in sorted(per_currency.items())) or "none"

    lines = []
    if figures.get("as_of_date") is not None:
        lines.append(
            f"Net revenue, last 30 days ({figures['window_start_date']} to "
            f"{figures['as_of_date']}): {money(figures['net_revenue_last_30_days_in_cents'])}"
        )
        lines.append(
            f"MRR on {figures['as_of_date']}: {money(figures['mrr_in_cents'])} "
            f"from {figures['active_subscriptions']} active subscriptions"
        )
    lines.append(f"Unreconciled payouts: {figures['unreconciled_payouts']}")
    lines.append(f"Settled, not yet paid out: {money(figures['unpaid_balance_in_cents'])}")
    return lines
