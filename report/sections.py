"""The page's sections: daily revenue, MRR waterfall, payouts with reconciliation, top offers.

Each section draws its charts (per currency) and the tables beside them; an empty mart gives a
short sentence instead of an empty chart.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from report import charts
from report.data import NOT_SENT_STATUSES, Payout, PayoutItems, ReportData
from report.html import attrs, empty, esc, figure, fmt_date, fmt_ts, section, unavailable
from report.marts import PAYOUT_ITEM_COLUMNS
from report.money import format_count, format_money

# Without --since, the daily chart shows the last quarter and the waterfall the last year: a
# longer daily series is unreadable, and --since is there to ask for it.
DAILY_DAYS_DEFAULT = 90
MRR_MONTHS_DEFAULT = 12


def revenue_section(data: ReportData) -> str:
    figures = []
    window = data.headline.window
    for currency, all_days in data.revenue.items():
        days = all_days
        if data.since is None and window.last_day is not None:
            first = window.last_day - dt.timedelta(days=DAILY_DAYS_DEFAULT - 1)
            days = [d for d in all_days if d.date_day >= first]
        if not days:
            continue
        total = sum(d.net for d in days)
        partial = window.partial_day if days[-1].date_day == window.partial_day else None
        caption = (
            f"{currency}: {days[0].date_day.isoformat()} to {days[-1].date_day.isoformat()}"
            f"{' (partial)' if partial else ''}, net {format_money(total, currency)}"
        )
        svg = charts.revenue_chart(currency, days, f"rev-{currency}", partial_day=partial)
        figures.append(figure("chart-revenue-daily", currency, caption, svg))
    reason = data.headline.unavailable.get("net_revenue")
    return section(
        "section-revenue",
        "Daily net revenue",
        f"Gross above the line; refunds and disputes below it; the dark line is net, per reporting "
        f"day in {data.coverage.build.timezone} "
        f"({'since ' + data.since.isoformat() if data.since else f'last {DAILY_DAYS_DEFAULT} days'}).",
        unavailable(reason) if reason else "".join(figures) or empty("No revenue in this range."),
    )


def mrr_section(data: ReportData) -> str:
    figures = []
    for currency, months in data.mrr.items():
        shown = months if data.since else months[-MRR_MONTHS_DEFAULT:]
        if not shown:
            continue
        last = shown[-1]
        caption = f"{currency}: MRR {format_money(last.mrr, currency)} in {last.date_month.strftime('%B %Y')}"
        svg = charts.mrr_waterfall(currency, shown, f"mrr-{currency}")
        figures.append(figure("chart-mrr-waterfall", currency, caption, svg))
    return section(
        "section-mrr",
        "MRR movements per month",
        "Each month starts at last month's MRR, rises by new, expansion and reactivation MRR and "
        "falls by contraction and churn. Annual plans count as one twelfth per month.",
        "".join(figures) or empty("No subscription revenue in this range."),
    )


def _payout_summary(currency: str, payouts: list[Payout]) -> str:
    sent = [p for p in payouts if p.status not in NOT_SENT_STATUSES]
    by_status: dict[str, int] = {}
    for p in payouts:
        by_status[p.status] = by_status.get(p.status, 0) + 1
    statuses = ", ".join(f"{format_count(n)} {esc(s)}" for s, n in sorted(by_status.items()))
    return (
        f"{currency}: {format_count(len(payouts))} payouts ({statuses}); sent "
        f"{format_money(sum(p.amount for p in sent), currency)}"
    )


def _cell(column: str, value: Any, row: dict[str, Any], payout_currency: str) -> str:
    if value is None:
        return '<td class="num">—</td>' if column.endswith("_in_cents") else "<td>—</td>"
    if column.endswith("_in_cents") and isinstance(value, int):
        # Settlement amounts are in the payout's currency; the charge itself in its own.
        currency = payout_currency if "settlement" in column else row.get("transaction_currency")
        return f'<td class="num">{esc(format_money(value, currency or payout_currency))}</td>'
    if isinstance(value, dt.datetime):
        return f"<td>{esc(fmt_ts(value))}</td>"
    if isinstance(value, bool):
        return f"<td>{'yes' if value else 'no'}</td>"
    return f"<td>{esc(value)}</td>"


def _items_table(items: PayoutItems, currency: str) -> str:
    if not items.rows:
        return empty("No transactions are assigned to this payout.")
    head = "".join(
        f'<th class="{"num" if c.endswith("_in_cents") else ""}">{esc(PAYOUT_ITEM_COLUMNS.get(c, c))}</th>'
        for c in items.columns
    )
    body = []
    for values in items.rows:
        row = dict(zip(items.columns, values, strict=True))
        cells = "".join(_cell(c, row[c], row, currency) for c in items.columns)
        body.append(f'<tr data-testid="payout-transaction">{cells}</tr>')
    return (
        f'<table class="items"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
    )


def _unreconciled_table(data: ReportData) -> str:
    rows = []
    for currency, payouts in data.payouts.items():
        for p in payouts:
            if p.is_reconciled:
                continue
            items = data.unreconciled_items.get(p.payout_id, PayoutItems([], []))
            rows.append(
                f"<tr{attrs(data_testid='unreconciled-payout', data_payout_id=p.payout_id, data_currency=currency, data_difference=p.difference)}>"
                f"<td>{esc(p.payout_id)}</td><td>{esc(data.site_label(p.site_id))}</td>"
                f"<td>{esc(p.status)}</td>"
                f"<td>{fmt_date(p.initiated_on)}</td><td>{fmt_date(p.arrival_on)}</td>"
                f'<td class="num">{esc(format_money(p.amount, currency))}</td>'
                f'<td class="num">{esc(format_money(p.expected, currency))}</td>'
                f'<td class="num alert">{esc(format_money(p.difference, currency, signed=True))}</td>'
                f'<td class="num">{format_count(p.transactions_count)}</td></tr>'
                f'<tr class="items"><td colspan="9"><details><summary>{format_count(len(items.rows))} '
                f"itemised transactions</summary>{_items_table(items, currency)}</details></td></tr>"
            )
    total = sum(len(v) for v in data.payouts.values())
    if not rows:
        return (
            f'<p class="ok" data-testid="unreconciled-none">Every payout reconciles to the cent '
            f"({format_count(total)} payouts).</p>"
        )
    head = (
        "<tr><th>Payout</th><th>Site</th><th>Status</th><th>Initiated</th><th>Arrival</th>"
        '<th class="num">Actual</th><th class="num">Expected</th><th class="num">Difference</th>'
        '<th class="num">Transactions</th></tr>'
    )
    return (
        f'<p class="alert">{format_count(len(rows))} of {format_count(total)} payouts '
        f"{'does' if len(rows) == 1 else 'do'} not match the transactions behind them.</p>"
        f'<table data-testid="unreconciled-payouts"><thead>{head}</thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def payouts_section(data: ReportData) -> str:
    payouts_missing = data.coverage.unavailable("unreconciled_payouts")
    if payouts_missing and not data.coverage.resources["payouts"].is_loaded:
        return section(
            "section-payouts",
            "Payouts: actual and expected",
            "The payouts the platform sent, beside what the transactions behind them add up to.",
            unavailable(payouts_missing),
        )
    figures = []
    for currency, payouts in data.payouts.items():
        if not any(p.status not in NOT_SENT_STATUSES for p in payouts):
            continue
        svg = charts.payouts_chart(currency, payouts, f"pay-{currency}")
        figures.append(figure("chart-payouts", currency, _payout_summary(currency, payouts), svg))
    return section(
        "section-payouts",
        "Payouts: actual and expected",
        "Expected is the net settlement of the transactions the settlement rule assigns to each "
        "payout. Failed and canceled payouts are left out of the chart; their funds roll into the "
        "next payout.",
        ("".join(figures) or empty("No payouts in this range."))
        + "<h3>Unreconciled payouts</h3>"
        + (unavailable(payouts_missing) if payouts_missing else _unreconciled_table(data)),
    )


def _several_sites(data: ReportData) -> bool:
    """Offers are labelled with their site when the report covers more than one."""
    if data.site_id is not None:
        return False
    sites = {o.site_id for offers in data.offers.values() for o in offers}
    return len(sites | set(data.site_names)) > 1


def offers_section(data: ReportData) -> str:
    blocks = []
    with_site = _several_sites(data)
    for currency, offers in data.offers.items():
        if not offers:
            continue
        labels = [
            o.title + (f" · {data.site_label(o.site_id)}" if with_site else "") for o in offers
        ]
        svg = charts.offers_chart(currency, offers, f"off-{currency}", labels)
        site_head = "<th>Site</th>" if with_site else ""
        rows = "".join(
            f"<tr{attrs(data_testid='top-offer', data_offer_id=o.offer_id, data_site_id=o.site_id, data_currency=currency, data_value=o.net)}>"
            f'<td class="num">{i}</td><td>{esc(o.title)}{" (archived)" if o.is_deleted else ""}</td>'
            + (f"<td>{esc(data.site_label(o.site_id))}</td>" if with_site else "")
            + f'<td>{esc(o.offer_id)}</td><td class="num">{format_count(o.purchases)}</td>'
            f'<td class="num">{format_count(o.customers)}</td>'
            f'<td class="num">{esc(format_money(o.net, currency))}</td></tr>'
            for i, o in enumerate(offers, start=1)
        )
        table = (
            '<details><summary>as a table</summary><table><thead><tr><th class="num">#</th>'
            f'<th>Offer</th>{site_head}<th>Offer id</th><th class="num">Purchases</th>'
            '<th class="num">Customers</th><th class="num">Net revenue</th></tr></thead>'
            f"<tbody>{rows}</tbody></table></details>"
        )
        blocks.append(
            figure(
                "chart-top-offers",
                currency,
                f"{currency}: top {len(offers)} offer{'s' if len(offers) != 1 else ''}",
                svg + table,
            )
        )
    reason = data.headline.unavailable.get("net_revenue")
    return section(
        "section-offers",
        "Top offers by net revenue",
        "All-time net revenue (gross less refunds and disputes) per offer"
        + (", labelled with its site." if with_site else "."),
        unavailable(reason) if reason else "".join(blocks) or empty("No offer revenue yet."),
    )
