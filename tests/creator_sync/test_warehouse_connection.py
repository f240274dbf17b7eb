"""Our own DuckDB connections (`connect_warehouse`: models, report, status, the receiver) on a
small warehouse: one thread, and no pandas import."""

from __future__ import annotations

import subprocess
import sys

import duckdb

from creator_sync.common.duckdb_names import ROW_GROUP_ROWS, connect_warehouse


def _warehouse(path, rows: int) -> str:
    con = duckdb.connect(str(path))
    con.execute("create schema creator_platform")
    con.execute(f"create table creator_platform.orders as select range as id from range({rows})")
    con.close()
    return str(path)


def _threads(con) -> int:
    return int(con.execute("select current_setting('threads')").fetchone()[0])


def test_a_warehouse_within_one_row_group_runs_on_one_thread(tmp_path) -> None:
    path = _warehouse(tmp_path / "small.duckdb", ROW_GROUP_ROWS - 1)
    con = connect_warehouse(path, read_only=True)
    try:
        assert _threads(con) == 1
        assert con.execute("select count(*) from creator_platform.orders").fetchone()[0] == (
            ROW_GROUP_ROWS - 1)
    finally:
        con.close()
    con = connect_warehouse(path, config={"threads": 2})  # a caller's own setting stands
    try:
        assert _threads(con) == 2
    finally:
        con.close()


def test_a_bigger_warehouse_keeps_duckdbs_threads(tmp_path) -> None:
    default = duckdb.connect()
    try:
        expected = _threads(default)
    finally:
        default.close()
    con = connect_warehouse(_warehouse(tmp_path / "big.duckdb", ROW_GROUP_ROWS), read_only=True)
    try:
        assert _threads(con) == expected
    finally:
        con.close()


def test_opening_the_warehouse_does_not_import_pandas(tmp_path) -> None:
    """DuckDB imports pandas (~0.4 s of CPU) to bind a connection's first parameter: the
    open binds none, so `models` and `report` never pay for it."""
    path = _warehouse(tmp_path / "w.duckdb", 10)
    code = ("import sys\n"
            "from creator_sync.common.duckdb_names import connect_warehouse\n"
            f"con = connect_warehouse({path!r}, read_only=True)\n"
            "con.execute('select count(*) from creator_platform.orders').fetchall()\n"
            "print('pandas' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout.strip() == "False", out.stderr
