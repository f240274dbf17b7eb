"""The runner: dependency order from refs, contract projection, transactions, data tests."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import duckdb
import pytest
import sqlglot
from known_answer_data import known_answer_rows
from models_helpers import fetch_dicts, ts

from creator_sync.models.adapters import DuckDBAdapter
from creator_sync.models.dbt_context import Renderer
from creator_sync.models.project import SQL_DIR, ProjectError, load_project
from creator_sync.models.runner import DataTestError, ModelsError, Params, build, run_models

MINIMAL = {
    "transactions": [
        {"id": "T1", "site_id": "S", "created_at": ts("2024-01-01T12:00:00+00:00"),
         "action": "charge", "amount_in_cents": 100, "currency": "USD"},
    ],
}


def _write(sql_dir: Path, layer: str, name: str, text: str) -> None:
    folder = sql_dir / layer if layer == "tests" else sql_dir / "models" / layer
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.sql").write_text(text)


def test_order_follows_refs_not_file_names(tmp_path: Path) -> None:
    _write(tmp_path, "marts", "a_mart", "select * from {{ ref('z_base') }}")
    _write(tmp_path, "staging", "z_base", "select 1 as x")
    _write(tmp_path, "intermediate", "m_mid", "select * from {{ ref('a_mart') }}")
    order = [m.name for m in load_project(tmp_path).order()]
    assert order == ["z_base", "a_mart", "m_mid"]


def test_every_model_is_built_after_its_refs() -> None:
    project = load_project()
    seen: set[str] = set()
    for model in project.order():
        assert set(model.refs) <= seen, model.name
        seen.add(model.name)
    assert len(seen) == len(project.models)


def test_cycles_and_unknown_refs_are_named(tmp_path: Path) -> None:
    _write(tmp_path, "staging", "a", "select * from {{ ref('b') }}")
    _write(tmp_path, "staging", "b", "select * from {{ ref('a') }}")
    with pytest.raises(ProjectError, match="cycle"):
        load_project(tmp_path).order()
    _write(tmp_path, "staging", "b", "select * from {{ ref('nope') }}")
    with pytest.raises(ProjectError, match=r"b\.sql: ref\('nope'\)"):
        load_project(tmp_path).order()


def test_every_mart_declares_a_grain() -> None:
    project = load_project()
    marts = [m for m in project.models.values() if m.layer == "marts"]
    assert {m.name for m in marts} >= {
        "revenue_daily", "mrr_monthly", "fct_orders", "orders_daily", "dim_customers",
        "customer_cohorts", "fct_payouts", "payout_reconciliation", "payout_transactions",
        "unpaid_balance", "offer_performance", "course_catalog", "mrr_movements",
        "saas_metrics_monthly",
    }
    assert all(m.grain for m in marts), [m.name for m in marts if not m.grain]


def test_every_model_transpiles_to_postgres(raw_db) -> None:
    """The portability contract, checked without a server: sqlglot parses every rendered model."""
    path = raw_db(MINIMAL)
    adapter = DuckDBAdapter(path)
    project = load_project()
    renderer = Renderer(adapter, project, Params(timezone="Europe/Berlin"))
    try:
        for sql_file in [*project.models.values(), *project.tests.values()]:
            out = sqlglot.transpile(renderer.render(sql_file), read="duckdb", write="postgres")
            assert len(out) == 1 and out[0].strip(), sql_file.name
    finally:
        adapter.close()


def test_columns_dlt_never_created_are_typed_nulls(raw_db) -> None:
    # No settlement, offer, customer or purchase columns/tables at all: still builds.
    path = raw_db(MINIMAL)
    result = run_models(path)
    assert result.row_counts["revenue_daily"] == 1
    assert result.row_counts["payout_reconciliation"] == 0
    assert "purchases" in result.missing_sources
    assert not result.failed_tests


def test_missing_transactions_table_builds_and_the_coverage_says_so(raw_db) -> None:
    path = raw_db({"customers": [{"id": "C1", "site_id": "S"}]})
    result = run_models(path)
    assert "transactions" in result.missing_sources
    (row,) = fetch_dicts(path, "select * from analytics.data_coverage "
                               "where resource = 'transactions'")
    assert (row["is_loaded"], row["records_count"]) == (False, 0)


def test_failed_model_keeps_the_previous_build(raw_db, tmp_path: Path) -> None:
    path = raw_db(known_answer_rows())
    run_models(path, as_of=dt.date(2024, 3, 31))
    before = fetch_dicts(path, "select count(*) as n, sum(net_in_cents) as net from analytics.revenue_daily")

    # new raw data: a build that got as far as revenue_daily and kept it would change the sum
    con = duckdb.connect(path)
    con.execute("insert into creator_platform.transactions (id, site_id, created_at, action, "
                "amount_in_cents, currency) values ('T99', '3000000001', "
                "timestamptz '2024-03-30 12:00:00+00', 'charge', 777, 'USD')")
    con.close()

    broken = tmp_path / "sql"
    shutil.copytree(SQL_DIR, broken)
    (broken / "models" / "marts" / "mrr_monthly.sql").write_text(
        "-- grain: x\nselect no_such_column from {{ ref('int_subscriber_mrr_months') }}"
    )
    adapter = DuckDBAdapter(path)
    try:
        with pytest.raises(ModelsError, match=r"model mrr_monthly \(sql/models/marts/mrr_monthly\.sql\)"):
            build(adapter, Params(), project=load_project(broken))
    finally:
        adapter.close()
    assert fetch_dicts(path, "select count(*) as n, sum(net_in_cents) as net from analytics.revenue_daily") == before
    # revenue_daily was rebuilt (with T99) inside the failed build before mrr_monthly broke,
    # and rolled back with it
    assert fetch_dicts(path, "select count(*) as n from analytics.mrr_monthly") == [{"n": 3}]


def test_failing_data_test_raises_with_rows(raw_db, tmp_path: Path) -> None:
    path = raw_db(MINIMAL)
    _write(tmp_path, "staging", "dup", "-- grain: k\nselect 1 as k union all select 1")
    _write(tmp_path, "tests", "never_negative", "-- test: no negative\n"
           "select * from {{ ref('dup') }} where k > 0")
    adapter = DuckDBAdapter(path)
    try:
        with pytest.raises(DataTestError) as info:
            build(adapter, Params(), project=load_project(tmp_path))
    finally:
        adapter.close()
    failed = {t.name: t for t in info.value.result.failed_tests}
    assert set(failed) == {"unique_dup", "never_negative"}
    assert failed["never_negative"].failures == 2
    assert "unique_dup" in str(info.value)


def test_strict_turns_warnings_into_errors(raw_db) -> None:
    path = raw_db(known_answer_rows())
    result = run_models(path, as_of=dt.date(2024, 3, 31))
    assert result.warnings and not result.failed_tests
    with pytest.raises(DataTestError, match="paid_payouts_reconcile"):
        run_models(path, as_of=dt.date(2024, 3, 31), strict=True)


def test_settlement_delay_is_a_parameter(raw_db) -> None:
    path = raw_db(known_answer_rows())
    run_models(path, as_of=dt.date(2024, 3, 31), settlement_delay_days=0)
    (po1,) = fetch_dicts(path, "select * from analytics.payout_reconciliation where payout_id = 'PO1'")
    # delay 0: everything created by Jan 20 is payable on Jan 20: T1 941 + T2 5225 + T8 1912
    assert po1["expected_amount_in_cents"] == 941 + 5225 + 1912


def test_bad_parameters_are_named(raw_db) -> None:
    path = raw_db(MINIMAL)
    with pytest.raises(ModelsError, match="--timezone"):
        run_models(path, timezone="Mars/Olympus")
    with pytest.raises(ModelsError, match="--dataset: must be a plain SQL name"):
        run_models(path, dataset="x; drop table y")
    with pytest.raises(ModelsError, match=r"dataset .*'other' not found"):
        run_models(path, dataset="other")


def test_money_columns_are_integers_or_decimals(raw_db) -> None:
    path = raw_db(known_answer_rows())
    run_models(path, as_of=dt.date(2024, 3, 31))
    con = duckdb.connect(path, read_only=True)
    rows = con.execute(
        "select table_name, column_name, data_type from information_schema.columns "
        "where table_schema = 'analytics' and column_name like '%_in_cents'"
    ).fetchall()
    con.close()
    assert rows
    bad = [r for r in rows if r[2] not in ("BIGINT", "INTEGER", "HUGEINT") and not r[2].startswith("DECIMAL")]
    assert not bad


def test_raw_columns_typed_differently_are_cast_to_the_contract(tmp_path: Path) -> None:
    path = str(tmp_path / "text.duckdb")
    con = duckdb.connect(path)
    con.execute("create schema creator_platform")
    con.execute("create table creator_platform.transactions (id varchar, site_id varchar, "
                "created_at varchar, action varchar, amount_in_cents varchar, currency varchar)")
    con.execute("insert into creator_platform.transactions values "
                "('T1', 'S', '2024-01-01T23:30:00-05:00', 'charge', '1250', 'usd')")
    con.close()
    run_models(path)
    (row,) = fetch_dicts(path, "select * from analytics.revenue_daily")
    # 23:30 at -05:00 is 04:30 UTC on Jan 2
    assert (row["date_day"], row["net_in_cents"], row["currency"]) == (dt.date(2024, 1, 2), 1250, "USD")


def test_waits_for_the_warehouse_lock_of_a_running_writer(raw_db) -> None:
    from creator_sync.common.locking import LockTimeout, warehouse_lock

    path = raw_db(MINIMAL)
    with warehouse_lock(path, timeout=0), pytest.raises(LockTimeout, match="warehouse"):
        run_models(path, lock_timeout=0.2)
    assert run_models(path, lock_timeout=0.2).row_counts["revenue_daily"] == 1


def test_missing_duckdb_file_is_not_created(tmp_path: Path) -> None:
    target = tmp_path / "typo.duckdb"
    with pytest.raises(ModelsError, match="no such DuckDB file"):
        run_models(str(target))
    assert list(tmp_path.iterdir()) == []


def test_headline_figures_before_any_build_says_what_to_run(raw_db) -> None:
    from creator_sync.models.runner import headline_figures

    path = raw_db(MINIMAL)
    with pytest.raises(LookupError, match="run `creator-sync models` first"):
        headline_figures(path)


def test_models_follow_the_house_sql_style() -> None:
    """One import CTE per input, on one line (`x as (select * from {{ ref('x') }}),`), named
    CTEs, `final` last, `select * from final`: the CONTRIBUTING.md rules, checked so they stay
    true."""
    import re

    for model in load_project().models.values():
        text = model.text
        placeholders = re.findall(r"\{\{ (?:ref|raw|latest)\('[a-z_]+'\) \}\}", text)
        imports = re.findall(
            r"^(?:with (?:recursive )?)?[a-z_]+ as \(select \* from (\{\{ (?:ref|raw|latest)\('[a-z_]+'\) \}\})\),?$",
            text,
            re.M,
        )
        assert placeholders == imports, f"{model.name}: read an input outside a one-line import CTE"
        assert len(set(imports)) == len(imports), f"{model.name}: one import CTE per input"
        assert "\nfinal as (\n" in text, model.name
        assert text.rstrip().endswith("select * from final"), model.name


def test_an_account_with_no_transactions_yet_builds_empty_marts(tmp_path: Path) -> None:
    from creator_sync.models.headline import format_headline
    from creator_sync.models.runner import headline_figures

    path = str(tmp_path / "empty.duckdb")
    con = duckdb.connect(path)
    con.execute("create schema creator_platform")
    con.execute("create table creator_platform.transactions (id varchar, created_at timestamptz)")
    con.close()
    result = run_models(path)
    assert all(t.passed for t in result.tests)
    assert result.row_counts["revenue_daily"] == result.row_counts["mrr_monthly"] == 0
    figures = headline_figures(path)
    assert figures["net_revenue_last_30_days_in_cents"] is None
    # nothing was loaded: no figure is stated as zero, each says what it lacks
    lines = format_headline(figures)
    assert lines[:3] == [
        "Transactions: not loaded (never synced (left out by --resources, or no sync has run))",
        "Purchases: not loaded (never synced (left out by --resources, or no sync has run))",
        "Payouts: not loaded (never synced (left out by --resources, or no sync has run))",
    ]
    assert "Unreconciled payouts: not available (payouts and transactions not loaded)" in lines
    assert "Settled, not yet paid out: not available (payouts and transactions not loaded)" in lines
