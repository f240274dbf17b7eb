"""The monthly sections (issue 39): per currency, the last 12 months' summary (revenue excl.
tax, tax, refunds and disputes, known fees, ARR, NRR), churned MRR by kind, and revenue by
product in the last full month.

A fee the processor did not state is never printed as 0: a month with such transactions shows
the fees that were stated and says how many were not. A figure built on a resource that was not
loaded is replaced by the reason (`Coverage.unavailable`), as the tiles do.
"""

from __future__ import annotations

from decimal import Decimal

from creator_sync.report import charts
from creator_sync.report.data import (
    CHURN_KINDS,
    TOP_PRODUCTS,
    ChurnKinds,
    ReportData,
    SummaryMonth,
)
from creator_sync.report.html import attrs, empty, esc, figure, section, unavailable
from creator_sync.report.money import format_count, format_money

CHURN_LABELS = {
    "voluntary": "Voluntary",
    "payment_failed": "Payment failed",
    "refunded_or_disputed": "Refunded or disputed",
    "unknown": "Unknown reason",
}


def month_label(summary: SummaryMonth | ChurnKinds) -> str:
    text = summary.date_month.strftime("%b %Y")
    return text + " (partial)" if summary.is_partial else text


def format_ratio(value: Decimal | None) -> str:
    """A retention ratio as a percentage with one decimal (`103.4%`); `—` without one."""
    if value is None:
        return "—"
    return f"{(value * 100).quantize(Decimal('0.1'))}%"


def _fees_cell(m: SummaryMonth, currency: str) -> str:
    """The stated fees, and how many transactions stated none: never a 0 for an unknown fee."""
    value = attrs(
        data_testid="summary-known-fees", data_currency=currency, data_value=m.known_fees,
        data_unknown=m.fee_unknown_transactions,
    )
    if not m.fee_unknown_transactions:
        return f'<td class="num"{value}>{esc(format_money(m.known_fees, currency))}</td>'
    unknown = (
        f'<span class="note">+ {format_count(m.fee_unknown_transactions)} of '
        f"{format_count(m.transactions)} transactions without a stated fee</span>"
    )
    if m.fee_unknown_transactions == m.transactions:
        return f'<td class="num"{value}>unknown<br>{unknown}</td>'
    return (
        f'<td class="num"{value}>{esc(format_money(m.known_fees, currency))} known<br>'
        f"{unknown}</td>"
    )


def _summary_table(currency: str, months: list[SummaryMonth], mrr_missing: str | None) -> str:
    head = (
        "<tr><th>Month</th>"
        '<th class="num">Revenue excl. tax</th><th class="num">Tax</th>'
        '<th class="num">Refunds and disputes</th><th class="num">Fees</th>'
        '<th class="num">ARR</th><th class="num">NRR</th></tr>'
    )
    rows = []
    for m in reversed(months):  # newest first: the month a reader looks for
        saas = (
            '<td class="num">n/a</td><td class="num">n/a</td>'
            if mrr_missing
            else f'<td class="num"{attrs(data_testid="summary-arr", data_currency=currency, data_value=m.arr)}>'
            f'{"—" if m.arr is None else esc(format_money(m.arr, currency))}</td>'
            f'<td class="num"{attrs(data_testid="summary-nrr", data_currency=currency, data_ratio=m.nrr, data_opening=m.opening_mrr, data_retained=m.retained_mrr)}>'
            f"{format_ratio(m.nrr)}</td>"
        )
        rows.append(
            f"<tr{attrs(data_testid='summary-month', data_currency=currency, data_month=m.date_month.isoformat(), data_partial=str(m.is_partial).lower())}>"
            f"<td>{esc(month_label(m))}</td>"
            f'<td class="num"{attrs(data_testid="summary-revenue-ex-tax", data_currency=currency, data_value=m.revenue_ex_tax)}>'
            f"{esc(format_money(m.revenue_ex_tax, currency))}</td>"
            f'<td class="num"{attrs(data_testid="summary-tax", data_currency=currency, data_value=m.tax)}>'
            f"{esc(format_money(m.tax, currency))}</td>"
            f'<td class="num"{attrs(data_testid="summary-refunds-disputes", data_currency=currency, data_value=m.refunds + m.disputes)}>'
            f"{esc(format_money(m.refunds + m.disputes, currency))}</td>"
            f"{_fees_cell(m, currency)}{saas}</tr>"
        )
    return (
        f'<table{attrs(data_testid="summary-table", data_currency=currency)}>'
        f"<thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _churn_table(currency: str, months: list[ChurnKinds]) -> str:
    if not months:
        return empty(f"{currency}: no subscription churned in these months.")
    head = "".join(f'<th class="num">{esc(CHURN_LABELS[k])}</th>' for k in CHURN_KINDS)
    rows = []
    for m in reversed(months):
        cells = "".join(
            f'<td class="num"{attrs(data_testid="churn-kind", data_currency=currency, data_kind=k, data_value=m.by_kind.get(k, 0))}>'
            + (
                f"{esc(format_money(m.by_kind[k], currency))} "
                f'<span class="note">({format_count(m.customers[k])})</span>'
                if k in m.by_kind
                else "—"
            )
            + "</td>"
            for k in CHURN_KINDS
        )
        rows.append(
            f"<tr{attrs(data_testid='churn-month', data_currency=currency, data_month=m.date_month.isoformat(), data_partial=str(m.is_partial).lower())}>"
            f"<td>{esc(month_label(m))}</td>{cells}"
            f'<td class="num"{attrs(data_testid="churn-total", data_currency=currency, data_value=m.total)}>'
            f"{esc(format_money(m.total, currency))}</td></tr>"
        )
    return (
        f'<table{attrs(data_testid="churn-table", data_currency=currency)}><thead><tr>'
        f'<th>Month</th>{head}<th class="num">Churned MRR</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def monthly_section(data: ReportData) -> str:
    """The last 12 months per currency, and the churned MRR of each month by kind."""
    revenue_missing = data.coverage.unavailable("net_revenue")
    mrr_missing = data.coverage.unavailable("mrr")
    lead = (
        "Per reporting month, all sites added, newest first. Revenue excl. tax is the cash "
        "less sales tax (tax is owed, not earned); refunds and disputes are already taken off. "
        "Fees are the processors' stated fees: a processor that states none (Stripe, PayPal) "
        "leaves the month's fees unknown, never 0. ARR is 12 × MRR; NRR is net MRR retention: "
        "the month's opening MRR after expansion, contraction and churn, over the opening MRR "
        "(new and reactivated subscribers left out)."
    )
    if revenue_missing:
        return section("section-monthly", "Monthly summary", lead, unavailable(revenue_missing))
    blocks = []
    for currency, months in data.summary.items():
        if not months:
            continue
        churn = (
            unavailable(mrr_missing)
            if mrr_missing
            else _churn_table(currency, data.churn.get(currency, []))
        )
        blocks.append(
            f'<div class="block"{attrs(data_testid="monthly-currency", data_currency=currency)}>'
            f"<h3>{esc(currency)}</h3>"
            + (unavailable(f"ARR and NRR: {mrr_missing}") if mrr_missing else "")
            + _summary_table(currency, months, mrr_missing)
            + f"<h4>Churned MRR by kind, {esc(currency)}</h4>"
            '<p class="note">The MRR of subscriptions that ended in the month, by why they '
            "ended: cancelled by the customer, a failed payment, a refund or dispute, or a "
            "reason the platform did not give. In brackets, the subscribers.</p>"
            + churn
            + "</div>"
        )
    return section(
        "section-monthly",
        "Monthly summary",
        lead,
        "".join(blocks) or empty("No revenue in this range."),
    )


def products_section(data: ReportData) -> str:
    """Revenue excl. tax per product in the last full month, the top ones and the rest added
    up, so the rows sum to that month's revenue excl. tax."""
    month = data.last_full_month
    title = "Revenue by product" + (f", {month.strftime('%B %Y')}" if month else "")
    lead = (
        "Revenue excl. tax of the last full month per product, all sites added: a sale is "
        "split evenly across the products it grants, an order's payment across its items by "
        "their totals. Money no product stands behind has its own row."
    )
    reason = data.coverage.unavailable("net_revenue")
    if reason:
        return section("section-products", title, lead, unavailable(reason))
    if month is None:
        return section("section-products", title, lead, empty("No full month yet."))
    blocks = []
    for currency, products in data.products.items():
        if not products:
            continue
        top, rest = products[:TOP_PRODUCTS], products[TOP_PRODUCTS:]
        total = sum(p.revenue_ex_tax for p in products)
        with_site = data.several_sites()
        blank = "<td></td>" if with_site else ""
        rows = "".join(
            f"<tr{attrs(data_testid='product-revenue', data_currency=currency, data_product_id=p.product_id, data_site_id=p.site_id, data_value=p.revenue_ex_tax)}>"
            f"<td>{esc(p.title)}</td>"
            + (f"<td>{'' if p.is_unattributed else esc(data.site_label(p.site_id))}</td>"
               if with_site else "")
            + f"<td>{esc(p.product_id)}</td>"
            f'<td class="num">{format_count(p.transactions)}</td>'
            f'<td class="num">{esc(format_money(p.revenue_ex_tax, currency))}</td>'
            f'<td class="num">{_share(p.revenue_ex_tax, total)}</td></tr>'
            for p in top
        )
        if rest:
            other = sum(p.revenue_ex_tax for p in rest)
            rows += (
                f"<tr{attrs(data_testid='product-revenue-rest', data_currency=currency, data_value=other)}>"
                f"<td>{format_count(len(rest))} other products</td>{blank}<td></td><td></td>"
                f'<td class="num">{esc(format_money(other, currency))}</td>'
                f'<td class="num">{_share(other, total)}</td></tr>'
            )
        rows += (
            f"<tr{attrs(data_testid='product-revenue-total', data_currency=currency, data_value=total)} class=\"total\">"
            f"<td>Total</td>{blank}<td></td><td></td>"
            f'<td class="num">{esc(format_money(total, currency))}</td><td class="num">100%</td></tr>'
        )
        svg = charts.ranked_bars(
            currency,
            [data.chart_label(p.title, p.site_id, p.is_unattributed) for p in top],
            [p.revenue_ex_tax for p in top],
            f"prod-{currency}", f"Revenue excl. tax by product in {currency}",
        )
        table = (
            f'<table{attrs(data_testid="products-table", data_currency=currency)}><thead><tr>'
            f'<th>Product</th>{"<th>Site</th>" if with_site else ""}<th>Product id</th>'
            '<th class="num">Transactions</th>'
            '<th class="num">Revenue excl. tax</th><th class="num">Share</th></tr></thead>'
            f"<tbody>{rows}</tbody></table>"
        )
        caption = (
            f"{currency}: {format_count(len(products))} product"
            f"{'s' if len(products) != 1 else ''}, {format_money(total, currency)} excl. tax"
        )
        blocks.append(figure("chart-products", currency, caption, svg + table))
    return section(
        "section-products", title, lead, "".join(blocks) or empty("No revenue in that month.")
    )


def _share(part: int, total: int) -> str:
    if total == 0:
        return "—"
    return f"{(Decimal(part) * 100 / Decimal(total)).quantize(Decimal('0.1'))}%"
