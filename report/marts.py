"""The marts the report reads, and the columns it needs from each (one table, checked up front).

Checking every mart before the first query turns "Binder Error: column not found" deep inside a
render into one message that says which mart and column are missing and how to build them.
"""

from __future__ import annotations

from collections.abc import Mapping

import duckdb

from report.errors import ReportError

SCHEMA = "analytics"

# The itemised transactions under an unreconciled payout: column -> heading, in display order.
PAYOUT_ITEM_COLUMNS: Mapping[str, str] = {
    "transaction_id": "Transaction",
    "transaction_created_at": "Created",
    "action": "Action",
    "payable_date": "Payable",
    "transaction_currency": "Currency",
    "amount_in_cents": "Amount",
    "settlement_amount_in_cents": "Settlement",
    "settlement_fee_amount_in_cents": "Settlement fee",
    "net_settlement_in_cents": "Net settlement",
    "is_rolled_forward": "Rolled forward",
}

# mart -> columns the report selects. Names follow issue 4 and the README's models section.
MARTS: Mapping[str, tuple[str, ...]] = {
    "revenue_daily": (
        "site_id",
        "currency",
        "date_day",
        "gross_in_cents",
        "refunds_in_cents",
        "disputes_in_cents",
        "net_in_cents",
    ),
    "mrr_monthly": (
        "site_id",
        "currency",
        "date_month",
        "mrr_in_cents",
        "new_mrr_in_cents",
        "expansion_mrr_in_cents",
        "contraction_mrr_in_cents",
        "churned_mrr_in_cents",
        "reactivation_mrr_in_cents",
        "active_subscriptions",
    ),
    "payouts": (
        "payout_id",
        "site_id",
        "currency",
        "status",
        "amount_in_cents",
        "initiated_at",
        "estimated_arrival_at",
    ),
    "payout_reconciliation": (
        "payout_id",
        "expected_amount_in_cents",
        "difference_in_cents",
        "transactions_count",
        "is_reconciled",
    ),
    "payout_transactions": ("payout_id", *PAYOUT_ITEM_COLUMNS),
    "unpaid_balance": ("site_id", "currency", "unpaid_balance_in_cents"),
    "offer_performance": (
        "site_id",
        "offer_id",
        "offer_title",
        "currency",
        "net_revenue_in_cents",
        "purchases_count",
        "customers_count",
        "is_deleted",
    ),
    # what the figures are built on, and the build's parameters (models/coverage.py)
    "data_coverage": (
        "resource",
        "records_count",
        "newest_record_at",
        "is_sync_recorded",
        "sync_status",
        "sync_reason",
        "last_attempt_at",
        "last_synced_at",
        "complete_through_at",
        "known_missing_count",
    ),
    "build_metadata": (
        "built_at",
        "dataset",
        "timezone",
        "settlement_delay_days",
        "as_of_date",
        "is_as_of_given",
        "creator_sync_version",
    ),
}

BUILD_HINT = "build the marts first: creator-sync models --duckdb {path}"


def mart_columns(con: duckdb.DuckDBPyConnection, mart: str) -> list[str]:
    """The columns of `analytics.<mart>` in table order (empty when the mart does not exist)."""
    rows = con.execute(
        "SELECT column_name FROM information_schema.columns "
        "WHERE table_schema = ? AND table_name = ? ORDER BY ordinal_position",
        [SCHEMA, mart],
    ).fetchall()
    return [name for (name,) in rows]


def check_marts(con: duckdb.DuckDBPyConnection, path: str) -> None:
    """Fail with one message listing every missing mart or column, before any query runs."""
    problems: list[str] = []
    for mart, needed in MARTS.items():
        present = set(mart_columns(con, mart))
        if not present:
            problems.append(f"missing table {SCHEMA}.{mart}")
            continue
        missing = [column for column in needed if column not in present]
        if missing:
            problems.append(f"{SCHEMA}.{mart} lacks column(s) {', '.join(missing)}")
    if problems:
        raise ReportError(
            f"{path}: cannot build the report: "
            + "; ".join(problems)
            + f" ({BUILD_HINT.format(path=path)})"
        )
