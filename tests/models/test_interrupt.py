"""A signal that arrives while DuckDB runs a model's query stops the build as that signal.

DuckDB answers a pending SIGINT/SIGTERM with `Query interrupted`, an ordinary exception: the
runner used to report it as a failing model (exit 1) instead of an interrupted run (130/143).
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from known_answer_data import known_answer_rows
from models_helpers import fetch_dicts

from creator_sync.common import terminal
from creator_sync.models.adapters import DuckDBAdapter
from creator_sync.models.project import SQL_DIR, load_project
from creator_sync.models.runner import Params, build, run_models

# long enough to be running when the signal comes, bounded in case it is never interrupted
SLOW = "select count(*) as n from range(30000000000) t(a) where a % 7 = 3"


@pytest.fixture
def our_signal_handlers(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The CLI's handlers, installed even where the test runner's parent ignores SIGINT."""
    monkeypatch.setattr(terminal, "_received", [])
    old = {s: signal.signal(s, terminal._on_signal) for s in terminal.HANDLED_SIGNALS}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


def _signal_once_the_query_runs(signum: int) -> threading.Thread:
    """Send `signum` once the main thread is inside the adapter's `execute` (the slow model),
    however long the models before it take on a loaded machine."""
    main = threading.main_thread().ident
    done = threading.Event()

    def inside_execute() -> bool:
        frame = sys._current_frames().get(main)
        while frame is not None:
            if frame.f_code.co_name == "execute" and frame.f_code.co_filename.endswith("adapters.py"):
                locals_ = frame.f_locals
                return "range(30000000000)" in str(locals_.get("sql", ""))
            frame = frame.f_back
        return False

    def watch() -> None:
        while not done.is_set():
            if inside_execute():
                time.sleep(0.2)
                os.kill(os.getpid(), signum)
                return
            time.sleep(0.01)

    thread = threading.Thread(target=watch, daemon=True)
    thread.done = done  # type: ignore[attr-defined]
    thread.start()
    return thread


@pytest.mark.timeout(120)  # a regression hangs in the rollback: fail, do not stall the suite
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_a_model_query_is_the_signal(
    raw_db, tmp_path: Path, our_signal_handlers: None, signum: int
) -> None:
    path = raw_db(known_answer_rows())
    run_models(path, as_of=dt.date(2024, 3, 31))
    before = fetch_dicts(path, "select count(*) as n, sum(net_in_cents) as net from analytics.revenue_daily")

    slow_sql = tmp_path / "sql"
    shutil.copytree(SQL_DIR, slow_sql)
    (slow_sql / "models" / "marts" / "mrr_monthly.sql").write_text(f"-- grain: n\n{SLOW}\n")
    adapter = DuckDBAdapter(path)
    watcher = _signal_once_the_query_runs(signum)
    try:
        with pytest.raises(terminal.Interrupted) as caught:
            build(adapter, Params(as_of=dt.date(2024, 3, 31)), project=load_project(slow_sql))
    finally:
        watcher.done.set()  # type: ignore[attr-defined]
        adapter.close()
    assert caught.value.signum == signum
    assert terminal.interrupt_code(caught.value) == terminal.EXIT_SIGNAL_BASE + signum
    # the interrupted build was rolled back: the previous marts are still there
    assert fetch_dicts(path, "select count(*) as n, sum(net_in_cents) as net from analytics.revenue_daily") == before


def test_a_second_signal_during_the_cleanup_stops_at_once_and_says_so() -> None:
    """The first Ctrl-C starts the cleanup; a second one exits 130 at once, with one line."""
    import subprocess

    script = (
        "import os, signal, time\n"
        "from creator_sync.common import terminal\n"
        # as from a terminal: a runner started in the background passes SIGINT ignored, and
        # a signal the parent ignores stays ignored
        "signal.signal(signal.SIGINT, signal.SIG_DFL)\n"
        "terminal.install_signal_handlers()\n"
        "try:\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    time.sleep(30)\n"
        "except terminal.Interrupted:\n"
        "    os.kill(os.getpid(), signal.SIGINT)  # the user presses Ctrl-C again\n"
        "    time.sleep(30)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 130
    (line,) = done.stderr.splitlines()
    assert line.startswith("error: SIGINT again: stopped at once"), line
