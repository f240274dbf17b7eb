"""The headline never claims what was not loaded, says when it is stale or a day is partial, and
states what it was built with (issue 12, points 8 and 9): `analytics.data_coverage` and
`analytics.build_metadata`, `headline_figures` and `creator-sync models`."""

from __future__ import annotations

import datetime as dt

import pytest
from click.testing import CliRunner
from known_answer_data import known_answer_rows
from models_helpers import Rows, fetch_dicts, ts

from creator_sync.cli import main
from creator_sync.models.build_info import package_version
from creator_sync.models.headline import format_headline, headline_figures
from creator_sync.models.runner import run_models

AS_OF = dt.date(2024, 3, 31)
SYNCED = ts("2024-04-01T06:00:00+00:00")  # the morning after the as-of day: it is complete
NOW = SYNCED + dt.timedelta(hours=1)
NOT_FOUND_404 = (
    "/platform_payments_payouts answered 404 at http://127.0.0.1:9/v1/platform_payments_payouts:"
    " set payouts_path (--payouts-path)"
)


def sync_row(resource: str, status: str = "synced", reason: str | None = None,
             synced: dt.datetime | None = SYNCED, **extra: object) -> dict:
    """One row of the raw `sync_resources` table, as the source writes it after a run."""
    return {"resource": resource, "status": status, "reason": reason, "last_attempt_at": SYNCED,
            "last_synced_at": synced, "rows_loaded": 0, **extra}


def rows_with(*sync_rows: dict, without: tuple[str, ...] = ()) -> Rows:
    rows = {k: v for k, v in known_answer_rows().items() if k not in without}
    if sync_rows:
        rows["sync_resources"] = list(sync_rows)
    return rows


def built(raw_db, rows: Rows, **options) -> str:
    path = raw_db(rows)
    run_models(path, as_of=options.pop("as_of", AS_OF), **options)
    return path


def test_payouts_that_failed_to_sync_are_said_not_counted(raw_db) -> None:
    path = built(raw_db, rows_with(
        sync_row("transactions"), sync_row("purchases"),
        sync_row("payouts", "failed", NOT_FOUND_404, synced=None),
        without=("payouts",),
    ))
    figures = headline_figures(path, now=NOW)
    assert figures["unreconciled_payouts"] is None and figures["unpaid_balance_in_cents"] is None
    assert figures["unavailable"] == {
        "unreconciled_payouts": "payouts not loaded", "unpaid_balance": "payouts not loaded",
    }
    assert figures["net_revenue_last_30_days_in_cents"] == {"EUR": 0, "GBP": 999, "USD": 7300}
    lines = format_headline(figures)
    assert lines[0] == f"Payouts: not loaded (last sync: failed: {NOT_FOUND_404})"
    assert "Unreconciled payouts: not available (payouts not loaded)" in lines
    assert "Settled, not yet paid out: not available (payouts not loaded)" in lines
    assert not any(line.startswith(("Unreconciled payouts: 0", "Settled, not yet paid out: USD"))
                   for line in lines)
    (row,) = fetch_dicts(path, "select * from analytics.data_coverage where resource = 'payouts'")
    assert (row["is_loaded"], row["records_count"], row["sync_status"]) == (False, 0, "failed")
    assert row["last_synced_at"] is None


def test_payouts_whose_first_sync_stopped_partway_are_not_loaded(raw_db) -> None:
    """A first sync stopped by its time budget (issue 30): the payouts it read are part of the
    account, so the figures built on them are not stated, and the headline says why."""
    left = "left: site 2200000000 from page 10; site 2200000001 not started"
    path = built(raw_db, rows_with(
        sync_row("transactions"), sync_row("purchases"),
        sync_row("payouts", "partial", left, synced=None),
    ))
    figures = headline_figures(path, now=NOW)
    assert figures["unreconciled_payouts"] is None and figures["unpaid_balance_in_cents"] is None
    assert figures["unavailable"]["unpaid_balance"] == "payouts not loaded"
    lines = format_headline(figures)
    assert any(line.startswith("Payouts: not loaded: its first sync has not completed (")
               and f"partial: {left}" in line for line in lines), lines
    (row,) = fetch_dicts(path, "select * from analytics.data_coverage where resource = 'payouts'")
    assert row["records_count"] > 0
    assert (row["is_loaded"], row["sync_status"]) == (False, "partial")


def test_payouts_partial_after_a_complete_sync_stay_loaded_and_flagged(raw_db) -> None:
    """A later sync that stopped partway leaves what the last complete one loaded: the figures
    stand, and the resource is listed as a problem."""
    path = built(raw_db, rows_with(
        sync_row("transactions"), sync_row("purchases"),
        sync_row("payouts", "partial", "left: listing from page 3"),
    ))
    (row,) = fetch_dicts(path, "select * from analytics.data_coverage where resource = 'payouts'")
    assert (row["is_loaded"], row["sync_status"]) == (True, "partial")
    figures = headline_figures(path, now=NOW)
    assert figures["unpaid_balance_in_cents"] is not None
    assert "unpaid_balance" not in (figures["unavailable"] or {})


@pytest.mark.parametrize(
    ("payouts_sync", "said"),
    [
        (sync_row("payouts", "skipped", "the credential's scopes do not cover view:payouts",
                  synced=None),
         "Payouts: not loaded (last sync: skipped: the credential's scopes do not cover "
         "view:payouts)"),
        (sync_row("payouts"),
         "Payouts: not loaded (last sync: synced 2024-04-01 06:00 UTC, found none; if the account "
         "has payouts, check payouts_path (--payouts-path))"),
        (None,
         "Payouts: not loaded (never synced (left out by --resources, or no sync has run))"),
    ],
    ids=["skipped-scopes", "empty-wrong-path", "excluded"],
)
def test_every_way_payouts_can_be_missing_is_named(raw_db, payouts_sync, said) -> None:
    syncs = [sync_row("transactions"), sync_row("purchases")]
    path = built(raw_db, rows_with(*syncs, *([payouts_sync] if payouts_sync else []),
                                   without=("payouts",)))
    lines = format_headline(headline_figures(path, now=NOW))
    assert lines[0] == said
    assert "Unreconciled payouts: not available (payouts not loaded)" in lines


def test_transactions_left_out_build_and_say_so(raw_db) -> None:
    """A sync without transactions (left out by --resources, or a credential without their
    scope) still builds the models; the figures say what they lack instead of failing."""
    path = built(raw_db, rows_with(without=("transactions",)), as_of=None)
    figures = headline_figures(path, now=NOW)
    lines = format_headline(figures)
    assert lines[0] == (
        "Transactions: not loaded (never synced (left out by --resources, or no sync has run))"
    )
    assert "Revenue excl. tax, last 30 days: not available (transactions not loaded)" in lines
    assert "Unreconciled payouts: not available (transactions not loaded)" in lines
    assert figures["mrr_in_cents"] is not None  # MRR is built on purchases


def test_a_dataset_without_any_raw_table_is_still_a_clear_error(raw_db) -> None:
    from creator_sync.models.runner import ModelsError

    path = raw_db({})
    with pytest.raises(ModelsError, match="holds none of the raw tables the models read"):
        run_models(path)


def test_older_warehouses_without_sync_resources_fall_back_to_the_tables(raw_db) -> None:
    rows = rows_with()
    rows["_dlt_loads"] = [{"load_id": "1", "status": 0, "inserted_at": SYNCED},
                          {"load_id": "2", "status": 1, "inserted_at": NOW}]  # 1: not completed
    path = built(raw_db, rows)
    coverage = {r["resource"]: r for r in fetch_dicts(path, "select * from analytics.data_coverage")}
    assert set(coverage) == {"transactions", "purchases", "payouts"}
    assert all(r["is_loaded"] and not r["is_sync_recorded"] for r in coverage.values())
    assert {r["last_synced_at"] for r in coverage.values()} == {SYNCED}
    assert coverage["transactions"]["records_count"] == 15
    assert coverage["transactions"]["newest_record_at"] == ts("2024-03-28T12:00:00+00:00")
    assert coverage["payouts"]["newest_record_at"] == ts("2024-03-31T09:00:00+00:00")
    figures = headline_figures(path, now=NOW)
    assert figures["unreconciled_payouts"] == 1 and figures["stale"] == []
    assert format_headline(figures)[-1] == (
        "Built on 15 transactions, 6 purchases and 5 payouts; last sync 2024-04-01 06:00 UTC"
    )


def test_paid_purchases_without_transactions_are_counted(raw_db) -> None:
    """Addendum A7: the transactions list can hold far fewer records than purchases suggest."""
    rows = rows_with()
    rows["transactions"] = [t for t in rows["transactions"] if t["id"] not in ("T4", "T9", "T10",
                                                                                 "T12")]
    path = built(raw_db, rows)
    (row,) = fetch_dicts(path, "select known_missing_count from analytics.data_coverage "
                               "where resource = 'transactions'")
    assert row["known_missing_count"] == 2  # P3 (T4) and P6 (T9, T10, T12)
    assert format_headline(headline_figures(path, now=NOW))[-1] == (
        "Note: 2 paid purchases have no transaction loaded: revenue counts only the transactions "
        "the platform listed"
    )


def test_stale_when_the_newest_record_is_older_than_the_limit(raw_db, monkeypatch) -> None:
    path = built(raw_db, rows_with(sync_row("transactions"), sync_row("purchases"),
                                   sync_row("payouts")))
    assert headline_figures(path, now=NOW)["stale"] == []
    later = NOW + dt.timedelta(days=3)
    stale = headline_figures(path, now=later)["stale"]
    # the newest record is payout PO5 of Mar 31, 09:00
    assert stale == [
        "STALE: the newest record (a payout of 2024-03-31 09:00 UTC) is 3 days old, beyond the "
        "limit of 2 days (--stale-after-days)",
        "STALE: payouts last synced 3 days ago, beyond the limit of 2 days (--stale-after-days)",
        "STALE: purchases last synced 3 days ago, beyond the limit of 2 days (--stale-after-days)",
        "STALE: transactions last synced 3 days ago, beyond the limit of 2 days "
        "(--stale-after-days)",
    ]
    assert headline_figures(path, now=later, stale_after_days=5)["stale"] == []
    monkeypatch.setenv("CREATOR_SYNC__STALE_AFTER_DAYS", "5")
    assert headline_figures(path, now=later)["stale"] == []
    assert format_headline(headline_figures(path, now=later, stale_after_days=1))[0].startswith(
        "STALE: the newest record"
    )


def test_a_partial_last_day_ends_the_window_a_day_earlier(raw_db) -> None:
    """The sync listed transactions until Mar 28 20:00 UTC; in New York that is 16:00 on Mar 28,
    the latest transaction's day: Mar 28 is partial, the 30 days end on Mar 27."""
    through = ts("2024-03-28T20:00:00+00:00")
    path = built(raw_db, rows_with(
        sync_row("transactions", complete_through_at=through), sync_row("purchases"),
        sync_row("payouts"),
    ), as_of=None, timezone="America/New_York")
    figures = headline_figures(path, now=NOW)
    assert figures["as_of_date"] == dt.date(2024, 3, 28)
    assert figures["partial_day"] == dt.date(2024, 3, 28)
    assert figures["figures_through_date"] == dt.date(2024, 3, 27)
    assert figures["window_start_date"] == dt.date(2024, 2, 27)
    # Feb 27..Mar 27 in New York: T6 -1500 + T11 800 + T7 1500 + T12 2500 USD, T14 999 GBP;
    # T13 (4000, Mar 28) is on the partial day
    assert figures["net_revenue_last_30_days_in_cents"] == {"EUR": 0, "GBP": 999, "USD": 3300}
    lines = format_headline(figures)
    assert (
        "Figures through 2024-03-27, the last complete day in America/New_York (2024-03-28 is "
        "partial: the transactions reach 2024-03-28 20:00 UTC)" in lines
    )
    assert any(line.startswith("Revenue excl. tax, 30 days 2024-02-27 to 2024-03-27: ") for line in lines)

    complete = built(lambda rows: raw_db(rows, "complete.duckdb"), rows_with(
        sync_row("transactions", complete_through_at=ts("2024-03-29T04:00:00+00:00")),
        sync_row("purchases"), sync_row("payouts"),
    ), as_of=None, timezone="America/New_York")
    assert headline_figures(complete, now=NOW)["partial_day"] is None


def test_build_metadata_holds_the_parameters_of_the_build(raw_db) -> None:
    path = raw_db(known_answer_rows())
    before = dt.datetime.now(dt.UTC)
    run_models(path, timezone="Europe/Berlin", settlement_delay_days=3, as_of=AS_OF)
    (row,) = fetch_dicts(path, "select * from analytics.build_metadata")
    assert row["built_at"] >= before - dt.timedelta(seconds=1)
    assert (row["dataset"], row["timezone"], row["settlement_delay_days"]) == (
        "creator_platform", "Europe/Berlin", 3,
    )
    assert (row["as_of_date"], row["is_as_of_given"]) == (AS_OF, True)
    assert row["creator_sync_version"] == package_version()
    run_models(path)
    (row,) = fetch_dicts(path, "select * from analytics.build_metadata")
    assert (row["timezone"], row["settlement_delay_days"], row["is_as_of_given"]) == (
        "UTC", None, False  # no override: each site's observed delay, else the default
    )
    assert row["default_settlement_delay_days"] == 2
    assert row["as_of_date"] == dt.date(2024, 3, 28)  # the latest transaction's day


def test_models_command_prints_what_is_missing_instead_of_zeros(raw_db) -> None:
    path = raw_db(rows_with(
        sync_row("transactions"), sync_row("purchases"),
        sync_row("payouts", "failed", NOT_FOUND_404, synced=None), without=("payouts",),
    ))
    result = CliRunner().invoke(main, ["models", "--duckdb", path, "--as-of", "2024-03-31",
                                       "--timezone", "America/New_York", "--stale-after-days",
                                       "3650"])
    assert result.exit_code == 0, result.output
    assert f"Payouts: not loaded (last sync: failed: {NOT_FOUND_404})" in result.output
    assert "Unreconciled payouts: not available (payouts not loaded)" in result.output
    assert "Unreconciled payouts: 0" not in result.output
    assert "STALE" not in result.output
    assert "timezone America/New_York, settlement delay observed from payout lines, else 2 days" \
        in result.output
    bad = CliRunner().invoke(main, ["models", "--duckdb", path, "--stale-after-days", "-1"])
    assert bad.exit_code == 2


@pytest.mark.parametrize(
    ("payouts_sync", "without", "reason"),
    [
        (None, ("payouts",), "payouts not loaded"),
        (sync_row("payouts", "failed", NOT_FOUND_404), (), "payouts last sync failed"),
        # a first listing that has not completed (issue 30's `partial`) holds part of the
        # account: not loaded (a later partial keeps the complete sync before it: below)
        (sync_row("payouts", "partial", "first listing not complete", synced=None), (),
         "payouts not loaded"),
    ],
    ids=["not-loaded", "failed", "partial"],
)
def test_marts_state_no_amount_built_on_incomplete_payouts(raw_db, payouts_sync, without,
                                                           reason) -> None:
    """Issue 29: an analyst querying the marts never gets a confident wrong number."""
    syncs = [sync_row("transactions"), sync_row("purchases"),
             *([payouts_sync] if payouts_sync else [])]
    path = built(raw_db, rows_with(*syncs, without=without))
    balances = fetch_dicts(path, "select * from analytics.unpaid_balance")
    assert balances, "the balance keeps its rows, to say why it has no amount"
    for row in balances:
        assert row["amount_unavailable_reason"] == reason
        assert all(row[c] is None for c in row if c.endswith("_in_cents")), row
    assert fetch_dicts(path, "select * from analytics.unpaid_transactions") == []
    figures = headline_figures(path, now=NOW)
    assert figures["unpaid_balance_in_cents"] is None
    assert figures["unavailable"]["unpaid_balance"] == reason


def test_marts_state_the_balance_when_every_input_is_complete(raw_db) -> None:
    path = built(raw_db, rows_with(sync_row("transactions"), sync_row("purchases"),
                                   sync_row("payouts")))
    balances = fetch_dicts(path, "select * from analytics.unpaid_balance")
    assert balances and all(r["amount_unavailable_reason"] is None
                            and r["unpaid_balance_in_cents"] is not None for r in balances)


def test_a_later_partial_sync_keeps_the_balance_of_the_complete_one_before(raw_db) -> None:
    """Issue 30 with 29: a sync stopped at its budget after an earlier sync of payouts completed
    leaves payouts complete through that earlier sync: the balance is still stated, not hidden
    by every budgeted run. Only a first listing still partial states no amount (above)."""
    path = built(raw_db, rows_with(sync_row("transactions"), sync_row("purchases"),
                                   sync_row("payouts", "partial", "left: page 3")))
    (coverage,) = fetch_dicts(path, "select * from analytics.data_coverage "
                                    "where resource = 'payouts'")
    assert coverage["is_complete"] and coverage["incomplete_reason"] is None
    balances = fetch_dicts(path, "select * from analytics.unpaid_balance")
    assert balances and all(r["amount_unavailable_reason"] is None
                            and r["unpaid_balance_in_cents"] is not None for r in balances)


def test_payout_scope_labels_which_revenue_the_payouts_cover(raw_db) -> None:
    """Issue 29: the platform's payouts carry only what its own processor settled."""
    complete = built(raw_db, rows_with(sync_row("transactions"), sync_row("purchases"),
                                       sync_row("payouts")))
    scope = {r["provider"]: r for r in fetch_dicts(
        complete, "select provider, sum(covered_net_in_cents) as covered, "
                  "sum(not_covered_net_in_cents) as not_covered, min(coverage_reason) as reason "
                  "from analytics.payout_scope group by provider")}
    assert set(scope) == {"platform_payments", "stripe"}
    assert scope["platform_payments"]["covered"] != 0
    assert scope["platform_payments"]["not_covered"] == 0
    assert scope["stripe"]["covered"] == 0 and scope["stripe"]["not_covered"] != 0
    assert "in no payout" in scope["stripe"]["reason"]
    rows = rows_with(sync_row("transactions"), sync_row("purchases"), without=("payouts",))
    missing = raw_db(rows, name="without_payouts.duckdb")
    run_models(missing, as_of=AS_OF)
    rows = fetch_dicts(missing, "select * from analytics.payout_scope")
    assert rows and all(r["covered_net_in_cents"] is None
                        and r["not_covered_net_in_cents"] == r["net_in_cents"]
                        and r["coverage_reason"] == "payouts not loaded" for r in rows)


VERDICT_FIGURES = ("expected_amount_in_cents", "difference_in_cents", "transactions_count",
                   "matched_lines_count", "unmatched_lines_count", "tied_lines_count",
                   "fees_in_cents", "unexplained_in_cents", "rule_expected_in_cents",
                   "rule_difference_in_cents", "rule_transactions_count", "is_reconciled")


@pytest.mark.parametrize(
    ("transactions_sync", "without", "reason"),
    [
        (sync_row("transactions", "failed", "answered 500"), (), "transactions last sync failed"),
        (None, ("transactions",), "transactions not loaded"),
        (sync_row("transactions", "partial", "first listing not complete", synced=None), (),
         "transactions not loaded"),
    ],
    ids=["failed", "not-loaded", "partial"],
)
def test_no_verdict_or_fees_built_on_incomplete_transactions(raw_db, transactions_sync, without,
                                                             reason) -> None:
    """Issue 29: without its transactions a paid payout's lines would look unmatched and the
    payout unreconciled, a confident wrong verdict; the payout's own record stays."""
    syncs = [sync_row("purchases"), sync_row("payouts"),
             *([transactions_sync] if transactions_sync else [])]
    path = built(raw_db, rows_with(*syncs, without=without))
    payouts = {r["payout_id"]: r for r in fetch_dicts(
        path, "select * from analytics.payout_reconciliation")}
    assert set(payouts) == {"PO1", "PO2", "PO3", "PO4", "PO5"}
    for row in payouts.values():
        assert row["verdict_unavailable_reason"] == reason
        assert row["amount_in_cents"] is not None and row["status"] is not None
        assert all(row[c] is None for c in VERDICT_FIGURES), row
    assert [payouts[p]["reconciliation_status"] for p in ("PO1", "PO3", "PO4")] == [None] * 3
    assert payouts["PO2"]["reconciliation_status"] == "rolled_forward"  # its own status says so
    assert payouts["PO5"]["reconciliation_status"] == "pending"
    assert fetch_dicts(path, "select * from analytics.payout_transactions") == []
    for row in fetch_dicts(path, "select * from analytics.fees_monthly"):
        assert row["amount_unavailable_reason"] == reason
        assert all(row[c] is None for c in row if c.startswith("transaction")), row
        assert row["lines_count"] == 0  # the payouts are complete: no lines is a stated figure


def test_no_line_fees_built_on_incomplete_payouts(raw_db) -> None:
    path = built(raw_db, rows_with(sync_row("transactions"), sync_row("purchases"),
                                   sync_row("payouts", "failed", NOT_FOUND_404)))
    payouts = fetch_dicts(path, "select * from analytics.payout_reconciliation")
    assert payouts and all(r["verdict_unavailable_reason"] == "payouts last sync failed"
                           and r["reconciliation_status"] in (None, "pending", "rolled_forward")
                           for r in payouts)
    assert fetch_dicts(path, "select * from analytics.payout_transactions") == []
    fees = fetch_dicts(path, "select * from analytics.fees_monthly")
    assert fees and all(r["amount_unavailable_reason"] == "payouts last sync failed"
                        and r["lines_count"] is None and r["line_fees_in_cents"] is None
                        and r["transaction_fees_in_cents"] is not None for r in fees)


def test_every_verdict_and_fee_is_stated_when_every_input_is_complete(raw_db) -> None:
    path = built(raw_db, rows_with(sync_row("transactions"), sync_row("purchases"),
                                   sync_row("payouts")))
    payouts = fetch_dicts(path, "select * from analytics.payout_reconciliation")
    assert payouts and all(r["verdict_unavailable_reason"] is None
                           and r["reconciliation_status"] is not None
                           and r["expected_amount_in_cents"] is not None for r in payouts)
    assert fetch_dicts(path, "select * from analytics.payout_transactions")
    fees = fetch_dicts(path, "select * from analytics.fees_monthly")
    assert fees and all(r["amount_unavailable_reason"] is None
                        and r["transaction_fees_in_cents"] is not None for r in fees)
