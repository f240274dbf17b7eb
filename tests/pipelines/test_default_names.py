"""Issue 12 point 1: every command works on its defaults, a new user's first commands.

DuckDB names a file's catalog after the file, so `creator_platform.duckdb` holding the dataset
`creator_platform` (the defaults) made `creator_platform.contacts` ambiguous and every command
failed. Here each command runs as a subprocess in an empty directory: on the pure defaults (no
--duckdb, no --dataset), on a file named like a custom dataset, and on a file named like the
models' schema.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import httpx
import pytest
from cli_run import SANDBOX_ID, clean_env, run_cli

from creator_sync.common.duckdb_names import connect_warehouse
from creator_sync.pipelines.webhooks.testing import ListenProcess

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "webhooks"))
from webhook_payloads import payment_succeeded

pytestmark = pytest.mark.slow
HOOK_SECRET = "default-names-hook-secret-0123"


def _ok(result) -> str:
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Traceback" not in result.stderr and "[WARNING]" not in result.stderr
    return result.stdout


def _count(db: Path, sql: str) -> int:
    con = connect_warehouse(db, read_only=True)
    try:
        return con.execute(sql).fetchone()[0]
    finally:
        con.close()


def test_every_command_on_the_defaults(sandbox, tmp_path):
    """creator_platform.duckdb + dataset creator_platform: sync twice, models, report, listen."""
    work = tmp_path / "empty"
    api = ["--base-url", sandbox.base_url, "--client-id", SANDBOX_ID]
    first = _ok(run_cli(work, "sync", *api))
    assert "warehouse: " + str(work / "creator_platform.duckdb") in first
    _ok(run_cli(work, "sync", *api))  # incremental: merges into existing tables
    models = _ok(run_cli(work, "models"))
    assert "analytics.revenue_daily" in models
    report = _ok(run_cli(work, "report"))
    assert (work / "report.html").is_file() and "report written" in report
    db = work / "creator_platform.duckdb"
    assert _count(db, "SELECT count(*) FROM creator_platform.contacts") > 0

    env = clean_env(tmp_path / "listen-home")
    with ListenProcess(None, HOOK_SECRET, cwd=work, env=env) as listen:
        body = payment_succeeded("4100000001", amount=1234)
        assert httpx.post(listen.url, json=body, timeout=10).status_code == 200
        assert listen.terminate() == 143
    assert _count(db, "SELECT count(*) FROM creator_platform.transactions "
                      "WHERE id = '4100000001' AND amount_in_cents = 1234") == 1


@pytest.mark.parametrize(("name", "dataset"), [("raw.duckdb", "raw"), ("analytics.duckdb", None)])
def test_file_named_like_a_schema(sandbox, tmp_path, name, dataset):
    """A file named like the dataset, or like the models' `analytics` schema."""
    work = tmp_path / "empty"
    where = ["--duckdb", name] + (["--dataset", dataset] if dataset else [])
    _ok(run_cli(work, "sync", "--base-url", sandbox.base_url, "--client-id", SANDBOX_ID,
                "--resources", "sites,transactions,payouts,purchases,offers,customers", *where))
    _ok(run_cli(work, "models", *where))
    _ok(run_cli(work, "report", *where))
    schema = dataset or "creator_platform"
    assert _count(work / name, f"SELECT count(*) FROM {schema}.transactions") > 0
    assert _count(work / name, "SELECT count(*) FROM analytics.revenue_daily") > 0


def test_demo_into_a_file_named_like_its_dataset(tmp_path, monkeypatch):
    from creator_sync.demo import run_demo

    monkeypatch.chdir(tmp_path)
    started = time.monotonic()
    out = run_demo(str(tmp_path / "creator_platform.duckdb"), str(tmp_path / "r.html"), scale="tiny")
    assert out.get("models") and out.get("report"), out
    assert time.monotonic() - started < 300
