"""One settings path (issue 16, point 2): the warehouse settings a user configures once are what
every command uses. Run as a user would: the console script, in an empty directory, with only
`.dlt/config.toml` (or nothing) saying where the data goes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cli_run import clean_env, run_cli

from creator_sync.common.duckdb_names import connect_warehouse
from creator_sync.common.settings import DEFAULT_DATASET

pytestmark = pytest.mark.slow

RAW_TABLES = ("contacts", "transactions", "payouts", "sync_resources")


def _schemas(db: Path) -> dict[str, set[str]]:
    with connect_warehouse(db, read_only=True) as con:
        here = "database_name = current_database()"
        rows = con.execute(f"select schema_name, table_name from duckdb_tables() where {here}").fetchall()
        rows += con.execute("select schema_name, view_name from duckdb_views() "
                            f"where not internal and {here}").fetchall()
    out: dict[str, set[str]] = {}
    for schema, table in rows:
        out.setdefault(schema, set()).add(table)
    return out


def _count(db: Path, sql: str) -> int:
    with connect_warehouse(db, read_only=True) as con:
        return con.execute(sql).fetchone()[0]


def _sync_models_report(work: Path, base_url: str, dataset: str) -> None:
    """`sync`, `models` and `report` on their defaults in `work`; then check that every one of
    them used `dataset` (and nothing else) for the raw tables."""
    synced = run_cli(work, "sync", "--base-url", base_url, "--client-id", "sandbox", "--no-progress")
    assert synced.returncode == 0, synced.stderr
    assert f"(dataset {dataset})" in synced.stdout
    db = work / f"{DEFAULT_DATASET}.duckdb"  # the file keeps its default name
    schemas = _schemas(db)
    assert set(RAW_TABLES) <= schemas[dataset]  # the raw tables landed in `dataset` ...
    others = {s for s in schemas if not s.startswith(("analytics", dataset))}
    assert not others, others  # ... and nowhere else

    built = run_cli(work, "models")
    assert built.returncode == 0, built.stderr
    missing = re.search(r"raw tables not loaded \(treated as empty\): (.*)", built.stdout)
    # every table the sync loaded into `dataset` was found by the models
    assert not set(missing.group(1).split(", ") if missing else ()) & schemas[dataset]
    # the models read `dataset`: the marts hold its transactions and payouts, one for one
    assert _count(db, "select count(*) from analytics.payout_reconciliation") == _count(
        db, f'select count(*) from "{dataset}".payouts')
    assert _count(db, "select count(*) from analytics.revenue_daily") > 0

    reported = run_cli(work, "report")
    assert reported.returncode == 0, reported.stderr
    page = (work / "report.html").read_text()
    assert f"from dataset {dataset}" in page
    transactions = _count(db, f'select count(*) from "{dataset}".transactions')
    assert re.search(rf"transactions\s+{transactions}\b", re.sub(r"<[^>]+>", " ", page))
    assert "not loaded" not in page.lower()  # no figure is missing its data


def test_a_configured_dataset_serves_sync_models_report_and_demo(tmp_path: Path, sandbox) -> None:
    work = tmp_path / "user"
    (work / ".dlt").mkdir(parents=True)
    (work / ".dlt" / "config.toml").write_text('[creator_sync]\ndataset = "raw"\n')
    _sync_models_report(work, sandbox.base_url, "raw")

    demo = run_cli(work, "demo", "--scale", "tiny", "--duckdb", "d.duckdb", "--report", "d.html")
    assert demo.returncode == 0, demo.stderr
    assert "(raw tables: raw)" in demo.stdout
    assert set(RAW_TABLES) <= _schemas(work / "d.duckdb")["raw"]
    assert DEFAULT_DATASET not in _schemas(work / "d.duckdb")


def test_without_configuration_every_command_uses_creator_platform(tmp_path: Path, sandbox) -> None:
    _sync_models_report(tmp_path / "user", sandbox.base_url, DEFAULT_DATASET)


def test_models_honour_the_configured_destination(tmp_path: Path) -> None:
    """`models` builds where the sync loaded: a configured postgres destination is used (here it
    cannot connect, and says so), not a DuckDB file that was never written."""
    work = tmp_path / "pg"
    (work / ".dlt").mkdir(parents=True)
    (work / ".dlt" / "config.toml").write_text('[creator_sync]\ndestination = "postgres"\n')
    env_dsn = "postgresql://nobody:s3cret-pw@127.0.0.1:9/nowhere"
    result = run_cli(work, "models", env=clean_env(tmp_path / "home",
                                                   CREATOR_SYNC_POSTGRES_DSN=env_dsn))
    assert result.returncode == 1, result.stderr
    assert "cannot connect to postgres" in result.stderr and "s3cret-pw" not in result.stderr
    unusable = run_cli(work, "models", "--destination", "bigquery")
    assert unusable.returncode == 2 and "--destination" in unusable.stderr
