"""The few figures `creator-sync models` and `demo` print last, and what they are built on.

"Last 30 days" ends on the last complete reporting day: the as-of date given, else the build's
(the last day of `revenue_daily`: the latest transaction's day in the reporting zone), moved back
a day when the synced data reaches only part of it. A frozen sandbox or an old sync therefore still shows
its own last 30 days, not an empty window, and never a half day.

A figure built on a resource that holds no records is None, with the reason in `unavailable`
(never "0 unreconciled payouts" on payouts that were never loaded). `models/coverage.py` decides
what is missing, partial or stale; the report reads the same.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from models.adapters import DuckDBAdapter
from models.coverage import Coverage, fmt_utc, read_coverage
from models.coverage import stale_after as stale_after_limit

REQUIRED = (
    "revenue_daily",
    "mrr_monthly",
    "payout_reconciliation",
    "unpaid_balance",
    "data_coverage",
    "build_metadata",
)


def _sum_by_currency(adapter: Any, sql: str) -> dict[str, int]:
    _, rows = adapter.fetch(sql)
    return {currency: int(value) for currency, value in rows}


def headline_figures_from(
    adapter: Any,
    as_of: dt.date | None = None,
    *,
    now: dt.datetime | None = None,
    stale_after: dt.timedelta | None = None,
) -> dict[str, Any]:
    """The headline figures from any warehouse adapter; `stale_after` is the staleness limit
    (default: `models.coverage.stale_after()`, from the configuration)."""
    missing = [m for m in REQUIRED if adapter.columns("analytics", m) is None]
    if missing:
        raise LookupError(
            f"{adapter.label}: analytics.{', analytics.'.join(missing)} not built: "
            "run `creator-sync models` first"
        )
    coverage = read_coverage(adapter.fetch)
    window = coverage.window(as_of or coverage.build.as_of_date)
    staleness = coverage.staleness(
        now or dt.datetime.now(dt.UTC), stale_after or stale_after_limit()
    )
    unavailable = {
        figure: reason
        for figure in ("net_revenue", "mrr", "unreconciled_payouts", "unpaid_balance")
        if (reason := coverage.unavailable(figure))
    }
    figures: dict[str, Any] = {
        "as_of_date": window.last_day,
        "figures_through_date": window.end,
        "partial_day": window.partial_day,
        "data_through_at": window.data_through_at,
        "window_start_date": window.start,
        "timezone": coverage.build.timezone,
        "settlement_delay_days": coverage.build.settlement_delay_days,
        "net_revenue_last_30_days_in_cents": None,
        "mrr_month": None,
        "mrr_in_cents": None,
        "active_subscriptions": None,
        "unreconciled_payouts": None,
        "payouts_count": None,
        "unpaid_balance_in_cents": None,
        "unavailable": unavailable,
        "last_sync_at": coverage.last_sync_at,
        "stale": staleness.lines(),
        "coverage": coverage,
    }
    if window.end is not None and "net_revenue" not in unavailable:
        figures["net_revenue_last_30_days_in_cents"] = _sum_by_currency(
            adapter,
            "select currency, cast(sum(net_in_cents) as bigint) from analytics.revenue_daily "
            f"where date_day between cast('{window.start.isoformat()}' as date) "
            f"and cast('{window.end.isoformat()}' as date) group by currency order by currency",
        )
    if window.last_day is not None and "mrr" not in unavailable:
        month = window.last_day.replace(day=1)
        _, rows = adapter.fetch(
            "select currency, cast(sum(mrr_in_cents) as bigint), "
            "cast(sum(active_subscriptions) as bigint) from analytics.mrr_monthly "
            f"where date_month = cast('{month.isoformat()}' as date) "
            "group by currency order by currency"
        )
        figures["mrr_month"] = month
        figures["mrr_in_cents"] = {c: int(v) for c, v, _ in rows}
        figures["active_subscriptions"] = sum(int(n) for _, _, n in rows)
    if "unreconciled_payouts" not in unavailable:
        _, rows = adapter.fetch(
            "select count(*) filter (where not is_reconciled and not is_rolled_forward), count(*) "
            "from analytics.payout_reconciliation"
        )
        figures["unreconciled_payouts"], figures["payouts_count"] = map(int, rows[0])
    if "unpaid_balance" not in unavailable:
        figures["unpaid_balance_in_cents"] = _sum_by_currency(
            adapter,
            "select currency, cast(sum(unpaid_balance_in_cents) as bigint) "
            "from analytics.unpaid_balance group by currency order by currency",
        )
    return figures


def headline_figures(
    duckdb_path: str,
    as_of: dt.date | None = None,
    *,
    now: dt.datetime | None = None,
    stale_after_days: float | None = None,
) -> dict[str, Any]:
    """Net revenue of the last 30 complete days and MRR of the as-of month per currency (never
    summed across currencies), the payouts that do not reconcile and the unpaid balance; each
    None when a resource it is built on was not loaded (`unavailable` says which and why)."""
    limit = stale_after_limit(stale_after_days)
    adapter = DuckDBAdapter(duckdb_path, read_only=True)
    try:
        return headline_figures_from(adapter, as_of, now=now, stale_after=limit)
    finally:
        adapter.close()


def format_cents(cents: int, currency: str) -> str:
    """`123456, "USD"` -> `USD 1,234.56`, in integer arithmetic (no float ever touches money)."""
    sign = "-" if cents < 0 else ""
    major, minor = divmod(abs(int(cents)), 100)
    return f"{sign}{currency} {major:,}.{minor:02d}"


def _money(per_currency: dict[str, int]) -> str:
    return " | ".join(format_cents(v, c) for c, v in sorted(per_currency.items())) or "none"


def _through(figures: dict[str, Any]) -> str:
    """`Figures through D, the last complete day in ZONE (...)`: the date the figures reach,
    worded so that it cannot be mistaken for when the data was synced."""
    line = (
        f"Figures through {figures['figures_through_date']}, the last complete day in "
        f"{figures['timezone']}"
    )
    if figures["partial_day"] is not None:
        line += (
            f" ({figures['partial_day']} is partial: the transactions reach "
            f"{fmt_utc(figures['data_through_at'])})"
        )
    return line


def format_headline(figures: dict[str, Any]) -> list[str]:
    """The headline figures as the lines `creator-sync models` and `demo` print: first what is
    missing or stale, then the figures (or why one is not available), then what they count."""
    coverage: Coverage = figures["coverage"]
    unavailable = figures["unavailable"]
    lines = [r.summary() for r in coverage.problems] + figures["stale"]
    # the reporting days are those of the transactions: without them there are none to state
    dated = figures["figures_through_date"] is not None and "net_revenue" not in unavailable
    if dated:
        lines.append(_through(figures))

    def add(figure: str, label: str, value: str) -> None:
        reason = unavailable.get(figure)
        lines.append(f"{label}: not available ({reason})" if reason else f"{label}: {value}")

    revenue = figures["net_revenue_last_30_days_in_cents"]
    add(
        "net_revenue",
        f"Net revenue, 30 days {figures['window_start_date']} to {figures['figures_through_date']}"
        if dated else "Net revenue, last 30 days",
        _money(revenue or {}),
    )
    add(
        "mrr",
        f"MRR on {figures['as_of_date']}" if figures["as_of_date"] else "MRR",
        f"{_money(figures['mrr_in_cents'] or {})} "
        f"from {figures['active_subscriptions'] or 0} active subscriptions",
    )
    add(
        "unreconciled_payouts",
        "Unreconciled payouts",
        f"{figures['unreconciled_payouts']} of {figures['payouts_count']}",
    )
    add(
        "unpaid_balance",
        "Settled, not yet paid out",
        f"{_money(figures['unpaid_balance_in_cents'] or {})} "
        f"(settlement delay {coverage.build.settlement_delay})",
    )
    last = f"; last sync {fmt_utc(figures['last_sync_at'])}" if figures["last_sync_at"] else ""
    lines.append(f"Built on {coverage.basis()}{last}")
    if note := coverage.a7_note():
        lines.append(f"Note: {note}")
    return lines
