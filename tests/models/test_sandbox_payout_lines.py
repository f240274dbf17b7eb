"""Itemised payouts on real synced sandbox data (issue #14's "Done when", contract C3).

The sandbox's payout details list exactly the transactions its rule assigns (C3), so on its data:
every payout's lines balance to the cent, every sale and refund line is matched one to one, with
`--quirks` every rule residual is the payout's unexplained adjustment, and the observed delay is
the sandbox's configured one.

These tests need the sandbox to serve payout details (branch sandbox-live) and the source to
load them into `payout_lines` (branch source-live). Until both have landed, the synced warehouse
has no `payout_lines` table and the tests skip, saying so.
"""

from __future__ import annotations

import pytest
from models_helpers import fetch_dicts

from creator_sync.models.runner import run_models

QUIRKS_DELAY_DAYS = 3  # not the default 2: the models must learn it, not assume it


def _require_lines(path: str) -> None:
    (row,) = fetch_dicts(path, "select count(*) as n from information_schema.tables "
                               "where table_schema = 'creator_platform' "
                               "and table_name = 'payout_lines'")
    if not row["n"]:
        pytest.skip("WAITING ON sandbox-live + source-live: the sync loaded no payout_lines")


@pytest.fixture
def built(sandbox_duckdb: str):
    _require_lines(sandbox_duckdb)
    return sandbox_duckdb, run_models(sandbox_duckdb, strict=True)


@pytest.fixture
def quirky(sandbox_factory, sync_sandbox, tmp_path) -> str:
    """The sandbox with --quirks and a 3-day settlement delay, synced and built (no override)."""
    handle = sandbox_factory(quirks=True, settlement_delay_days=QUIRKS_DELAY_DAYS, sites=2)
    path = str(tmp_path / "quirky.duckdb")
    sync_sandbox(handle.base_url, tmp_path, duckdb=path)
    _require_lines(path)
    run_models(path)
    return path


def test_every_payout_is_itemised_and_its_lines_balance(built) -> None:
    path, result = built
    assert result.row_counts["fct_payout_lines"] > 0
    rows = fetch_dicts(path, """
        select payout_id, reconciliation_method, lines_count, itemisation_difference_in_cents,
               amount_in_cents, itemised_net_in_cents
        from analytics.payout_reconciliation""")
    assert rows
    assert [r for r in rows if r["reconciliation_method"] != "itemised"] == []
    assert [r for r in rows if r["itemisation_difference_in_cents"] != 0] == []


def test_every_sale_and_refund_line_is_matched_one_to_one(built) -> None:
    path, _ = built
    (row,) = fetch_dicts(path, """
        select count(*) as lines,
               count(*) filter (where not is_matched) as unmatched,
               count(*) filter (where line_type in ('sale', 'refund') and not is_matched)
                   as unmatched_sales_and_refunds,
               count(distinct case when not is_rolled_forward then transaction_id end)
                   as live_transactions,
               count(*) filter (where not is_rolled_forward and is_matched) as live_matched
        from analytics.fct_payout_lines""")
    assert row["lines"] > 0
    assert row["unmatched_sales_and_refunds"] == 0
    assert row["unmatched"] == 0  # without --quirks, even the disputes' adjustments are matched
    assert row["live_transactions"] == row["live_matched"]  # one to one among live payouts
    # every paid payout reconciles by its lines, and the headline agrees
    (bad,) = fetch_dicts(path, "select count(*) as n from analytics.payout_reconciliation "
                               "where not is_reconciled")
    assert bad["n"] == 0


def test_matched_lines_are_the_rules_transactions(built) -> None:
    """C3: a payout's lines are exactly the transactions the rule assigns to it."""
    path, _ = built
    (row,) = fetch_dicts(path, """
        with lines as (
            select payout_id, transaction_id from analytics.fct_payout_lines where is_matched
        ), rule as (
            select payout_id, transaction_id from analytics.payout_transactions
        )
        select (select count(*) from (select * from lines except select * from rule) as a) as extra,
               (select count(*) from (select * from rule except select * from lines) as b) as missing
    """)
    assert (row["extra"], row["missing"]) == (0, 0)


def test_observed_delay_is_the_configured_default(built) -> None:
    path, _ = built
    rows = fetch_dicts(path, "select * from analytics.unpaid_balance")
    assert rows and {(r["settlement_delay_days"], r["settlement_delay_source"]) for r in rows} == {
        (2, "observed")}


def test_quirks_every_rule_residual_is_the_unexplained_adjustment(quirky: str) -> None:
    rows = fetch_dicts(quirky, """
        select payout_id, rule_difference_in_cents, unexplained_in_cents, adjustments_in_cents,
               itemisation_difference_in_cents, is_reconciled
        from analytics.payout_reconciliation""")
    assert rows
    assert [r for r in rows if r["rule_difference_in_cents"] != r["unexplained_in_cents"]] == []
    assert [r for r in rows if r["itemisation_difference_in_cents"] != 0] == []
    # the quirk is exercised: some payouts carry an adjustment no transaction stands behind
    assert any(r["unexplained_in_cents"] != 0 for r in rows)
    (row,) = fetch_dicts(quirky, """
        select count(*) filter (where line_type in ('sale', 'refund') and not is_matched) as bad,
               count(*) filter (where transaction_type = 'Sales') as plural
        from analytics.fct_payout_lines""")
    assert row["bad"] == 0 and row["plural"] > 0  # `Sales` normalised and matched


def test_quirks_observed_delay_is_the_configured_delay(quirky: str) -> None:
    balances = fetch_dicts(quirky, "select * from analytics.unpaid_balance")
    assert balances and {(r["settlement_delay_days"], r["settlement_delay_source"])
                         for r in balances} == {(QUIRKS_DELAY_DAYS, "observed")}
    delays = fetch_dicts(quirky, "select * from analytics.settlement_delay")
    assert delays
    # nothing is paid out before it is payable; a month can wait longer (a dispute leaves the
    # balance negative and no payout is made until it is positive again), the median does not
    assert min(r["min_delay_days"] for r in delays) == QUIRKS_DELAY_DAYS
    sites = fetch_dicts(quirky, "select * from analytics_staging.int_settlement_delays")
    assert sites and {r["observed_delay_days"] for r in sites} == {QUIRKS_DELAY_DAYS}
