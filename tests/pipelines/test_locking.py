"""File locks: exclusive, bounded wait with a clear error, and never stale after SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from creator_sync.common.locking import LockTimeout, pipeline_lock, warehouse_lock
from creator_sync.pipelines.sync import run_sync

HOLDER = """
import sys, time
sys.path.insert(0, {root!r})
from creator_sync.common.locking import warehouse_lock
with warehouse_lock({db!r}):
    print("held", flush=True)
    time.sleep(60)
"""


def test_second_holder_fails_clearly_after_timeout(tmp_path):
    with pipeline_lock(tmp_path, "p"):
        started = time.monotonic()
        with pytest.raises(LockTimeout, match=r"pipeline 'p' is held by another process \(pid \d+\)"), pipeline_lock(tmp_path, "p", timeout=0.3):
            pass
        assert time.monotonic() - started >= 0.3
    with pipeline_lock(tmp_path, "p", timeout=0):  # released: free again
        pass


def test_waiter_gets_the_lock_when_released(tmp_path):
    got = threading.Event()
    release = threading.Event()

    def holder():
        with warehouse_lock(tmp_path / "w.duckdb"):
            got.set()
            release.wait(5)

    thread = threading.Thread(target=holder)
    thread.start()
    got.wait(5)
    threading.Timer(0.2, release.set).start()
    with warehouse_lock(tmp_path / "w.duckdb", timeout=5):
        pass
    thread.join()
    assert Path(f"{tmp_path / 'w.duckdb'}.lock").exists()


def test_lock_of_a_killed_process_is_not_stale(tmp_path):
    db = str(tmp_path / "w.duckdb")
    root = str(Path(__file__).resolve().parents[2])
    proc = subprocess.Popen([sys.executable, "-c", HOLDER.format(root=root, db=db)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "held"
        with pytest.raises(LockTimeout), warehouse_lock(db, timeout=0):
            pass
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        with warehouse_lock(db, timeout=2):
            pass
    finally:
        if proc.poll() is None:
            proc.kill()


def test_two_syncs_on_one_pipeline_second_fails_clearly_first_is_intact(fake_api, settings_for):
    import httpx

    gate = threading.Event()
    inside = threading.Event()

    def slow(request: httpx.Request):
        if request.url.path == "/v1/contacts":
            inside.set()
            gate.wait(10)
        return None

    fake_api.hook = slow
    settings = settings_for(resources=("contacts",))
    results: dict[str, object] = {}

    def first():
        results["first"] = run_sync(settings, transport=fake_api.transport(), show_progress=False)

    thread = threading.Thread(target=first)
    thread.start()
    assert inside.wait(10)
    with pytest.raises(LockTimeout, match="pipeline 'creator_sync_creator_platform'"):
        run_sync(settings_for(resources=("contacts",)), transport=fake_api.transport(), show_progress=False)
    gate.set()
    thread.join(30)
    assert results["first"].tables["contacts"] == (30, 0)
