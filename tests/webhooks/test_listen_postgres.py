"""A team whose warehouse is PostgreSQL keeps the receiver (issue 38, point 2).

Against a throw-away PostgreSQL server and the sandbox, as a team runs it: `init` choosing
PostgreSQL, `sync`, `listen` and a delivery, stop, `sync`, `models`, `report`, `status`. Then
what the receiver promises there: a delivery loaded while a pull lists is not overwritten by the
older listed row, a 2xx survives a SIGKILL, and two receivers writing at once lose nothing and
double nothing.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
from pathlib import Path
from typing import Any

import httpx
import orjson
import psycopg2
import pytest
from cli_run import SANDBOX_ID, clean_env, run_cli
from sandbox_helpers import PushDuringListing
from webhook_payloads import customer, delivery, payment_succeeded, transaction

from creator_sync.common.warehouse import Warehouse
from creator_sync.pipelines.webhooks.journal import Journal, JournalReader, journal_status
from creator_sync.pipelines.webhooks.loader import Loader
from creator_sync.pipelines.webhooks.records import encode, parse_delivery
from creator_sync.pipelines.webhooks.testing import ListenProcess

pytestmark = [pytest.mark.postgres, pytest.mark.slow]
SECRET = "postgres-team-hook-secret-0123"


def _ok(result: Any) -> str:
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    return result.stdout


def rows(dsn: str, sql: str, *params: Any) -> list[tuple]:
    conn = psycopg2.connect(dsn)
    conn.autocommit = True
    try:
        with conn.cursor() as cursor:
            cursor.execute(sql, params or None)
            return cursor.fetchall()
    finally:
        conn.close()


def tables(dsn: str) -> set[str]:
    return {name for (name,) in rows(
        dsn, "select table_name from information_schema.tables where table_schema = %s",
        "creator_platform")}


def _iso(at: dt.datetime) -> str:
    return at.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _customer_update(cid: str, site: str, name: str, updated: dt.datetime) -> dict:
    return customer(cid, site, name=name, updated_at=_iso(updated))


def _team(tmp_path: Path, sandbox: Any, dsn: str) -> tuple[Path, dict[str, str]]:
    """A team's directory after `init` chose PostgreSQL (the client secret in the environment,
    the DSN written by init into .dlt/secrets.toml)."""
    work = tmp_path / "team"
    env = clean_env(tmp_path / "home", SOURCES__CREATOR_PLATFORM__CLIENT_SECRET="sandbox-secret")
    said = _ok(run_cli(work, "init", "--base-url", sandbox.base_url, "--client-id", SANDBOX_ID,
                       "--destination", "postgres", "--postgres-dsn", dsn, "--yes", env=env))
    assert "warehouse: postgres:127.0.0.1:" in said and "throwaway" not in said
    assert 'destination = "postgres"' in (work / ".dlt" / "config.toml").read_text()
    assert dsn not in (work / ".dlt" / "config.toml").read_text()
    return work, env


def test_a_team_on_postgresql_runs_every_command_and_keeps_its_deliveries(
        sandbox, pg_database, tmp_path):
    """init (PostgreSQL), sync, listen + deliveries, stop, sync, models, report, status."""
    dsn = pg_database
    work, env = _team(tmp_path, sandbox, dsn)
    _ok(run_cli(work, "sync", env=env))
    pulled_tables = tables(dsn)
    (cid, site, _name, updated), (other, other_site, other_name, other_updated) = rows(
        dsn, "select id, site_id, name, updated_at from creator_platform.customers "
        "where updated_at is not null order by id limit 2")
    (transactions_before,) = rows(dsn, "select count(*) from creator_platform.transactions")[0]

    with ListenProcess(None, SECRET, cwd=work, env=env) as listen:
        assert "warehouse postgres:127.0.0.1:" in "".join(listen.lines)
        newer = delivery("payment_succeeded", "4100000001", [
            transaction("4100000001", 1234, created_at=_iso(updated)),
            _customer_update(cid, site, "Pushed, newer", updated + dt.timedelta(hours=1))])
        older = delivery("payment_succeeded", "4100000002", [
            transaction("4100000002", 555, created_at=_iso(updated)),
            _customer_update(other, other_site, "Pushed, older",
                             other_updated - dt.timedelta(days=400))])
        with httpx.Client(timeout=10) as http:
            for body in (newer, older, newer):  # a redelivery too
                assert http.post(listen.url, json=body).status_code == 200
        assert listen.terminate() == 143  # drains the journal into PostgreSQL first

    # the deliveries landed in the pull's own tables; the receiver added only its log
    assert tables(dsn) == pulled_tables | {"webhook_events", "webhook_dead_letters"}
    assert rows(dsn, "select count(*) from creator_platform.webhook_events") == [(2,)]
    assert rows(dsn, "select amount_in_cents, _dlt_load_id like 'webhooks.%%' from "
                "creator_platform.transactions where id = '4100000001'") == [(1234, True)]
    names = dict(rows(dsn, "select id, name from creator_platform.customers where id in (%s, %s)",
                      cid, other))
    assert names == {cid: "Pushed, newer", other: other_name}  # an older one rolls nothing back

    second_began = dt.datetime.now(dt.UTC)
    _ok(run_cli(work, "sync", env=env))
    assert rows(dsn, "select count(*) from creator_platform.transactions") == [
        (transactions_before + 2,)]
    assert rows(dsn, "select name from creator_platform.customers where id = %s", cid) == [
        ("Pushed, newer",)]
    assert "analytics.revenue_daily" in _ok(run_cli(work, "models", env=env))
    assert rows(dsn, "select count(*) from analytics.revenue_daily")[0][0] > 0
    assert "report written" in _ok(run_cli(work, "report", env=env))
    status = json.loads(_ok(run_cli(work, "status", "--json", env=env)))
    assert status and all(r["status"] == "complete" for r in status)
    assert all(dt.datetime.fromisoformat(r["last_synced_at"]) >= second_began for r in status)
    assert not list(work.glob("*.duckdb"))  # nothing went to a DuckDB file on the side


def test_a_pull_never_overwrites_a_fresher_push_on_postgresql(
        sandbox_factory, pg_database, tmp_path):
    """The push-over-pull rule on PostgreSQL: deliveries loaded while a pull lists, one newer
    than what it lists and one older; the later `updated_at` wins, whichever path wrote it."""
    from sandbox_helpers import settings

    from creator_sync.pipelines.sync import run_sync

    dsn = pg_database
    sandbox = sandbox_factory(scale="tiny", sites=1)
    warehouse = Warehouse("postgres", "creator_platform", None, "creator_sync_creator_platform",
                          str(tmp_path / "state"), postgres_dsn=dsn)
    first = run_sync(settings(sandbox, tmp_path / "unused.duckdb", warehouse=warehouse,
                              resources=("customers",)), show_progress=False)
    assert not first.failed
    customers = sandbox.store.tables["customers"]
    fresher, staler = (int(r) for r in customers.cols["created_at"].argsort()[::-1][:2])
    fresher_id, staler_id = customers.id_of(fresher), customers.id_of(staler)
    ((site,),) = rows(dsn, "select site_id from creator_platform.customers where id = %s",
                      fresher_id)
    with sandbox.store.lock:  # both change on the platform: the next pull loads them again
        customers.cols["updated_at"][[fresher, staler]] = sandbox.store.now - 60
        customers.touch()
        sandbox.store.data_version += 1
    listed_at = dt.datetime.fromtimestamp(sandbox.store.now - 60, dt.UTC)

    def push() -> None:  # what `listen` does with two deliveries, mid-listing
        journal = Journal(tmp_path / "journal")
        loader = Loader(journal, warehouse)
        bodies = [
            delivery("purchase", "e1", [_customer_update(
                fresher_id, site, "Pushed, newer", listed_at + dt.timedelta(hours=1))]),
            delivery("purchase", "e2", [_customer_update(
                staler_id, site, "Pushed, older", listed_at - dt.timedelta(days=400))]),
        ]
        now = dt.datetime.now(dt.UTC)
        journal.append([encode(parse_delivery(orjson.dumps(b), now, site)) for b in bodies])
        loader.load(JournalReader(journal, journal.loaded_seq()).read(100))
        journal.close()

    transport = PushDuringListing(push)
    second = run_sync(settings(sandbox, tmp_path / "unused.duckdb", warehouse=warehouse,
                               resources=("customers",), full_refresh_every_days=0),
                      transport=transport, show_progress=False)
    assert transport.pushed and not second.failed
    names = dict(rows(dsn, "select id, name from creator_platform.customers where id in (%s, %s)",
                      fresher_id, staler_id))
    assert names[fresher_id] == "Pushed, newer"  # loaded after the listing began, and newer
    assert names[staler_id] == customers.values("name", [staler])[0]  # older: the pull's
    assert rows(dsn, "select count(*) - count(distinct id) from creator_platform.customers") == [
        (0,)]


def _listen(work: Path, env: dict[str, str], *extra: str) -> ListenProcess:
    return ListenProcess(None, SECRET, *extra, cwd=work, env=env)


def test_a_2xx_is_committed_even_when_the_receiver_is_killed_right_after(
        sandbox, pg_database, tmp_path):
    """SIGKILL right after the last 200: what was answered is in the journal, and the next
    start puts every delivery in PostgreSQL exactly once."""
    work, env = _team(tmp_path, sandbox, pg_database)
    bodies = [payment_succeeded(str(4_200_000_000 + i), amount=100 + i) for i in range(150)]
    # batches of 100 load at once; the last 50 wait for a 60 s interval: pending at the kill
    with _listen(work, env, "--batch-size", "100", "--batch-interval", "60") as first:
        with httpx.Client(timeout=10) as http:
            for body in bodies:
                assert http.post(first.url, json=body).status_code == 200
        first.kill()
    journal = work / ".creator-sync" / "postgres" / "webhooks-journal"
    acknowledged, _loaded = journal_status(journal)
    assert acknowledged == 150
    loaded_before = 0
    if "webhook_events" in tables(pg_database):
        ((loaded_before,),) = rows(pg_database, "select count(*) from creator_platform.webhook_events")
    assert loaded_before < 150  # the kill really left deliveries only in the journal

    with _listen(work, env) as second:
        assert second.terminate() == 143
    assert rows(pg_database, "select count(*), count(distinct resource_id) from "
                "creator_platform.webhook_events") == [(150, 150)]
    assert rows(pg_database, "select count(*), count(distinct id), sum(amount_in_cents) from "
                "creator_platform.transactions") == [(150, 150, sum(100 + i for i in range(150)))]
    assert journal_status(journal) == (150, 150)


def test_two_receivers_writing_at_once_lose_nothing_and_double_nothing(
        sandbox, pg_database, tmp_path):
    """Two `listen` behind one proxy, each with its journal, on one PostgreSQL warehouse:
    deliveries (and retries of the same delivery to the other one) upsert the same customer
    row and the same events concurrently. Every event is there once, every row once."""
    work, env = _team(tmp_path, sandbox, pg_database)
    bodies = [payment_succeeded(str(4_300_000_000 + i), amount=1000 + i) for i in range(200)]
    small = ("--batch-size", "10", "--batch-interval", "0.02")
    with _listen(work, env, *small) as one, _listen(
            work, env, "--journal", str(tmp_path / "journal-two"), *small) as two:
        failures: list[str] = []

        def post(url: str, share: list[dict]) -> None:
            with httpx.Client(timeout=30) as http:
                for body in share:
                    answer = http.post(url, json=body)
                    if answer.status_code != 200:
                        failures.append(f"{answer.status_code} {answer.text}")

        # the middle hundred goes to both, as a platform retrying through the proxy would
        senders = [threading.Thread(target=post, args=(one.url, bodies[:150])),
                   threading.Thread(target=post, args=(two.url, bodies[50:]))]
        for sender in senders:
            sender.start()
        for sender in senders:
            sender.join(120)
        assert not failures
        assert one.terminate() == 143 and two.terminate() == 143
    assert rows(pg_database, "select count(*), count(distinct (event, resource_id, payload_hash)) "
                "from creator_platform.webhook_events") == [(200, 200)]
    assert rows(pg_database, "select count(*), count(distinct id), sum(amount_in_cents) from "
                "creator_platform.transactions") == [(200, 200, sum(1000 + i for i in range(200)))]
    assert rows(pg_database, "select count(*) from creator_platform.customers") == [(1,)]
    assert rows(pg_database, "select count(*) from creator_platform.webhook_dead_letters") == [(0,)]


def test_dead_letters_and_their_requeue_on_postgresql(pg_database, tmp_path):
    """A delivery that cannot be typed and an unknown event become dead letters in PostgreSQL;
    once the cause is gone, `--requeue-dead-letters` puts the loadable one back and it loads."""
    from creator_sync.pipelines.webhooks.requeue import requeue_dead_letters

    warehouse = Warehouse("postgres", "creator_platform", None, "creator_sync_creator_platform",
                          str(tmp_path / "state"), postgres_dsn=pg_database)
    journal = Journal(tmp_path / "journal")
    loader = Loader(journal, warehouse)
    now = dt.datetime.now(dt.UTC)
    bad = delivery("payment_succeeded", "3300000007",
                   [transaction("3300000007", amount_in_cents="12.5")])
    journal.append([encode(parse_delivery(orjson.dumps(bad), now)),
                    encode(parse_delivery(orjson.dumps(payment_succeeded("3300000008")), now))])
    journal.append([b'{"not": "a record"'])  # undecodable: a load_failed letter of its own
    loader.load_isolating(JournalReader(journal, 0).read(10))
    assert rows(pg_database, "select reason, journal_seq from creator_platform.webhook_dead_letters "
                "order by journal_seq") == [("normalize_failed", 1), ("load_failed", 3)]
    loader.load_isolating(JournalReader(journal, 0).read(10))  # a replay doubles nothing
    assert rows(pg_database, "select count(*) from creator_platform.webhook_dead_letters") == [(2,)]
    rows_fixed = "update creator_platform.webhook_dead_letters set body = replace(body, " \
                 "'\"12.5\"', '1250') where reason = 'normalize_failed' returning journal_seq"
    assert rows(pg_database, rows_fixed) == [(1,)]  # the "fix" (a normaliser that reads it)
    assert requeue_dead_letters(journal, warehouse) == 1
    assert requeue_dead_letters(journal, warehouse) == 0  # gone from the dead letters
    loader.load_isolating(JournalReader(journal, journal.loaded_seq()).read(10))
    assert rows(pg_database, "select id, amount_in_cents from creator_platform.transactions "
                "order by id") == [("3300000007", 1250), ("3300000008", 4999)]
    assert rows(pg_database, "select reason from creator_platform.webhook_dead_letters") == [
        ("load_failed",)]
    journal.close()
