"""Charts as inline SVG, drawn with matplotlib's object API (no pyplot global state, no display).

Axis positions are floats of major units: that is drawing, not accounting. Every figure a reader
copies (bar labels, tiles, tables) is formatted from the integer cents by `report.money`.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

import matplotlib
from matplotlib import dates as mdates
from matplotlib.axes import Axes
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from creator_sync.report.data import (
    NOT_SENT_STATUSES,
    DelayMonth,
    MrrMonth,
    Payout,
    RevenueDay,
)
from creator_sync.report.money import SYMBOLS, format_money, minor_units

# One palette for every chart, so a colour means the same series everywhere.
COLORS = {
    "gross": "#4C78A8",
    "refunds": "#F58518",
    "disputes": "#E45756",
    "net": "#1F2933",
    "new": "#54A24B",
    "expansion": "#88D27A",
    "reactivation": "#2E8B8B",
    "contraction": "#F2A541",
    "churned": "#E45756",
    "mrr": "#52606D",
    "actual": "#4C78A8",
    "expected": "#B8C4D6",
    "alert": "#D62728",
    "offer": "#4C78A8",
    "partial": "#FBE3B5",
    "max": "#1F2933",
}
# (p50, p95) per provider of a site, in order: one hue each, the p95 lighter
DELAY_COLORS = (
    ("#4C78A8", "#A6BDDB"),
    ("#54A24B", "#B5DDA4"),
    ("#B279A2", "#E0C5D8"),
    ("#F58518", "#FBCB9B"),
)

RC = {
    "svg.fonttype": "none",  # text stays text: small, selectable, uses the viewer's sans-serif
    "text.parse_math": False,  # an offer called "$5 to $50" is text, not a formula
    "svg.hashsalt": "creator-sync",  # deterministic ids, so the same data gives the same file
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans"],
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.edgecolor": "#9AA5B1",
    "axes.grid": True,
    "axes.axisbelow": True,
    "axes.grid.axis": "y",
    "grid.color": "#E4E7EB",
    "grid.linewidth": 0.8,
    "xtick.color": "#52606D",
    "ytick.color": "#52606D",
    "legend.frameon": False,
}

WIDTH_IN = 10.0
DELAY_WIDTH_IN = 6.0  # the settlement-delay charts sit two to a row: a detail, not a headline
MAX_BUCKETS = 60  # payout groups per chart; beyond that bars get thinner than a pixel
BAR_DAYS_MAX = 120  # daily bars up to this many days, step areas beyond


def _major(cents: int, currency: str) -> float:
    return cents / 10 ** minor_units(currency)


def _axis_money(currency: str) -> FuncFormatter:
    """Compact tick labels (`$12.5k`): ticks are a scale, not amounts anyone copies."""
    symbol = SYMBOLS.get(currency.upper(), "")
    suffix = "" if symbol else f" {currency.upper()}"

    def fmt(value: float, _pos: int) -> str:
        sign = "−" if value < 0 else ""
        size = abs(value)
        for limit, unit in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
            if size >= limit:
                return f"{sign}{symbol}{size / limit:.3g}{unit}{suffix}"
        return f"{sign}{symbol}{size:.4g}{suffix}"

    return FuncFormatter(fmt)


_ID = re.compile(r'\bid="([^"]+)"')
_ID_OR_REF = re.compile(r'(\bid="|url\(#|href="#)([^")]+)(?=[")])')


def _to_svg(fig: Figure, prefix: str, title: str) -> str:
    """Serialise to an `<svg>` element fit for inlining: no XML prolog, ids made unique.

    Several matplotlib SVGs in one page would otherwise share ids (clip paths, markers) and a
    chart could clip itself with another chart's rectangle.
    """
    for ax in fig.axes:
        # Name the data marks (bars, areas, dots) so a test can tell "drew data" from "drew axes".
        for i, artist in enumerate([*ax.patches, *ax.collections]):
            artist.set_gid(f"mark{i}")
    buffer = io.StringIO()
    _lay_out_once(fig)
    fig.savefig(buffer, format="svg", metadata={"Date": None})
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg") :]
    ids = set(_ID.findall(svg))
    prefix = re.sub(r"[^A-Za-z0-9_-]", "_", prefix)  # a currency code from the data is not trusted
    svg = _ID_OR_REF.sub(lambda m: f"{m[1]}{prefix}-{m[2]}" if m[2] in ids else m[0], svg)
    # Accessible name and responsive width; the viewBox keeps the aspect ratio.
    svg = re.sub(r'<svg ([^>]*?)width="[^"]*" height="[^"]*"', r"<svg \1", svg, count=1)
    return svg.replace("<svg ", f'<svg role="img" aria-label="{escape(title, quote=True)}" ', 1)


def _lay_out_once(fig: Figure) -> None:
    """Run the constrained layout once, as `savefig` would, then save with the layout fixed.

    With a layout engine set, `savefig` draws the whole figure twice: a first pass with
    rendering switched off, only to run the layout, then the real one. Laying out here with the
    renderer that pass would use (the SVG canvas's, at SVG's 72 dpi) gives the same positions
    for a third less CPU per chart.
    """
    engine = fig.get_layout_engine()
    if engine is None:
        return
    FigureCanvasSVG(fig)  # the canvas `savefig(format="svg")` switches to
    dpi = fig.dpi
    try:
        engine.execute(fig)
    finally:
        fig.dpi = dpi  # the SVG renderer sets 72 and leaves it: `savefig` restores it too
    # no engine at all (`"none"` leaves a placeholder, and `savefig` would still draw twice)
    with matplotlib.rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
        fig.set_layout_engine(None)


def _figure(height_in: float) -> tuple[Figure, Axes]:
    fig = Figure(figsize=(WIDTH_IN, height_in), layout="constrained")
    return fig, fig.add_subplot()


def _bars(
    ax: Axes,
    x: Sequence[float],
    heights: Sequence[float],
    *,
    width: float,
    color: str,
    label: str | None,
    bottoms: Sequence[float] | None = None,
) -> None:
    """Many bars as one PolyCollection: one artist instead of a Rectangle per bar, which is what
    made a year of daily bars or months of waterfall steps slow to lay out and draw."""
    bottoms = bottoms if bottoms is not None else [0.0] * len(x)
    half = width / 2
    verts = [
        [(xi - half, b), (xi - half, b + h), (xi + half, b + h), (xi + half, b)]
        for xi, h, b in zip(x, heights, bottoms, strict=True)
    ]
    ax.add_collection(
        PolyCollection(verts, facecolors=color, edgecolors="none", linewidths=0, label=label)
    )
    ax.autoscale_view()


def revenue_chart(
    currency: str,
    days: Sequence[RevenueDay],
    prefix: str,
    partial_day: dt.date | None = None,
) -> str:
    """Daily gross above zero, refunds and disputes stacked below it, net as a line.

    Bars while a day is still wider than a few pixels; step areas beyond that (one path per
    series keeps a long range small and legible). Refunds and disputes are drawn downwards
    whatever sign the mart stores them with. A partial last day is shaded and named in the
    legend, so its short bar is not read as a bad day.
    """
    with matplotlib.rc_context(RC):
        fig, ax = _figure(3.0)
        x = [float(v) for v in mdates.date2num([d.date_day for d in days])]
        gross = [_major(d.gross, currency) for d in days]
        refunds = [-abs(_major(d.refunds, currency)) for d in days]
        disputes = [-abs(_major(d.disputes, currency)) for d in days]
        below_refunds = [r + d for r, d in zip(refunds, disputes, strict=True)]
        net = [_major(d.net, currency) for d in days]
        if len(days) <= BAR_DAYS_MAX:
            _bars(ax, x, gross, width=0.8, color=COLORS["gross"], label="Gross")
            _bars(ax, x, refunds, width=0.8, color=COLORS["refunds"], label="Refunds")
            _bars(
                ax,
                x,
                disputes,
                width=0.8,
                bottoms=refunds,
                color=COLORS["disputes"],
                label="Disputes",
            )
            ax.plot(x, net, color=COLORS["net"], lw=1.1, label="Net", marker="o", markersize=2)
        else:
            ax.fill_between(x, 0, gross, step="mid", color=COLORS["gross"], label="Gross", lw=0)
            ax.fill_between(
                x, 0, refunds, step="mid", color=COLORS["refunds"], label="Refunds", lw=0
            )
            ax.fill_between(
                x,
                refunds,
                below_refunds,
                step="mid",
                color=COLORS["disputes"],
                label="Disputes",
                lw=0,
            )
            ax.plot(x, net, color=COLORS["net"], lw=0.9, label="Net", drawstyle="steps-mid")
        if partial_day is not None:
            (at,) = mdates.date2num([partial_day])
            ax.axvspan(
                at - 0.5, at + 0.5, color=COLORS["partial"], zorder=0, lw=0, label="Partial day"
            )
            _scale_on_complete_days(ax, days, partial_day, gross, below_refunds, net)
        locator = mdates.AutoDateLocator()
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
        ax.axhline(0, color="#9AA5B1", lw=0.8)
        ax.yaxis.set_major_formatter(_axis_money(currency))
        _legend(ax, ncols=5 if partial_day is not None else 4)
        ax.margins(x=0.01)
        return _to_svg(fig, prefix, f"Daily net revenue (tax included) in {currency}")


def _scale_on_complete_days(
    ax: Axes,
    days: Sequence[RevenueDay],
    partial_day: dt.date,
    gross: Sequence[float],
    below: Sequence[float],
    net: Sequence[float],
) -> None:
    """The y axis fits the complete days: a partial day (a few hours, or a burst of activity
    the day is not over for) never sets the scale. A bar beyond it is cut at the edge."""
    complete = [i for i, d in enumerate(days) if d.date_day != partial_day]
    if not complete:
        return
    top = max([0.0, *(gross[i] for i in complete), *(net[i] for i in complete)])
    bottom = min([0.0, *(below[i] for i in complete), *(net[i] for i in complete)])
    span = (top - bottom) or 1.0
    high = top + span * 0.08
    ax.set_ylim(bottom - span * 0.05, high)
    (last,) = [i for i, d in enumerate(days) if d.date_day == partial_day] or [None]
    if last is not None and max(gross[last], net[last]) > high:
        # its bar runs off the axis: say so where it is cut, the amount is in the caption
        (at,) = mdates.date2num([partial_day])
        ax.annotate("partial day ↑", (at, high), xytext=(-4, -2), textcoords="offset points",
                    ha="right", va="top", fontsize=7.5, color="#7A5A00")


MOVEMENTS = ("new", "expansion", "reactivation", "contraction", "churned")
MOVEMENT_LABELS = {
    "new": "New",
    "expansion": "Expansion",
    "reactivation": "Reactivation",
    "contraction": "Contraction",
    "churned": "Churned",
    "mrr": "MRR",
}


@dataclass(frozen=True)
class Waterfall:
    """Geometry of the MRR waterfall, in major units: per series the bars' x, height, bottom."""

    width: float
    bars: dict[str, tuple[list[float], list[float], list[float]]]
    connectors: list[list[tuple[float, float]]]
    top: float


def waterfall(currency: str, months: Sequence[MrrMonth]) -> Waterfall:
    """Lay out the bars: each month walks from the previous MRR through its signed movements,
    then a total bar stands on zero at the month's MRR (the mart, not our sum, says where)."""
    names = (*MOVEMENTS, "mrr")
    width = 0.84 / len(names)
    bars: dict[str, tuple[list[float], list[float], list[float]]] = {n: ([], [], []) for n in names}
    connectors: list[list[tuple[float, float]]] = []
    level = _major(months[0].mrr - _net_movement(months[0]), currency)
    top = level  # highest point drawn: floating bars defeat matplotlib's autoscale margins
    previous: tuple[float, float] | None = None  # (right edge of the last bar, its level)
    for i, month in enumerate(months):
        for j, name in enumerate(names):
            x = i - 0.42 + (j + 0.5) * width
            if name == "mrr":
                bottom, height = 0.0, _major(month.mrr, currency)
                level = height
            else:
                bottom, height = level, _major(getattr(month, name), currency)  # signed
                level += height
            if previous is not None:
                connectors.append([previous, (x - width * 0.45, previous[1])])
            xs, heights, bottoms = bars[name]
            xs.append(x)
            heights.append(height)
            bottoms.append(bottom)
            top = max(top, bottom, bottom + height)
            previous = (x + width * 0.45, level)
    return Waterfall(width, bars, connectors, top)


def mrr_waterfall(currency: str, months: Sequence[MrrMonth], prefix: str) -> str:
    """Per month the movements float from last month's MRR (up for new, expansion, reactivation;
    down for contraction and churn, which the mart stores negative), then a dark total bar lands
    on the month's MRR. Thin connectors carry each level to the next bar."""
    layout = waterfall(currency, months)
    with matplotlib.rc_context(RC):
        fig, ax = _figure(3.2)
        ax.add_collection(LineCollection(layout.connectors, colors="#9AA5B1", linewidths=0.6))
        for name, (xs, heights, bottoms) in layout.bars.items():
            _bars(
                ax,
                xs,
                heights,
                bottoms=bottoms,
                width=layout.width * 0.9,
                color=COLORS[name],
                label=MOVEMENT_LABELS[name],
            )
        ax.set_xticks(range(len(months)), [m.date_month.strftime("%b %Y") for m in months])
        ax.yaxis.set_major_formatter(_axis_money(currency))
        ax.set_xlim(-0.5, len(months) - 0.5)
        ax.set_ylim(0, layout.top * 1.08 if layout.top > 0 else 1)
        _legend(ax, ncols=6)
        if len(months) > 8:
            for tick in ax.get_xticklabels():
                tick.set_rotation(45)
                tick.set_ha("right")
        return _to_svg(fig, prefix, f"MRR movements per month in {currency}")


def _legend(ax: Axes, ncols: int, **kwargs: object) -> None:
    """Above the plot, left-aligned: a legend inside the axes would hide bars."""
    ax.legend(
        loc="lower left",
        bbox_to_anchor=(0, 1.0),
        ncols=ncols,
        fontsize=8,
        borderaxespad=0.2,
        handlelength=1.2,
        **kwargs,
    )


def _net_movement(month: MrrMonth) -> int:
    """Movements are signed in the mart (contraction and churn negative): MRR = previous + sum."""
    return sum(getattr(month, name) for name in MOVEMENTS)


@dataclass(frozen=True)
class PayoutBucket:
    start: dt.date
    actual: int
    expected: int
    unreconciled: int


def bucket_payouts(payouts: Sequence[Payout]) -> tuple[str, list[PayoutBucket]]:
    """Group sent payouts by day, week or month, whichever keeps at most MAX_BUCKETS groups.

    Failed and canceled payouts are left out: their money never arrived and rolls into the next
    payout, which then carries both the actual and the expected amount.
    """
    sent = [p for p in payouts if p.status not in NOT_SENT_STATUSES]
    for grain, key in (
        ("day", lambda d: d),
        ("week", lambda d: d - dt.timedelta(days=d.weekday())),
        ("month", lambda d: d.replace(day=1)),
    ):
        starts = sorted({key(p.initiated_on) for p in sent})
        if len(starts) <= MAX_BUCKETS or grain == "month":
            break
    buckets = {s: [0, 0, 0] for s in starts}
    for p in sent:
        b = buckets[key(p.initiated_on)]
        b[0] += p.amount
        b[1] += p.expected
        b[2] += 0 if p.is_reconciled else 1
    return grain, [PayoutBucket(s, *v) for s, v in buckets.items()]


def month_ticks(starts: Sequence[dt.date]) -> list[str]:
    """Short month labels for a narrow chart: `Mar`, with the year under the first month and
    under each January."""
    return [
        f"{s:%b}\n{s:%Y}" if i == 0 or s.month == 1 else f"{s:%b}" for i, s in enumerate(starts)
    ]


LABEL_WIDTH = 40  # characters per line of a bar's label; longer ones wrap, never cut


def wrap_label(text: str) -> str:
    """A bar's label on as many lines as it needs: every word of it stays readable."""
    return "\n".join(textwrap.wrap(text, LABEL_WIDTH, break_long_words=False)) or text


def ranked_bars(
    currency: str, labels: Sequence[str], values: Sequence[int], prefix: str, title: str
) -> str:
    """Horizontal bars, best at the top, each labelled with its exact amount (integer cents
    formatted, not the axis's rounding). Labels wrap instead of being cut."""
    wrapped = [wrap_label(label) for label in labels]
    lines = sum(label.count("\n") + 1 for label in wrapped)
    with matplotlib.rc_context({**RC, "axes.grid.axis": "x"}):
        fig, ax = _figure(0.5 + 0.2 * lines + 0.12 * len(labels))
        ys = list(range(len(labels)))[::-1]
        majors = [_major(v, currency) for v in values]
        ax.barh(ys, majors, 0.7, color=COLORS["offer"], lw=0)
        ax.set_yticks(ys, wrapped)
        ax.xaxis.set_major_formatter(_axis_money(currency))
        top = max([*majors, 0.0])
        for y, major, cents in zip(ys, majors, values, strict=True):
            ax.text(
                max(major, 0) + top * 0.01,
                y,
                format_money(cents, currency),
                va="center",
                fontsize=8,
                color="#323F4B",
            )
        ax.set_xlim(min([*majors, 0.0]), top * 1.18 if top > 0 else 1)
        return _to_svg(fig, prefix, title)


def settlement_delay_chart(months: Sequence[DelayMonth], prefix: str, title: str) -> str:
    """Observed days from a line to its payout, per month: the p50 bar, the p95 bar above it
    (lighter) and the max as a tick; one group and hue per provider when a site has several."""
    providers = sorted({m.provider for m in months})
    starts = sorted({m.date_month for m in months})
    slot = {start: i for i, start in enumerate(starts)}
    width = 0.8 / len(providers)
    with matplotlib.rc_context({**RC, "font.size": 8}):
        fig = Figure(figsize=(DELAY_WIDTH_IN, 1.9), layout="constrained")
        ax = fig.add_subplot()
        for k, provider in enumerate(providers):
            rows = [m for m in months if m.provider == provider]
            xs = [slot[m.date_month] - 0.4 + width * (k + 0.5) for m in rows]
            suffix = f" · {provider}" if len(providers) > 1 else ""
            p50_color, p95_color = DELAY_COLORS[k % len(DELAY_COLORS)]
            _bars(ax, xs, [m.p50 for m in rows], width=width * 0.9, color=p50_color,
                  label=f"p50{suffix}")
            _bars(ax, xs, [m.p95 - m.p50 for m in rows], bottoms=[m.p50 for m in rows],
                  width=width * 0.9, color=p95_color, label=f"p95{suffix}")
            ax.scatter(xs, [m.max for m in rows], marker="_", s=120, color=COLORS["max"],
                       zorder=3, label="max" if k == 0 else None)
        step = max(1, len(starts) // 12)
        ax.set_xticks(list(range(len(starts)))[::step], month_ticks(starts)[::step])
        ax.set_ylim(bottom=min([0, *(m.p50 for m in months)]),
                    top=max([1, *(m.max for m in months)]) * 1.15)
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.set_ylabel("days", color="#52606D")
        ax.set_xlabel("month of the line (reporting time zone)", color="#52606D")
        _legend(ax, ncols=3 if len(providers) == 1 else 4)
        return _to_svg(fig, prefix, title)
