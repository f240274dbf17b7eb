"""Issue 38: a month of daily use on the default names, driven through the CLI as cron and a
person would, on DuckDB and on PostgreSQL (the days and the checks: tests/month/monthkit.py).
`benchmarks/month/run` runs the same month at `small`."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator

import pytest
from monthkit import Month, MonthResult

# ~150 commands: about 5 s of CPU a day at `tiny` (sync ~2, models ~1.4, report ~1.3, status
# ~0.3; benchmarks/daily_cpu.py)
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]


def _passed(result: MonthResult) -> None:
    print(result.summary())
    assert not result.problems, "\n".join(result.problems)
    # the month reached its end: everything compared, the receiver fed all month
    assert result.compared_tables >= 30 and result.compared_marts >= 10, result.summary()
    assert result.deliveries >= 100
    assert result.deleted_rows.get("hooks") == 1  # the hook deleted on day 13


def test_a_month_of_daily_use_on_duckdb(tmp_path):
    with Month(tmp_path, scale="tiny", log=print) as month:
        result = month.live()
    _passed(result)


@contextlib.contextmanager
def _databases(server_dsn: str, count: int) -> Iterator[list[str]]:
    import psycopg2

    names = [f"month_{uuid.uuid4().hex[:10]}" for _ in range(count)]

    def admin(sql: str) -> None:
        con = psycopg2.connect(server_dsn)
        con.autocommit = True
        try:
            with con.cursor() as cur:
                cur.execute(sql)
        finally:
            con.close()

    for name in names:
        admin(f'CREATE DATABASE "{name}"')
    try:
        yield [f"{server_dsn.rsplit('/', 1)[0]}/{name}" for name in names]
    finally:
        for name in names:
            admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.mark.postgres
def test_a_month_of_daily_use_on_postgresql(tmp_path, postgres_dsn):
    with _databases(postgres_dsn, 2) as (month_dsn, fresh_dsn), \
            Month(tmp_path, scale="tiny", postgres=(month_dsn, fresh_dsn), log=print) as month:
        result = month.live()
    _passed(result)
