"""The marts that shared a raw table's name were renamed (dim_/fct_, DECISIONS-2.md); their
former names stay for one release as views of them (CHANGELOG.md), also over a warehouse an
earlier version built, where the former name is a table."""

from __future__ import annotations

import datetime as dt

import duckdb
from known_answer_data import known_answer_rows

from creator_sync.models.project import SQL_DIR
from creator_sync.models.raw_contract import SOURCE_TABLES
from creator_sync.models.runner import run_models
from creator_sync.models.schema import load_schema

RENAMED = {"sites": "dim_sites", "customers": "dim_customers", "orders": "fct_orders",
           "payouts": "fct_payouts", "payout_lines": "fct_payout_lines"}


def test_no_mart_bears_a_raw_table_name_and_the_renamed_ones_say_their_former_name() -> None:
    docs = load_schema(SQL_DIR)
    marts = {name for name, doc in docs.items() if doc.layer == "marts"}
    assert not marts & set(SOURCE_TABLES)
    assert {doc.former_name: name for name, doc in docs.items() if doc.former_name} == RENAMED


def test_a_former_name_is_a_view_of_the_renamed_mart_also_over_an_old_build(raw_db) -> None:
    path = raw_db(known_answer_rows())
    con = duckdb.connect(path)
    # an earlier version's build: the mart under its former name, a table
    con.execute("create schema analytics")
    con.execute("create table analytics.customers as select 1 as stale")
    con.close()
    run_models(path, as_of=dt.date(2024, 3, 31))
    con = duckdb.connect(path, read_only=True)
    try:
        views = {r[0] for r in con.execute(
            "select view_name from duckdb_views() where schema_name = 'analytics'").fetchall()}
        assert views == set(RENAMED)
        for old, new in RENAMED.items():
            rows = con.execute(f"select * from analytics.{new} order by all").fetchall()
            assert con.execute(f"select * from analytics.{old} order by all").fetchall() == rows
        assert con.execute("select count(*) from analytics.dim_customers").fetchone()[0] > 0
    finally:
        con.close()
    run_models(path, as_of=dt.date(2024, 3, 31))  # again: the views are replaced, not doubled
