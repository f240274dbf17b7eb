"""Done-when of issue 7: sandbox + `listen` + hooks for all six events through the CLI +
activity -> every delivered event and its resources land before any pull sync; then a pull sync
(while the receiver keeps running) duplicates nothing, and pushes after the pull still merge."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb
import httpx
import orjson
import pytest
from click.testing import CliRunner

from creator_sync.cli import main
from creator_sync.common.locking import warehouse_lock
from creator_sync.pipelines.webhooks.events import EVENTS
from creator_sync.pipelines.webhooks.journal import journal_status
from creator_sync.pipelines.webhooks.testing import ListenProcess
from creator_sync.sources.creator_platform.endpoints import type_info
from creator_sync.sources.creator_platform.hints import link_columns

pytestmark = pytest.mark.slow

SECRET = "e2e-hook-secret-0123456789"
CLIENT = ["--client-id", "sandbox", "--client-secret", "sandbox-secret"]
# columns every push payload carries; after a pull they must hold the very same values
COMPARED = {
    "transactions": "id, amount_in_cents, currency, created_at, customer_id",
    "orders": "id, total_price_in_cents, currency_code, created_at, customer_id, site_id",
    "customers": "id, email, net_revenue, site_id",
    "contacts": "id, email, site_id",
}
SUBJECT_TABLE = {
    "purchase": "purchases",
    "payment_succeeded": "transactions",
    "order_created": "orders",
    "form_submission": "form_submissions",
    "tag_added": "contacts",
    "tag_removed": "contacts",
}


def cli(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def wait_delivered(base_url: str, expected: int, timeout: float = 60) -> list[dict]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        log = httpx.get(f"{base_url}/_sandbox/deliveries").json()
        if len(log) >= expected and all(entry["delivered"] for entry in log):
            return log
        time.sleep(0.1)
    raise AssertionError(f"sandbox did not deliver everything: {log}")


def wait_loaded(journal_dir: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        last, loaded = journal_status(journal_dir)
        if loaded >= last:
            return
        time.sleep(0.1)
    raise AssertionError("the loader did not catch up with the journal")


@contextlib.contextmanager
def warehouse(db: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """Read the warehouse the way a second writer would: under the lock the loader honours."""
    with warehouse_lock(db), duckdb.connect(str(db), read_only=True) as con:
        yield con


def columns_by_table(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, str]]:
    rows = con.execute(
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = 'creator_platform' AND table_name NOT LIKE '\\_dlt%' ESCAPE '\\'"
    ).fetchall()
    out: dict[str, dict[str, str]] = {}
    for table, column, dtype in rows:
        out.setdefault(table, {})[column] = dtype
    return out


def assert_no_duplicates(db: Path) -> None:
    with warehouse(db) as con:
        for table, columns in columns_by_table(con).items():
            if table == "webhook_dead_letters":
                continue
            if table == "webhook_events":
                key = "event, resource_id, payload_hash"
            elif table == "sync_resources":  # the source's run record (C6)
                key = "resource"
            elif table == "api_totals":  # per resource and site (issue 40)
                key = "resource, site_id"
            elif "id" in columns:
                key = "id"
            else:  # link table: (parent, child); line table: (parent, line_number)
                key = ", ".join(link_columns(table, columns))
            [(dupes,)] = con.execute(
                f"SELECT count(*) FROM (SELECT {key} FROM creator_platform.{table} "
                "GROUP BY ALL HAVING count(*) > 1)"
            ).fetchall()
            assert dupes == 0, f"{table} has {dupes} duplicated keys ({key})"


def assert_delivered_events_landed(db: Path, log: list[dict]) -> None:
    delivered = {(e["event"], e["id"]) for e in log if e["delivered"]}
    with warehouse(db) as con:
        landed = set(
            con.execute("SELECT event, resource_id FROM creator_platform.webhook_events").fetchall()
        )
        assert delivered <= landed
        ids: dict[str, set[str]] = {}
        for table, columns in columns_by_table(con).items():
            if "id" in columns:
                ids[table] = {r[0] for r in con.execute(f"SELECT id FROM creator_platform.{table}").fetchall()}
        payloads = con.execute("SELECT payload FROM creator_platform.webhook_events").fetchall()
    for event, rid in delivered:
        assert rid in ids.get(SUBJECT_TABLE[event], set()), f"{event} {rid} not in its table"
    # and every resource of every stored payload is in its table
    for (payload,) in payloads:
        for resource in orjson.loads(payload):
            table = type_info(resource["type"]).table
            assert resource["id"] in ids.get(table, set()), f"{resource['type']} {resource['id']}"


def test_push_lands_before_pull_and_pull_duplicates_nothing(sandbox_factory, tmp_path):
    handle = sandbox_factory(sites=2)
    db = tmp_path / "warehouse.duckdb"
    journal_dir = Path(f"{db}.webhooks-journal")
    api = ["--base-url", handle.base_url, *CLIENT]
    with ListenProcess(db, SECRET, "--batch-interval", "0.1") as receiver:
        sites = _site_ids(handle)
        for site in sites:
            for event in EVENTS:
                out = cli("hooks", "create", *api, "--event", event,
                          "--target-url", receiver.url, "--site-id", site)
                assert out.startswith("created hook ")
        listing = cli("hooks", "list", *api)
        assert f"{len(sites) * len(EVENTS)} hook(s)" in listing
        assert SECRET not in listing  # the target URL's secret segment is redacted

        summary = handle.activity(80)
        assert summary["deliveries"] > 10
        log = wait_delivered(handle.base_url, summary["deliveries"])
        assert {e["event"] for e in log} == set(EVENTS)
        wait_loaded(journal_dir)

        # before any pull sync: the events and their resources are already there
        assert_delivered_events_landed(db, log)
        assert_no_duplicates(db)
        with warehouse(db) as con:
            pushed_types = columns_by_table(con)
            pushed = {t: set(con.execute(f"SELECT {c} FROM creator_platform.{t}").fetchall())
                      for t, c in COMPARED.items()}

        # the pull sync runs while the receiver is up; it must merge into the pushed rows
        cli("sync", *api, "--duckdb", str(db), "--pipelines-dir", str(tmp_path / "state"),
            "--no-progress")
        assert_no_duplicates(db)
        assert_delivered_events_landed(db, log)
        with warehouse(db) as con:
            for table, cols in COMPARED.items():
                pulled = set(con.execute(f"SELECT {cols} FROM creator_platform.{table}").fetchall())
                assert pushed[table] and pushed[table] <= pulled, f"push and pull disagree: {table}"

        # the other order: pushes after a pull land into the tables the pull created
        summary = handle.activity(40)
        log = wait_delivered(handle.base_url, len(log) + summary["deliveries"])
        wait_loaded(journal_dir)
        assert_delivered_events_landed(db, log)
        assert_no_duplicates(db)
        assert receiver.terminate() == 143  # SIGTERM, after the drain

    # tables the receiver created have exactly the types the pull sync creates on its own
    pull_only = tmp_path / "pull-only.duckdb"
    pushed_resources = "purchases,transactions,orders,customers,contacts,contact_tags,form_submissions"
    cli("sync", *api, "--duckdb", str(pull_only), "--pipelines-dir", str(tmp_path / "state2"),
        "--resources", pushed_resources, "--no-progress")
    with warehouse(pull_only) as con:
        reference = columns_by_table(con)
    compared = 0
    for table, columns in pushed_types.items():
        if table in reference:
            for column, dtype in columns.items():
                if column in reference[table]:
                    assert dtype == reference[table][column], f"{table}.{column}"
                    compared += 1
    assert compared > 50


def _site_ids(handle) -> list[str]:
    from creator_sync.sources.creator_platform import api_client

    with api_client(handle.base_url, "sandbox", "sandbox-secret") as api:
        return [site["id"] for site in api.get("/sites")["data"]]
