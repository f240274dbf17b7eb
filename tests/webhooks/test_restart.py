"""SIGKILL right after the 200s, restart: the journal replays with no loss and no duplicates."""

from __future__ import annotations

import time

import duckdb
import httpx
from webhook_payloads import payment_succeeded

from creator_sync.pipelines.webhooks.journal import journal_status
from creator_sync.pipelines.webhooks.testing import ListenProcess

SECRET = "restart-secret-0123456789"


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
        assert second.terminate() == 143  # SIGTERM, after the drain

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
    import socket

    from click.testing import CliRunner

    from creator_sync.cli import main
    from creator_sync.pipelines.webhooks.journal import Journal

    db = tmp_path / "wh.duckdb"
    args = ["listen", "--duckdb", str(db), "--secret", SECRET]
    running = Journal(tmp_path / "wh.duckdb.webhooks-journal")  # as a running listen holds it
    try:
        result = CliRunner().invoke(main, [*args, "--port", "0"])
    finally:
        running.close()
    assert result.exit_code == 1
    assert "error: journal" in result.output and "is in use by another process" in result.output

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(main, [*args, "--port", str(port)])
    assert result.exit_code == 1
    assert f"error: cannot listen on 127.0.0.1:{port}" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_sigkill_mid_burst_every_acknowledged_delivery_survives(tmp_path):
    """Kill while four clients are still sending: whatever got a 200 must land, once."""
    import threading

    db = tmp_path / "burst.duckdb"
    acked: set[str] = set()
    lock = threading.Lock()
    stop = threading.Event()

    def send(url: str, offset: int) -> None:
        with httpx.Client(timeout=5) as http:
            for i in range(offset, 10_000, 4):
                if stop.is_set():
                    return
                rid = str(4_100_000_000 + i)
                try:
                    ok = http.post(url, json=payment_succeeded(rid)).status_code == 200
                except httpx.HTTPError:
                    return  # the receiver died under us: this one was never acknowledged
                if ok:
                    with lock:
                        acked.add(rid)

    with ListenProcess(db, SECRET, "--batch-size", "64", "--batch-interval", "0.05") as first:
        senders = [threading.Thread(target=send, args=(first.url, k)) for k in range(4)]
        for sender in senders:
            sender.start()
        deadline = time.monotonic() + 60
        while len(acked) < 300 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(acked) >= 300, f"only {len(acked)} deliveries acknowledged in 60 s"
        first.kill()
        stop.set()
        for sender in senders:
            sender.join(10)

    with ListenProcess(db, SECRET, "--batch-interval", "0.05") as second:
        assert second.terminate() == 143  # SIGTERM, after the drain
    with duckdb.connect(str(db), read_only=True) as con:
        landed = [r[0] for r in con.execute(
            "SELECT resource_id FROM creator_platform.webhook_events").fetchall()]
        transactions = con.execute(
            "SELECT count(*), count(DISTINCT id) FROM creator_platform.transactions").fetchone()
    assert acked <= set(landed)
    assert len(landed) == len(set(landed))
    assert transactions[0] == transactions[1] == len(landed)
