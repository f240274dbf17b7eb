"""Fixtures of the webhook tests: the models tests' throw-away PostgreSQL server (registered
here), a fresh database in it per test, and the CLI helpers of the pipeline tests (appended:
this directory's own modules come first)."""

from __future__ import annotations

import pathlib
import sys
import uuid
from collections.abc import Iterator

import pytest

TESTS = pathlib.Path(__file__).resolve().parents[1]
sys.path.append(str(TESTS / "models"))
sys.path.append(str(TESTS / "pipelines"))
from pg_helpers import postgres_dsn  # noqa: E402, F401  (the session fixture, registered here)


def _admin(dsn: str, sql: str) -> None:
    import psycopg2

    conn = psycopg2.connect(dsn)
    conn.autocommit = True
    try:
        with conn.cursor() as cursor:
            cursor.execute(sql)
    finally:
        conn.close()


@pytest.fixture
def pg_database(postgres_dsn: str) -> Iterator[str]:  # noqa: F811
    """A new, empty database on the session's server, as a team's own: its DSN."""
    name = f"team_{uuid.uuid4().hex[:12]}"
    _admin(postgres_dsn, f'CREATE DATABASE "{name}"')
    try:
        yield f"{postgres_dsn.rsplit('/', 1)[0]}/{name}"
    finally:
        _admin(postgres_dsn, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
