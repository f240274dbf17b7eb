"""SIGKILL at every step of a sync, then a rerun: exactly the reference data, no stale lock,
no pending load package."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dlt
import pytest
from sandbox_helpers import CLIENT_ID, CLIENT_SECRET, snapshot, sync

from pipelines.factory import resolve_warehouse
from pipelines.locking import pipeline_lock, warehouse_lock
from sandbox.testing import start_sandbox

# (kill point, whether a successful sync ran before): extract (mid-page), normalize, load
CASES = [
    ("page:contacts:1", True),
    ("normalized", True),
    ("page:transactions:1", False),
    ("extracted", False),
    ("loaded", False),
]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    handle = start_sandbox(scale="tiny", sites=2, seed=42, now="2026-03-01T12:00:00Z")
    db = tmp_path_factory.mktemp("ref") / "ref.duckdb"
    try:
        sync(handle, db)
        yield handle, snapshot(db)
    finally:
        handle.stop()


def cli(sandbox, db: Path, kill_at: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "CREATOR_SYNC_KILL_AT"}
    env["SOURCES__CREATOR_PLATFORM__CLIENT_SECRET"] = CLIENT_SECRET
    if kill_at:
        env["CREATOR_SYNC_KILL_AT"] = kill_at
    exe = str(Path(sys.executable).with_name("creator-sync"))
    return subprocess.run(
        [exe, "sync", "--base-url", sandbox.base_url, "--client-id", CLIENT_ID, "--duckdb", str(db), "--no-progress"],
        capture_output=True, text=True, timeout=180, env=env,
    )


@pytest.mark.parametrize("kill_at, first_run", CASES)
def test_sigkill_then_rerun_gives_the_reference(reference, tmp_path, kill_at, first_run):
    sandbox, expected = reference
    db = tmp_path / "wh.duckdb"
    if not first_run:
        assert cli(sandbox, db, None).returncode == 0
    killed = cli(sandbox, db, kill_at)
    assert killed.returncode == -9, killed.stderr
    healed = cli(sandbox, db, None)
    assert healed.returncode == 0, healed.stderr
    assert snapshot(db) == expected
    wh = resolve_warehouse(duckdb=str(db))
    with pipeline_lock(wh.pipelines_dir, wh.pipeline_name, timeout=0), warehouse_lock(db, timeout=0):
        pipeline = dlt.attach(pipeline_name=wh.pipeline_name, pipelines_dir=wh.pipelines_dir)
        assert not pipeline.has_pending_data
        assert not pipeline.list_extracted_load_packages()
        assert not pipeline.list_normalized_load_packages()
