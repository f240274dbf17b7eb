"""Portability: the same models built on PostgreSQL equal the DuckDB build, row for row."""

from __future__ import annotations

import datetime as dt

import duckdb
import pytest
from click.testing import CliRunner
from known_answer_data import known_answer_rows
from known_answer_lines_data import lines_rows
from models_helpers import mart_rows, write_raw_postgres

from creator_sync.cli import main
from creator_sync.models.adapters import PostgresAdapter
from creator_sync.models.project import load_project
from creator_sync.models.runner import Params, build, run_models

pytestmark = pytest.mark.postgres

AS_OF = dt.date(2024, 3, 31)
MARTS = sorted(m.name for m in load_project().models.values() if m.layer == "marts")
# Facts of the run, not of the data: when each build ran, the dataset each one read, and when
# each warehouse was synced.
RUN_SPECIFIC = {
    "build_metadata": {"built_at", "dataset"},
    "data_coverage": {"last_attempt_at", "last_synced_at", "complete_through_at"},
}


def _duck_fetch(path: str):
    con = duckdb.connect(path, read_only=True)

    def fetch(sql: str):
        cursor = con.execute(sql)
        return [d[0] for d in cursor.description], cursor.fetchall()

    return con, fetch


def assert_marts_equal(duck_path: str, pg: PostgresAdapter) -> dict[str, int]:
    con, fetch = _duck_fetch(duck_path)
    counts = {}
    try:
        for mart in MARTS:
            skip = RUN_SPECIFIC.get(mart, set())
            duck_cols, duck_rows = mart_rows(fetch, mart, skip)
            pg_cols, pg_rows = mart_rows(pg.fetch, mart, skip)
            assert pg_cols == duck_cols, mart
            assert len(pg_rows) == len(duck_rows), mart
            for duck_row, pg_row in zip(duck_rows, pg_rows, strict=True):
                assert pg_row == duck_row, (mart, dict(zip(duck_cols, duck_row, strict=True)))
            counts[mart] = len(duck_rows)
    finally:
        con.close()
    return counts


def test_known_answer_dataset_builds_identically(postgres_dsn, raw_db) -> None:
    """A reporting zone with DST, so AT TIME ZONE is exercised on both engines (the sandbox
    test below covers UTC)."""
    timezone = "America/New_York"
    rows = known_answer_rows()
    duck_path = raw_db(rows)
    run_models(duck_path, timezone=timezone, as_of=AS_OF)

    write_raw_postgres(postgres_dsn, rows)
    pg = PostgresAdapter(postgres_dsn)
    try:
        result = build(pg, Params(timezone=timezone, as_of=AS_OF))
        assert not result.failed_tests
        counts = assert_marts_equal(duck_path, pg)
        # the schema YAML's descriptions, as psql's \d+ shows them
        _, uncommented = pg.fetch(
            "select c.table_name, c.column_name from information_schema.columns as c "
            "where c.table_schema = 'analytics' and col_description("
            "(quote_ident(c.table_schema) || '.' || quote_ident(c.table_name))::regclass, "
            "c.ordinal_position) is null and c.table_name in (select table_name from "
            "information_schema.tables where table_schema = 'analytics' and table_type = "
            "'BASE TABLE')"  # the marts' former names are views of them, for one release
        )
        _, tables = pg.fetch("select count(*), count(obj_description(('analytics.' || "
                             "quote_ident(table_name))::regclass)) from information_schema.tables "
                             "where table_schema = 'analytics' and table_type = 'BASE TABLE'")
    finally:
        pg.close()
    assert counts["revenue_daily"] > 0 and counts["mrr_monthly"] == 3
    assert uncommented == [] and tables[0][0] == tables[0][1] > 0


def test_itemised_payouts_build_identically(postgres_dsn, raw_db) -> None:
    """The payout lines, their matches (ties, order numbers, failed payouts), the observed
    delay and its percentiles, fees: row for row on both engines."""
    rows = lines_rows()
    duck_path = raw_db(rows)
    as_of = dt.date(2024, 5, 10)
    run_models(duck_path, as_of=as_of)

    write_raw_postgres(postgres_dsn, rows)
    pg = PostgresAdapter(postgres_dsn)
    try:
        result = build(pg, Params(as_of=as_of))
        assert not result.failed_tests
        counts = assert_marts_equal(duck_path, pg)
    finally:
        pg.close()
    assert counts["fct_payout_lines"] == 12 and counts["settlement_delay"] == 1
    assert counts["unpaid_transactions"] == 1 and counts["fees_monthly"] == 2


def test_subscription_movements_and_metrics_build_identically(postgres_dsn, raw_db) -> None:
    """Movements with their churn reasons, the SaaS metrics (ARPA and LTV rounded to the cent from
    integer and DOUBLE arithmetic, the trailing churn average) and the subscription cohorts, in a
    reporting zone with DST: row for row on both engines."""
    from subscriptions_data import subscription_rows

    timezone = "America/New_York"
    as_of = dt.date(2024, 11, 30)
    rows = subscription_rows()
    duck_path = raw_db(rows)
    run_models(duck_path, timezone=timezone, as_of=as_of)

    write_raw_postgres(postgres_dsn, rows)
    pg = PostgresAdapter(postgres_dsn)
    try:
        result = build(pg, Params(timezone=timezone, as_of=as_of))
        assert not result.failed_tests
        counts = assert_marts_equal(duck_path, pg)
        _, ltv = pg.fetch("select count(ltv_in_cents) from analytics.saas_metrics_monthly")
    finally:
        pg.close()
    assert counts["mrr_movements"] == 15 and counts["saas_metrics_monthly"] == 12
    assert ltv[0][0] > 0


def test_postgres_label_hides_the_password(postgres_dsn) -> None:
    pg = PostgresAdapter(postgres_dsn.replace(":throwaway@", ":s3cret-pw@"))
    try:
        assert "s3cret" not in pg.label and "127.0.0.1" in pg.label
    finally:
        pg.close()


def test_sandbox_synced_to_postgres_equals_duckdb(
    postgres_dsn, sandbox_url, sandbox_duckdb, sync_sandbox, tmp_path, monkeypatch
) -> None:
    """The issue's portability proof: the pipeline loads the sandbox into PostgreSQL (dlt's
    postgres destination), the models build there, and every mart equals the DuckDB build."""
    monkeypatch.setenv("DESTINATION__POSTGRES__CREDENTIALS", postgres_dsn)
    sync_sandbox(sandbox_url, tmp_path, destination="postgres", dataset="creator_platform_pg")
    run_models(sandbox_duckdb)

    # the CLI finds the server the way the pipeline did: dlt's credentials from the environment
    cli = CliRunner().invoke(main, ["models", "--destination", "postgres",
                                    "--dataset", "creator_platform_pg", "--strict"])
    assert cli.exit_code == 0, cli.output
    assert "Data tests: " in cli.output and "throwaway" not in cli.output
    pg = PostgresAdapter(postgres_dsn)
    try:
        counts = assert_marts_equal(sandbox_duckdb, pg)
    finally:
        pg.close()
    assert counts["revenue_daily"] > 0 and counts["payout_reconciliation"] > 0
    assert counts["mrr_movements"] > 0 and counts["saas_metrics_monthly"] > 0
    # the payout details (lines) loaded by dlt into PostgreSQL match and reconcile the same way
    assert counts["fct_payout_lines"] > 0 and counts["settlement_delay"] > 0


def test_revenue_recognition_and_product_splits_build_identically(postgres_dsn, raw_db) -> None:
    """Revenue excl. tax, unstated fees (NULL), an annual plan earned over its year and half
    refunded (the reversal's proportional split, negative cents), an order split across its
    items and an offer's products: row for row on both engines, in a zone with DST."""
    from revenue_data import AS_OF as REVENUE_AS_OF
    from revenue_data import account

    timezone = "America/New_York"
    rows = account()
    duck_path = raw_db(rows)
    run_models(duck_path, timezone=timezone, as_of=REVENUE_AS_OF)

    write_raw_postgres(postgres_dsn, rows)
    pg = PostgresAdapter(postgres_dsn)
    try:
        result = build(pg, Params(timezone=timezone, as_of=REVENUE_AS_OF))
        assert not result.failed_tests
        counts = assert_marts_equal(duck_path, pg)
    finally:
        pg.close()
    assert counts["revenue_monthly"] == 3 and counts["transaction_ledger"] == 5
    assert counts["product_revenue_monthly"] > 0 and counts["offer_revenue_monthly"] > 0

def test_the_data_tests_read_the_snapshot_the_models_were_built_from(postgres_dsn) -> None:
    """Issue 38, found by the month (tests/month): `models` while a sync commits on
    PostgreSQL. Nothing keeps them apart there (DuckDB's file lock does), so the build and its
    tests read one snapshot: a transaction the sync commits after the models were built is in
    neither, and `staging_keeps_every_transaction` no longer compares raw rows the staging
    model never saw (it failed, exit 1, with `{'ids': 165, 'rows_count': 164}`)."""
    import psycopg2

    write_raw_postgres(postgres_dsn, known_answer_rows())
    pg = PostgresAdapter(postgres_dsn)
    built = pg.comment

    def a_sync_commits_meanwhile(comments):
        built(comments)  # every model is built: now another session commits a new transaction
        con = psycopg2.connect(postgres_dsn)
        con.autocommit = True
        with con.cursor() as cur:
            cur.execute(
                "insert into creator_platform.transactions select (jsonb_populate_record("
                "null::creator_platform.transactions, to_jsonb(t) || '{\"id\": \"9900000001\"}'"
                ")).* from creator_platform.transactions as t limit 1")
        con.close()

    pg.comment = a_sync_commits_meanwhile
    try:
        result = build(pg, Params(as_of=AS_OF))
        _, raw = pg.fetch("select count(*) from creator_platform.transactions "
                          "where id = '9900000001'")
        _, staged = pg.fetch("select count(*) from analytics_staging.stg_transactions "
                             "where transaction_id = '9900000001'")
    finally:
        pg.close()
    assert not result.failed_tests
    assert raw == [(1,)] and staged == [(0,)]  # committed meanwhile: the next build takes it


def test_each_model_is_analyzed_as_it_is_built(postgres_dsn, raw_db) -> None:
    """A model's table has the planner's statistics before the next model reads it: without
    them the build planned joins on default estimates (10 of a `tiny` build's 12 s)."""
    write_raw_postgres(postgres_dsn, known_answer_rows())
    pg = PostgresAdapter(postgres_dsn)
    try:
        result = build(pg, Params(as_of=AS_OF), run_tests=False)
        _, rows = pg.fetch(
            "select c.relname, c.reltuples from pg_class as c join pg_namespace as n on "
            "n.oid = c.relnamespace where n.nspname in ('analytics', 'analytics_staging') "
            "and c.relkind = 'r'")
    finally:
        pg.close()
    built = {m.name for m in result.models}
    # reltuples is -1 on a table never analyzed (PostgreSQL 14+), the row count once it is
    assert {name for name, _ in rows} >= built
    assert not [name for name, tuples in rows if name in built and tuples < 0]
    counts = result.row_counts
    assert all(tuples == counts[name] for name, tuples in rows if name in built)
