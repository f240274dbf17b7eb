"""Known answers for itemised payouts: the marts built from known_answer_lines_data.py equal
figures worked out by hand (the table and the payouts are in that file's docstring).

As-of 2024-05-10, reporting zone UTC, no --settlement-delay-days (the delay is observed) unless
a test says otherwise. Amounts in cents.
"""

from __future__ import annotations

import datetime as dt

import pytest
from known_answer_lines_data import S, lines_rows
from models_helpers import fetch_dicts, write_raw

from creator_sync.models.runner import run_models

AS_OF = dt.date(2024, 5, 10)
MAY = dt.date(2024, 5, 1)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, object]:
    path = write_raw(tmp_path_factory.mktemp("kal") / "lines.duckdb", lines_rows())
    return path, run_models(path, as_of=AS_OF)


def _by_key(path: str, table: str, *key: str) -> dict:
    rows = fetch_dicts(path, f"select * from analytics.{table}")
    return {tuple(r[k] for k in key) if len(key) > 1 else r[key[0]]: r for r in rows}


def test_lines_are_normalised(built) -> None:
    path, _ = built
    lines = _by_key(path, "payout_lines", "payout_id", "line_number")
    assert len(lines) == 6 + 3 + 3
    # `Sales`, `sale`, `SALES`, `Refund`, `REFUND`, `Adjustment` -> sale / refund / adjustment
    assert [lines[("PO1", n)]["line_type"] for n in range(1, 7)] == [
        "sale", "sale", "sale", "sale", "adjustment", "sale"]
    assert lines[("PO1", 1)]["transaction_type"] == "Sales"  # kept as sent beside it
    assert [lines[("PO3", n)]["line_type"] for n in (1, 2, 3)] == ["sale", "refund", "sale"]
    # cents from the decimals, exactly: 50.00 - 1.75 = 48.25
    one = lines[("PO1", 1)]
    assert (one["amount_in_cents"], one["fee_in_cents"], one["net_in_cents"]) == (5000, 175, 4825)
    # the EUR sale settled in USD: 40.00 EUR presented, 43.20 USD settled at 1.08
    eur = lines[("PO1", 2)]
    assert (eur["presented_amount_in_cents"], eur["presented_currency"]) == (4000, "EUR")
    assert (eur["amount_in_cents"], eur["currency"], str(eur["exchange_rate"])) == (
        4320, "USD", "1.080000000")
    # `ORD-1001` and `1001` both name order 1001 (OR1)
    for payout in ("PO2", "PO3"):
        assert (lines[(payout, 1)]["order_number"], lines[(payout, 1)]["order_id"]) == (1001, "OR1")
    assert lines[("PO2", 1)]["order_number_as_sent"] == "ORD-1001"
    # days from the line's UTC day to its payout's: May 1 -> May 4 = 3; May 3 -> May 4 = 1
    assert (one["delay_days"], lines[("PO1", 5)]["delay_days"]) == (3, 1)


def test_lines_are_matched_one_to_one_by_the_documented_rules(built) -> None:
    path, _ = built
    lines = _by_key(path, "payout_lines", "payout_id", "line_number")

    def match(payout: str, n: int) -> tuple:
        row = lines[(payout, n)]
        return row["transaction_id"], row["match_rule"], row["is_tied"], row["is_matched"]

    # PO1: A's `Sales` line and B's EUR line are alone in their minute
    assert match("PO1", 1) == ("TA1", "same_minute", False, True)
    assert match("PO1", 2) == ("TB1", "same_minute", False, True)  # 4000 EUR presented = TB1
    # C's two identical purchases (1999 USD, 14:30:10 and 14:30:40), both lines dated 14:30:00:
    # a tie; the k-th line (by line number) takes the k-th transaction (by time, then id)
    assert match("PO1", 3) == ("TC1", "same_minute", True, True)
    assert match("PO1", 4) == ("TC2", "same_minute", True, True)
    # the adjustment names no customer and G has no listed transaction: no transaction behind them
    assert match("PO1", 5) == (None, None, False, False)
    assert match("PO1", 6) == (None, None, False, False)
    for payout in ("PO2", "PO3"):  # each failed payout is its own scope: TD1, TA2, TA3 twice
        # the line is dated 09:02:30 but order 1001 (D's, 09:00:00) finds TD1 in its minute
        assert match(payout, 1) == ("TD1", "order_number", False, True)
        # A's refund is listed first and both lines say 12:00:00, the sale TA3 is the earlier
        # transaction: taken in order regardless of kind, the refund would get the sale
        assert match(payout, 2) == ("TA2", "same_minute", False, True)
        assert match(payout, 3) == ("TA3", "same_minute", False, True)
    assert lines[("PO1", 3)]["transaction_created_at"] == dt.datetime(
        2024, 5, 1, 14, 30, 10, tzinfo=dt.UTC)


def test_reconciliation_by_lines_and_by_rule(built) -> None:
    path, _ = built
    rec = _by_key(path, "payout_reconciliation", "payout_id")
    po1 = rec["PO1"]
    # lines net: 4825 + 4165 + 1911 + 1911 - 250 + 724 = 13286 = $132.86
    assert (po1["reconciliation_method"], po1["lines_count"]) == ("itemised", 6)
    assert (po1["itemised_net_in_cents"], po1["itemisation_difference_in_cents"]) == (13286, 0)
    assert (po1["matched_lines_count"], po1["unmatched_lines_count"]) == (4, 2)
    assert po1["tied_lines_count"] == 2
    assert po1["fees_in_cents"] == 175 + 155 + 88 + 88 + 0 + 53 == 559
    assert po1["adjustments_in_cents"] == -250
    assert po1["unexplained_in_cents"] == -250 + 724 == 474  # the adjustment and G's sale
    # the rule (observed delay 3 days): payable by May 4 = the May 1 transactions
    # 4825 + 4165 + 1911 + 1911 = 12812; residual 13286 - 12812 = 474 = unexplained
    assert (po1["rule_expected_in_cents"], po1["rule_difference_in_cents"]) == (12812, 474)
    assert po1["rule_transactions_count"] == 4
    # the figures that follow the method: the lines
    assert (po1["expected_amount_in_cents"], po1["difference_in_cents"]) == (13286, 0)
    assert po1["transactions_count"] == 4
    # it balances, but G's sale line has no transaction: not reconciled
    assert po1["is_reconciled"] is False

    for payout, rolled in (("PO2", True), ("PO3", False)):
        row = rec[payout]
        # 2397 - 1000 + 941 = 2338 = $23.38; fees 103 + 0 + 59 = 162
        assert (row["itemised_net_in_cents"], row["itemisation_difference_in_cents"]) == (2338, 0)
        assert (row["matched_lines_count"], row["unmatched_lines_count"]) == (3, 0)
        assert (row["fees_in_cents"], row["adjustments_in_cents"], row["unexplained_in_cents"]) == (
            162, 0, 0)
        # rule: (May 4, May 5] for PO2 and (May 4, May 6] for PO3 (PO2 failed): TD1, TA3, TA2
        assert (row["rule_expected_in_cents"], row["rule_difference_in_cents"]) == (2338, 0)
        assert (row["is_rolled_forward"], row["is_reconciled"]) == (rolled, True)

    po4 = rec["PO4"]  # no lines: the rule is the fallback, with the observed delay
    assert (po4["reconciliation_method"], po4["lines_count"]) == ("settlement_rule", 0)
    assert po4["itemised_net_in_cents"] is None and po4["unexplained_in_cents"] is None
    # (May 6, May 8]: TF1 created May 4 + 3 = May 7: 1426 = $14.26; fees 74 from the rule
    assert (po4["expected_amount_in_cents"], po4["difference_in_cents"]) == (1426, 0)
    assert (po4["fees_in_cents"], po4["transactions_count"], po4["is_reconciled"]) == (74, 1, True)
    assert all(r["settlement_delay_days"] == 3 for r in rec.values())


def test_observed_settlement_delay(built) -> None:
    path, _ = built
    (row,) = fetch_dicts(path, "select * from analytics.settlement_delay")
    # lines of PO1 and PO3 (PO2 failed): five May 1 lines -> May 4 = 3 days, the adjustment
    # May 3 -> May 4 = 1, three May 2 lines -> May 6 = 4. Sorted: 1 3 3 3 3 3 4 4 4 (n = 9).
    # Nearest rank: p50 is rank 5 (5/9 >= 50 %) = 3; p95 is rank 9 (9/9 >= 95 %) = 4.
    assert (row["site_id"], row["provider"], row["date_month"]) == (S, "platform_payments", MAY)
    assert (row["lines_count"], row["min_delay_days"], row["p50_delay_days"]) == (9, 1, 3)
    assert (row["p95_delay_days"], row["max_delay_days"]) == (4, 4)


def test_unpaid_transactions_and_balance_use_the_observed_delay(built) -> None:
    path, _ = built
    (unpaid,) = fetch_dicts(path, "select * from analytics.unpaid_transactions")
    # TE1 (May 6) is payable May 6 + 3 = May 9 and in no payout: it has waited 4 days, 1 overdue
    assert (unpaid["transaction_id"], unpaid["net_settlement_in_cents"]) == ("TE1", 2883)
    assert (unpaid["payable_date"], unpaid["settlement_delay_days"]) == (dt.date(2024, 5, 9), 3)
    assert (unpaid["days_waiting"], unpaid["days_overdue"]) == (4, 1)
    assert (unpaid["failed_payouts_count"], unpaid["last_failed_payout_id"]) == (0, None)
    (balance,) = fetch_dicts(path, "select * from analytics.unpaid_balance")
    # settled by May 10: 12812 (PO1's four) + 2338 (PO3's three) + 1426 (TF1) + 2883 (TE1)
    assert balance["settled_in_cents"] == 19459
    assert balance["paid_out_in_cents"] == 12812 + 2338  # matched lines of paid PO1 and PO3
    assert balance["in_transit_in_cents"] == 1426  # TF1: the rule puts it in pending PO4
    assert balance["awaiting_payout_in_cents"] == 2883  # TE1
    assert (balance["settlement_delay_days"], balance["settlement_delay_source"]) == (3, "observed")


def test_fees_monthly_lines_beside_transactions(built) -> None:
    path, _ = built
    fees = _by_key(path, "fees_monthly", "provider")
    platform = fees["platform_payments"]
    assert (platform["site_id"], platform["currency"], platform["date_month"]) == (S, "USD", MAY)
    # lines of PO1 and PO3: sales 5000 + 4320 + 1999 + 1999 + 777 + 2500 + 1000 = 17595;
    # fees 175 + 155 + 88 + 88 + 0 + 53 + 103 + 0 + 59 = 721; net 13286 + 2338 = 15624
    assert (platform["lines_count"], platform["line_gross_in_cents"]) == (9, 17595)
    assert (platform["line_fees_in_cents"], platform["line_net_in_cents"]) == (721, 15624)
    assert platform["line_fee_rate"] == pytest.approx(721 / 17595)
    # transactions settled in USD: sales 5000 + 4320 + 1999 + 1999 + 2500 + 1000 + 1500 + 3000
    # = 21318 (TB1 at its settled 4320); fees 175 + 155 + 88 + 88 + 103 + 0 + 59 + 74 + 117 = 859
    assert (platform["transactions_count"], platform["transaction_gross_in_cents"]) == (9, 21318)
    assert platform["transaction_fees_in_cents"] == 859
    assert platform["transaction_fee_rate"] == pytest.approx(859 / 21318)
    stripe = fees["stripe"]  # TS1: no lines, its own amount and payment fee
    assert (stripe["lines_count"], stripe["line_fees_in_cents"], stripe["line_fee_rate"]) == (
        0, 0, None)
    assert (stripe["transaction_gross_in_cents"], stripe["transaction_fees_in_cents"]) == (2000, 88)
    assert len(fees) == 2


def test_only_the_planted_warnings(built) -> None:
    _, result = built
    assert not result.failed_tests
    # PO1 is paid with G's unmatched sale line; every line balances
    assert [t.name for t in result.warnings] == ["paid_payouts_reconcile"]


def test_settlement_delay_override_applies_to_every_site(tmp_path) -> None:
    path = write_raw(tmp_path / "override.duckdb", lines_rows())
    run_models(path, as_of=AS_OF, settlement_delay_days=2)
    rec = _by_key(path, "payout_reconciliation", "payout_id")
    # delay 2: PO1 (by May 4) carries the May 1 and May 2 transactions: 12812 + 2338 = 15150
    assert rec["PO1"]["rule_expected_in_cents"] == 15150
    # PO4 (May 6, May 8] now holds TE1 (May 6 + 2) = 2883 against its 1426: by the rule
    assert (rec["PO4"]["expected_amount_in_cents"], rec["PO4"]["difference_in_cents"]) == (
        2883, 1426 - 2883)
    assert rec["PO4"]["is_reconciled"] is False
    # the lines, the platform's own books, still reconcile PO2 and PO3
    assert rec["PO3"]["is_reconciled"] is True and rec["PO3"]["settlement_delay_days"] == 2
    # TF1 (May 4 + 2 = May 6) falls in PO3's rule window, but PO3 is itemised and has no line
    # for it: nothing carries it, it waits (6 days, 4 overdue); TE1 is in PO4 by the rule
    (unpaid,) = fetch_dicts(path, "select * from analytics.unpaid_transactions")
    assert (unpaid["transaction_id"], unpaid["days_waiting"], unpaid["days_overdue"]) == (
        "TF1", 6, 4)
    (balance,) = fetch_dicts(path, "select * from analytics.unpaid_balance")
    assert (balance["settlement_delay_days"], balance["settlement_delay_source"]) == (2, "override")
    (delay,) = fetch_dicts(path, "select p50_delay_days from analytics.settlement_delay")
    assert delay["p50_delay_days"] == 3  # what the lines show, whatever the override


def test_matching_does_not_depend_on_load_order(built, tmp_path) -> None:
    """The same records written in reverse order, each under another load id: same matches."""
    path, _ = built
    rows = {table: list(reversed(records)) for table, records in lines_rows().items()}
    reversed_path = write_raw(tmp_path / "reversed.duckdb", rows)
    run_models(reversed_path, as_of=AS_OF)
    query = ("select payout_id, line_number, transaction_id, match_rule, is_tied "
             "from analytics.fct_payout_lines order by payout_id, line_number")
    assert fetch_dicts(reversed_path, query) == fetch_dicts(path, query)


def test_a_refund_line_never_takes_a_sale(tmp_path) -> None:
    """Without the refund transaction TA2 and without A's sale line in PO3, the refund line's
    only candidate of the same customer, amount and minute is the sale TA3: it stays unmatched,
    and TA3, on no line of a live payout, waits to be paid."""
    rows = lines_rows()
    rows["transactions"] = [r for r in rows["transactions"] if r["id"] != "TA2"]
    rows["payout_lines"] = [r for r in rows["payout_lines"]
                            if (r["payout_id"], r["line_number"]) != ("PO3", 3)]
    path = write_raw(tmp_path / "kinds.duckdb", rows)
    result = run_models(path, as_of=AS_OF)
    assert not result.failed_tests
    (line,) = fetch_dicts(path, "select * from analytics.fct_payout_lines "
                                "where payout_id = 'PO3' and line_number = 2")
    assert (line["line_type"], line["transaction_id"], line["is_matched"]) == ("refund", None, False)
    rec = _by_key(path, "payout_reconciliation", "payout_id")
    assert (rec["PO3"]["unmatched_lines_count"], rec["PO3"]["is_reconciled"]) == (1, False)
    unpaid = _by_key(path, "unpaid_transactions", "transaction_id")
    assert set(unpaid) == {"TA3", "TE1"}
