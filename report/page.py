"""Assemble the self-contained HTML page from `ReportData`: header, what the figures are built
on (figures through, last sync, build parameters, coverage, warnings), tiles, then the sections.

Every figure carries `data-testid` (what it is), `data-currency` where it is money and
`data-value` (the exact integer cents or count), so a browser test or a scraper reads the
numbers without parsing formatted text.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from creator_sync.models.build_info import package_version
from creator_sync.models.coverage import WINDOW_DAYS, fmt_age
from creator_sync.models.headline import METHODS
from creator_sync.report.data import ReportData
from creator_sync.report.html import attrs, esc, fmt_ts, unavailable
from creator_sync.report.money import format_count, format_money, format_percent_change
from creator_sync.report.monthly import monthly_section, products_section
from creator_sync.report.sections import (
    mrr_section,
    offers_section,
    payouts_section,
    revenue_section,
)
from creator_sync.report.style import CSS

# Nothing may load from anywhere: the page must render identically offline and in a mail client.
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def _header(data: ReportData, generated_at: dt.datetime) -> str:
    names = data.site_names
    if data.site_id:
        name = names.get(data.site_id)
        scope = f"site {esc(name)} ({esc(data.site_id)})" if name else f"site {esc(data.site_id)}"
    else:
        scope = "all sites" + (f": {esc(', '.join(names.values()))}" if names else "")
    parts = [scope]
    if data.since:
        parts.append(f"charts since {esc(data.since.isoformat())}")
    parts.append(f"generated {esc(fmt_ts(generated_at))}")
    return f"<header><h1>Finance report</h1><p>{' · '.join(parts)}</p></header>"


def _through(data: ReportData) -> str:
    """The last day the figures include, in the reporting zone, and the partial day if any."""
    window, zone = data.headline.window, data.coverage.build.timezone
    if window.end is None:
        return (
            f'<dt>Figures through</dt><dd data-testid="figures-through">no reporting day yet '
            f"(time zone <strong>{esc(zone)}</strong>)</dd>"
        )
    text = (
        f"<strong>{esc(window.end.isoformat())}</strong>, the last complete day in the reporting "
        f"time zone <strong>{esc(zone)}</strong>."
    )
    if window.partial_day is not None:
        text += (
            f" {esc(window.partial_day.isoformat())} is partial: the transactions reach "
            f"{esc(fmt_ts(window.data_through_at))}. The daily chart shows it, shaded; the 30-day "
            "comparisons leave it out."
        )
    return (
        f"<dt>Figures through</dt><dd{attrs(data_testid='figures-through', data_date=window.end.isoformat(), data_partial_day=window.partial_day.isoformat() if window.partial_day else None)}>"
        f"{text}</dd>"
    )


def _last_sync(data: ReportData, generated_at: dt.datetime) -> str:
    """When the warehouse last loaded data from the platform: a moment, never a reporting day."""
    fresh = data.freshness
    last = fresh.last_sync_at if fresh and fresh.found else data.coverage.last_sync_at
    if last is None:
        body = "no completed sync recorded"
    else:
        body = (
            f"<strong>{esc(fmt_ts(last))}</strong>, {esc(fmt_age(generated_at - last))} before "
            "this report: when creator-sync last loaded the platform's data (not a day the "
            "figures reach)"
        )
    at = last.isoformat() if last else None
    return f"<dt>Last sync</dt><dd{attrs(data_testid='last-sync', data_at=at)}>{body}</dd>"


def _built_with(data: ReportData) -> str:
    build = data.coverage.build
    return (
        f"<dt>Built with</dt><dd{attrs(data_testid='build-parameters', data_timezone=build.timezone, data_settlement_delay_days=build.settlement_delay_days)}>"
        f"reporting time zone <strong>{esc(build.timezone)}</strong> · settlement delay "
        f"<strong>{esc(build.settlement_delay)}</strong> · models built "
        f"{esc(fmt_ts(build.built_at))} by creator-sync {esc(build.creator_sync_version)} from "
        f"dataset {esc(build.dataset)}</dd>"
    )


def _built_on(data: ReportData) -> str:
    """One row per resource the figures count: records, newest record, what its last sync did."""
    rows = "".join(
        f"<tr{attrs(data_testid='coverage-resource', data_resource=r.resource, data_loaded=str(r.is_loaded).lower(), data_value=r.records_count, class_='alert' if r.has_problem else None)}>"
        f'<td>{esc(r.label)}</td><td class="num">{format_count(r.records_count)}</td>'
        f"<td>{esc(fmt_ts(r.newest_record_at))}</td><td>{esc(r.last_sync())}</td></tr>"
        for r in data.coverage.resources.values()
    )
    note = data.coverage.a7_note()
    fresh = data.freshness
    counts = ""
    if fresh is not None and fresh.found and fresh.rows:
        listed = " · ".join(f"{esc(t)} {format_count(n)}" for t, n in sorted(fresh.rows.items()))
        counts = f"<details><summary>rows per raw table</summary><p>{listed}</p></details>"
    return (
        '<dt>Built on</dt><dd><table><thead><tr><th>Records</th><th class="num">Loaded</th>'
        "<th>Newest</th><th>Last sync</th></tr></thead>"
        f'<tbody>{rows}</tbody></table>'
        + (f'<p class="alert" data-testid="a7-note">{esc(note)}.</p>' if note else "")
        + counts
        + "</dd>"
    )


def _warnings(data: ReportData, generated_at: dt.datetime) -> list[str]:
    """What a reader must know before reading a figure: missing resources, staleness, and
    models older than the last sync."""
    out = [
        f'<p class="alert"{attrs(data_testid="coverage-problem", data_resource=r.resource)}>'
        f"{esc(r.summary())}</p>"
        for r in data.coverage.problems
    ]
    staleness = data.coverage.staleness(generated_at, data.stale_after)
    out += [f'<p class="alert" data-testid="stale">{esc(line)}</p>' for line in staleness.lines()]
    fresh, built = data.freshness, data.coverage.build.built_at
    if fresh is not None and fresh.last_sync_at and fresh.last_sync_at > built:
        out.append(
            '<p class="alert" data-testid="models-outdated">The warehouse was synced at '
            f"{esc(fmt_ts(fresh.last_sync_at))}, after these models were built "
            f"({esc(fmt_ts(built))}): run <code>creator-sync models</code> to include it.</p>"
        )
    return out


def _basis(data: ReportData, generated_at: dt.datetime) -> str:
    """The block above the tiles: what the figures reach, when the data was synced, the
    parameters they were built with, and what they are built on."""
    warnings = _warnings(data, generated_at)
    fresh = data.freshness
    dataset = "" if fresh is None or fresh.found else (
        f'<p class="alert">Raw dataset <strong>{esc(fresh.dataset)}</strong> not found in this '
        "database: no sync information.</p>"
    )
    return (
        f'<section class="basis{" stale" if warnings else ""}"'
        f'{attrs(data_testid="basis", data_warnings=len(warnings))}>'
        + "".join(warnings)
        + dataset
        + "<dl>"
        + _through(data)
        + _last_sync(data, generated_at)
        + _built_with(data)
        + _built_on(data)
        + "</dl></section>"
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
            "revenue-ex-tax-30d",
            currency,
            current,
            _change(
                "revenue-ex-tax-prior-30d",
                currency,
                current,
                h.revenue_prior_30d.get(currency, 0),
                f"prior {WINDOW_DAYS} days",
            ),
        )
        for currency, current in h.revenue_30d.items()
    ]
    window = (
        f"Revenue excl. tax, {WINDOW_DAYS} days to {h.window.end.isoformat()}"
        if h.window.end
        else f"Revenue excl. tax, last {WINDOW_DAYS} days"
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
    unpaid_note = (
        '<div class="note">settled, not yet in a paid payout (settlement delay '
        f"{esc(data.coverage.build.settlement_delay)})</div>"
    )
    payouts_body = ""
    if h.payouts_count:
        split = ", ".join(
            f"<span{attrs(data_testid='tile-reconciliation-method', data_method=name, data_value=m.payouts)}>"
            f"{format_count(m.payouts)} {esc(METHODS.get(name, name))}</span>"
            for name, m in sorted(h.methods.items())
        )
        payouts_body = (
            f'<div class="line"><span class="amount"{attrs(data_testid="unreconciled-payouts-count", data_value=h.unreconciled_payouts)}>'
            f"{format_count(h.unreconciled_payouts or 0)}</span> of "
            f"{format_count(h.payouts_count)}</div><div class=\"note\">reconciled {split}</div>"
        )
    partial = h.window.partial_day
    net_note = (
        f'<div class="note">{esc(partial.isoformat())} is partial and not counted</div>'
        if partial and net_lines
        else ""
    )

    def body(figure: str, lines: str) -> str:
        reason = h.unavailable.get(figure)
        return unavailable(reason) if reason else lines or none

    return (
        '<div class="tiles" data-testid="tiles">'
        + "".join(
            [
                _tile(window, body("net_revenue", "".join(net_lines) + net_note), "tile-net-revenue"),
                _tile(mrr_title, body("mrr", "".join(mrr_lines)), "tile-mrr"),
                _tile("Active subscriptions", body("mrr", subs), "tile-active-subscriptions"),
                _tile(
                    "Unpaid balance",
                    body("unpaid_balance", "".join(unpaid_lines) and "".join(unpaid_lines) + unpaid_note),
                    "tile-unpaid-balance",
                ),
                _tile(
                    "Unreconciled payouts",
                    body("unreconciled_payouts", payouts_body),
                    "tile-unreconciled-payouts",
                ),
            ]
        )
        + "</div>"
    )


def render_page(data: ReportData, generated_at: dt.datetime | None = None) -> str:
    """The whole HTML document as one string."""
    generated_at = generated_at or dt.datetime.now(dt.UTC)
    title = "Finance report" + (f" — site {data.site_id}" if data.site_id else "")
    body: Iterable[str] = (
        _header(data, generated_at),
        _basis(data, generated_at),
        _tiles(data),
        monthly_section(data),
        revenue_section(data),
        mrr_section(data),
        products_section(data),
        offers_section(data),
        payouts_section(data),
        f"<footer>creator-sync {esc(package_version())}. Amounts are exact to the cent; chart axes "
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
