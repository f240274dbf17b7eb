"""Issue 41 point 3: a plain `pipeline.run(creator_platform_source())`, with no call after it,
loads what `creator-sync sync` loads, table by table.

The plain run and the CLI (its console script, in a directory of its own) sync the same
sandbox after each round of platform activity: a first sync, activity that adds money for
customers created long before (the customers listing's window does not read them again, the
source's `customers_refresh` does), activity past the weekly full listing, and records the
platform deleted (`_is_deleted`, by the source's `deletions` resource). Every table must be
equal, row for row, the run's bookkeeping included (`sync_resources`, `api_totals`,
`rejected_records`, written by the source's `bookkeeping` resource in the same load): their
columns that are a run's own clock (when it began, when a listing began or ended, when a record
was first set aside) differ between two runs by nature, so they are compared as "both null or
both set", with `complete_through_at <= last_attempt_at` (DECISIONS-2.md, "A source that
stands alone"). The last test: a warehouse an earlier version wrote (bookkeeping tables created
by plain SQL, unknown to dlt) is taken over by the next plain run, its rows kept.
"""

from __future__ import annotations

import sys
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import dlt
import duckdb
import httpx
import pytest
from cli_run import SANDBOX_ID, run_cli
from sandbox_helpers import CLIENT_SECRET, snapshot

from creator_sync.sandbox.testing import start_sandbox
from creator_sync.sources.creator_platform import PUSHED_LOAD_ID_PREFIX, creator_platform_source

sys.path.append(str(Path(__file__).resolve().parents[1] / "models"))
from pg_helpers import postgres_dsn  # noqa: F401  (the session fixture, registered here)

DATASET = "creator_platform"
NOW = "2026-03-01T12:00:00Z"
WEEK_AND_A_DAY = 8 * 86_400
BOOKKEEPING = {"sync_resources", "api_totals", "rejected_records"}
# a run's own clock (local, or the platform's when a listing began or ended): differs by nature
CLOCKS = {"last_attempt_at", "last_synced_at", "complete_through_at", "read_at",
          "listing_started_at", "rejected_at"}


def plain_run(sandbox: Any, where: Path) -> dict[str, int]:
    """`pipeline.run(creator_platform_source())` and nothing else; returns the items each
    resource extracted."""
    pipeline = dlt.pipeline("plain", destination=dlt.destinations.duckdb(str(where / "plain.duckdb")),
                            dataset_name=DATASET, pipelines_dir=str(where / "pipelines"))
    pipeline.run(creator_platform_source(base_url=sandbox.base_url, client_id=SANDBOX_ID,
                                         client_secret=CLIENT_SECRET))
    extract = pipeline.last_trace.last_extract_info
    return {name: metrics.items_count
            for load_id in extract.loads_ids
            for step in extract.metrics[load_id]
            for name, metrics in step["resource_metrics"].items()}


def cli_sync(sandbox: Any, work: Path) -> Path:
    done = run_cli(work, "sync", "--base-url", sandbox.base_url, "--client-id", SANDBOX_ID,
                   "--duckdb", "cli.duckdb", "--no-progress")
    assert done.returncode == 0, done.stderr[-3000:]
    return work / "cli.duckdb"


def data_tables(db: Path) -> dict[str, list[tuple]]:
    return {t: rows for t, rows in snapshot(db, DATASET).items() if t not in BOOKKEEPING}


def bookkeeping(db: Path) -> dict[str, list[dict[str, Any]]]:
    """Each bookkeeping table the warehouse holds, its rows sorted, a clock column as whether
    it is set; `sync_resources`' clocks checked in order."""
    out: dict[str, list[dict[str, Any]]] = {}
    with duckdb.connect(str(db), read_only=True) as con:
        for table in sorted(BOOKKEEPING):
            columns = [r[0] for r in con.execute(
                "select column_name from information_schema.columns where table_schema = ? "
                "and table_name = ? and column_name not like '\\_dlt%' escape '\\' "
                "order by column_name", [DATASET, table]).fetchall()]
            if not columns:
                continue
            rows = [dict(zip(columns, row, strict=True)) for row in con.execute(
                f"select {', '.join(columns)} from {DATASET}.{table}").fetchall()]
            for row in rows:
                if table == "sync_resources" and row["complete_through_at"] is not None:
                    assert row["complete_through_at"] <= row["last_attempt_at"], row
            out[table] = sorted(({c: (v is not None) if c in CLOCKS else v for c, v in row.items()}
                                 for row in rows), key=repr)
    return out


def assert_same(plain: Path, cli: Path, when: str) -> None:
    """Every table equal, `sync_resources.rows_loaded` included: the plain run reads itself
    which tables the destination holds, and leaves out the rows it read unchanged as the CLI
    does (which passes `kept_tables`)."""
    ours, theirs = bookkeeping(plain), bookkeeping(cli)
    assert "sync_resources" in theirs, f"{when}: no sync_resources"
    assert ours.keys() == theirs.keys(), f"{when}: bookkeeping tables differ"
    for table in theirs:
        assert ours[table] == theirs[table], f"{when}: {table} differs"
    ours, theirs = data_tables(plain), data_tables(cli)
    assert set(ours) == set(theirs), f"{when}: tables differ: {set(ours) ^ set(theirs)}"
    for table in sorted(theirs):
        if ours[table] != theirs[table]:
            only_plain = set(ours[table]) - set(theirs[table])
            only_cli = set(theirs[table]) - set(ours[table])
            pytest.fail(f"{when}: {table} differs: {len(only_plain)} row(s) only in the plain "
                        f"run, {len(only_cli)} only in the CLI's, e.g. "
                        f"{sorted(only_plain)[:1]} / {sorted(only_cli)[:1]}")


def activity(sandbox: Any, count: int, advance_s: int = 0) -> None:
    response = httpx.post(f"{sandbox.base_url}/_sandbox/activity",
                          json={"count": count, "advance_seconds": advance_s}, timeout=120)
    assert response.status_code == 200, response.text


@pytest.fixture
def sandbox():
    handle = start_sandbox(scale="tiny", sites=2, seed=23, now=NOW, delete_rate=0.0)
    try:
        yield handle
    finally:
        handle.stop()


def test_a_plain_run_loads_what_the_cli_loads(sandbox: Any, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    first = plain_run(sandbox, plain)
    cli = cli_sync(sandbox, tmp_path / "cli")
    assert first.get("customers_refresh", 0) == 0  # a first sync lists every customer
    assert_same(plain / "plain.duckdb", cli, "first sync")

    activity(sandbox, 40)  # a day and a half: new money, some of it by older customers
    second = plain_run(sandbox, plain)
    cli_sync(sandbox, tmp_path / "cli")
    # customers named by new money were re-read by the source itself (else this proves little)
    assert second.get("customers_refresh", 0) > 0, second
    assert_same(plain / "plain.duckdb", cli, "after activity")

    activity(sandbox, 40, WEEK_AND_A_DAY)  # past the weekly full listing
    plain_run(sandbox, plain)
    cli_sync(sandbox, tmp_path / "cli")
    assert_same(plain / "plain.duckdb", cli, "after the weekly full listing")


def test_a_plain_run_flags_what_the_platform_deleted(sandbox: Any, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    plain_run(sandbox, plain)
    cli = cli_sync(sandbox, tmp_path / "cli")
    token = httpx.post(f"{sandbox.base_url}/v1/oauth/token", data={
        "client_id": SANDBOX_ID, "client_secret": CLIENT_SECRET,
        "grant_type": "client_credentials"}).json()["access_token"]
    contacts = sandbox.store.tables["contacts"]
    for row in range(3):
        response = httpx.delete(f"{sandbox.base_url}/v1/contacts/{contacts.id_of(row)}",
                                headers={"Authorization": f"Bearer {token}"})
        assert response.status_code == 200, response.text
    activity(sandbox, 1, WEEK_AND_A_DAY)  # contacts' weekly full listing finds them gone
    plain_run(sandbox, plain)
    cli_sync(sandbox, tmp_path / "cli")
    assert_same(plain / "plain.duckdb", cli, "after deletions")


LEGACY_TABLES = {  # as the SQL writers of earlier versions created them
    "sync_resources": "resource VARCHAR, status VARCHAR, reason VARCHAR, last_attempt_at "
                      "TIMESTAMPTZ, last_synced_at TIMESTAMPTZ, rows_loaded BIGINT, "
                      "complete_through_at TIMESTAMPTZ",
    "rejected_records": "resource VARCHAR, site_id VARCHAR, record_id VARCHAR, field VARCHAR, "
                        "value VARCHAR, reason VARCHAR, rejected_at TIMESTAMPTZ",
    "api_totals": "resource VARCHAR, site_id VARCHAR, table_name VARCHAR, api_total BIGINT, "
                  "first_page_total BIGINT, read_at TIMESTAMPTZ, listing_started_at TIMESTAMPTZ, "
                  "no_total_reason VARCHAR",
}
EARLIER = datetime(2026, 2, 1, 9, 30, tzinfo=UTC)


@pytest.fixture(params=["duckdb", "postgres"])
def destination(request: Any, tmp_path: Path) -> Any:
    if request.param == "duckdb":
        return dlt.destinations.duckdb(str(tmp_path / "plain.duckdb"))
    return dlt.destinations.postgres(request.getfixturevalue("postgres_dsn"))


def test_a_warehouse_an_earlier_version_wrote_is_taken_over_with_its_rows(
        sandbox: Any, tmp_path: Path, destination: Any) -> None:
    dataset = f"plain_{uuid.uuid4().hex[:8]}"
    pipeline = dlt.pipeline("plain", destination=destination, dataset_name=dataset,
                            pipelines_dir=str(tmp_path / "pipelines"))

    def run(**kwargs: Any) -> None:
        source = creator_platform_source(base_url=sandbox.base_url, client_id=SANDBOX_ID,
                                         client_secret=CLIENT_SECRET, **kwargs)
        pipeline.run(source)

    def sql(statement: str, *args: Any) -> list[tuple]:
        with pipeline.sql_client() as client:
            return [tuple(r) for r in client.execute_sql(statement, *args) or []]

    def aware(rows: list[tuple]) -> list[tuple]:
        return [tuple(v.astimezone(UTC) if isinstance(v, datetime) else v for v in r) for r in rows]

    # an earlier version: the data by dlt, the bookkeeping by plain SQL after the load
    source = creator_platform_source(base_url=sandbox.base_url, client_id=SANDBOX_ID,
                                     client_secret=CLIENT_SECRET, resources=["products", "payouts"])
    pipeline.run(source.with_resources("products", "payouts"))
    assert "sync_resources" not in pipeline.default_schema.tables
    for table, columns in LEGACY_TABLES.items():
        sql(f"create table {dataset}.{table} ({columns})")
    for name in ("products", "payouts", "courses"):
        sql(f"insert into {dataset}.sync_resources values (%s, 'synced', null, %s, %s, 5, %s)",
            name, EARLIER, EARLIER, EARLIER)
    sql(f"insert into {dataset}.rejected_records values ('courses', 's1', 'c1', 'price', 'n/a', "
        "'not a number', %s)", EARLIER)
    sql(f"insert into {dataset}.api_totals values ('courses', 's1', 'courses', 7, 7, %s, %s, null)",
        EARLIER, EARLIER)

    # the next plain run: payouts fail (a path the platform does not serve), products sync
    run(resources=["products", "payouts"], payouts_path="/nope_payouts")
    rows = {r[0]: r[1:] for r in aware(sql(
        f"select resource, status, last_synced_at, complete_through_at, _dlt_load_id "
        f"from {dataset}.sync_resources"))}
    assert set(rows) == {"products", "payouts", "courses"}
    assert rows["courses"][:3] == ("synced", EARLIER, EARLIER)  # not selected: kept
    assert rows["payouts"][:3] == ("failed", EARLIER, EARLIER)  # failed: its last completed run
    assert rows["products"][0] == "synced" and rows["products"][1] > EARLIER
    assert all(r[3] is not None for r in rows.values())  # every row loaded by dlt now
    assert sql(f"select resource, record_id from {dataset}.rejected_records") == [("courses", "c1")]
    totals = {(r[0], r[1]): r[2] for r in sql(
        f"select resource, site_id, api_total from {dataset}.api_totals")}
    assert totals[("courses", "s1")] == 7  # not listed: kept
    assert len([key for key in totals if key[0] == "products"]) == 2  # listed whole, per site
    # the tables this run changed are dlt's now (`rejected_records` did not change: left as
    # it was, taken over when it does), the types the models read
    assert {"sync_resources", "api_totals"} <= set(pipeline.default_schema.tables)
    types = dict(sql("select column_name, data_type from information_schema.columns where "
                     "table_schema = %s and table_name = 'sync_resources'", dataset))
    assert types["last_synced_at"].lower() == "timestamp with time zone"
    assert types["rows_loaded"].lower() == "bigint"

    run(resources=["products", "payouts"])  # and the run after: a table dlt knows
    assert dict(sql(f"select resource, status from {dataset}.sync_resources")) == {
        "products": "synced", "payouts": "synced", "courses": "synced"}

    # a full refresh of one resource: dlt drops the tables of every selected resource,
    # `bookkeeping`'s too, which fills them again whole (the other resources' rows kept)
    pipeline.run(creator_platform_source(base_url=sandbox.base_url, client_id=SANDBOX_ID,
                                         client_secret=CLIENT_SECRET, resources=["products"],
                                         full_refresh=True), refresh="drop_resources")
    dropped = pipeline.last_trace.last_load_info.load_packages[0].dropped_tables
    assert {"products", "sync_resources", "api_totals"} <= set(dropped)
    assert dict(sql(f"select resource, status from {dataset}.sync_resources")) == {
        "products": "synced", "payouts": "synced", "courses": "synced"}
    assert ("courses", "s1") in {(r[0], r[1]) for r in sql(
        f"select resource, site_id from {dataset}.api_totals")}
    assert sql(f"select resource, record_id from {dataset}.rejected_records") == [("courses", "c1")]


def test_only_a_load_of_data_sends_finish_sync_to_restore_pushes(tmp_path: Path) -> None:
    """A nothing-new run loads its bookkeeping alone: no delivery can have been overwritten,
    nobody `forget` erased brought back, so `finish_sync` skips those reads."""
    from creator_sync.pipelines.postload import _data_loads

    pipeline = dlt.pipeline("loads", destination=dlt.destinations.duckdb(str(tmp_path / "l.duckdb")),
                            dataset_name=DATASET, pipelines_dir=str(tmp_path / "pipelines"))
    books = pipeline.run([{"resource": "orders", "status": "synced"}], table_name="sync_resources")
    assert books.loads_ids and _data_loads(books, books.loads_ids) == []
    data = pipeline.run([{"id": "o1"}], table_name="orders")
    assert _data_loads(data, data.loads_ids) == data.loads_ids
    # a load info that lists no jobs (the CLI's "nothing loaded", a host's own): every load
    assert _data_loads(None, ["1"]) == ["1"]


def test_a_plain_run_skips_unchanged_rows_only_in_tables_the_destination_holds(
        sandbox: Any, tmp_path: Path, destination: Any) -> None:
    """The plain run reads which tables the destination holds (not dlt state): rows read
    unchanged are left out of a table it holds (but those the webhook loader wrote last), loaded
    again into one dropped by hand (dlt's state still lists it), into a new warehouse (dataset
    dropped, dlt's state kept), and under `refresh="drop_resources"`."""
    dataset = f"plain_{uuid.uuid4().hex[:8]}"
    pipeline = dlt.pipeline("plain", destination=destination, dataset_name=dataset,
                            pipelines_dir=str(tmp_path / "pipelines"))

    def run(**kwargs: Any) -> dict[str, int]:
        pipeline.run(creator_platform_source(base_url=sandbox.base_url, client_id=SANDBOX_ID,
                                             client_secret=CLIENT_SECRET,
                                             resources=["products", "me"]), **kwargs)
        with pipeline.sql_client() as client:
            return dict(client.execute_sql(f"select resource, rows_loaded from {dataset}.sync_resources"))

    def count(table: str) -> int:
        with pipeline.sql_client() as client:
            return client.execute_sql(f"select count(*) from {dataset}.{table}")[0][0]

    first = run()
    products = count("products")
    assert first == {"products": products, "me": 1} and products > 0
    assert run() == {"products": 0, "me": 0}  # read unchanged, held: left out
    # a row the webhook loader wrote last (it may differ from what the pull read) is loaded
    # again, unchanged or not: the pull stays the source of truth
    with pipeline.sql_client() as client:
        key, title = client.execute_sql(f"select id, title from {dataset}.products limit 1")[0]
        client.execute_sql(f"update {dataset}.products set title = 'pushed', _dlt_load_id = %s "
                           "where id = %s", f"{PUSHED_LOAD_ID_PREFIX}1700000000.000000", key)
    assert run() == {"products": 1, "me": 0}
    with pipeline.sql_client() as client:
        assert client.execute_sql(f"select title from {dataset}.products where id = %s", key) == [(title,)]
    with pipeline.sql_client() as client:
        client.execute_sql(f"drop table {dataset}.products")
        client.execute_sql(f"drop table {dataset}.me")
        # (and the stored schema versions: else dlt, whose schema did not change, would not
        # create the tables again)
        client.execute_sql(f"delete from {dataset}._dlt_version")
    assert "products" in pipeline.default_schema.tables  # dlt's state still lists them
    assert run() == {"products": products, "me": 1}  # dropped by hand: loaded again
    assert count("products") == products and count("me") == 1
    assert run() == {"products": 0, "me": 0}
    with pipeline.sql_client() as client:  # a new warehouse, dlt's state kept
        client.drop_dataset()
    assert run() == {"products": products, "me": 1}
    assert count("products") == products and count("me") == 1
    assert run(refresh="drop_resources") == {"products": products, "me": 1}
    assert count("products") == products and count("me") == 1
