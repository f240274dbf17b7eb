"""Where the report cannot be written, or matplotlib cannot keep its cache, one line says so."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines"))
from cli_run import error_lines, run_cli

import creator_sync.report as report_package


def test_an_unwritable_report_path_is_named_as_the_report(tmp_path, synced_sandbox) -> None:
    import shutil

    shutil.copy(synced_sandbox.path, tmp_path / "creator_platform.duckdb")
    built = run_cli(tmp_path, "models")
    assert built.returncode == 0, built.stderr
    (tmp_path / "blocker").write_text("a file, where the report's folder should be")
    done = run_cli(tmp_path, "report", "--out", "blocker/report.html")
    assert done.returncode == 1
    (line,) = error_lines(done)
    assert line.startswith(f"error: cannot write the report {tmp_path / 'blocker' / 'report.html'}:")
    assert ".tmp" not in line and "Errno" not in line


def test_a_sync_whose_state_folder_cannot_be_made_names_it(tmp_path) -> None:
    (tmp_path / "blocker").write_text("a file")
    done = run_cli(tmp_path, "sync", "--base-url", "http://127.0.0.1:9", "--client-id", "x",
                   "--pipelines-dir", "blocker/state", "--no-progress")
    assert done.returncode == 1
    (line,) = error_lines(done)
    assert f"cannot create the folder {tmp_path / 'blocker' / 'state'}: not a directory" in line
    assert "details:" not in line  # no log could be written there


def test_matplotlib_gets_a_private_cache_where_home_cannot_be_written(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MPLCONFIGDIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    report_package._writable_matplotlib_home()
    folder = os.environ["MPLCONFIGDIR"]
    assert Path(folder).is_dir() and os.environ["XDG_CACHE_HOME"] == folder
    monkeypatch.undo()
    os.rmdir(folder)
