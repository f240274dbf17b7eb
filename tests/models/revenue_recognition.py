"""Revenue excl. tax and its recognition, computed in Python straight from raw rows: the
independent side of tests/models/test_revenue_marts.py (DECISIONS.md "Revenue per month and
its recognition").

A subscription charge is earned evenly over the days of its plan's month or year from its day,
cumulatively rounded down (toward zero) to the cent; any other charge on its day. A refund or
dispute of a purchase first takes back what the purchase's earlier charges have not earned by
the end of its day (less the purchase's earlier refunds), spread over the months still to earn
in proportion, and the rest on its own day.
"""

from __future__ import annotations

import calendar
import datetime as dt
from collections import defaultdict
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Txn:
    transaction_id: str
    site_id: str
    currency: str
    created_at: dt.datetime
    kind: str  # gross, refund, dispute
    revenue_ex_tax: int
    purchase_id: str | None
    interval: str  # day, month, year

    @property
    def day(self) -> dt.date:
        return self.created_at.astimezone(dt.UTC).date()


def add_months(day: dt.date, months: int) -> dt.date:
    """`day` + `months` calendar months, clamped to the month's last day (as SQL intervals)."""
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    return dt.date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))


def month_of(day: dt.date) -> dt.date:
    return day.replace(day=1)


def share(amount: int, part: int, whole: int) -> int:
    """amount x part / whole, rounded toward zero."""
    sign = -1 if amount < 0 else 1
    return sign * (abs(amount) * part // whole)


def split(amount: int, weights: list[int]) -> list[int]:
    """Cumulative split of `amount` by `weights`: the parts add up to it exactly."""
    total, through, parts = sum(weights), 0, []
    for weight in weights:
        parts.append(share(amount, through + weight, total) - share(amount, through, total))
        through += weight
    return parts


def service_end(txn: Txn) -> dt.date:
    """The day after a charge's service period: a year, a month or its own day."""
    months = {"year": 12, "month": 1}.get(txn.interval)
    return add_months(txn.day, months) if months else txn.day + dt.timedelta(days=1)


def charge_months(txn: Txn) -> list[tuple[dt.date, int, int]]:
    """(month, earned before it, earned through it) of a charge's service period."""
    start, end = txn.day, service_end(txn)
    days = (end - start).days
    out, month, before = [], month_of(start), 0
    while month < end:
        through = share(txn.revenue_ex_tax, (min(add_months(month, 1), end) - start).days, days)
        out.append((month, before, through))
        before, month = through, add_months(month, 1)
    return out


def schedule(txns: list[Txn]) -> dict[str, dict[dt.date, int]]:
    """transaction id -> month -> revenue excl. tax earned in it."""
    entries: dict[str, dict[dt.date, int]] = defaultdict(lambda: defaultdict(int))
    charges_of: dict[str, list[Txn]] = defaultdict(list)
    for txn in txns:
        if txn.kind == "gross":
            for month, before, through in charge_months(txn):
                entries[txn.transaction_id][month] += through - before
            if txn.purchase_id:
                charges_of[txn.purchase_id].append(txn)
    taken: dict[str, int] = defaultdict(int)
    for txn in sorted((t for t in txns if t.kind != "gross"),
                      key=lambda t: (t.created_at, t.transaction_id)):
        reversed_part, earlier = 0, taken[txn.purchase_id or ""]
        if txn.purchase_id and txn.revenue_ex_tax < 0:
            taken[txn.purchase_id] += -txn.revenue_ex_tax
            unearned: dict[dt.date, int] = defaultdict(int)
            for charge in charges_of[txn.purchase_id]:
                if charge.created_at > txn.created_at:
                    continue
                days = (service_end(charge) - charge.day).days
                # what the charge has earned by the end of the refund's day
                by_day = share(charge.revenue_ex_tax,
                               min(max((txn.day - charge.day).days + 1, 0), days), days)
                for month, before, through in charge_months(charge):
                    if month >= month_of(txn.day):
                        unearned[month] += through - max(before, by_day)
            left = {m: v for m, v in sorted(unearned.items()) if v > 0}
            reversed_part = min(-txn.revenue_ex_tax, max(sum(left.values()) - earlier, 0))
            if reversed_part > 0:
                for month, part in zip(left, split(reversed_part, list(left.values())), strict=True):
                    entries[txn.transaction_id][month] -= part
        entries[txn.transaction_id][month_of(txn.day)] += txn.revenue_ex_tax + reversed_part
    return entries


def monthly_recognition(
    txns: list[Txn], months: list[tuple[str, str, dt.date]],
) -> dict[tuple[str, str, dt.date], tuple[int, int]]:
    """(site, currency, month) -> (recognised in the month, deferred at its end)."""
    plan = schedule(txns)
    by_id = {t.transaction_id: t for t in txns}
    out = {}
    for site, currency, month in months:
        recognised = deferred = 0
        for tid, entries in plan.items():
            txn = by_id[tid]
            if (txn.site_id, txn.currency) != (site, currency):
                continue
            recognised += entries.get(month, 0)
            if month_of(txn.day) <= month:
                deferred += sum(v for m, v in entries.items() if m > month)
        out[(site, currency, month)] = (recognised, deferred)
    return out


def raw_transactions(fetch: Any, as_of: dt.date) -> list[Txn]:
    """The succeeded transactions up to `as_of` (UTC days), from the raw tables only."""
    rows = fetch("""
        with t as (
            select * from (
                select *, row_number() over (partition by id order by _extracted_at desc) as r
                from creator_platform.transactions) where r = 1),
        links as (
            select transaction_id, min(purchase_id) as purchase_id
            from creator_platform.purchases_transactions group by transaction_id),
        p as (
            select * from (
                select *, row_number() over (partition by id order by _extracted_at desc) as r
                from creator_platform.purchases) where r = 1)
        select t.id, coalesce(t.site_id, p.site_id), upper(t.currency), t.created_at,
            lower(t.action), t.amount_in_cents - coalesce(t.sales_tax_in_cents, 0),
            links.purchase_id, lower(p.payment_type), lower(t.payment_type)
        from t
        left join links on links.transaction_id = t.id
        left join p on p.id = links.purchase_id
        where coalesce(lower(t.state), 'succeeded') = 'succeeded'
    """)
    out = []
    for tid, site, currency, created, action, ex_tax, purchase, purchase_type, own_type in rows:
        kind = action if action in ("refund", "dispute") else "gross"
        plan = purchase_type if purchase else (own_type if action == "subscription_charge" else "")
        interval = "day"
        if kind == "gross" and (plan or "").startswith("subscription"):
            interval = "year" if ("annual" in plan or "year" in plan) else "month"
        txn = Txn(tid, site, currency, created, kind, ex_tax, purchase, interval)
        if txn.day <= as_of:
            out.append(txn)
    return out
