"""The nothing-new fast path (issue 15 point 2) changes how a sync runs, never what it writes.

A small package loads through one open DuckDB database (`kept_open.database_kept_open`), and dlt's secret
hint check is remembered (`process_tuning.remember_secret_hints`). These tests compare runs that take
the fast path with a fresh full sync and with the same run taking the slow path: the same
tables, the same rows, the same `_is_deleted` flags, the same cursors in the state.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Optional

import pytest
from dlt.common.configuration import configspec, resolve_configuration
from dlt.common.configuration.specs import BaseConfiguration, base_configuration
from dlt.common.typing import TSecretStrValue
from sandbox_helpers import query, snapshot, sync

from creator_sync.common.warehouse import Warehouse
from creator_sync.pipelines import process_tuning, tuning
from creator_sync.pipelines import sync as sync_module
from creator_sync.pipelines.factory import build_pipeline, resolve_warehouse
from creator_sync.pipelines.kept_open import database_kept_open
from creator_sync.sources.creator_platform import unchanged

# edits of person records older than the look-back show up at the periodic full refresh only,
# by design (see test_e2e_sandbox.py): a small delta is compared without them
PERSON_TABLES = {"contacts", "customers", "contacts_tags", "contacts_offers", "customers_products"}


@configspec
class Probe(BaseConfiguration):
    token: TSecretStrValue = None
    name: str = None


def _raw_state(db: Path) -> dict[str, Any]:
    wh = resolve_warehouse(duckdb=str(db))
    state = json.loads((Path(wh.pipelines_dir) / wh.pipeline_name / "state.json").read_text())
    return state["sources"]


def _state(db: Path) -> dict[str, Any]:
    """The source's cursors (and refresh times) as the pipeline keeps them after the run,
    without the row hashes: those are of the pages each run read (a window or a whole
    listing), checked against the warehouse by `_hashes_match_the_warehouse` instead."""
    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != unchanged.STATE_KEY}
        return value
    return strip(_raw_state(db))


def _cursors(db: Path) -> dict[tuple[str, str], Any]:
    """Only the cursors: a fresh full sync has also just done its full and deep reads, which an
    incremental run after a delta has not (its `last_full_at` is older, by design)."""
    resources = _state(db)["creator_platform"]["resources"]
    return {(name, site): entry.get("cursor") for name, sites in resources.items()
            for site, entry in sites.items() if isinstance(entry, dict)}


def _deleted_flags(db: Path) -> dict[str, list[tuple]]:
    tables = [r[0] for r in query(
        db, "select table_name from information_schema.columns where table_schema = "
        "'creator_platform' and column_name = '_is_deleted' order by 1")]
    return {t: query(db, f'select id, _is_deleted from creator_platform."{t}" order by id')
            for t in tables}


def _tables_of_load(db: Path, load_id: str) -> list[str]:
    """The tables holding a row of the load `load_id` (dlt's own included)."""
    tables = [r[0] for r in query(
        db, "select table_name from information_schema.columns where table_schema = "
        "'creator_platform' and column_name = '_dlt_load_id' order by 1")]
    found = [t for t in tables if query(
        db, f'select 1 from creator_platform."{t}" where _dlt_load_id = ? limit 1', load_id)]
    state = query(db, "select 1 from creator_platform._dlt_pipeline_state where _dlt_load_id = ?",
                  load_id)
    return found + (["_dlt_pipeline_state"] if state else [])


def _copy_warehouse(src: Path, dst: Path) -> None:
    """A warehouse file and its pipeline state, as a second machine would have them."""
    shutil.copy(src, dst)
    a, b = resolve_warehouse(duckdb=str(src)), resolve_warehouse(duckdb=str(dst))
    shutil.copytree(a.pipelines_dir, b.pipelines_dir)


def _assert_a_fresh_sync_writes_the_same(sandbox: Any, db: Path, tmp_path: Path) -> None:
    """`db` after a small delta equals a fresh full sync: tables, `_is_deleted`, cursors."""
    fresh = tmp_path / "fresh.duckdb"
    sync(sandbox, fresh)
    got, want = snapshot(db), snapshot(fresh)
    assert got.keys() == want.keys()
    for table in set(want) - PERSON_TABLES:
        assert got[table] == want[table], f"{table} differs after a small delta"
    deleted_got, deleted_want = _deleted_flags(db), _deleted_flags(fresh)
    for table in set(deleted_want) - PERSON_TABLES:
        assert deleted_got[table] == deleted_want[table], f"{table}: _is_deleted differs"
    assert _cursors(db) == _cursors(fresh)


@pytest.fixture
def held(monkeypatch):
    """Records whether each sync's load ran through one open database."""
    calls: list[bool] = []
    real = sync_module.database_kept_open

    def spy(wh: Warehouse, enabled: bool = True, create: bool = False):
        calls.append(enabled)
        return real(wh, enabled, create)

    monkeypatch.setattr(sync_module, "database_kept_open", spy)
    return calls


@pytest.mark.slow
def test_nothing_new_and_a_small_delta_equal_a_fresh_full_sync(sandbox_factory, synced_sandbox,
                                                              tmp_path, held):
    sandbox = sandbox_factory(sites=2)  # the session sandbox's data: `synced_sandbox` is its sync
    db = tmp_path / "inc.duckdb"
    sync(sandbox, db)
    assert held[-1] is True  # a small account's first load: a small package, one open database

    again = sync(sandbox, db)
    assert held[-1] is True  # nothing new: a small package, one open database
    assert sum(new for new, _ in again.tables.values()) == 0
    assert again.deleted == {}
    reference = synced_sandbox.path  # a fresh full sync of the same data, shared by the run
    want = snapshot(reference)
    got = snapshot(db)
    assert got.keys() == want.keys()
    assert got == want
    assert _deleted_flags(db) == _deleted_flags(reference)
    assert _state(db) == _state(reference)

    sandbox.activity(60)  # a small delta: new, changed and deleted records
    delta = sync(sandbox, db)
    assert held[-1] is True
    assert sum(new for new, _ in delta.tables.values()) > 0
    _assert_a_fresh_sync_writes_the_same(sandbox, db, tmp_path)
    assert any(cursor != "2026-03-01T12:00:00Z" for cursor in _cursors(db).values())  # moved


@pytest.mark.slow
def test_the_first_run_after_a_full_sync_loads_nothing_when_nothing_is_new(sandbox_factory,
                                                                          tmp_path):
    """A full listing is sorted by `created_at`; the next run reads contact notes newest first
    by `updated_at` and orders and order items by `-fulfilled_at` (the change feed), records
    spread over pages a full listing does not keep. Their hashes are kept all the same
    (`unchanged._NewestRecordRows`), so that run loads nothing, and it leaves the state as it was (no
    state row to load); a delta after it still equals a fresh sync. At `demo`, where a page holds fewer than those records (at `tiny` it does not)."""
    sandbox = sandbox_factory(sites=2, scale="demo")
    db = tmp_path / "inc.duckdb"
    sync(sandbox, db)
    before, flags, cursors = snapshot(db), _deleted_flags(db), _cursors(db)
    state = _raw_state(db)

    again = sync(sandbox, db)
    assert {t: n for t, n in again.tables.items() if sum(n)} == {}  # not one row loaded
    # nor a state row: the state, row hashes included, is as the full sync left it, so the
    # run's one load is its bookkeeping alone (`sync_resources`: this run's attempt;
    # `api_totals`: the totals of the dimensions listed whole each run, read now), no data
    # table and no state (docs/performance.md#nothing-new)
    assert _raw_state(db) == state
    [load_id] = again.load_ids
    assert _tables_of_load(db, load_id) in (["sync_resources"], ["api_totals", "sync_resources"])
    assert again.deleted == {}
    assert snapshot(db) == before
    assert _deleted_flags(db) == flags
    assert _cursors(db) == cursors

    sandbox.activity(60)  # new, changed (fulfilled, edited) and deleted records
    delta = sync(sandbox, db)
    assert sum(new + updated for new, updated in delta.tables.values()) > 0
    _assert_a_fresh_sync_writes_the_same(sandbox, db, tmp_path)


def _assert_held_and_job_by_job_write_the_same(sandbox: Any, fast: Path, slow: Path,
                                               held: list[bool], monkeypatch: Any) -> Any:
    """One sync into `fast` through one open database, the same into `slow` with the file
    closed after every job: the same summaries, tables, `_is_deleted` flags and state."""
    fast_run = sync(sandbox, fast)
    assert held[-1] is True
    monkeypatch.setattr(sync_module, "HOLD_OPEN_MAX_BYTES", -1)
    slow_run = sync(sandbox, slow)
    assert held[-1] is False
    assert fast_run.tables == slow_run.tables
    assert fast_run.deleted == slow_run.deleted
    assert snapshot(fast) == snapshot(slow)
    assert _deleted_flags(fast) == _deleted_flags(slow)
    assert _state(fast) == _state(slow)
    # the held run left a clean, closed file: every change checkpointed, readable by a new
    # process (a read-only open, refused while this process held it read-write)
    assert query(fast, "select count(*) from creator_platform.sync_resources") == \
        query(slow, "select count(*) from creator_platform.sync_resources")
    return fast_run


@pytest.mark.slow
def test_database_kept_open_run_writes_what_the_job_by_job_run_writes(sandbox_factory, tmp_path, held,
                                                             monkeypatch):
    """The same incremental run, once through one open database and once with the file
    closed after every job, from copies of one warehouse: identical results."""
    sandbox = sandbox_factory(sites=2)
    base = tmp_path / "base.duckdb"
    sync(sandbox, base)
    sandbox.activity(40)
    fast, slow = tmp_path / "fast.duckdb", tmp_path / "slow.duckdb"
    _copy_warehouse(base, fast)
    _copy_warehouse(base, slow)

    _assert_held_and_job_by_job_write_the_same(sandbox, fast, slow, held, monkeypatch)


@pytest.mark.slow
def test_a_first_sync_database_kept_open_writes_what_the_job_by_job_first_sync_writes(
        sandbox_factory, tmp_path, held, monkeypatch):
    """A new warehouse filled through one open database (a small package) equals one filled
    with the file closed after every job (a big package), and the next run agrees too."""
    sandbox = sandbox_factory(sites=2)
    fast, slow = tmp_path / "fast.duckdb", tmp_path / "slow.duckdb"
    first = _assert_held_and_job_by_job_write_the_same(sandbox, fast, slow, held, monkeypatch)
    assert sum(new for new, _ in first.tables.values()) > 0
    monkeypatch.setattr(sync_module, "HOLD_OPEN_MAX_BYTES", tuning.HOLD_OPEN_MAX_BYTES)
    sandbox.activity(30)
    assert sync(sandbox, fast).tables == sync(sandbox, slow).tables


def test_database_kept_open_makes_reopening_cheap_and_closes_on_exit(tmp_path):
    """While held, a second open of the file is the same database (a write through one is seen
    by the other at once); after it, the file is closed so another process may open it."""
    import duckdb

    wh = resolve_warehouse(duckdb=str(tmp_path / "w.duckdb"))
    duckdb.connect(wh.duckdb_path).close()  # the file exists
    with database_kept_open(wh):
        with duckdb.connect(database=wh.duckdb_path, read_only=False, config={}) as con:
            con.execute("create table t as select 1 as x")
        with duckdb.connect(database=wh.duckdb_path, read_only=False, config={}) as con:
            assert con.execute("select x from t").fetchall() == [(1,)]
    # closed: a read-only open (a different configuration) is refused while any read-write
    # connection of this process holds the file, so this succeeding shows nothing is held
    with duckdb.connect(wh.duckdb_path, read_only=True) as con:
        assert con.execute("select x from t").fetchall() == [(1,)]


def test_database_kept_open_does_nothing_without_a_file_unless_asked_or_when_disabled(tmp_path):
    wh = resolve_warehouse(duckdb=str(tmp_path / "none.duckdb"))
    with database_kept_open(wh):
        pass
    assert not Path(wh.duckdb_path).exists()  # a fresh run's file is dlt's to create
    with database_kept_open(wh, enabled=False, create=True):
        pass
    assert not Path(wh.duckdb_path).exists()
    with database_kept_open(wh, create=True):  # a load's: the file it is about to fill
        assert Path(wh.duckdb_path).exists()
    import duckdb

    with duckdb.connect(wh.duckdb_path, read_only=True) as con:  # closed again
        assert con.execute("select 1").fetchall() == [(1,)]


def test_wal_checkpoint_threshold_reaches_every_connection(tmp_path, monkeypatch):
    """dlt sets 1 GB on each connection; ours must win, or held loads keep rows in memory."""
    monkeypatch.chdir(tmp_path)
    pipeline = build_pipeline(resolve_warehouse(duckdb=str(tmp_path / "w.duckdb")))
    with pipeline.sql_client() as client:
        rows = client.execute_sql("SELECT current_setting('checkpoint_threshold')")
    assert str(rows[0][0]) == "250.0 KiB"  # DuckDB prints tuning.WAL_CHECKPOINT (256KB) so
    assert tuning.WAL_CHECKPOINT == "256KB"


def test_remembered_secret_hints_answer_as_dlt_does(monkeypatch):
    process_tuning.remember_secret_hints()
    process_tuning.remember_secret_hints()  # idempotent: wraps once
    check = base_configuration.is_secret_hint
    assert getattr(check, "remembered", False)
    for _ in range(2):  # the cached answer equals the first one
        assert check(TSecretStrValue) is True
        assert check(str) is False
        assert check(Optional[TSecretStrValue]) is True  # noqa: UP045 (a typing form, as dlt sees it)

    monkeypatch.setenv("PROBE__TOKEN", "t0ken")
    monkeypatch.setenv("PROBE__NAME", "n")
    resolved = resolve_configuration(Probe(), sections=("probe",))
    assert resolved.token == "t0ken" and resolved.name == "n"


def test_a_nothing_new_sync_imports_neither_pandas_nor_numpy_nor_pyarrow(sandbox_factory,
                                                                         tmp_path):
    """docs/performance.md#nothing-new: a scheduled run that finds nothing new does no arrow
    work and binds no DuckDB parameter, so it never pays for these imports (~0.6 s of CPU)."""
    from cli_run import SANDBOX_ID, clean_env, run_cli

    sandbox = sandbox_factory(sites=1)
    work = tmp_path / "project"
    args = ("sync", "--base-url", sandbox.base_url, "--client-id", SANDBOX_ID, "--no-progress")
    first = run_cli(work, *args)
    assert first.returncode == 0, first.stderr[-2000:]
    env = {**clean_env(tmp_path / "project-home"), "PYTHONPROFILEIMPORTTIME": "1"}
    again = run_cli(work, *args, env=env, fresh=True)  # a new interpreter, as cron starts it
    assert again.returncode == 0, again.stderr[-2000:]
    assert "nothing new" in again.stdout + again.stderr
    imported = {line.rsplit("|", 1)[1].strip() for line in again.stderr.splitlines()
                if line.startswith("import time:")}
    assert "duckdb" in imported  # (the import log is there)
    assert not imported & {"pandas", "numpy", "pyarrow"}
