"""Issue 12 points 5 and 6: no secret on disk, private files, git-ignored state, logs not lost.

(Every secret after SIGINT/SIGTERM at 10 moments of a sync: tests/drills/test_drills_signals.py;
`hooks list --json`: tests/webhooks/test_hooks_cli.py.)
"""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path

import pytest
from cli_run import SANDBOX_ID, error_lines, run_cli

from creator_sync.common.locking import pipeline_lock
from creator_sync.pipelines.sync import log_path, resolve_settings
from creator_sync.pipelines.webhooks.journal import Journal

REPO = Path(__file__).resolve().parents[2]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_resolving_settings_leaves_no_secret_in_dlts_config_trace(monkeypatch, tmp_path):
    """dlt records every value read through its accessors and pickles the record into
    trace.pickle: the client secret and the PII salt must not be in it."""
    from dlt.common.configuration.utils import get_resolved_traces

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SOURCES__CREATOR_PLATFORM__CLIENT_SECRET", "trace-secret-4f1c9a")
    monkeypatch.setenv("SOURCES__CREATOR_PLATFORM__PII_SALT", "trace-salt-8e2b7d")
    traces = get_resolved_traces()
    traces.clear()
    settings = resolve_settings(base_url="https://api.example.com", client_id="c")
    assert settings.source["client_secret"].reveal() == "trace-secret-4f1c9a"
    assert settings.source["pii_salt"].reveal() == "trace-salt-8e2b7d"
    recorded = repr([(t.key, t.value, t.default_value) for t in traces.all_traces])
    assert "trace-secret-4f1c9a" not in recorded and "trace-salt-8e2b7d" not in recorded


@pytest.mark.slow
def test_files_a_sync_writes_are_private_and_git_ignored(sandbox, tmp_path):
    work = tmp_path / "repo"
    work.mkdir()
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    result = run_cli(work, "sync", "--base-url", sandbox.base_url, "--client-id", SANDBOX_ID,
                     "--resources", "sites,contacts", "--no-progress")
    assert result.returncode == 0, result.stderr
    state = work / ".creator-sync"
    assert _mode(state) == 0o700
    assert (state / ".gitignore").read_text().strip().endswith("*")
    for path in [p for p in work.rglob("*") if p.is_file() and ".git" not in p.relative_to(work).parts[:1]]:
        if path.name == "report.html":
            continue
        assert _mode(path) & 0o077 == 0, f"{path} is mode {oct(_mode(path))}"
    for name in ("last-sync.log", "trace.pickle", "state.json", "creator_sync_creator_platform.lock"):
        assert any(p.name == name for p in state.rglob("*")), name
    # the user's repository sees the warehouse, never the pipeline state, logs or locks
    status = subprocess.run(["git", "-C", str(work), "status", "--porcelain", "--untracked-files=all"],
                            capture_output=True, text=True, check=True).stdout
    assert ".creator-sync" not in status, status


def test_the_repository_gitignore_covers_what_the_tool_writes():
    paths = ["creator_platform.duckdb", "x/creator_platform.duckdb.lock", "report.html",
             "creator_platform.duckdb.webhooks-journal/00000000000000000001.seg",
             "sub/.creator-sync/creator_platform/last-sync.log", "demo.duckdb.demo-runs",
             "demo-report.html", ".dlt/secrets.toml"]
    result = subprocess.run(["git", "-C", str(REPO), "check-ignore", "--no-index", *paths],
                            capture_output=True, text=True)
    assert sorted(result.stdout.split()) == sorted(paths), result.stdout


def test_journal_files_are_private_and_git_ignored(tmp_path):
    directory = tmp_path / "wh.duckdb.webhooks-journal"
    journal = Journal(directory)
    try:
        journal.append([b'{"event": "purchase", "email": "ada@example.com"}'])
        journal.commit_loaded(1)
    finally:
        journal.close()
    assert _mode(directory) == 0o700
    assert (directory / ".gitignore").read_text().strip().endswith("*")
    for path in directory.iterdir():
        if path.name != ".gitignore":
            assert _mode(path) == 0o600, f"{path.name} is {oct(_mode(path))}"


def test_a_sync_that_loses_the_lock_race_leaves_the_winners_log_alone(tmp_path):
    """Point 6: the loser neither truncates nor writes into the winner's last-sync.log."""
    work = tmp_path / "w"
    work.mkdir()
    settings = resolve_settings(base_url="http://127.0.0.1:9", client_id="c", client_secret="s",
                                duckdb=str(work / "creator_platform.duckdb"))
    wh = settings.warehouse
    log = log_path(wh)
    with pipeline_lock(wh.pipelines_dir, wh.pipeline_name):  # the winner, mid-run
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("winner's first line\n")
        loser = run_cli(work, "sync", "--base-url", "http://127.0.0.1:9", "--client-id", "c")
        assert log.read_text() == "winner's first line\n"
    lines = error_lines(loser)
    assert loser.returncode == 1 and len(lines) == 1, loser.stderr
    assert "held by another process" in lines[0]


@pytest.mark.slow
def test_each_sync_appends_to_its_log(sandbox, tmp_path):
    work = tmp_path / "w"
    for _ in range(2):
        result = run_cli(work, "sync", "--base-url", sandbox.base_url, "--client-id", SANDBOX_ID,
                         "--resources", "sites", "--no-progress")
        assert result.returncode == 0, result.stderr
    log = (work / ".creator-sync" / "creator_platform" / "last-sync.log").read_text()
    assert log.count("sync started") == 2, log
