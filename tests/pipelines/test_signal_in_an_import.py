"""Issue 38 (the resume drills): a SIGTERM that lands inside a lazy import (pandas, pyarrow) is
swallowed where the import is guarded, the run goes on and ends with resources failing on the
half-imported module: it exited 1 (or 0) after a SIGTERM. A run that returns after a signal
exits as interrupted, 143, with the line that says what it kept."""

from __future__ import annotations

import signal

from click.testing import CliRunner

from creator_sync.common import terminal
from creator_sync.pipelines import sync
from creator_sync.sources.creator_platform import RunStats


def test_a_signal_the_run_could_not_act_on_still_ends_it_as_interrupted(tmp_path, monkeypatch):
    def run_sync(settings, **_kw):
        terminal._received.append(signal.SIGTERM)  # what the handler records, then swallowed
        return sync.SyncResult(tables={}, stats=RunStats(), load_ids=[], deleted={}, sites=[],
                               plans={}, warehouse=settings.warehouse)

    monkeypatch.setattr(terminal, "_received", [])
    monkeypatch.setattr(sync, "run_sync", run_sync)
    monkeypatch.setattr(terminal, "exit_now", lambda code: (_ for _ in ()).throw(SystemExit(code)))
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(sync.sync_command, ["--base-url", "http://127.0.0.1:9",
                                                  "--client-id", "x", "--client-secret", "y",
                                                  "--no-progress"])
    assert done.exit_code == 143, done.output
    assert "interrupted by SIGTERM" in done.output
