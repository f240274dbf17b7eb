"""Read everything the report shows out of the `analytics` marts and the raw dataset.

All figures stay integer cents here; the page formats them. Sums happen in DuckDB (exact
integers) and are checked to be whole cents on the way out, so a mart that ever produced a
fractional cent fails loudly instead of being rounded into a tile.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import duckdb

from models.build_info import Fetch
from models.coverage import Coverage, Window, read_coverage
from models.coverage import stale_after as stale_after_limit
from report.errors import ReportError
from report.freshness import Freshness, read_freshness, read_site_names
from report.marts import PAYOUT_ITEM_COLUMNS, SCHEMA, check_marts

TOP_OFFERS = 10
# Payouts whose money never left: their funds roll into the next payout (issue 4).
NOT_SENT_STATUSES = ("failed", "canceled")


@dataclass(frozen=True)
class Headline:
    """The tiles. The windows end on the last complete day of `revenue_daily` (`window.end`),
    not on the wall clock, so a report on an old sync still compares two full 30-day windows,
    and a last day the data reaches only part of never drives a comparison. `unavailable`
    names each figure whose resources were not loaded, and why (models/coverage.py)."""

    window: Window
    net_30d: dict[str, int]
    net_prior_30d: dict[str, int]
    mrr_month: dt.date | None
    mrr: dict[str, int]
    mrr_prior_month: dict[str, int]
    active_subscriptions: dict[str, int]
    unpaid_balance: dict[str, int]
    unavailable: dict[str, str] = field(default_factory=dict)


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


@dataclass(frozen=True)
class PayoutItems:
    """The itemised transactions of one payout: `columns` are PAYOUT_ITEM_COLUMNS, in order."""

    columns: list[str]
    rows: list[tuple[Any, ...]]


@dataclass(frozen=True)
class Offer:
    offer_id: str
    site_id: str
    title: str
    net: int
    purchases: int
    customers: int
    is_deleted: bool


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

    def site_label(self, site_id: str) -> str:
        return self.site_names.get(site_id, site_id)


def cents(value: Any, where: str) -> int:
    """A whole number of cents from DuckDB (BIGINT, HUGEINT or an integral DECIMAL)."""
    if value is None:
        return 0
    if isinstance(value, bool):
        raise ReportError(f"{where}: expected integer cents, got a boolean")
    if isinstance(value, int):
        return value
    if isinstance(value, Decimal) and value == value.to_integral_value():
        return int(value)
    raise ReportError(f"{where}: expected integer cents, got {value!r}")


def _as_date(value: Any) -> dt.date | None:
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return aware.astimezone(dt.UTC).date()
    return value


class _Reader:
    """Runs the report's queries with one site filter and one start date."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        site_id: str | None,
        since: dt.date | None,
        coverage: Coverage,
    ):
        self.con = con
        self.site_id = site_id
        self.since = since
        self.coverage = coverage

    def rows(self, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
        return self.con.execute(sql, params or []).fetchall()

    def site_clause(self, alias: str = "") -> tuple[str, list[Any]]:
        prefix = f"{alias}." if alias else ""
        if self.site_id is None:
            return "TRUE", []
        return f"{prefix}site_id = ?", [self.site_id]

    # ---- headline tiles -------------------------------------------------------------------

    def headline(self) -> Headline:
        site, params = self.site_clause()
        (last_day,) = self.rows(
            f"SELECT max(date_day) FROM {SCHEMA}.revenue_daily WHERE {site}", params
        )[0]
        window = self.coverage.window(last_day)
        unavailable = {
            figure: reason
            for figure in ("net_revenue", "mrr", "unpaid_balance")
            if (reason := self.coverage.unavailable(figure))
        }
        net_30d: dict[str, int] = {}
        net_prior: dict[str, int] = {}
        if window.end is not None:
            start, prior_start, as_of = window.start, window.prior_start, window.end
            for currency, current, prior in self.rows(
                f"""
                SELECT currency,
                       sum(net_in_cents) FILTER (WHERE date_day >= ?),
                       sum(net_in_cents) FILTER (WHERE date_day < ?)
                FROM {SCHEMA}.revenue_daily
                WHERE {site} AND date_day BETWEEN ? AND ?
                GROUP BY currency ORDER BY currency
                """,
                [start, start, *params, prior_start, as_of],
            ):
                net_30d[currency] = cents(current, "analytics.revenue_daily.net_in_cents")
                net_prior[currency] = cents(prior, "analytics.revenue_daily.net_in_cents")

        # MRR of the as-of month (the month of the last reported day), as `creator-sync demo`
        # prints it; the latest modelled month if there is no revenue yet.
        if last_day is not None:
            mrr_month = last_day.replace(day=1)
        else:
            (mrr_month,) = self.rows(
                f"SELECT max(date_month) FROM {SCHEMA}.mrr_monthly WHERE {site}", params
            )[0]
        mrr: dict[str, int] = {}
        mrr_prior: dict[str, int] = {}
        active: dict[str, int] = {}
        for currency, mrr_cents, prior_cents, subscriptions in self.rows(
            f"""
            SELECT currency, sum(mrr_in_cents),
                   -- last month's MRR, by the mart's own arithmetic (MRR = previous + movements)
                   sum(mrr_in_cents - new_mrr_in_cents - expansion_mrr_in_cents
                       - contraction_mrr_in_cents - churned_mrr_in_cents
                       - reactivation_mrr_in_cents),
                   sum(active_subscriptions)
            FROM {SCHEMA}.mrr_monthly WHERE {site} AND date_month = ?
            GROUP BY currency ORDER BY currency
            """,
            [*params, mrr_month],
        ):
            mrr[currency] = cents(mrr_cents, "analytics.mrr_monthly.mrr_in_cents")
            mrr_prior[currency] = cents(prior_cents, "analytics.mrr_monthly.mrr_in_cents")
            active[currency] = int(subscriptions or 0)

        unpaid = {
            currency: cents(balance, "analytics.unpaid_balance.unpaid_balance_in_cents")
            for currency, balance in self.rows(
                f"""
                SELECT currency, sum(unpaid_balance_in_cents) FROM {SCHEMA}.unpaid_balance
                WHERE {site} GROUP BY currency ORDER BY currency
                """,
                params,
            )
        }
        return Headline(
            window=window,
            net_30d=net_30d,
            net_prior_30d=net_prior,
            mrr_month=_as_date(mrr_month),
            mrr=mrr,
            mrr_prior_month=mrr_prior,
            active_subscriptions=active,
            unpaid_balance=unpaid,
            unavailable=unavailable,
        )

    # ---- charts ---------------------------------------------------------------------------

    def revenue(self) -> dict[str, list[RevenueDay]]:
        site, params = self.site_clause()
        since = "date_day >= ?" if self.since else "TRUE"
        out: dict[str, list[RevenueDay]] = defaultdict(list)
        for currency, day, gross, refunds, disputes, net in self.rows(
            f"""
            SELECT currency, date_day, sum(gross_in_cents), sum(refunds_in_cents),
                   sum(disputes_in_cents), sum(net_in_cents)
            FROM {SCHEMA}.revenue_daily WHERE {site} AND {since}
            GROUP BY currency, date_day ORDER BY currency, date_day
            """,
            [*params, *([self.since] if self.since else [])],
        ):
            where = f"analytics.revenue_daily ({currency}, {day})"
            out[currency].append(
                RevenueDay(
                    day,
                    cents(gross, where),
                    cents(refunds, where),
                    cents(disputes, where),
                    cents(net, where),
                )
            )
        return dict(out)

    def mrr(self) -> dict[str, list[MrrMonth]]:
        site, params = self.site_clause()
        since = "date_month >= date_trunc('month', ?::DATE)" if self.since else "TRUE"
        out: dict[str, list[MrrMonth]] = defaultdict(list)
        for row in self.rows(
            f"""
            SELECT currency, date_month, sum(mrr_in_cents), sum(new_mrr_in_cents),
                   sum(expansion_mrr_in_cents), sum(contraction_mrr_in_cents),
                   sum(churned_mrr_in_cents), sum(reactivation_mrr_in_cents),
                   sum(active_subscriptions)
            FROM {SCHEMA}.mrr_monthly WHERE {site} AND {since}
            GROUP BY currency, date_month ORDER BY currency, date_month
            """,
            [*params, *([self.since] if self.since else [])],
        ):
            currency, month = row[0], _as_date(row[1])
            where = f"analytics.mrr_monthly ({currency}, {month})"
            money = [cents(value, where) for value in row[2:8]]
            out[currency].append(MrrMonth(month, *money, active_subscriptions=int(row[8] or 0)))
        return dict(out)

    def payouts(self) -> dict[str, list[Payout]]:
        site, params = self.site_clause("p")
        since = "p.initiated_at >= ?::DATE" if self.since else "TRUE"
        out: dict[str, list[Payout]] = defaultdict(list)
        for row in self.rows(
            f"""
            SELECT p.payout_id, p.site_id, p.currency, lower(p.status), p.initiated_at,
                   p.estimated_arrival_at, p.amount_in_cents, r.expected_amount_in_cents,
                   r.difference_in_cents, r.transactions_count, r.is_reconciled
            FROM {SCHEMA}.payouts AS p
            LEFT JOIN {SCHEMA}.payout_reconciliation AS r USING (payout_id)
            WHERE {site} AND {since}
            ORDER BY p.currency, p.initiated_at, p.payout_id
            """,
            [*params, *([self.since] if self.since else [])],
        ):
            payout_id = str(row[0])
            where = f"analytics.payouts/payout_reconciliation (payout {payout_id})"
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
                )
            )
        return dict(out)

    def payout_items(self, payout_ids: list[str]) -> dict[str, PayoutItems]:
        """Itemised transactions of the given payouts (PAYOUT_ITEM_COLUMNS, oldest first)."""
        if not payout_ids:
            return {}
        selected = ", ".join(PAYOUT_ITEM_COLUMNS)
        grouped: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
        for payout_id, *values in self.rows(
            f"""
            SELECT payout_id, {selected} FROM {SCHEMA}.payout_transactions
            WHERE payout_id IN (SELECT unnest(?::VARCHAR[]))
            ORDER BY payout_id, transaction_created_at, transaction_id
            """,
            [payout_ids],
        ):
            grouped[str(payout_id)].append(tuple(values))
        columns = list(PAYOUT_ITEM_COLUMNS)
        return {pid: PayoutItems(columns, grouped.get(pid, [])) for pid in payout_ids}

    def offers(self) -> dict[str, list[Offer]]:
        site, params = self.site_clause()
        out: dict[str, list[Offer]] = defaultdict(list)
        for currency, offer_id, site_id, title, net, purchases, customers, deleted in self.rows(
            f"""
            SELECT currency, offer_id, any_value(site_id), any_value(offer_title),
                   sum(net_revenue_in_cents) AS net,
                   sum(purchases_count), sum(customers_count), bool_and(is_deleted)
            FROM {SCHEMA}.offer_performance WHERE {site} AND currency IS NOT NULL
            GROUP BY currency, offer_id
            QUALIFY row_number() OVER (PARTITION BY currency ORDER BY net DESC, offer_id) <= ?
            ORDER BY currency, net DESC, offer_id
            """,
            [*params, TOP_OFFERS],
        ):
            where = f"analytics.offer_performance (offer {offer_id})"
            out[currency].append(
                Offer(
                    offer_id=str(offer_id),
                    site_id=str(site_id),
                    title=title or f"offer {offer_id}",
                    net=cents(net, where),
                    purchases=int(purchases or 0),
                    customers=int(customers or 0),
                    is_deleted=bool(deleted),
                )
            )
        return dict(out)


def _fetch(con: duckdb.DuckDBPyConnection) -> Fetch:
    def fetch(sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        cursor = con.execute(sql)
        return [d[0] for d in cursor.description], cursor.fetchall()

    return fetch


def load_report_data(
    con: duckdb.DuckDBPyConnection,
    path: str,
    *,
    site_id: str | None = None,
    since: dt.date | None = None,
    dataset: str = "creator_platform",
    stale_after: dt.timedelta | None = None,
) -> ReportData:
    """Everything the page shows, or a ReportError naming the missing mart/column/site.
    `stale_after` is the staleness limit (default: `models.coverage.stale_after()`)."""
    con.execute("SET TimeZone = 'UTC'")
    check_marts(con, path)
    coverage = read_coverage(_fetch(con))
    reader = _Reader(con, site_id, since, coverage)
    if site_id is not None:
        (known,) = con.execute(
            f"SELECT count(*) FROM {SCHEMA}.revenue_daily WHERE site_id = ?", [site_id]
        ).fetchone()
        if not known:
            sites = [
                s
                for (s,) in con.execute(
                    f"SELECT DISTINCT site_id FROM {SCHEMA}.revenue_daily ORDER BY 1"
                ).fetchall()
            ]
            raise ReportError(
                f"{path}: site_id {site_id!r} has no rows in {SCHEMA}.revenue_daily "
                f"(sites present: {', '.join(map(str, sites)) or 'none'})"
            )
    payouts = reader.payouts()
    unreconciled = [p.payout_id for rows in payouts.values() for p in rows if not p.is_reconciled]
    return ReportData(
        site_id=site_id,
        since=since,
        headline=reader.headline(),
        revenue=reader.revenue(),
        mrr=reader.mrr(),
        payouts=payouts,
        unreconciled_items=reader.payout_items(unreconciled),
        offers=reader.offers(),
        freshness=read_freshness(con, dataset),
        site_names=read_site_names(con, dataset),
        coverage=coverage,
        stale_after=stale_after or stale_after_limit(),
    )
