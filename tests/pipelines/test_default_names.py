"""Issue 12 point 1: every command works on its defaults, a new user's first commands.

DuckDB names a file's catalog after the file, so `creator_platform.duckdb` holding the dataset
`creator_platform` (the defaults) made `creator_platform.contacts` ambiguous and every command
failed. Here each command runs as a subprocess in an empty directory: on the pure defaults (no
--duckdb, no --dataset), on a file named like a custom dataset, and on a file named like the
models' schema.
"""

from __future__ import annotations

import json
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from cli_run import SANDBOX_ID, SANDBOX_SECRET, clean_env, run_cli

from creator_sync.common.duckdb_names import connect_warehouse
from creator_sync.pipelines.webhooks.testing import ListenProcess

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "webhooks"))

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


def test_a_sync_after_listen_on_the_defaults(sandbox, tmp_path):
    """Issue 38 point 1: init, sync, listen with one delivery, stop, sync, models, report and
    status, as a new user types them. The second sync re-reads the delivered form submission (a
    row the receiver wrote is loaded again when re-read), so it loads, and its push restore
    reads `webhook_events` on dlt's own connection, whose catalog is named after the file: it
    failed there with `Ambiguous reference to catalog or schema "creator_platform"`, exit 1, on
    every later sync.

    It is also the defaults' case of the sweep below (`test_every_entry_point_...`): its other
    deliveries and its checks, on the file and dataset `init` names."""
    work = tmp_path / "empty"
    env = clean_env(tmp_path / "home")
    _ok(run_cli(work, "init", "--base-url", sandbox.base_url, "--client-id", SANDBOX_ID,
                "--client-secret", SANDBOX_SECRET, "--yes", env=env, secret=None))
    _ok(run_cli(work, "sync", env=env, secret=None))
    # the delivery a user would post: the sample payload (a real transaction) in its wrapper
    payload = json.loads(_ok(run_cli(work, "hooks", "sample", "form_submission", env=env,
                                     secret=None)))
    rid = payload[0]["id"]
    db = work / "creator_platform.duckdb"
    with ListenProcess(None, HOOK_SECRET, cwd=work, env=env) as listen:
        body = {"id": rid, "event": "form_submission", "payload": payload}
        assert httpx.post(listen.url, json=body, timeout=10).status_code == 200
        _post_the_other_deliveries(listen)
        assert listen.terminate() == 143
    written = ("SELECT count(*) FROM creator_platform.form_submissions WHERE id = "
               f"'{rid}' AND _dlt_load_id {{}} LIKE 'webhooks.%'")
    assert _count(db, written.format("")) == 1
    _assert_listen_wrote(db, "creator_platform")

    second_started = datetime.now(UTC)
    second = run_cli(work, "sync", env=env, secret=None)
    _ok(second)
    # it loaded (the delivered row is re-read), so every finishing step ran after a load
    assert _count(db, written.format("NOT")) == 1
    assert "analytics.revenue_daily" in _ok(run_cli(work, "models", env=env, secret=None))
    _ok(run_cli(work, "report", env=env, secret=None))
    status = json.loads(_ok(run_cli(work, "status", "--json", env=env, secret=None)))
    assert status and all(r["status"] == "complete" for r in status), status
    for row in status:  # the second sync, not the first
        assert datetime.fromisoformat(row["last_synced_at"]) >= second_started, row
    _assert_requeue_and_push_restore(db, None, "creator_platform")


def _post_the_other_deliveries(listen) -> None:
    """An order with its items, a customer newer than the platform's copy, a bad event."""
    from webhook_payloads import customer, delivery, order_created

    fresh = customer("3000000777", updated_at="2030-01-01T00:00:00Z")
    for body in (order_created(), delivery("payment_succeeded", "3000000777", [fresh])):
        assert httpx.post(listen.url, json=body, timeout=10).status_code == 200
    bad = {"id": "1", "event": "no_such_event", "payload": []}
    assert httpx.post(listen.url, json=bad, timeout=10).status_code == 422


def _assert_listen_wrote(db: Path, schema: str) -> None:
    for table in ("webhook_events", "webhook_dead_letters", "orders_order_items", "customers"):
        assert _count(db, f'SELECT count(*) FROM "{schema}".{table}') > 0, table


def _assert_requeue_and_push_restore(db: Path, dataset: str | None, schema: str) -> None:
    """listen's requeue of dead letters, and the push restore on the connection dlt opens (its
    catalog is the file's name) with something to write again."""
    from creator_sync.pipelines.factory import build_pipeline, resolve_warehouse
    from creator_sync.pipelines.push_restore import restore_pushes
    from creator_sync.pipelines.webhooks.journal import Journal
    from creator_sync.pipelines.webhooks.requeue import requeue_dead_letters

    journal = Journal(Path(f"{db}.webhooks-journal"))  # what `listen --requeue-dead-letters` runs
    try:
        assert requeue_dead_letters(journal, db, schema) == 0  # a bad event is not requeued
    finally:
        journal.close()
    pipeline = build_pipeline(resolve_warehouse(duckdb=str(db), dataset=dataset))
    assert restore_pushes(pipeline, datetime(2000, 1, 1, tzinfo=UTC)).get("customers") == 1
    assert _count(db, f'SELECT count(*) FROM "{schema}".customers WHERE id = \'3000000777\' '
                      "AND updated_at > TIMESTAMPTZ '2029-01-01'") == 1


# file and dataset named alike, in another case, which DuckDB's identifiers do not tell apart
# (the defaults, `creator_platform` and `creator_platform.duckdb`: the test above)
ALIKE = [("Raw.duckdb", "raw")]


@pytest.mark.parametrize(("name", "dataset"), ALIKE)
def test_every_entry_point_on_a_file_named_like_its_dataset(sandbox, tmp_path, name, dataset):
    """Issue 38: the class of the catalog/schema defect, swept through every entry point that
    touches the warehouse: sync (with the finishing steps of a load: deletion marking, push
    restore, `sync_resources`), listen (events, dead letters, upserts, link replacement),
    listen's requeue of dead letters, status, models, report, and the push restore on dlt's own
    connection (its catalog is the file's name) with rows to write again."""
    from webhook_payloads import delivery

    work = tmp_path / "empty"
    env = clean_env(tmp_path / "home")
    where = (["--duckdb", name] if name else []) + (["--dataset", dataset] if dataset else [])
    schema = dataset or "creator_platform"
    db = work / (name or "creator_platform.duckdb")
    api = ["--base-url", sandbox.base_url, "--client-id", SANDBOX_ID]
    _ok(run_cli(work, "sync", *api, *where, env=env))
    sample = json.loads(_ok(run_cli(work, "hooks", "sample", "form_submission", *api, env=env)))
    listen_where = [*(["--dataset", dataset] if dataset else [])]
    with ListenProcess(db if name else None, HOOK_SECRET, *listen_where, cwd=work,
                       env=env) as listen:
        body = delivery("form_submission", sample[0]["id"], sample)
        assert httpx.post(listen.url, json=body, timeout=10).status_code == 200
        _post_the_other_deliveries(listen)
        assert listen.terminate() == 143
    _assert_listen_wrote(db, schema)

    _ok(run_cli(work, "sync", *api, *where, env=env))  # loads: the delivered submission re-read
    status = json.loads(_ok(run_cli(work, "status", "--json", *where, env=env)))
    assert status and all(r["status"] == "complete" for r in status), status
    assert "analytics.revenue_daily" in _ok(run_cli(work, "models", *where, env=env))
    _ok(run_cli(work, "report", *where, env=env))
    _assert_requeue_and_push_restore(db, dataset, schema)


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


def test_status_waits_while_a_writer_holds_the_warehouse(sandbox, tmp_path):
    """Issue 38, found by the month: `status` while `listen` loads a batch (another process
    writing the DuckDB file under the warehouse lock) waits for it and exits 0; it exited 1
    with `Could not set lock on file`."""
    import subprocess

    work = tmp_path / "empty"
    api = ["--base-url", sandbox.base_url, "--client-id", SANDBOX_ID]
    _ok(run_cli(work, "sync", *api, "--resources", "sites"))
    db = work / "creator_platform.duckdb"
    writer = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time\n"
         "from creator_sync.common.locking import warehouse_lock\n"
         "from creator_sync.common.duckdb_names import connect_warehouse\n"
         "with warehouse_lock(sys.argv[1]):\n"
         "    con = connect_warehouse(sys.argv[1])\n"
         "    print('writing', flush=True)\n"
         "    time.sleep(3)\n"
         "    con.close()\n", str(db)], stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "writing"
        started = time.monotonic()
        status = json.loads(_ok(run_cli(work, "status", "--json")))
        assert status and time.monotonic() - started > 1  # it waited for the writer
    finally:
        writer.wait(30)
