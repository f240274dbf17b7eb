"""The marts the report reads, and the columns it needs from each (one table, checked up front).

Checking every mart before the first query turns "Binder Error: column not found" deep inside a
render into one message that says which mart and column are missing and how to build them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from creator_sync.common.duckdb_names import quote_literal
from creator_sync.report.errors import ReportError

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

# The lines of an itemised unreconciled payout: column -> heading, in display order.
PAYOUT_LINE_COLUMNS: Mapping[str, str] = {
    "line_number": "Line",
    "line_type": "Type",
    "created_at": "Created",
    "customer_id": "Customer",
    "order_number": "Order",
    "presented_amount_in_cents": "Presented",
    "presented_currency": "Presented currency",
    "amount_in_cents": "Amount",
    "fee_in_cents": "Fee",
    "net_in_cents": "Net",
    "currency": "Currency",
    "transaction_id": "Transaction",
    "match_rule": "Match rule",
    "is_matched": "Matched",
}

# mart -> columns the report selects. Names follow issue 4 and the data dictionary in docs/models.md.
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
        "previous_mrr_in_cents",
    ),
    "fct_payouts": (
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
        "site_id",
        "expected_amount_in_cents",
        "difference_in_cents",
        "transactions_count",
        "is_reconciled",
        "is_rolled_forward",
        "reconciliation_method",
        "lines_count",
        "matched_lines_count",
        "unmatched_lines_count",
        "fees_in_cents",
        "adjustments_in_cents",
        "unexplained_in_cents",
    ),
    "payout_transactions": ("payout_id", *PAYOUT_ITEM_COLUMNS),
    "fct_payout_lines": ("payout_id", *PAYOUT_LINE_COLUMNS),
    "settlement_delay": (
        "site_id",
        "provider",
        "date_month",
        "lines_count",
        "p50_delay_days",
        "p95_delay_days",
        "max_delay_days",
    ),
    "unpaid_balance": ("site_id", "currency", "unpaid_balance_in_cents"),
    "payout_scope": (
        "site_id",
        "provider",
        "currency",
        "covered_net_in_cents",
        "not_covered_net_in_cents",
        "coverage_reason",
    ),
    # the monthly figures (issue 39): summary, churn by kind, offers and products per month
    "revenue_monthly": (
        "site_id",
        "currency",
        "date_month",
        "revenue_ex_tax_in_cents",
        "tax_in_cents",
        "refunds_in_cents",
        "disputes_in_cents",
        "known_fees_in_cents",
        "fee_unknown_transactions_count",
        "transactions_count",
        "is_partial_month",
    ),
    "saas_metrics_monthly": ("site_id", "currency", "date_month", "arr_in_cents"),
    "mrr_movements": (
        "site_id",
        "currency",
        "date_month",
        "customer_id",
        "movement",
        "mrr_change_in_cents",
        "churn_kind",
        "is_partial_month",
    ),
    "offer_revenue_monthly": (
        "site_id",
        "currency",
        "date_month",
        "offer_key",
        "offer_title",
        "is_unattributed",
        "net_in_cents",
        "revenue_ex_tax_in_cents",
        "transactions_count",
    ),
    "product_revenue_monthly": (
        "site_id",
        "currency",
        "date_month",
        "product_id",
        "product_title",
        "is_unattributed",
        "revenue_ex_tax_in_cents",
        "transactions_count",
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
        "default_settlement_delay_days",
        "as_of_date",
        "is_as_of_given",
        "creator_sync_version",
    ),
}

def build_hint(label: str) -> str:
    """How to build the marts into the warehouse named by an adapter's label."""
    kind, _, where = label.partition(":")
    target = f"--duckdb {where}" if kind == "duckdb" else f"--destination {kind}"
    return f"build the marts first: creator-sync models {target}"


def mart_columns(adapter: Any, mart: str) -> list[str]:
    """The columns of `analytics.<mart>` in table order (empty when the mart does not exist)."""
    _, rows = adapter.fetch(
        "select column_name from information_schema.columns "
        f"where table_schema = {quote_literal(SCHEMA)} and table_name = {quote_literal(mart)} "
        "order by ordinal_position"
    )
    return [name for (name,) in rows]


def check_marts(adapter: Any) -> None:
    """Fail with one message listing every missing mart or column, before any query runs."""
    problems: list[str] = []
    for mart, needed in MARTS.items():
        present = set(mart_columns(adapter, mart))
        if not present:
            problems.append(f"missing table {SCHEMA}.{mart}")
            continue
        missing = [column for column in needed if column not in present]
        if missing:
            problems.append(f"{SCHEMA}.{mart} lacks column(s) {', '.join(missing)}")
    if problems:
        raise ReportError(
            f"{adapter.label}: cannot build the report: " + "; ".join(problems) + f" ({build_hint(adapter.label)})"
        )
