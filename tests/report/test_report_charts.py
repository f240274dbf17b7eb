"""Chart geometry and SVG hygiene, checked without a browser."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from creator_sync.report.charts import (
    MOVEMENTS,
    bucket_payouts,
    mrr_waterfall,
    revenue_chart,
    waterfall,
)
from creator_sync.report.data import MrrMonth, Payout, RevenueDay


def month(
    start: dt.date,
    mrr: int,
    new: int,
    expansion: int,
    reactivation: int,
    contraction: int,
    churned: int,
) -> MrrMonth:
    return MrrMonth(start, mrr, new, expansion, contraction, churned, reactivation, 0)


MONTHS = [  # previous MRR before January: 10,000 cents
    month(dt.date(2026, 1, 1), 12_500, 3_000, 500, 0, -200, -800),
    month(dt.date(2026, 2, 1), 11_000, 1_000, 0, 700, -1_200, -2_000),
    month(dt.date(2026, 3, 1), 11_000, 0, 0, 0, 0, 0),
]


def test_waterfall_walks_from_last_months_mrr_to_this_months() -> None:
    layout = waterfall("USD", MONTHS)
    starts = [10_000, 12_500, 11_000]
    for i, m in enumerate(MONTHS):
        level = starts[i] / 100
        for name in MOVEMENTS:
            _, heights, bottoms = layout.bars[name]
            assert bottoms[i] == pytest.approx(level), (m.date_month, name)
            assert heights[i] == pytest.approx(getattr(m, name) / 100)
            level += heights[i]
        assert level == pytest.approx(m.mrr / 100)  # the movements land on the month's MRR
        _, totals, total_bottoms = layout.bars["mrr"]
        assert (total_bottoms[i], totals[i]) == (0.0, m.mrr / 100)
    assert len(layout.connectors) == 6 * len(MONTHS) - 1
    assert all(a[1] == b[1] for a, b in layout.connectors), "connectors are horizontal"
    # highest point: February climbs from 125 by new 10 and reactivation 7 before falling
    assert layout.top == pytest.approx(142.0)


def payout(
    day: int,
    *,
    status: str = "paid",
    amount: int = 1_000,
    expected: int = 1_000,
    start: dt.date = dt.date(2025, 1, 1),
) -> Payout:
    initiated = start + dt.timedelta(days=day)
    return Payout(
        f"p{day}",
        "s1",
        "USD",
        status,
        initiated,
        initiated,
        amount,
        expected,
        amount - expected,
        1,
        amount == expected,
    )


@pytest.mark.parametrize(
    ("days", "grain", "groups"), [(60, "day", 60), (61, "week", 9), (500, "month", 17)]
)
def test_payouts_are_grouped_finely_enough_to_read(days: int, grain: str, groups: int) -> None:
    found, buckets = bucket_payouts([payout(d) for d in range(days)])
    assert (found, len(buckets)) == (grain, groups)
    assert sum(b.actual for b in buckets) == 1_000 * days


def test_failed_payouts_stay_out_of_the_chart_and_mismatches_are_flagged() -> None:
    payouts = [
        payout(0),
        payout(1, status="failed", amount=700, expected=0),
        payout(2, amount=950),
        payout(3, status="canceled"),
    ]
    grain, buckets = bucket_payouts(payouts)
    assert grain == "day"
    assert [(b.start.day, b.actual, b.expected, b.unreconciled) for b in buckets] == [
        (1, 1_000, 1_000, 0),
        (3, 950, 1_000, 1),
    ]


def test_daily_bars_one_per_day_and_areas_for_long_ranges() -> None:
    start = dt.date(2025, 1, 1)

    def days(n: int) -> list[RevenueDay]:
        return [RevenueDay(start + dt.timedelta(days=i), 1_000, -100, -50, 850) for i in range(n)]

    short = revenue_chart("EUR", days(30), "rev-EUR")
    gross = re.search(r'<g id="rev-EUR-mark0">(.*?)</g>', short, re.S)
    assert gross and gross.group(1).count("<path") == 30
    long = revenue_chart("EUR", days(400), "rev-EUR")
    gross = re.search(r'<g id="rev-EUR-mark0">(.*?)</g>', long, re.S)
    assert gross and gross.group(1).count("<path") == 1  # one step area, not 400 bars


def test_inline_svg_is_prefixed_and_safe() -> None:
    svg = mrr_waterfall('G"B<P', MONTHS, 'mrr-G"B<P')
    assert svg.startswith("<svg ") and "<?xml" not in svg and "<!DOCTYPE" not in svg
    ids = re.findall(r'\bid="([^"]+)"', svg)
    assert ids and all(i.startswith("mrr-G_B_P-") for i in ids)
    assert 'aria-label="MRR movements per month in G&quot;B&lt;P"' in svg
    assert not re.search(r'<svg [^>]*\bwidth="', svg), "width comes from the page's CSS"


def test_one_layout_pass_draws_what_savefig_s_own_layout_draws(monkeypatch) -> None:
    """Each chart is laid out once before it is saved (`_lay_out_once`, one draw fewer): the
    SVG is byte for byte the one `savefig` writes when it runs the constrained layout itself."""
    from creator_sync.report import charts
    from creator_sync.report.data import DelayMonth

    start = dt.date(2025, 11, 1)
    days = [RevenueDay(start + dt.timedelta(days=i), 1_000 + 37 * i, -100, -50 * (i % 3), 850)
            for i in range(45)]
    delays = [DelayMonth("s1", provider, dt.date(2025, m, 1), 10, 2 + m % 3, 6, 9)
              for m in (9, 10, 11, 12) for provider in ("stripe", "paypal")]

    def draw_all() -> list[str]:
        return [
            charts.revenue_chart("USD", days, "rev", partial_day=days[-1].date_day),
            charts.mrr_waterfall("USD", MONTHS, "mrr"),
            charts.ranked_bars("EUR", ["A long offer name that wraps onto a second line here",
                                       "Short"], [123_456, -7_800], "offers", "Offers"),
            charts.settlement_delay_chart(delays, "delay", "Settlement delay"),
        ]

    once = draw_all()
    monkeypatch.setattr(charts, "_lay_out_once", lambda fig: None)  # savefig lays out
    assert draw_all() == once
