"""SIGKILL at every step of a sync, then a rerun: exactly the reference data, no stale lock,
no pending load package."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import dlt
import pytest
from sandbox_helpers import query, snapshot, sync

from creator_sync.common.locking import pipeline_lock, warehouse_lock
from creator_sync.pipelines.factory import resolve_warehouse

# (kill point, whether a successful sync ran before): extract (mid-page), normalize, load
CASES = [
    ("page:contacts:1", True),
    ("normalized", True),
    ("page:form_submissions:1", False),  # incremental, and page 1 is never empty
    ("extracted", False),
    ("loaded", False),
]


@pytest.fixture(scope="session")
def reference(sandbox, synced_sandbox):
    """The session sandbox, and the data of the run's one clean sync of it."""
    return sandbox, snapshot(synced_sandbox.path)


def killed_sync(sandbox, db: Path, kill_at: str) -> int:
    """Run a sync in a forked child that SIGKILLs itself at `kill_at`; returns the wait status.

    Forking (instead of a fresh `creator-sync` process) skips ~2 s of imports per run; the CLI
    itself is covered by test_e2e_sandbox.
    """
    pid = os.fork()
    if pid == 0:  # child
        try:
            os.environ["CREATOR_SYNC_KILL_AT"] = kill_at
            sync(sandbox, db)
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    return status


@pytest.mark.parametrize("kill_at, first_run", CASES)
def test_sigkill_then_rerun_gives_the_reference(reference, tmp_path, kill_at, first_run):
    sandbox, expected = reference
    db = tmp_path / "wh.duckdb"
    if not first_run:
        sync(sandbox, db)
    status = killed_sync(sandbox, db, kill_at)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == 9, f"not killed at {kill_at}: {status}"
    healed = sync(sandbox, db)
    if first_run:
        assert healed.load_ids  # the first sync's rows load on the rerun
    else:  # nothing new since the full sync: no data row to load, and no state row; its one
        # load is the run's bookkeeping (docs/performance.md#nothing-new)
        assert len(healed.load_ids) <= 1 and not any(new for new, _ in healed.tables.values())
        assert not [load for load in healed.load_ids if query(
            db, "select 1 from creator_platform._dlt_pipeline_state where _dlt_load_id = ?", load)]
    assert snapshot(db) == expected
    wh = resolve_warehouse(duckdb=str(db))
    with pipeline_lock(wh.pipelines_dir, wh.pipeline_name, timeout=0), warehouse_lock(db, timeout=0):
        pipeline = dlt.attach(pipeline_name=wh.pipeline_name, pipelines_dir=wh.pipelines_dir)
        assert not pipeline.has_pending_data
        assert not pipeline.list_extracted_load_packages()
        assert not pipeline.list_normalized_load_packages()


def test_append_job_rerun_after_kill_leaves_no_duplicate(reference, tmp_path):
    """A first sync loads its new tables with `append`. A load job whose INSERT committed but
    that a kill stopped before dlt marked it done runs again on the rerun: the rerun must still
    leave one row per key (a merge would collapse the repeat, an append keeps it)."""
    sandbox, expected = reference
    db = tmp_path / "wh.duckdb"
    pid = os.fork()
    if pid == 0:  # child: die right after the first `contacts` file is inserted
        try:
            from dlt.destinations.impl.duckdb import duck

            original = duck.DuckDbCopyJob.run

            def run_then_die(self):
                original(self)
                if self.load_table_name == "contacts":
                    os.kill(os.getpid(), signal.SIGKILL)

            duck.DuckDbCopyJob.run = run_then_die
            sync(sandbox, db)
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == 9, f"not killed in the load: {status}"
    assert query(db, "select count(*) from creator_platform.contacts")[0][0] > 0  # inserted, not done
    healed = sync(sandbox, db)
    assert healed.pending_loaded == 1
    assert snapshot(db) == expected
