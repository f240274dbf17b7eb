"""Subscriber movements, SaaS metrics and subscription cohorts on a hand-made book whose every
figure is worked out by hand from the raw rows (subscriptions_data.py): a customer who cancels,
one whose payment fails, one refunded, one ending without a reason, an annual subscriber kept all
year, expansion, contraction and reactivation; and the movements against an independent Python
computation on random books (test_mrr.py's)."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

import pytest
from models_helpers import fetch_dicts, ts
from subscriptions_data import SITE, A, B, C, D, E, F, G, subscription_rows
from test_mrr import AS_OF as RANDOM_AS_OF
from test_mrr import _customer_mrr, _random_book

from creator_sync.models.runner import run_models

AS_OF = dt.date(2024, 11, 30)


def _month(text: str) -> dt.date:
    return dt.date.fromisoformat(text + "-01")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> str:
    from models_helpers import write_raw

    path = write_raw(tmp_path_factory.mktemp("saas") / "raw.duckdb", subscription_rows())
    result = run_models(path, as_of=AS_OF)
    assert not result.failed_tests, result.failed_tests
    return path


def test_each_movement_is_one_row_with_its_reason_and_kind(built: str) -> None:
    rows = fetch_dicts(built, "select * from analytics.mrr_movements")
    got = {(r["customer_id"], r["date_month"]): (
        r["movement"], r["mrr_before_in_cents"], r["mrr_after_in_cents"], r["mrr_change_in_cents"],
        r["churn_purchase_id"], r["churn_reason"], r["churn_kind"]) for r in rows}
    assert len(got) == len(rows)
    assert got == {
        (C, _month("2023-12")): ("new", 0, 1000, 1000, None, None, None),
        (A, _month("2024-01")): ("new", 0, 1000, 1000, None, None, None),
        (D, _month("2024-01")): ("new", 0, 1500, 1500, None, None, None),
        (E, _month("2024-01")): ("new", 0, 500, 500, None, None, None),
        (B, _month("2024-02")): ("new", 0, 2000, 2000, None, None, None),
        (E, _month("2024-02")): ("churn", 500, 0, -500, "PE1", "refunded", "refunded_or_disputed"),
        (D, _month("2024-03")): ("expansion", 1500, 2500, 1000, None, None, None),
        (F, _month("2024-03")): ("new", 0, 300, 300, None, None, None),
        (A, _month("2024-04")): ("churn", 1000, 0, -1000, "PA", "canceled_by_customer", "voluntary"),
        (B, _month("2024-04")): ("churn", 2000, 0, -2000, "PB", "payment_failed", "payment_failed"),
        (D, _month("2024-04")): ("contraction", 2500, 2000, -500, None, None, None),
        (E, _month("2024-05")): ("reactivation", 0, 700, 700, None, None, None),
        (F, _month("2024-06")): ("churn", 300, 0, -300, "PF", None, "unknown"),
        (G, _month("2024-07")): ("new", 0, 1000, 1000, None, None, None),
        # two subscriptions end in one month: the reason is the larger one's
        (G, _month("2024-08")): ("churn", 1000, 0, -1000, "PG1", "canceled_by_customer", "voluntary"),
    }
    assert {r["site_id"] for r in rows} == {SITE} and not any(r["is_partial_month"] for r in rows)


def test_movements_sum_to_mrr_monthly(built: str) -> None:
    monthly = fetch_dicts(built, "select * from analytics.mrr_monthly")
    sums: dict[tuple[dt.date, str], int] = defaultdict(int)
    for r in fetch_dicts(built, "select * from analytics.mrr_movements"):
        sums[(r["date_month"], r["movement"])] += r["mrr_change_in_cents"]
    columns = {"new": "new_mrr_in_cents", "expansion": "expansion_mrr_in_cents",
               "contraction": "contraction_mrr_in_cents", "churn": "churned_mrr_in_cents",
               "reactivation": "reactivation_mrr_in_cents"}
    for row in monthly:
        for movement, column in columns.items():
            assert row[column] == sums.get((row["date_month"], movement), 0), (row["date_month"], movement)
    assert [r["mrr_in_cents"] for r in sorted(monthly, key=lambda r: r["date_month"])] == [
        1000, 4000, 5500, 6800, 3300, 4000, 3700, 4700, 3700, 3700, 3700, 3700]


# month: (mrr, paying customers, ARPA, customer churn, gross MRR churn, NRR, GRR, trailing churn, LTV)
EXPECTED_METRICS = {
    "2023-12": (1000, 1, 1000, None, None, None, None, None, None),
    "2024-01": (4000, 4, 1000, 0.0, 0.0, 1.0, 1.0, None, None),
    "2024-02": (5500, 4, 1375, 1 / 4, 500 / 4000, 3500 / 4000, 3500 / 4000, 0.0, None),
    # new business (F) left out of NRR; D's expansion in
    "2024-03": (6800, 5, 1360, 0.0, 0.0, 6500 / 5500, 1.0, 0.125, 10880),
    "2024-04": (3300, 3, 1100, 2 / 5, 3500 / 6800, 3300 / 6800, 3300 / 6800, 0.25 / 3, 13200),
    # E's reactivation left out of NRR
    "2024-05": (4000, 4, 1000, 0.0, 0.0, 1.0, 1.0, 0.65 / 4, 6154),
    "2024-06": (3700, 3, 1233, 1 / 4, 300 / 4000, 3700 / 4000, 3700 / 4000, 0.65 / 5, 9485),
    "2024-07": (4700, 4, 1175, 0.0, 0.0, 1.0, 1.0, 0.9 / 6, 7833),
    "2024-08": (3700, 3, 1233, 1 / 4, 1000 / 4700, 3700 / 4700, 3700 / 4700, 0.9 / 6, 8220),
    "2024-09": (3700, 3, 1233, 0.0, 0.0, 1.0, 1.0, 0.9 / 6, 8220),
    "2024-10": (3700, 3, 1233, 0.0, 0.0, 1.0, 1.0, 0.9 / 6, 8220),
    "2024-11": (3700, 3, 1233, 0.0, 0.0, 1.0, 1.0, 0.5 / 6, 14796),
}


def test_saas_metrics_are_chartmoguls_on_the_opening_mrr(built: str) -> None:
    rows = fetch_dicts(built, "select * from analytics.saas_metrics_monthly order by date_month")
    assert [r["date_month"] for r in rows] == [_month(m) for m in EXPECTED_METRICS]
    for row, (month, expected) in zip(rows, EXPECTED_METRICS.items(), strict=True):
        mrr, paying, arpa, churn, gross_churn, nrr, grr, trailing, ltv = expected
        assert (row["mrr_in_cents"], row["arr_in_cents"], row["paying_customers"],
                row["arpa_in_cents"], row["ltv_in_cents"]) == (mrr, 12 * mrr, paying, arpa, ltv), month
        for column, value in (("customer_churn_rate", churn), ("gross_mrr_churn_rate", gross_churn),
                              ("net_mrr_retention", nrr), ("gross_mrr_retention", grr),
                              ("trailing_customer_churn_rate", trailing)):
            assert row[column] == (None if value is None else pytest.approx(value, abs=1e-12)), (month, column)
        assert row["is_partial_month"] is False


def test_an_annual_subscriber_is_retained_all_year_in_cohorts(built: str) -> None:
    rows = fetch_dicts(built, "select * from analytics.customer_cohorts where cohort_month = '2023-12-01' "
                       "order by month_number")
    # C alone: charged once in December, subscribed every month after
    assert [r["month_number"] for r in rows] == list(range(12))
    assert [r["active_subscribers"] for r in rows] == [1] * 12
    assert [r["subscriber_retention_rate"] for r in rows] == [1.0] * 12
    assert [r["retained_customers"] for r in rows] == [1] + [0] * 11


def test_cohorts_count_the_subscribers_mrr_counts(built: str) -> None:
    rows = fetch_dicts(built, "select * from analytics.customer_cohorts")
    by_cohort: dict[dt.date, list[int]] = defaultdict(list)
    for r in sorted(rows, key=lambda r: r["month_number"]):
        by_cohort[r["cohort_month"]].append(r["active_subscribers"])
        assert r["subscriber_retention_rate"] == r["active_subscribers"] / r["cohort_customers"]
    assert dict(by_cohort) == {
        _month("2023-12"): [1] * 12,                       # C
        _month("2024-01"): [3, 2, 2, 1, 2, 2, 2, 2, 2, 2, 2],  # A, D, E
        _month("2024-02"): [1, 1, 0, 0, 0, 0, 0, 0, 0, 0],   # B
        _month("2024-03"): [1, 1, 1, 0, 0, 0, 0, 0, 0],      # F
        _month("2024-07"): [1, 0, 0, 0, 0],                  # G
    }
    per_month: dict[dt.date, int] = defaultdict(int)
    for r in rows:
        per_month[r["date_month"]] += r["active_subscribers"]
    monthly = fetch_dicts(built, "select date_month, active_customers from analytics.mrr_monthly")
    assert per_month == {r["date_month"]: r["active_customers"] for r in monthly}


@pytest.mark.parametrize(("as_of", "through", "partial"), [
    (dt.date(2024, 11, 15), None, True),  # the as-of date is before the month's end
    (AS_OF, "2024-11-30T12:00:00+00:00", True),  # the last day, but synced only to noon
    (AS_OF, "2024-12-01T00:00:00+00:00", False),  # synced to the month's end
])
def test_the_as_of_month_is_partial_until_the_data_covers_it(raw_db, as_of, through, partial) -> None:
    rows = subscription_rows()
    if through is not None:
        rows["sync_resources"] = [{
            "resource": "transactions", "status": "synced", "last_attempt_at": ts(through),
            "last_synced_at": ts(through), "complete_through_at": ts(through),
        }]
    path = raw_db(rows)
    assert not run_models(path, as_of=as_of).failed_tests
    for mart in ("mrr_monthly", "saas_metrics_monthly", "customer_cohorts"):
        flags = fetch_dicts(path, f"select date_month, is_partial_month from analytics.{mart}")
        assert {r["date_month"] for r in flags if r["is_partial_month"]} == (
            {_month("2024-11")} if partial else set()), mart


@pytest.mark.parametrize("seed", [1, 2])
def test_movements_match_an_independent_computation(raw_db, seed: int) -> None:
    """Each customer's month-over-month MRR from test_mrr.py's independent computation, classified
    here, equals mrr_movements row for row."""
    purchases, transactions, links = _random_book(seed)
    path = raw_db({"purchases": purchases, "transactions": transactions, "purchases_transactions": links})
    assert not run_models(path, as_of=RANDOM_AS_OF).failed_tests
    months, customer_mrr, _ = _customer_mrr(purchases, transactions, links)
    expected = {}
    for customer, by_month in customer_mrr.items():
        first = min((m for m, v in by_month.items() if v > 0), default=None)
        for i, month in enumerate(months):
            before = by_month.get(months[i - 1], 0) if i else 0
            after = by_month.get(month, 0)
            if first is None or month < first or before == after:
                continue
            movement = ("new" if month == first else "reactivation") if before == 0 else (
                "churn" if after == 0 else "expansion" if after > before else "contraction")
            expected[(customer, month)] = (movement, before, after)
    rows = fetch_dicts(path, "select * from analytics.mrr_movements")
    got = {(r["customer_id"], r["date_month"]): (r["movement"], r["mrr_before_in_cents"],
                                                   r["mrr_after_in_cents"]) for r in rows}
    assert got == expected
    assert {m for m, _, _ in got.values()} == {"new", "expansion", "contraction", "churn", "reactivation"}
    # no reason in these books: every churn is of unknown kind, every other movement has none
    assert all((r["churn_kind"] == "unknown") == (r["movement"] == "churn") for r in rows)
