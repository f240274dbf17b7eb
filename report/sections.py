"""The page's sections: daily revenue, MRR waterfall, payouts with reconciliation, top offers.

Each section draws its charts (per currency) and the tables beside them; an empty mart gives a
short sentence instead of an empty chart.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from creator_sync.models.headline import METHODS
from creator_sync.report import charts
from creator_sync.report.data import NOT_SENT_STATUSES, DelayMonth, Payout, PayoutItems, ReportData
from creator_sync.report.html import (
    attrs,
    empty,
    esc,
    figure,
    fmt_date,
    fmt_ts,
    section,
    unavailable,
)
from creator_sync.report.marts import PAYOUT_ITEM_COLUMNS, PAYOUT_LINE_COLUMNS
from creator_sync.report.money import format_count, format_money

# Without --since, the daily chart shows the last quarter and the waterfall the last year: a
# longer daily series is unreadable, and --since is there to ask for it.
DAILY_DAYS_DEFAULT = 90
MRR_MONTHS_DEFAULT = 12
OPEN_ITEMS = 3  # the lines of the latest unreconciled payouts are shown open, the rest folded
METHOD_LABELS = {"itemised": "itemised", "settlement_rule": "settlement rule"}


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
        partial = window.partial_day if days[-1].date_day == window.partial_day else None
        # the caption's total covers the complete days, as the tile does; the partial day is
        # named apart with what it holds so far
        complete = [d for d in days if d.date_day != partial]
        caption = f"{currency}: " + (
            f"{complete[0].date_day.isoformat()} to {complete[-1].date_day.isoformat()}, net "
            f"incl. tax {format_money(sum(d.net for d in complete), currency)}"
            if complete
            else "no complete day yet"
        )
        if partial:
            caption += (
                f"; {partial.isoformat()} is partial (so far "
                f"{format_money(days[-1].net, currency)}), shaded and not counted"
            )
        svg = charts.revenue_chart(currency, days, f"rev-{currency}", partial_day=partial)
        figures.append(figure("chart-revenue-daily", currency, caption, svg))
    reason = data.headline.unavailable.get("net_revenue")
    return section(
        "section-revenue",
        "Daily net revenue (tax included)",
        f"Cash as charged, sales tax included (the revenue tile and the monthly summary above "
        f"exclude it). "
        f"Gross above the line; refunds and disputes below it; the dark line is net, per reporting "
        f"day in {data.coverage.build.timezone}. The axis fits the complete days; a partial "
        f"day's bar may run off it "
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


def _differences(currency: str, payouts: list[Payout]) -> str:
    """Per period (day, week or month, as many as stay readable), what was paid out, what was
    expected and the difference: the periods that differ, in red, newest first, and the total."""
    grain, buckets = charts.bucket_payouts(payouts)
    differing = [b for b in buckets if b.actual != b.expected or b.unreconciled]
    actual, expected = sum(b.actual for b in buckets), sum(b.expected for b in buckets)

    def row(label: str, b_actual: int, b_expected: int, open_: int, testid: str, **kw: str) -> str:
        diff = b_actual - b_expected
        return (
            f"<tr{attrs(data_testid=testid, data_currency=currency, data_value=diff, **kw)}>"
            f"<td>{esc(label)}</td>"
            f'<td class="num">{esc(format_money(b_actual, currency))}</td>'
            f'<td class="num">{esc(format_money(b_expected, currency))}</td>'
            f'<td class="num{" alert" if diff else ""}">'
            f"{esc(format_money(diff, currency, signed=True))}</td>"
            f'<td class="num">{format_count(open_) if open_ else "—"}</td></tr>'
        )

    fmt = {"day": "%Y-%m-%d", "week": "week of %Y-%m-%d", "month": "%B %Y"}[grain]
    rows = "".join(
        row(b.start.strftime(fmt), b.actual, b.expected, b.unreconciled, "payout-difference",
            data_start=b.start.isoformat())
        for b in reversed(differing)
    )
    total = row(f"All {format_count(len(buckets))} {grain}s", actual, expected,
                sum(b.unreconciled for b in buckets), "payout-difference-total")
    note = (
        f"Every {grain} matches to the cent."
        if not differing
        else f"{format_count(len(differing))} of {format_count(len(buckets))} {grain}s differ "
        "or hold an unreconciled payout; the others match to the cent."
    )
    return (
        f'<div class="block"{attrs(data_testid="payout-differences", data_currency=currency)}>'
        f"<h3>{esc(_payout_summary(currency, payouts))}</h3>"
        f'<p class="note">{esc(note)}</p>'
        f'<table><thead><tr><th>Initiated</th><th class="num">Paid out</th>'
        '<th class="num">Expected</th><th class="num">Difference</th>'
        '<th class="num">Unreconciled payouts</th></tr></thead>'
        f'<tbody>{rows}</tbody><tfoot class="total">{total}</tfoot></table></div>'
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


def _cell_currency(column: str, row: dict[str, Any], payout_currency: str) -> str:
    """Each amount in its own currency: a line's presented amount in the presented currency,
    settlement figures in the payout's, the rest in the line's or the charge's own."""
    if column.startswith("presented"):
        found = row.get("presented_currency")
    elif "settlement" in column:
        found = payout_currency
    else:
        found = row.get("transaction_currency") or row.get("currency")
    return str(found or payout_currency)


def _cell(column: str, value: Any, row: dict[str, Any], payout_currency: str) -> str:
    if value is None:
        return '<td class="num">—</td>' if column.endswith("_in_cents") else "<td>—</td>"
    if column.endswith("_in_cents") and isinstance(value, int):
        currency = _cell_currency(column, row, payout_currency)
        return f'<td class="num">{esc(format_money(value, currency))}</td>'
    if isinstance(value, dt.datetime):
        return f"<td>{esc(fmt_ts(value))}</td>"
    if isinstance(value, bool):
        return f"<td>{'yes' if value else 'no'}</td>"
    return f"<td>{esc(value)}</td>"


def _row_attrs(items: PayoutItems, row: dict[str, Any]) -> str:
    if "line_number" not in row:
        return attrs(data_testid="payout-transaction")
    matched = bool(row.get("is_matched"))
    return attrs(
        data_testid="payout-line",
        data_line_number=row["line_number"],
        data_line_type=row.get("line_type"),
        data_matched=str(matched).lower(),
        data_match_rule=row.get("match_rule"),
        data_value=row.get("net_in_cents"),
        # an unmatched sale or refund is what keeps a payout from reconciling
        class_=None if matched or row.get("line_type") == "adjustment" else "alert",
    )


def _items_table(items: PayoutItems, currency: str, method: str) -> str:
    if not items.rows:
        what = "lines are listed" if method == "itemised" else "transactions are assigned"
        return empty(f"No {what} for this payout.")
    headings = PAYOUT_LINE_COLUMNS if "line_number" in items.columns else PAYOUT_ITEM_COLUMNS
    # a line's currencies are read for its amounts, which then name them ($, €, "1.234 KWD")
    shown = [c for c in items.columns if c not in ("currency", "presented_currency")]
    head = "".join(
        f'<th class="{"num" if c.endswith("_in_cents") else ""}">{esc(headings.get(c, c))}</th>'
        for c in shown
    )
    body = []
    for values in items.rows:
        row = dict(zip(items.columns, values, strict=True))
        cells = "".join(_cell(c, row[c], row, currency) for c in shown)
        body.append(f"<tr{_row_attrs(items, row)}>{cells}</tr>")
    return (
        f'<table class="items"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
    )


def _optional_money(cents: int | None, currency: str, **kw: Any) -> str:
    return "—" if cents is None else esc(format_money(cents, currency, **kw))


def _lines_cell(p: Payout) -> str:
    if p.method != "itemised":
        return '<td class="num">—</td>'
    unmatched = (
        f' · <span class="alert">{format_count(p.unmatched_lines)} unmatched</span>'
        if p.unmatched_lines
        else ""
    )
    return (
        f'<td class="num"{attrs(data_testid="payout-lines-count", data_value=p.lines_count, data_matched=p.matched_lines, data_unmatched=p.unmatched_lines)}>'
        f"{format_count(p.lines_count)} ({format_count(p.matched_lines)} matched{unmatched})</td>"
    )


def _unreconciled_table(data: ReportData) -> str:
    latest = data.latest_unreconciled()
    total_open = sum(1 for rows in data.payouts.values() for p in rows if not p.is_reconciled)
    total = sum(len(v) for v in data.payouts.values())
    if not latest:
        return (
            f'<p class="ok" data-testid="unreconciled-none">Every payout reconciles to the cent '
            f"({format_count(total)} payouts).</p>"
        )
    rows = []
    for rank, p in enumerate(latest):
        c = p.currency
        items = data.unreconciled_items.get(p.payout_id, PayoutItems([], []))
        what = "lines" if p.method == "itemised" else "transactions assigned by the rule"
        rows.append(
            f"<tr{attrs(data_testid='unreconciled-payout', data_payout_id=p.payout_id, data_currency=c, data_method=p.method, data_difference=p.difference, data_unexplained=p.unexplained, data_adjustments=p.adjustments, data_fees=p.fees)}>"
            f"<td>{esc(p.payout_id)}</td><td>{esc(data.site_label(p.site_id))}</td>"
            f"<td>{esc(p.status)}</td><td>{esc(METHOD_LABELS.get(p.method, p.method))}</td>"
            f"<td>{fmt_date(p.initiated_on)}</td>"
            f'<td class="num">{esc(format_money(p.amount, c))}</td>'
            f'<td class="num">{esc(format_money(p.expected, c))}</td>'
            f'<td class="num alert">{esc(format_money(p.difference, c, signed=True))}</td>'
            f"{_lines_cell(p)}"
            f'<td class="num">{_optional_money(p.fees, c)}</td>'
            f'<td class="num">{_optional_money(p.adjustments, c)}</td>'
            f'<td class="num">{_optional_money(p.unexplained, c)}</td></tr>'
            f'<tr class="items"><td colspan="12"><details{" open" if rank < OPEN_ITEMS else ""}>'
            f"<summary>{format_count(len(items.rows))} "
            f"{what}</summary>{_items_table(items, c, p.method)}</details></td></tr>"
        )
    head = (
        "<tr><th>Payout</th><th>Site</th><th>Status</th><th>Method</th><th>Initiated</th>"
        '<th class="num">Actual</th><th class="num">Expected</th><th class="num">Difference</th>'
        '<th class="num">Lines</th><th class="num">Fees</th><th class="num">Adjustments</th>'
        '<th class="num">Unexplained</th></tr>'
    )
    shown = (
        f" The latest {format_count(len(latest))} are listed below."
        if len(latest) < total_open
        else ""
    )
    return (
        f'<p class="alert"{attrs(data_testid="unreconciled-count", data_value=total_open)}>'
        f"{format_count(total_open)} of {format_count(total)} payouts "
        f"{'does' if total_open == 1 else 'do'} not reconcile.{shown}</p>"
        f'<p class="note">Itemised: the payout is the platform\'s own lines; it reconciles when '
        "they add up to the amount to the cent and every sale and refund line is matched to a "
        "listed transaction (rules, in order: order number, same minute, nearest time within "
        "24 hours). Unexplained is the net of the lines no listed transaction stands behind. "
        "Settlement rule: a payout without lines, against the transactions the rule assigns "
        "it.</p>"
        f'<table data-testid="unreconciled-payouts"><thead>{head}</thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _methods(data: ReportData) -> str:
    """How the payouts were reconciled: the same split `creator-sync models` prints."""
    methods = data.headline.methods
    if not methods:
        return ""
    parts = "; ".join(
        f"<span{attrs(data_testid='reconciliation-method', data_method=name, data_value=m.payouts, data_reconciled=m.reconciled)}>"
        f"{format_count(m.payouts)} {esc(METHODS.get(name, name))} "
        f"({format_count(m.reconciled)} reconcile)</span>"
        for name, m in sorted(methods.items())
    )
    return f'<p data-testid="reconciliation-methods">Reconciliation method: {parts}.</p>'


def _delay_section(data: ReportData) -> str:
    """The settlement delay learned from the payout lines, per site, provider and month."""
    build = data.coverage.build
    if not data.settlement_delay:
        return empty(
            "No payout lines: no observed delay. The settlement rule uses "
            f"{build.settlement_delay}."
        )
    figures = []
    by_site: dict[str, list[DelayMonth]] = {}
    for month in data.settlement_delay:
        by_site.setdefault(month.site_id, []).append(month)
    for site_id, months in by_site.items():
        # as the waterfall: the last year without --since
        recent = sorted({m.date_month for m in months})[-MRR_MONTHS_DEFAULT:]
        shown = months if data.since else [m for m in months if m.date_month >= recent[0]]
        last = shown[-1]
        providers = sorted({m.provider for m in shown})
        caption = (
            f"{data.site_label(site_id)} ({', '.join(providers)}): in "
            f"{last.date_month.strftime('%B %Y')} p50 {last.p50} days, p95 {last.p95}, max "
            f"{last.max} ({format_count(last.lines_count)} lines)"
        )
        svg = charts.settlement_delay_chart(
            shown, f"delay-{site_id}", f"Observed settlement delay, {data.site_label(site_id)}"
        )
        figures.append(
            figure("chart-settlement-delay", None, caption, svg, data_site_id=site_id)
        )
    return "".join(figures)


def _scope(data: ReportData) -> str:
    """Which revenue the payouts cover (the platform's own processor) and which they cannot
    (other processors pay out themselves), per processor and currency: `payout_scope`."""
    if not data.payout_scope:
        return ""
    rows = "".join(
        f"<tr{attrs(data_testid='payout-scope', data_provider=r.provider, data_currency=r.currency, data_covered=r.covered, data_not_covered=r.not_covered)}>"
        f"<td>{esc(r.provider)}</td><td>{esc(r.currency)}</td>"
        f'<td class="num">{"—" if r.covered is None else esc(format_money(r.covered, r.currency))}</td>'
        f'<td class="num">{esc(format_money(r.not_covered, r.currency))}</td>'
        f"<td>{esc(r.reason)}</td></tr>"
        for r in data.payout_scope
    )
    return (
        "<h3>Revenue the payouts cover</h3>"
        '<p class="note">The platform pays out only what its own processor settled; revenue '
        "through another processor is paid out by that processor and is in no payout here.</p>"
        '<table data-testid="payout-scope-table"><thead><tr><th>Processor</th><th>Currency</th>'
        "<th>Covered by payouts</th><th>Not covered</th><th>Why</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
    )


def payouts_section(data: ReportData) -> str:
    payouts_missing = data.coverage.unavailable("unreconciled_payouts")
    title = "Payouts: actual and expected"
    if payouts_missing and not data.coverage.resources["payouts"].is_loaded:
        return section(
            "section-payouts",
            title,
            "The payouts the platform sent, beside what the lines or transactions behind them "
            "add up to.",
            unavailable(payouts_missing) + _scope(data),
        )
    tables = [
        _differences(currency, payouts)
        for currency, payouts in data.payouts.items()
        if any(p.status not in NOT_SENT_STATUSES for p in payouts)
    ]
    return section(
        "section-payouts",
        title,
        "Expected is the net of the payout's own lines when the platform itemised it, else the "
        "net settlement of the transactions the settlement rule assigns to it. Failed and "
        "canceled payouts are left out; their funds roll into the next payout.",
        (_methods(data) if not payouts_missing else "")
        + ("".join(tables) or empty("No payouts in this range."))
        + _scope(data)
        + "<h3>Settlement delay observed</h3>"
        + '<p class="note">Days from a line\'s creation to its payout\'s initiation, per month: '
        "p50, p95 and max, from the lines of payouts that were sent.</p>"
        + f'<div class="pair">{_delay_section(data)}</div>'
        + "<h3>Unreconciled payouts</h3>"
        + (unavailable(payouts_missing) if payouts_missing else _unreconciled_table(data)),
    )


def offers_section(data: ReportData) -> str:
    """The top offers of the last full month by revenue excl. tax (`offer_revenue_monthly`)."""
    month = data.last_full_month
    blocks = []
    with_site = data.several_sites()
    for currency, offers in data.offers.items():
        if not offers:
            continue
        labels = [data.chart_label(o.title, o.site_id, o.is_unattributed) for o in offers]
        svg = charts.ranked_bars(
            currency, labels, [o.revenue_ex_tax for o in offers], f"off-{currency}",
            f"Top offers by revenue excl. tax in {currency}",
        )
        site_head = "<th>Site</th>" if with_site else ""
        rows = "".join(
            f"<tr{attrs(data_testid='top-offer', data_offer_id=o.offer_id, data_site_id=o.site_id, data_currency=currency, data_value=o.revenue_ex_tax)}>"
            f'<td class="num">{i}</td><td>{esc(o.title)}</td>'
            + (f"<td>{'' if o.is_unattributed else esc(data.site_label(o.site_id))}</td>"
               if with_site else "")
            + f'<td>{esc(o.offer_id)}</td><td class="num">{format_count(o.transactions)}</td>'
            f'<td class="num">{esc(format_money(o.net, currency))}</td>'
            f'<td class="num">{esc(format_money(o.revenue_ex_tax, currency))}</td></tr>'
            for i, o in enumerate(offers, start=1)
        )
        table = (
            '<details><summary>as a table</summary><table><thead><tr><th class="num">#</th>'
            f'<th>Offer</th>{site_head}<th>Offer id</th><th class="num">Transactions</th>'
            '<th class="num">Net incl. tax</th><th class="num">Revenue excl. tax</th></tr>'
            f"</thead><tbody>{rows}</tbody></table></details>"
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
    title = "Top offers by revenue excl. tax" + (f", {month.strftime('%B %Y')}" if month else "")
    return section(
        "section-offers",
        title,
        "Revenue excl. tax per offer in the last full month, all sites added (net of refunds "
        "and disputes)" + (", each offer labelled with its site." if with_site else ".")
        + " Money no offer is credited with (an order's payment for items that name no offer) "
        "has its own row.",
        unavailable(reason) if reason else "".join(blocks) or empty(
            "No offer revenue in the last full month." if month else "No full month yet."
        ),
    )
