"""Assemble the self-contained HTML page from `ReportData`: header, freshness line, tiles, then
the sections.

Every figure carries `data-testid` (what it is), `data-currency` where it is money and
`data-value` (the exact integer cents or count), so a browser test or a scraper reads the
numbers without parsing formatted text.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from importlib.metadata import PackageNotFoundError, version

from report.data import WINDOW_DAYS, ReportData
from report.html import attrs, esc, fmt_ts
from report.money import format_count, format_money, format_percent_change
from report.sections import mrr_section, offers_section, payouts_section, revenue_section
from report.style import CSS

# Nothing may load from anywhere: the page must render identically offline and in a mail client.
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
# A sync older than this gets a red frame on the freshness line: the figures may be out of date.
STALE_AFTER = dt.timedelta(days=2)


def _header(data: ReportData, generated_at: dt.datetime) -> str:
    names = data.site_names
    if data.site_id:
        name = names.get(data.site_id)
        scope = f"site {esc(name)} ({esc(data.site_id)})" if name else f"site {esc(data.site_id)}"
    else:
        scope = "all sites" + (f": {esc(', '.join(names.values()))}" if names else "")
    parts = [scope]
    if data.headline.as_of:
        parts.append(f"figures through {esc(data.headline.as_of.isoformat())}")
    if data.since:
        parts.append(f"charts since {esc(data.since.isoformat())}")
    parts.append(f"generated {esc(fmt_ts(generated_at))}")
    return f"<header><h1>Finance report</h1><p>{' · '.join(parts)}</p></header>"


def _age(delta: dt.timedelta) -> str:
    """`3 hours`, `2 days`: coarse on purpose, it answers "is this recent?"."""
    seconds = max(0, int(delta.total_seconds()))
    for unit, size in (("day", 86_400), ("hour", 3_600), ("minute", 60)):
        if seconds >= size:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return "less than a minute"


def _freshness(data: ReportData, generated_at: dt.datetime) -> str:
    fresh = data.freshness
    if fresh is None or not fresh.found:
        dataset = esc(fresh.dataset if fresh else "?")
        return (
            f'<p class="freshness stale" data-testid="freshness" data-found="false">'
            f"Raw dataset <strong>{dataset}</strong> not found in this database: "
            f"no sync information.</p>"
        )
    counts = " · ".join(f"{esc(t)} {format_count(n)}" for t, n in sorted(fresh.rows.items()))
    last, age, stale = "", "", ""
    if fresh.last_sync_at:
        last = fresh.last_sync_at.isoformat()
        delta = generated_at - fresh.last_sync_at
        age = f" ({_age(delta)} before this report)"
        stale = " stale" if delta > STALE_AFTER else ""
    return (
        f'<p class="freshness{stale}" data-testid="freshness" data-found="true"'
        f'{attrs(data_last_sync=last)} data-total-rows="{sum(fresh.rows.values())}">'
        f"Last sync <strong>{esc(fmt_ts(fresh.last_sync_at))}</strong>{esc(age)}"
        f" · dataset <strong>{esc(fresh.dataset)}</strong> · rows per table: {counts or 'none'}</p>"
    )


def _money_line(testid: str, currency: str, cents: int, extra: str = "") -> str:
    return (
        f'<div class="line"><span class="amount"{attrs(data_testid=testid, data_currency=currency, data_value=cents)}>'
        f"{esc(format_money(cents, currency))}</span>{extra}</div>"
    )


def _change(testid: str, currency: str, current: int, prior: int, label: str) -> str:
    """`+12.3% (+$45.00) vs <label>: $365.00`, green up, red down; the prior figure as data."""
    change = format_percent_change(current, prior)
    diff = current - prior
    direction = "up" if diff > 0 else "down" if diff < 0 else ""
    return (
        f'<div class="delta {direction}"'
        f"{attrs(data_testid=testid, data_currency=currency, data_value=prior)}>"
        f"{esc(change or 'n/a')} ({esc(format_money(diff, currency, signed=True))}) vs "
        f"{esc(label)}: {esc(format_money(prior, currency))}</div>"
    )


def _tile(title: str, body: str, testid: str) -> str:
    return f'<div class="tile" data-testid="{testid}"><h2>{esc(title)}</h2>{body}</div>'


def _tiles(data: ReportData) -> str:
    h = data.headline
    none = '<div class="line empty">no data</div>'

    net_lines = [
        _money_line(
            "net-revenue-30d",
            currency,
            current,
            _change(
                "net-revenue-prior-30d",
                currency,
                current,
                h.net_prior_30d.get(currency, 0),
                f"prior {WINDOW_DAYS} days",
            ),
        )
        for currency, current in h.net_30d.items()
    ]
    window = (
        f"Net revenue, {WINDOW_DAYS} days to {h.as_of.isoformat()}"
        if h.as_of
        else f"Net revenue, last {WINDOW_DAYS} days"
    )

    mrr_title = f"MRR, {h.mrr_month.strftime('%B %Y')}" if h.mrr_month else "MRR"
    last_month = (
        (h.mrr_month - dt.timedelta(days=1)).strftime("%B") if h.mrr_month else "last month"
    )
    mrr_lines = [
        _money_line(
            "mrr", c, v, _change("mrr-prior-month", c, v, h.mrr_prior_month.get(c, 0), last_month)
        )
        for c, v in h.mrr.items()
    ]

    total_subs = sum(h.active_subscriptions.values())
    split = ", ".join(
        f"<span{attrs(data_testid='active-subscriptions-currency', data_currency=c, data_value=n)}>"
        f"{esc(c)} {format_count(n)}</span>"
        for c, n in h.active_subscriptions.items()
    )
    subs = (
        f'<div class="line"><span class="amount"{attrs(data_testid="active-subscriptions", data_value=total_subs)}>'
        f"{format_count(total_subs)}</span></div>"
        + (f'<div class="note">{split}</div>' if split else "")
    )

    unpaid_lines = [_money_line("unpaid-balance", c, v) for c, v in h.unpaid_balance.items()]
    unpaid_note = '<div class="note">settled, not yet in a paid payout</div>'

    return (
        '<div class="tiles" data-testid="tiles">'
        + "".join(
            [
                _tile(window, "".join(net_lines) or none, "tile-net-revenue"),
                _tile(mrr_title, "".join(mrr_lines) or none, "tile-mrr"),
                _tile("Active subscriptions", subs, "tile-active-subscriptions"),
                _tile(
                    "Unpaid balance",
                    ("".join(unpaid_lines) + unpaid_note) if unpaid_lines else none,
                    "tile-unpaid-balance",
                ),
            ]
        )
        + "</div>"
    )


def _package_version() -> str:
    try:
        return version("creator-sync")
    except PackageNotFoundError:
        return "dev"


def render_page(data: ReportData, generated_at: dt.datetime | None = None) -> str:
    """The whole HTML document as one string."""
    generated_at = generated_at or dt.datetime.now(dt.UTC)
    title = "Finance report" + (f" — site {data.site_id}" if data.site_id else "")
    body: Iterable[str] = (
        _header(data, generated_at),
        _freshness(data, generated_at),
        _tiles(data),
        revenue_section(data),
        mrr_section(data),
        payouts_section(data),
        offers_section(data),
        f"<footer>creator-sync {esc(_package_version())}. Amounts are exact to the cent; chart axes "
        "are rounded.</footer>",
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head>"
        f"<body><main>{''.join(body)}</main></body></html>\n"
    )
