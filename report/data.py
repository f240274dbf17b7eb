"""Read everything the report shows out of the `analytics` marts and the raw dataset, through
any warehouse adapter the models build on (`models.adapters`: DuckDB or PostgreSQL).

All figures stay integer cents here; the page formats them. Sums happen in the warehouse (exact
integers) and are checked to be whole cents on the way out, so a mart that ever produced a
fractional cent fails loudly instead of being rounded into a tile. The headline tiles are
`models.headline.compute_headline`, the same computation `creator-sync models` prints.

The SQL is DuckDB's dialect with values written as literals (the adapter transpiles it for
PostgreSQL), so one query serves every warehouse.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from creator_sync.common.duckdb_names import quote_literal
from creator_sync.common.settings import DEFAULT_DATASET, BadSetting
from creator_sync.models.coverage import Coverage, read_coverage
from creator_sync.models.coverage import stale_after as stale_after_limit
from creator_sync.models.headline import Headline, compute_headline, whole_cents
from creator_sync.report.errors import ReportError
from creator_sync.report.freshness import Freshness, read_freshness, read_site_names
from creator_sync.report.marts import PAYOUT_ITEM_COLUMNS, PAYOUT_LINE_COLUMNS, SCHEMA, check_marts

__all__ = ["Headline", "ReportData", "load_report_data"]

TOP_OFFERS = 10
NO_OFFER = "No offer (payments of orders, money no offer is credited with)"
NO_PRODUCT = "No product (money no product stands behind)"
TOP_PRODUCTS = 10
SUMMARY_MONTHS = 12  # the monthly summary's last months
# `mrr_movements.churn_kind`, in the order the report lists them
CHURN_KINDS = ("voluntary", "payment_failed", "refunded_or_disputed", "unknown")
# The unreconciled payouts listed with their lines: the latest ones, the ones finance works on.
LATEST_UNRECONCILED = 20
# Payouts whose money never left: their funds roll into the next payout (issue 4).
NOT_SENT_STATUSES = ("failed", "canceled")


@dataclass(frozen=True)
class RevenueDay:
    date_day: dt.date
    gross: int
    refunds: int
    disputes: int
    net: int


@dataclass(frozen=True)
class MrrMonth:
    date_month: dt.date
    mrr: int
    new: int
    expansion: int
    contraction: int
    churned: int
    reactivation: int
    active_subscriptions: int


@dataclass(frozen=True)
class Payout:
    payout_id: str
    site_id: str
    currency: str
    status: str
    initiated_on: dt.date
    arrival_on: dt.date | None
    amount: int
    expected: int
    difference: int
    transactions_count: int
    is_reconciled: bool
    # `itemised` (by the payout's lines) or `settlement_rule` (no lines: the rule's figures)
    method: str = "settlement_rule"
    lines_count: int = 0
    matched_lines: int = 0
    unmatched_lines: int = 0
    fees: int | None = None
    adjustments: int | None = None  # None without lines: no figure without data
    unexplained: int | None = None
    is_rolled_forward: bool = False


@dataclass(frozen=True)
class PayoutItems:
    """The rows under one payout, `columns` in display order: its lines (PAYOUT_LINE_COLUMNS)
    when itemised, else the transactions the rule assigns (PAYOUT_ITEM_COLUMNS)."""

    columns: list[str]
    rows: list[tuple[Any, ...]]


@dataclass(frozen=True)
class DelayMonth:
    """One row of `analytics.settlement_delay`: observed days from a line to its payout."""

    site_id: str
    provider: str
    date_month: dt.date
    lines_count: int
    p50: int
    p95: int
    max: int


@dataclass(frozen=True)
class ScopeRow:
    """One processor and currency of `analytics.payout_scope`: the revenue the payouts cover
    (None when payouts or transactions are incomplete) and the revenue they cannot."""

    provider: str
    currency: str
    covered: int | None
    not_covered: int
    reason: str


@dataclass(frozen=True)
class Offer:
    """One offer's revenue in a month, all sites added (`offer_revenue_monthly`)."""

    offer_id: str
    site_id: str
    title: str
    revenue_ex_tax: int
    net: int
    transactions: int
    is_unattributed: bool


@dataclass(frozen=True)
class SummaryMonth:
    """One month of the per-currency summary, all sites added: `revenue_monthly` (money),
    `saas_metrics_monthly` (ARR) and `mrr_monthly`'s components (NRR, from opening MRR, summed
    across sites before dividing: a ratio of sums, never an average of ratios)."""

    date_month: dt.date
    revenue_ex_tax: int
    tax: int
    refunds: int
    disputes: int
    known_fees: int
    fee_unknown_transactions: int
    transactions: int
    is_partial: bool
    arr: int | None = None
    opening_mrr: int | None = None
    retained_mrr: int | None = None  # opening + expansion + contraction + churn (signed)

    @property
    def fees(self) -> int | None:
        """All fees, only when every transaction of the month stated one."""
        return self.known_fees if self.fee_unknown_transactions == 0 else None

    @property
    def nrr(self) -> Decimal | None:
        """Net MRR retention as an exact ratio, None without opening MRR."""
        if not self.opening_mrr or self.retained_mrr is None:
            return None
        return Decimal(self.retained_mrr) / Decimal(self.opening_mrr)


@dataclass(frozen=True)
class ChurnKinds:
    """A month's churned MRR per `churn_kind` (positive cents) in one currency."""

    date_month: dt.date
    by_kind: dict[str, int]
    customers: dict[str, int]
    is_partial: bool

    @property
    def total(self) -> int:
        return sum(self.by_kind.values())


@dataclass(frozen=True)
class ProductRevenue:
    product_id: str
    site_id: str
    title: str
    revenue_ex_tax: int
    transactions: int
    is_unattributed: bool


@dataclass
class ReportData:
    site_id: str | None
    since: dt.date | None
    headline: Headline
    revenue: dict[str, list[RevenueDay]]
    mrr: dict[str, list[MrrMonth]]
    payouts: dict[str, list[Payout]]
    coverage: Coverage
    stale_after: dt.timedelta
    unreconciled_items: dict[str, PayoutItems] = field(default_factory=dict)
    offers: dict[str, list[Offer]] = field(default_factory=dict)
    freshness: Freshness | None = None
    site_names: dict[str, str] = field(default_factory=dict)
    settlement_delay: list[DelayMonth] = field(default_factory=list)
    payout_scope: list[ScopeRow] = field(default_factory=list)
    # the last month every site's data covers to its end (None before one ends)
    last_full_month: dt.date | None = None
    summary: dict[str, list[SummaryMonth]] = field(default_factory=dict)
    churn: dict[str, list[ChurnKinds]] = field(default_factory=dict)
    products: dict[str, list[ProductRevenue]] = field(default_factory=dict)

    def site_label(self, site_id: str) -> str:
        return self.site_names.get(site_id, site_id)

    def several_sites(self) -> bool:
        """Offers and products are labelled with their site when the report covers more than
        one (two sites can sell products of the same name)."""
        if self.site_id is not None:
            return False
        sites = {o.site_id for offers in self.offers.values() for o in offers}
        sites |= {p.site_id for products in self.products.values() for p in products}
        return len(sites | set(self.site_names)) > 1

    def chart_label(self, title: str, site_id: str, unattributed: bool) -> str:
        """A bar's name, with its site when there are several; the site's words are joined by
        no-break spaces, so a wrapped label never splits a site's name."""
        if unattributed or not self.several_sites():
            return title
        return title + "\u00a0·\u00a0" + self.site_label(site_id).replace(" ", "\u00a0")

    def latest_unreconciled(self) -> list[Payout]:
        """The latest LATEST_UNRECONCILED payouts that do not reconcile, newest first."""
        open_ = [p for rows in self.payouts.values() for p in rows if not p.is_reconciled]
        open_.sort(key=lambda p: (p.initiated_on, p.payout_id), reverse=True)
        return open_[:LATEST_UNRECONCILED]


def cents(value: Any, where: str) -> int:
    """A whole number of cents (BIGINT, HUGEINT, or an integral DECIMAL/NUMERIC)."""
    try:
        return whole_cents(value, where)
    except ValueError as exc:
        raise ReportError(str(exc)) from None


def _as_date(value: Any) -> dt.date | None:
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return aware.astimezone(dt.UTC).date()
    return value


def _optional_cents(value: Any, where: str) -> int | None:
    return None if value is None else cents(value, where)


def _date(value: dt.date) -> str:
    return f"cast('{value.isoformat()}' as date)"


class _Reader:
    """Runs the report's queries with one site filter and one start date."""

    def __init__(self, adapter: Any, site_id: str | None, since: dt.date | None):
        self.adapter = adapter
        self.site_id = site_id
        self.since = since

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        return self.adapter.fetch(sql)[1]

    def site_clause(self, alias: str = "") -> str:
        prefix = f"{alias}." if alias else ""
        if self.site_id is None:
            return "true"
        return f"{prefix}site_id = {quote_literal(self.site_id)}"

    # ---- charts ---------------------------------------------------------------------------

    def revenue(self) -> dict[str, list[RevenueDay]]:
        since = f"date_day >= {_date(self.since)}" if self.since else "true"
        out: dict[str, list[RevenueDay]] = defaultdict(list)
        for currency, day, gross, refunds, disputes, net in self.rows(
            f"""
            select currency, date_day, sum(gross_in_cents), sum(refunds_in_cents),
                   sum(disputes_in_cents), sum(net_in_cents)
            from {SCHEMA}.revenue_daily where {self.site_clause()} and {since}
            group by currency, date_day order by currency, date_day
            """
        ):
            where = f"analytics.revenue_daily ({currency}, {day})"
            out[currency].append(
                RevenueDay(
                    _as_date(day),
                    cents(gross, where),
                    cents(refunds, where),
                    cents(disputes, where),
                    cents(net, where),
                )
            )
        return dict(out)

    def mrr(self) -> dict[str, list[MrrMonth]]:
        since = (
            f"date_month >= cast(date_trunc('month', {_date(self.since)}) as date)"
            if self.since
            else "true"
        )
        out: dict[str, list[MrrMonth]] = defaultdict(list)
        for row in self.rows(
            f"""
            select currency, date_month, sum(mrr_in_cents), sum(new_mrr_in_cents),
                   sum(expansion_mrr_in_cents), sum(contraction_mrr_in_cents),
                   sum(churned_mrr_in_cents), sum(reactivation_mrr_in_cents),
                   sum(active_subscriptions)
            from {SCHEMA}.mrr_monthly where {self.site_clause()} and {since}
            group by currency, date_month order by currency, date_month
            """
        ):
            currency, month = row[0], _as_date(row[1])
            where = f"analytics.mrr_monthly ({currency}, {month})"
            money = [cents(value, where) for value in row[2:8]]
            out[currency].append(MrrMonth(month, *money, active_subscriptions=int(row[8] or 0)))
        return dict(out)

    def payouts(self) -> dict[str, list[Payout]]:
        since = f"p.initiated_at >= {_date(self.since)}" if self.since else "true"
        out: dict[str, list[Payout]] = defaultdict(list)
        for row in self.rows(
            f"""
            select p.payout_id, p.site_id, p.currency, lower(p.status), p.initiated_at,
                   p.estimated_arrival_at, p.amount_in_cents, r.expected_amount_in_cents,
                   r.difference_in_cents, r.transactions_count, r.is_reconciled,
                   r.reconciliation_method, r.lines_count, r.matched_lines_count,
                   r.unmatched_lines_count, r.fees_in_cents, r.adjustments_in_cents,
                   r.unexplained_in_cents, r.is_rolled_forward
            from {SCHEMA}.fct_payouts as p
            left join {SCHEMA}.payout_reconciliation as r on r.payout_id = p.payout_id
            where {self.site_clause("p")} and {since}
            order by p.currency, p.initiated_at, p.payout_id
            """
        ):
            payout_id = str(row[0])
            where = f"analytics.fct_payouts/payout_reconciliation (payout {payout_id})"
            amount = cents(row[6], where)
            expected = cents(row[7], where)
            # No reconciliation row means nothing was matched to it: all of it is a difference.
            difference = cents(row[8], where) if row[8] is not None else amount - expected
            out[row[2]].append(
                Payout(
                    payout_id=payout_id,
                    site_id=str(row[1]),
                    currency=row[2],
                    status=row[3],
                    initiated_on=_as_date(row[4]),
                    arrival_on=_as_date(row[5]),
                    amount=amount,
                    expected=expected,
                    difference=difference,
                    transactions_count=int(row[9] or 0),
                    is_reconciled=bool(row[10]),  # NULL (no row) is listed, never hidden
                    method=str(row[11] or "settlement_rule"),
                    lines_count=int(row[12] or 0),
                    matched_lines=int(row[13] or 0),
                    unmatched_lines=int(row[14] or 0),
                    fees=_optional_cents(row[15], where),
                    adjustments=_optional_cents(row[16], where),
                    unexplained=_optional_cents(row[17], where),
                    is_rolled_forward=bool(row[18]),
                )
            )
        return dict(out)

    def _grouped(
        self, mart: str, columns: list[str], payout_ids: list[str], order: str
    ) -> dict[str, PayoutItems]:
        if not payout_ids:
            return {}
        ids = ", ".join(quote_literal(pid) for pid in payout_ids)
        grouped: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
        for payout_id, *values in self.rows(
            f"select payout_id, {', '.join(columns)} from {SCHEMA}.{mart} "
            f"where payout_id in ({ids}) order by payout_id, {order}"
        ):
            grouped[str(payout_id)].append(tuple(values))
        return {pid: PayoutItems(list(columns), grouped.get(pid, [])) for pid in payout_ids}

    def payout_items(self, payouts: list[Payout]) -> dict[str, PayoutItems]:
        """Under each payout, its lines (matched or not, with the rule) when it was itemised;
        the transactions the settlement rule assigns to it otherwise."""
        itemised = [p.payout_id for p in payouts if p.method == "itemised"]
        by_rule = [p.payout_id for p in payouts if p.method != "itemised"]
        return {
            **self._grouped(
                "payout_transactions", list(PAYOUT_ITEM_COLUMNS), by_rule,
                "transaction_created_at, transaction_id",
            ),
            **self._grouped("fct_payout_lines", list(PAYOUT_LINE_COLUMNS), itemised, "line_number"),
        }

    def settlement_delay(self) -> list[DelayMonth]:
        since = (
            f"date_month >= cast(date_trunc('month', {_date(self.since)}) as date)"
            if self.since
            else "true"
        )
        return [
            DelayMonth(str(site), str(provider), _as_date(month), int(n), int(p50), int(p95),
                       int(high))
            for site, provider, month, n, p50, p95, high in self.rows(
                f"""
                select site_id, provider, date_month, lines_count, p50_delay_days,
                       p95_delay_days, max_delay_days
                from {SCHEMA}.settlement_delay where {self.site_clause()} and {since}
                order by site_id, provider, date_month
                """
            )
        ]

    def payout_scope(self) -> list[ScopeRow]:
        out = []
        for provider, currency, covered, not_covered, reason in self.rows(
            f"""
            select provider, currency, sum(covered_net_in_cents), sum(not_covered_net_in_cents),
                   min(coverage_reason)
            from {SCHEMA}.payout_scope where {self.site_clause()}
            group by provider, currency order by provider, currency
            """
        ):
            where = f"analytics.payout_scope ({provider}, {currency})"
            out.append(ScopeRow(str(provider), str(currency), _optional_cents(covered, where),
                                cents(not_covered, where), str(reason)))
        return out

    # ---- the monthly figures (issue 39) ----------------------------------------------------

    def last_full_month(self) -> dt.date | None:
        """The newest month no site's data ends inside (`revenue_monthly.is_partial_month`)."""
        (month,) = self.rows(
            f"""
            select max(date_month) from (
                select date_month from {SCHEMA}.revenue_monthly where {self.site_clause()}
                group by date_month having not bool_or(is_partial_month)
            ) as full_months
            """
        )[0]
        return _as_date(month)

    def summary(self) -> dict[str, list[SummaryMonth]]:
        """Per currency and month, all sites added: revenue_monthly's money, ARR from
        saas_metrics_monthly, and NRR's two sums from mrr_monthly's components."""
        site = self.site_clause()
        out: dict[str, list[SummaryMonth]] = defaultdict(list)
        for row in self.rows(
            f"""
            with revenue as (
                select currency, date_month, sum(revenue_ex_tax_in_cents) as revenue_ex_tax,
                       sum(tax_in_cents) as tax, sum(refunds_in_cents) as refunds,
                       sum(disputes_in_cents) as disputes, sum(known_fees_in_cents) as known_fees,
                       sum(fee_unknown_transactions_count) as fee_unknown,
                       sum(transactions_count) as transactions,
                       bool_or(is_partial_month) as is_partial
                from {SCHEMA}.revenue_monthly where {site} group by currency, date_month
            ),
            arr as (
                select currency, date_month, sum(arr_in_cents) as arr
                from {SCHEMA}.saas_metrics_monthly where {site} group by currency, date_month
            ),
            retention as (
                select currency, date_month, sum(previous_mrr_in_cents) as opening,
                       sum(previous_mrr_in_cents + expansion_mrr_in_cents
                           + contraction_mrr_in_cents + churned_mrr_in_cents) as retained
                from {SCHEMA}.mrr_monthly where {site} group by currency, date_month
            )
            select revenue.currency, revenue.date_month, revenue_ex_tax, tax, refunds, disputes,
                   known_fees, fee_unknown, transactions, is_partial, arr, opening, retained
            from revenue
            left join arr
                on arr.currency = revenue.currency and arr.date_month = revenue.date_month
            left join retention
                on retention.currency = revenue.currency
                and retention.date_month = revenue.date_month
            order by revenue.currency, revenue.date_month
            """
        ):
            currency, month = str(row[0]), _as_date(row[1])
            where = f"analytics.revenue_monthly/saas_metrics_monthly ({currency}, {month})"
            money = [cents(value or 0, where) for value in row[2:7]]
            out[currency].append(
                SummaryMonth(
                    month, *money,
                    fee_unknown_transactions=int(row[7] or 0),
                    transactions=int(row[8] or 0),
                    is_partial=bool(row[9]),
                    arr=_optional_cents(row[10], where),
                    opening_mrr=_optional_cents(row[11], where),
                    retained_mrr=_optional_cents(row[12], where),
                )
            )
        return dict(out)

    def churn(self, months: list[dt.date]) -> dict[str, list[ChurnKinds]]:
        """Churned MRR per currency, month and kind (`mrr_movements`), for `months`."""
        if not months:
            return {}
        listed = ", ".join(_date(m) for m in months)
        found: dict[tuple[str, dt.date], tuple[dict[str, int], dict[str, int], bool]] = {}
        for currency, month, kind, churned, customers, partial in self.rows(
            f"""
            select currency, date_month, coalesce(churn_kind, 'unknown'),
                   -sum(mrr_change_in_cents), count(distinct customer_id),
                   bool_or(is_partial_month)
            from {SCHEMA}.mrr_movements
            where {self.site_clause()} and movement = 'churn' and date_month in ({listed})
            group by currency, date_month, coalesce(churn_kind, 'unknown')
            order by currency, date_month
            """
        ):
            month = _as_date(month)
            by_kind, counts, _ = found.setdefault((str(currency), month), ({}, {}, False))
            by_kind[str(kind)] = cents(churned, f"analytics.mrr_movements ({currency}, {month})")
            counts[str(kind)] = int(customers)
            found[(str(currency), month)] = (by_kind, counts, bool(partial))
        out: dict[str, list[ChurnKinds]] = defaultdict(list)
        for (currency, month), (by_kind, counts, partial) in sorted(found.items()):
            out[currency].append(ChurnKinds(month, by_kind, counts, partial))
        return dict(out)

    def offers(self, month: dt.date | None) -> dict[str, list[Offer]]:
        """The TOP_OFFERS offers per currency by revenue excl. tax in `month`, all sites added
        (`offer_revenue_monthly`); money no offer stands behind is its own, named row."""
        if month is None:
            return {}
        out: dict[str, list[Offer]] = defaultdict(list)
        for currency, key, site_id, title, revenue, net, transactions, unattributed in self.rows(
            f"""
            select currency, offer_key, site_id, offer_title, revenue, net, transactions,
                   unattributed
            from (
                select currency, offer_key, min(site_id) as site_id,
                       min(offer_title) as offer_title,
                       sum(revenue_ex_tax_in_cents) as revenue, sum(net_in_cents) as net,
                       sum(transactions_count) as transactions,
                       bool_or(is_unattributed) as unattributed,
                       row_number() over (
                           partition by currency
                           order by sum(revenue_ex_tax_in_cents) desc, offer_key
                       ) as offer_rank
                from {SCHEMA}.offer_revenue_monthly
                where {self.site_clause()} and date_month = {_date(month)}
                group by currency, offer_key
            ) as ranked
            where offer_rank <= {TOP_OFFERS}
            order by currency, revenue desc, offer_key
            """
        ):
            where = f"analytics.offer_revenue_monthly (offer {key}, {month})"
            out[str(currency)].append(
                Offer(
                    offer_id="" if unattributed else str(key),
                    site_id=str(site_id),
                    title=NO_OFFER if unattributed else (title or f"offer {key}"),
                    revenue_ex_tax=cents(revenue, where),
                    net=cents(net, where),
                    transactions=int(transactions or 0),
                    is_unattributed=bool(unattributed),
                )
            )
        return dict(out)

    def products(self, month: dt.date | None) -> dict[str, list[ProductRevenue]]:
        """Every product's revenue excl. tax in `month` per currency, all sites added, best
        first (`product_revenue_monthly`); the page shows the top and adds up the rest."""
        if month is None:
            return {}
        out: dict[str, list[ProductRevenue]] = defaultdict(list)
        for currency, product_id, site_id, title, revenue, transactions, unattributed in self.rows(
            f"""
            select currency, product_id, min(site_id), min(product_title),
                   sum(revenue_ex_tax_in_cents),
                   sum(transactions_count), bool_or(is_unattributed)
            from {SCHEMA}.product_revenue_monthly
            where {self.site_clause()} and date_month = {_date(month)}
            group by currency, product_id
            order by currency, sum(revenue_ex_tax_in_cents) desc, product_id
            """
        ):
            where = f"analytics.product_revenue_monthly (product {product_id}, {month})"
            out[str(currency)].append(
                ProductRevenue(
                    product_id="" if unattributed else str(product_id),
                    site_id=str(site_id),
                    title=NO_PRODUCT if unattributed else (title or f"product {product_id}"),
                    revenue_ex_tax=cents(revenue, where),
                    transactions=int(transactions or 0),
                    is_unattributed=bool(unattributed),
                )
            )
        return dict(out)


def load_report_data(
    adapter: Any,
    *,
    site_id: str | None = None,
    since: dt.date | None = None,
    dataset: str = DEFAULT_DATASET,
    stale_after: dt.timedelta | None = None,
) -> ReportData:
    """Everything the page shows, read through a warehouse adapter (`models.adapters`), or a
    ReportError naming the missing mart/column/site. `stale_after` is the staleness limit
    (default: `models.coverage.stale_after()`)."""
    label = adapter.label
    check_marts(adapter)
    coverage = read_coverage(adapter.fetch)
    reader = _Reader(adapter, site_id, since)
    if site_id is not None:
        known = reader.rows(
            f"select count(*) from {SCHEMA}.revenue_daily where {reader.site_clause()}"
        )[0][0]
        if not known:
            sites = [
                s for (s,) in reader.rows(
                    f"select distinct site_id from {SCHEMA}.revenue_daily order by 1"
                )
            ]
            raise BadSetting(  # a usage error (exit 2), as `sync --site-id` gives
                f"{label}: site {site_id!r} has no rows in {SCHEMA}.revenue_daily; the sites it "
                f"has: {', '.join(map(str, sites)) or 'none'}", "flag=--site-id")
    try:
        # a warehouse built before revenue excl. tax existed: net - tax stands in
        revenue_columns = adapter.columns(SCHEMA, "revenue_daily") or {}
        headline = compute_headline(
            adapter.fetch, coverage, site_id=site_id,
            has_revenue_ex_tax="revenue_ex_tax_in_cents" in revenue_columns,
        )
    except ValueError as exc:
        raise ReportError(str(exc)) from None
    payouts = reader.payouts()
    data = ReportData(
        site_id=site_id,
        since=since,
        headline=headline,
        revenue=reader.revenue(),
        mrr=reader.mrr(),
        payouts=payouts,
        freshness=read_freshness(adapter, dataset),
        site_names=read_site_names(adapter, dataset),
        settlement_delay=reader.settlement_delay(),
        payout_scope=reader.payout_scope(),
        coverage=coverage,
        stale_after=stale_after or stale_after_limit(),
    )
    data.unreconciled_items = reader.payout_items(data.latest_unreconciled())
    data.last_full_month = reader.last_full_month()
    data.summary = {
        currency: months if since else months[-SUMMARY_MONTHS:]
        for currency, months in reader.summary().items()
    }
    if since:
        data.summary = {
            c: [m for m in months if m.date_month >= since.replace(day=1)]
            for c, months in data.summary.items()
        }
    shown = sorted({m.date_month for months in data.summary.values() for m in months})
    data.churn = reader.churn(shown)
    data.offers = reader.offers(data.last_full_month)
    data.products = reader.products(data.last_full_month)
    return data
