"""SIGKILL right after the 200s, restart: the journal replays with no loss and no duplicates."""

from __future__ import annotations

import duckdb
import httpx
from webhook_payloads import payment_succeeded

from pipelines.webhooks.journal import journal_status
from pipelines.webhooks.testing import ListenProcess

SECRET = "restart-secret"


def test_sigkill_then_restart_loses_nothing_and_duplicates_nothing(tmp_path):
    db = tmp_path / "wh.duckdb"
    journal_dir = tmp_path / "wh.duckdb.webhooks-journal"
    unique = [payment_succeeded(str(4_000_000_000 + i), amount=100 + i) for i in range(250)]
    redelivered = unique[:20]

    # batches of 100 load at once; the last partial batch waits for a 60 s interval -> pending
    with ListenProcess(db, SECRET, "--batch-size", "100", "--batch-interval", "60") as first:
        with httpx.Client(timeout=10) as http:
            for body in unique + redelivered:
                assert http.post(first.url, json=body).status_code == 200
        first.kill()  # no graceful shutdown, no drain

    acknowledged, loaded = journal_status(journal_dir)
    assert acknowledged == 270
    assert loaded < acknowledged  # deliveries were acknowledged but not loaded at the kill

    # restart with a long interval: replay must still complete, through the SIGTERM drain
    with ListenProcess(db, SECRET, "--batch-size", "1000", "--batch-interval", "60") as second:
        assert any("replaying" in line for line in second.lines)
        assert second.terminate() == 0

    with duckdb.connect(str(db), read_only=True) as con:
        events = con.execute(
            "SELECT count(*), count(DISTINCT resource_id) FROM creator_platform.webhook_events"
        ).fetchone()
        rows = con.execute(
            "SELECT count(*), count(DISTINCT id), sum(amount_in_cents) "
            "FROM creator_platform.transactions"
        ).fetchone()
    assert events == (250, 250)
    assert rows == (250, 250, sum(100 + i for i in range(250)))
    assert journal_status(journal_dir) == (270, 270)
    output = "".join(first.lines + second.lines)
    assert SECRET not in output  # neither the ready line nor any log shows the secret


def test_second_listen_on_the_same_journal_or_port_fails_clearly(tmp_path):
    import subprocess
    import sys
    from urllib.parse import urlsplit

    db = tmp_path / "wh.duckdb"
    base = [sys.executable, "-c", "from pipelines.cli import main; main()", "listen",
            "--duckdb", str(db), "--secret", SECRET]
    with ListenProcess(db, SECRET) as running:
        same_journal = subprocess.run([*base, "--port", "0"], capture_output=True, text=True,
                                      timeout=60)
        assert same_journal.returncode == 1
        assert "is in use by another process" in same_journal.stderr
        port = str(urlsplit(running.base_url).port)
        same_port = subprocess.run([*base, "--port", port, "--journal", str(tmp_path / "j2")],
                                   capture_output=True, text=True, timeout=60)
        assert same_port.returncode == 1
        assert f"cannot listen on 127.0.0.1:{port}" in same_port.stderr
        assert "Traceback" not in same_port.stderr + same_journal.stderr
