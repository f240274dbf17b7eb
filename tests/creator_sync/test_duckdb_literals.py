"""The pipeline's DuckDB statements write their parameters as literals (`duckdb_literals`):
the same values and types as binding them, and no pandas import (~0.4 s of CPU a sync)."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, date, datetime, time, timedelta, timezone
from decimal import Decimal

import duckdb
import pytest

from creator_sync.common.duckdb_literals import inline_parameters, sql_literal

VALUES = [
    None, True, False, 0, -7, 2**63 - 1, -(2**63), 0.1, -1.5e-300, 1e300,
    "", "it's", "100%s", "naïve ✓", "a\nb",
    datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC),
    datetime(2026, 3, 1, 12, 0, tzinfo=timezone(timedelta(hours=-5))),
    datetime(2026, 3, 1, 12, 0), date(2026, 2, 28), time(23, 59, 1),
]


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_a_literal_reads_back_as_the_bound_value_of_the_same_type(value) -> None:
    literal = sql_literal(value)
    assert literal is not None
    con = duckdb.connect()
    try:
        con.execute("SET TimeZone = 'UTC'")
        bound = con.execute("SELECT ?, typeof(?)", [value, value]).fetchone()
        written = con.execute(f"SELECT {literal}, typeof({literal})").fetchone()
    finally:
        con.close()
    assert written == bound


@pytest.mark.parametrize("value", [b"bytes", [1, 2], float("inf"), float("nan"), 2**63,
                                   Decimal("12.34"), Decimal("1" * 39), "nul\x00", object()])
def test_a_value_without_an_exact_literal_is_left_to_binding(value) -> None:
    assert sql_literal(value) is None
    assert inline_parameters("SELECT %s", [value]) is None


def test_placeholders_pair_with_arguments_or_nothing_is_inlined() -> None:
    assert inline_parameters("SELECT %s, %s", ["a", 1]) == \
        "SELECT 'a', CAST(1 AS INTEGER)"
    assert inline_parameters("SELECT %s", ["a", "b"]) is None
    assert inline_parameters("SELECT %s, %s", ["a"]) is None


def test_the_pipelines_duckdb_client_binds_nothing_and_imports_no_pandas(tmp_path) -> None:
    """dlt's own `SET`s on open, and a statement with parameters through its SQL client, on
    the destination every command builds (`pipelines.factory.build_pipeline`)."""
    code = (
        "import sys\n"
        "from creator_sync.pipelines.factory import build_pipeline, resolve_warehouse\n"
        f"pipeline = build_pipeline(resolve_warehouse(duckdb={str(tmp_path / 'w.duckdb')!r}))\n"
        "with pipeline.sql_client() as client:\n"
        "    client.create_dataset()\n"
        "    client.execute_sql('CREATE TABLE t (a VARCHAR, b TIMESTAMPTZ, c BIGINT)')\n"
        "    client.execute_sql('INSERT INTO t VALUES (%s, %s, %s)', \"it's\",\n"
        "                       __import__('datetime').datetime(2026, 1, 1, tzinfo=__import__('datetime').UTC), 3)\n"
        "    rows = client.execute_sql('SELECT a, CAST(b AS VARCHAR), c FROM t WHERE a = %s', \"it's\")\n"
        "    zone = client.execute_sql(\"SELECT current_setting('TimeZone')\")[0][0]\n"
        "print(rows, zone, 'pandas' in sys.modules)\n"
    )
    assert _printed(code, tmp_path) == "[(\"it's\", '2026-01-01 00:00:00+00', 3)] UTC False"


def test_our_own_warehouse_statements_bind_nothing_and_import_no_pandas(tmp_path) -> None:
    """`status`, push restore and erasure run their SQL through `WarehouseDB` (`?` style)."""
    code = (
        "import sys\n"
        "from creator_sync.common.duckdb_names import connect_warehouse\n"
        "from creator_sync.common.warehouse_db import WarehouseDB\n"
        f"db = WarehouseDB(connect_warehouse({str(tmp_path / 'w.duckdb')!r}), 'duckdb')\n"
        "db.execute('CREATE TABLE t (a VARCHAR, c BIGINT)')\n"
        "db.execute('INSERT INTO t VALUES (?, ?)', ['?', 2])\n"
        "print(db.fetchall('SELECT a, c FROM t WHERE c = ?', [2]), db.columns('main', 't'),\n"
        "      'pandas' in sys.modules)\n"
    )
    assert _printed(code, tmp_path) == "[('?', 2)] {'a': 'VARCHAR', 'c': 'BIGINT'} False"


def _printed(code: str, where) -> str:
    """What `code` prints in a new interpreter (no module imported before it)."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=180, cwd=where)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip()
