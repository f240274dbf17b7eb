"""The headline figures, computed once (`compute_headline`): `creator-sync models` and `demo`
print them last, and the report shows them as its tiles.

"Last 30 days" ends on the last complete reporting day: the as-of date given, else the build's
(the last day of `revenue_daily`: the latest transaction's day in the reporting zone), moved back
a day when the synced data reaches only part of it. A frozen sandbox or an old sync therefore still shows
its own last 30 days, not an empty window, and never a half day.

A figure built on a resource that holds no records is None, with the reason in `unavailable`
(never "0 unreconciled payouts" on payouts that were never loaded). `models/coverage.py` decides
what is missing, partial or stale; the report reads the same.

The payouts line says how each payout was reconciled: by the platform's own lines (`itemised`)
or, for a payout the platform listed no lines for, by the settlement rule.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from creator_sync.common.duckdb_names import quote_literal
from creator_sync.models.adapters import DuckDBAdapter
from creator_sync.models.coverage import Coverage, Window, fmt_utc, read_coverage
from creator_sync.models.coverage import stale_after as stale_after_limit
from creator_sync.models.money import format_money, format_per_currency

REQUIRED = (
    "revenue_daily",
    "mrr_monthly",
    "payout_reconciliation",
    "unpaid_balance",
    "data_coverage",
    "build_metadata",
)
FIGURES = ("net_revenue", "mrr", "unreconciled_payouts", "unpaid_balance")
# `payout_reconciliation.reconciliation_method`: by the payout's own lines, or by the settlement
# rule when the platform listed none (DECISIONS.md, "Reconciliation").
METHODS = {"itemised": "itemised by their lines", "settlement_rule": "by the settlement rule"}


@dataclass(frozen=True)
class MethodCount:
    """Payouts reconciled one way (`reconciliation_method`), and how many of them reconcile."""

    payouts: int
    reconciled: int


@dataclass(frozen=True)
class Headline:
    """The headline figures, computed once for `creator-sync models`/`demo` and the report.

    Money is per currency (never summed across currencies), in integer minor units. A figure
    whose resources were not loaded stays empty/None and `unavailable` says why. The windows end
    on the last complete reporting day (`window.end`), so an old sync still compares two full
    30-day windows and a partial day never drives a comparison."""

    window: Window
    site_id: str | None
    net_30d: dict[str, int]  # cash, sales tax included (revenue_daily.net_in_cents)
    net_prior_30d: dict[str, int]
    mrr_month: dt.date | None
    mrr: dict[str, int]
    mrr_prior_month: dict[str, int]
    active_subscriptions: dict[str, int]
    unpaid_balance: dict[str, int]
    unreconciled_payouts: int | None = None
    payouts_count: int | None = None
    methods: dict[str, MethodCount] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)
    # revenue excl. tax (revenue_daily.revenue_ex_tax_in_cents): the figure the headline states
    revenue_30d: dict[str, int] = field(default_factory=dict)
    revenue_prior_30d: dict[str, int] = field(default_factory=dict)


def whole_cents(value: Any, where: str) -> int:
    """A whole number of cents from any warehouse (BIGINT, HUGEINT, or the NUMERIC/DECIMAL a
    PostgreSQL `sum` returns); a fractional cent fails loudly instead of being rounded."""
    if value is None:
        return 0
    if isinstance(value, bool):
        raise ValueError(f"{where}: expected integer cents, got a boolean")
    if isinstance(value, int):
        return value
    if isinstance(value, Decimal) and value == value.to_integral_value():
        return int(value)
    raise ValueError(f"{where}: expected integer cents, got {value!r}")


def _date(value: dt.date) -> str:
    return f"cast('{value.isoformat()}' as date)"


def _as_date(value: Any) -> dt.date | None:
    if isinstance(value, dt.datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return aware.astimezone(dt.UTC).date()
    return value


def check_built(adapter: Any) -> None:
    missing = [m for m in REQUIRED if adapter.columns("analytics", m) is None]
    if missing:
        raise LookupError(
            f"{adapter.label}: analytics.{', analytics.'.join(missing)} not built: "
            "run `creator-sync models` first"
        )


def compute_headline(
    fetch: Any,
    coverage: Coverage,
    as_of: dt.date | None = None,
    *,
    site_id: str | None = None,
    has_methods: bool = True,
    has_revenue_ex_tax: bool = True,
) -> Headline:
    """The headline of one build, all sites or one (`site_id`), through any warehouse's
    `fetch(sql) -> (columns, rows)` in DuckDB's dialect (the adapters transpile it).
    `has_methods`: the build has `payout_reconciliation.reconciliation_method`;
    `has_revenue_ex_tax`: `revenue_daily.revenue_ex_tax_in_cents` (else net - tax stands in)."""
    site = "true" if site_id is None else f"site_id = {quote_literal(site_id)}"
    window = coverage.window(as_of or coverage.build.as_of_date)
    unavailable = {f: reason for f in FIGURES if (reason := coverage.unavailable(f))}

    def rows(sql: str) -> list[tuple[Any, ...]]:
        return fetch(sql)[1]

    net_30d: dict[str, int] = {}
    net_prior: dict[str, int] = {}
    revenue_30d: dict[str, int] = {}
    revenue_prior: dict[str, int] = {}
    if window.end is not None and "net_revenue" not in unavailable:
        start, prior_start, end = window.start, window.prior_start, window.end
        where = "analytics.revenue_daily.net_in_cents"
        ex_tax = "revenue_ex_tax_in_cents" if has_revenue_ex_tax else "net_in_cents - tax_in_cents"
        for currency, current, prior, revenue, revenue_before in rows(
            "select currency, "
            f"sum(net_in_cents) filter (where date_day >= {_date(start)}), "
            f"sum(net_in_cents) filter (where date_day < {_date(start)}), "
            f"sum({ex_tax}) filter (where date_day >= {_date(start)}), "
            f"sum({ex_tax}) filter (where date_day < {_date(start)}) "
            f"from analytics.revenue_daily where {site} "
            f"and date_day between {_date(prior_start)} and {_date(end)} "
            "group by currency order by currency"
        ):
            net_30d[currency] = whole_cents(current, where)
            net_prior[currency] = whole_cents(prior, where)
            revenue_30d[currency] = whole_cents(revenue, "analytics.revenue_daily.revenue_ex_tax_in_cents")
            revenue_prior[currency] = whole_cents(
                revenue_before, "analytics.revenue_daily.revenue_ex_tax_in_cents"
            )

    # MRR of the as-of month (the month of the last reporting day); the latest modelled month
    # when there is no reporting day yet.
    mrr_month = window.last_day.replace(day=1) if window.last_day else None
    if mrr_month is None:
        mrr_month = _as_date(rows(f"select max(date_month) from analytics.mrr_monthly where {site}")[0][0])
    mrr: dict[str, int] = {}
    mrr_prior: dict[str, int] = {}
    active: dict[str, int] = {}
    if mrr_month is not None and "mrr" not in unavailable:
        where = "analytics.mrr_monthly.mrr_in_cents"
        for currency, mrr_cents, prior_cents, subscriptions in rows(
            "select currency, sum(mrr_in_cents), "
            # last month's MRR, by the mart's own arithmetic (MRR = previous + movements)
            "sum(mrr_in_cents - new_mrr_in_cents - expansion_mrr_in_cents "
            "- contraction_mrr_in_cents - churned_mrr_in_cents - reactivation_mrr_in_cents), "
            "sum(active_subscriptions) "
            f"from analytics.mrr_monthly where {site} and date_month = {_date(mrr_month)} "
            "group by currency order by currency"
        ):
            mrr[currency] = whole_cents(mrr_cents, where)
            mrr_prior[currency] = whole_cents(prior_cents, where)
            active[currency] = int(subscriptions or 0)

    unpaid: dict[str, int] = {}
    if "unpaid_balance" not in unavailable:
        unpaid = {
            currency: whole_cents(balance, "analytics.unpaid_balance.unpaid_balance_in_cents")
            for currency, balance in rows(
                "select currency, sum(unpaid_balance_in_cents) from analytics.unpaid_balance "
                f"where {site} group by currency order by currency"
            )
        }

    unreconciled = payouts_count = None
    methods: dict[str, MethodCount] = {}
    if "unreconciled_payouts" not in unavailable:
        method = "reconciliation_method" if has_methods else "'settlement_rule'"
        for name, count, reconciled in rows(
            f"select {method}, count(*), "
            "count(*) filter (where is_reconciled or is_rolled_forward) "
            f"from analytics.payout_reconciliation where {site} group by 1 order by 1"
        ):
            methods[str(name)] = MethodCount(int(count), int(reconciled))
        payouts_count = sum(m.payouts for m in methods.values())
        unreconciled = payouts_count - sum(m.reconciled for m in methods.values())

    return Headline(
        window=window,
        site_id=site_id,
        net_30d=net_30d,
        net_prior_30d=net_prior,
        mrr_month=mrr_month,
        mrr=mrr,
        mrr_prior_month=mrr_prior,
        active_subscriptions=active,
        unpaid_balance=unpaid,
        unreconciled_payouts=unreconciled,
        payouts_count=payouts_count,
        methods=methods,
        unavailable=unavailable,
        revenue_30d=revenue_30d,
        revenue_prior_30d=revenue_prior,
    )


def headline_figures_from(
    adapter: Any,
    as_of: dt.date | None = None,
    *,
    now: dt.datetime | None = None,
    stale_after: dt.timedelta | None = None,
) -> dict[str, Any]:
    """The headline figures from any warehouse adapter, as the named values `format_headline`
    prints (`compute_headline` is the computation); `stale_after` is the staleness limit
    (default: `models.coverage.stale_after()`, from the configuration)."""
    check_built(adapter)
    coverage = read_coverage(adapter.fetch)
    columns = adapter.columns("analytics", "payout_reconciliation") or {}
    revenue_columns = adapter.columns("analytics", "revenue_daily") or {}
    headline = compute_headline(
        adapter.fetch, coverage, as_of, has_methods="reconciliation_method" in columns,
        has_revenue_ex_tax="revenue_ex_tax_in_cents" in revenue_columns,
    )
    return figures_of(headline, coverage, now=now, stale_after=stale_after)


def figures_of(
    headline: Headline,
    coverage: Coverage,
    *,
    now: dt.datetime | None = None,
    stale_after: dt.timedelta | None = None,
) -> dict[str, Any]:
    """`headline` as named values, None where a figure is not available."""
    window, unavailable = headline.window, headline.unavailable
    staleness = coverage.staleness(
        now or dt.datetime.now(dt.UTC), stale_after or stale_after_limit()
    )

    def given(figure: str, value: Any) -> Any:
        return None if figure in unavailable else value

    return {
        "as_of_date": window.last_day,
        "figures_through_date": window.end,
        "partial_day": window.partial_day,
        "data_through_at": window.data_through_at,
        "window_start_date": window.start,
        "timezone": coverage.build.timezone,
        "settlement_delay_days": coverage.build.settlement_delay_days,
        # revenue excl. tax: what the headline states; the cash (tax included) beside it
        "revenue_ex_tax_last_30_days_in_cents": given(
            "net_revenue", headline.revenue_30d if window.end is not None else None
        ),
        "net_revenue_last_30_days_in_cents": given(
            "net_revenue", headline.net_30d if window.end is not None else None
        ),
        "mrr_month": given("mrr", headline.mrr_month),
        "mrr_in_cents": given("mrr", headline.mrr if headline.mrr_month else None),
        "active_subscriptions": given("mrr", sum(headline.active_subscriptions.values())),
        "unreconciled_payouts": headline.unreconciled_payouts,
        "payouts_count": headline.payouts_count,
        "reconciliation_methods": given("unreconciled_payouts", headline.methods),
        "unpaid_balance_in_cents": given("unpaid_balance", headline.unpaid_balance),
        "unavailable": unavailable,
        "last_sync_at": coverage.last_sync_at,
        "stale": staleness.lines(),
        "coverage": coverage,
        "headline": headline,
    }


def headline_figures(
    duckdb_path: str,
    as_of: dt.date | None = None,
    *,
    now: dt.datetime | None = None,
    stale_after_days: float | None = None,
) -> dict[str, Any]:
    """Revenue excl. tax (and net cash, tax included) of the last 30 complete days and MRR of the as-of month per currency (never
    summed across currencies), the payouts that do not reconcile (and how each was reconciled)
    and the unpaid balance; each None when a resource it is built on was not loaded
    (`unavailable` says which and why)."""
    limit = stale_after_limit(stale_after_days)
    adapter = DuckDBAdapter(duckdb_path, read_only=True)
    try:
        return headline_figures_from(adapter, as_of, now=now, stale_after=limit)
    finally:
        adapter.close()


def format_cents(cents: int, currency: str) -> str:
    """`123456, "USD"` -> `USD 1,234.56`, `1500, "JPY"` -> `JPY 1,500`: the terminal's form of
    `models.money.format_money` (integer arithmetic, the currency's own minor units)."""
    return format_money(cents, currency, plain=True)


def _money(per_currency: dict[str, int]) -> str:
    return format_per_currency(per_currency, plain=True)


def method_split(methods: dict[str, MethodCount]) -> str:
    """`712 itemised by their lines (710 reconcile), 5 by the settlement rule (5 reconcile)`."""
    parts = [
        f"{m.payouts:,} {METHODS.get(name, name)} ({m.reconciled:,} reconcile)"
        for name, m in sorted(methods.items())  # itemised first: the platform's own books
    ]
    return ", ".join(parts) or "no payouts"


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

    revenue = figures["revenue_ex_tax_last_30_days_in_cents"]
    add(
        "net_revenue",
        f"Revenue excl. tax, 30 days {figures['window_start_date']} to "
        f"{figures['figures_through_date']}" if dated else "Revenue excl. tax, last 30 days",
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
    methods = figures.get("reconciliation_methods")
    if methods is not None and figures["payouts_count"]:
        lines.append(f"Reconciliation method: {method_split(methods)}")
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
