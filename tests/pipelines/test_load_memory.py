"""Load-step memory knobs (docs/performance.md#memory): DuckDB's checkpoint vacuum is off while a
new warehouse is filled, configurable; freed C heap is handed back to the OS before the load."""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

import duckdb
import pytest

from creator_sync.pipelines import counts, crash_repair, tuning, warehouse_facts, warehouse_sql
from creator_sync.pipelines.factory import build_pipeline, resolve_warehouse
from creator_sync.pipelines.kept_open import database_kept_open
from creator_sync.pipelines.process_tuning import release_free_memory


def _setting(tmp_path, name: str, fresh_load: bool = False) -> str:
    pipeline = build_pipeline(resolve_warehouse(duckdb=str(tmp_path / "w.duckdb")), fresh_load=fresh_load)
    with pipeline.sql_client() as client:
        rows = client.execute_sql(f"SELECT current_setting('{name}')")
    return str(rows[0][0])


def test_checkpoint_vacuum_is_off_only_while_filling_a_new_warehouse(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no .dlt/ config here
    monkeypatch.delenv("CREATOR_SYNC__DUCKDB_VACUUM_TASKS", raising=False)
    assert _setting(tmp_path, "max_vacuum_tasks", fresh_load=True) == "0"
    default = _setting(tmp_path, "max_vacuum_tasks")  # incremental runs: DuckDB's own default
    assert int(default) > 0
    assert _setting(tmp_path, "threads") == "1"
    monkeypatch.setenv("CREATOR_SYNC__DUCKDB_VACUUM_TASKS", "7")
    assert _setting(tmp_path, "max_vacuum_tasks", fresh_load=True) == "7"
    assert _setting(tmp_path, "max_vacuum_tasks") == "7"


def test_scans_after_a_load_cap_duckdbs_pool_and_give_the_database_its_limit_back(tmp_path, monkeypatch):
    """The steps around a load scan whole tables, and DuckDB caches every block it reads up to
    the load's limit (1 GB): at `large` that was the sync's peak (docs/performance.md#memory). Each
    step runs
    with the pool at `SCAN_MEMORY_LIMIT` and still finds what it looks for (a duplicate left by
    a re-run append job); a database kept open between steps gets its configured limit back."""
    monkeypatch.chdir(tmp_path)  # no .dlt/ config here
    monkeypatch.delenv("CREATOR_SYNC__DUCKDB_MEMORY_LIMIT", raising=False)
    wh = resolve_warehouse(duckdb=str(tmp_path / "w.duckdb"))
    pipeline = build_pipeline(wh, fresh_load=True)
    rows = [{"id": 1, "v": "a"}, {"id": 1, "v": "a"}, {"id": 2, "v": "b"}]  # id 1 appended twice
    info = pipeline.run(rows, table_name="items", write_disposition="append", primary_key="id")
    client_type = type(pipeline.sql_client())
    original = client_type.execute_sql
    limits: list[str] = []  # DuckDB's limit at each read of the step running
    write_limits: list[str] = []  # ... and at each write

    def recording(self, sql, *args, **kwargs):
        if not sql.startswith(("SET ", "SELECT current_setting")):
            limit = str(original(self, "SELECT current_setting('memory_limit')")[0][0])
            (limits if sql.startswith("SELECT") else write_limits).append(limit)
        return original(self, sql, *args, **kwargs)

    def shown(limit: str) -> str:  # DuckDB's own spelling of a limit
        scratch = duckdb.connect()
        scratch.execute(f"SET memory_limit = '{limit}'")
        return str(scratch.execute("SELECT current_setting('memory_limit')").fetchone()[0])

    monkeypatch.setattr(client_type, "execute_sql", recording)
    with database_kept_open(wh):  # one database instance across the steps, as a small package's load
        assert counts.row_counts(pipeline, ["items"]) == {"items": 3}
        assert counts.loaded_counts(pipeline, ["items"], list(info.loads_ids)) == {"items": 3}
        assert warehouse_facts.webhook_written_keys(pipeline, ["items"]) == {}
        assert limits and set(limits) == {shown(tuning.SCAN_MEMORY_LIMIT)}, limits
        limits.clear()
        assert crash_repair.dedupe_appended(pipeline) == {"items": 1}
        assert limits and set(limits) == {shown(tuning.REPAIR_MEMORY_LIMIT)}, limits
        # the repair's DELETE keeps undo data a small pool cannot spill: the database's limit
        assert len(write_limits) == 1 and float(write_limits[0].split()[0]) > 900, write_limits
        monkeypatch.setattr(client_type, "execute_sql", original)
        with pipeline.sql_client() as client:
            after = str(client.execute_sql("SELECT current_setting('memory_limit')")[0][0])
            kept = client.execute_sql(f"SELECT id, v FROM {client.make_qualified_table_name('items')} ORDER BY id")
            assert [tuple(r) for r in kept] == [(1, "a"), (2, "b")]
    assert after.endswith("MiB") and float(after.split()[0]) > 900, after  # the configured 1GB


def test_load_files_hold_at_most_25000_rows_and_every_row_loads(tmp_path, monkeypatch):
    """DuckDB holds a load job's rows uncompressed until it commits: a 50,000-row file of a wide
    table cost +46-54 MiB, the `large` load step's peak (docs/performance.md#memory). The writers
    rotate files
    at 25,000 rows, in extract and normalize, and every row still loads."""
    import dlt
    import pyarrow as pa
    import pyarrow.parquet as pq

    from creator_sync.sources.creator_platform.listing import BATCH_ROWS

    monkeypatch.chdir(tmp_path)  # no .dlt/ config here
    pipeline = build_pipeline(resolve_warehouse(duckdb=str(tmp_path / "w.duckdb")), fresh_load=True)
    n = 60_001
    table = pa.table({"id": pa.array(range(n), pa.int64()), "name": [f"c{i}" for i in range(n)]})
    # as the listings yield them: arrow tables of `BATCH_ROWS` rows
    items = [table.slice(start, BATCH_ROWS) for start in range(0, n, BATCH_ROWS)]
    pipeline.extract(dlt.resource(items, name="customers", write_disposition="append"))
    pipeline.normalize()
    package = pipeline.get_load_package_info(pipeline.list_normalized_load_packages()[0])
    jobs = [j for j in package.jobs["new_jobs"] if j.job_file_info.table_name == "customers"]
    rows = [pq.ParquetFile(j.file_path).metadata.num_rows for j in jobs]
    assert max(rows) <= 25_000 and sum(rows) == n, rows
    pipeline.load()
    with pipeline.sql_client() as client:
        assert client.execute_sql("SELECT count(*), count(DISTINCT id) FROM customers")[0] == (n, n)


def _rss_anon_kib() -> int:
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith("RssAnon:"):
                return int(line.split()[1])
    raise AssertionError("no RssAnon in /proc/self/status")


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or not ctypes.util.find_library("c"), reason="glibc heap"
)
def test_release_free_memory_returns_freed_heap_pages():
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    if not hasattr(libc, "malloc_trim"):
        pytest.skip("not glibc")
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    libc.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
    chunk = 16 * 1024  # below glibc's mmap threshold: these come from the heap
    blocks: list[int] = []
    guards: list[int] = []  # in use between the blocks: free() alone cannot shrink the heap
    for i in range(4096):  # 64 MiB
        blocks.append(libc.malloc(chunk))
        if i % 8 == 7:
            guards.append(libc.malloc(chunk + 4096))  # a size no earlier free chunk serves
    for block in blocks:
        libc.memset(block, 1, chunk)  # touched: resident
    for block in blocks:
        libc.free(block)
    before = _rss_anon_kib()
    release_free_memory()
    after = _rss_anon_kib()
    for guard in guards:
        libc.free(guard)
    assert before - after > 32 * 1024, (before, after)


def test_trimmed_heap_trims_while_the_block_runs_and_stops_after(monkeypatch):
    import threading
    import time

    import creator_sync.pipelines.process_tuning as process_tuning

    calls: list[int] = []
    monkeypatch.setattr(process_tuning, "_malloc_trim", lambda: calls.append)
    with process_tuning.trimmed_heap(every_s=0.01):
        time.sleep(0.2)
        assert any(t.name == "creator-sync-trim" for t in threading.enumerate())
    during = len(calls)
    time.sleep(0.1)
    assert during >= 3 and calls == [0] * during  # malloc_trim(0), and nothing after the block
    assert not any(t.name == "creator-sync-trim" for t in threading.enumerate())
    monkeypatch.setattr(process_tuning, "_malloc_trim", lambda: None)  # not glibc: the block just runs
    with process_tuning.trimmed_heap(every_s=0.01):
        assert not any(t.name == "creator-sync-trim" for t in threading.enumerate())


def test_a_scan_the_cap_is_too_small_for_runs_again_at_the_databases_limit(tmp_path, monkeypatch, caplog):
    """The cap only saves memory: a read that runs out of memory under it is repeated at the
    database's own limit, which then stays for the rest of the step, and the database's limit
    is back after it (a `large` sync failed after its load when a step ran out at 32MB,
    docs/performance.md#memory)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CREATOR_SYNC__DUCKDB_MEMORY_LIMIT", raising=False)
    wh = resolve_warehouse(duckdb=str(tmp_path / "w.duckdb"))
    pipeline = build_pipeline(wh, fresh_load=True)
    pipeline.run([{"id": 1}], table_name="items")
    # one 20 MB string: a result no pool of 2MB can hold, and no operator spills
    big = "SELECT length(string_agg(repeat('x', 200), '')) FROM range(100000)"
    with duckdb.connect() as scratch, scratch.cursor() as cur:
        cur.execute("SET memory_limit = '2MB'")
        with pytest.raises(duckdb.OutOfMemoryException):
            cur.execute(big).fetchall()
    caplog.set_level("DEBUG", logger="creator_sync.postload")
    with warehouse_sql.scan_client(pipeline, "2MB") as client:
        assert client.execute_sql(big)[0][0] == 20_000_000
        after_retry = str(client.execute_sql("SELECT current_setting('memory_limit')")[0][0])
    assert "repeated at" in caplog.text
    assert float(after_retry.split()[0]) > 900, after_retry  # the rest of the step: uncapped
    with pipeline.sql_client() as client:
        after = str(client.execute_sql("SELECT current_setting('memory_limit')")[0][0])
    assert float(after.split()[0]) > 900, after


def test_a_users_smaller_duckdb_limit_is_not_raised_by_the_scan_cap(tmp_path, monkeypatch):
    """The cap only lowers: with `duckdb_memory_limit` configured below it, the scans run at
    the user's limit."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CREATOR_SYNC__DUCKDB_MEMORY_LIMIT", "16MB")
    wh = resolve_warehouse(duckdb=str(tmp_path / "w.duckdb"))
    pipeline = build_pipeline(wh, fresh_load=True)
    pipeline.run([{"id": 1}], table_name="items")
    with database_kept_open(wh):
        with pipeline.sql_client() as client:
            configured = str(client.execute_sql("SELECT current_setting('memory_limit')")[0][0])
        with warehouse_sql.scan_client(pipeline) as client:
            inside = str(client.execute_sql("SELECT current_setting('memory_limit')")[0][0])
    assert configured == inside == "15.2 MiB", (configured, inside)  # DuckDB's 16MB


_ALLOCATORS_PROBE = r"""
import ctypes, os, sys, tempfile, threading
from creator_sync.pipelines.process_tuning import tune_allocators
tune_allocators()
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
start = threading.Barrier(16)
def work():
    start.wait()
    for _ in range(20_000):  # contention: glibc gives a thread that finds its arena busy another
        libc.free(libc.malloc(256))
threads = [threading.Thread(target=work) for _ in range(16)]
for t in threads: t.start()
for t in threads: t.join()
libc.fopen.restype = ctypes.c_void_p
libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
libc.fclose.argtypes = [ctypes.c_void_p]
path = os.path.join(tempfile.mkdtemp(), "info.xml")
fp = libc.fopen(path.encode(), b"w")
libc.malloc_info(0, fp)
libc.fclose(fp)
import pyarrow as pa
print(open(path).read().count("<heap nr="), pa.default_memory_pool().backend_name)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc heap")
@pytest.mark.parametrize("pool", [None, "system"])
def test_a_sync_keeps_two_malloc_arenas_and_gives_arrow_jemalloc_unless_told(pool, monkeypatch):
    import os
    import subprocess
    from pathlib import Path

    import creator_sync.pipelines.process_tuning as process_tuning

    if not hasattr(ctypes.CDLL(None), "malloc_info"):
        pytest.skip("not glibc")
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    if pool:
        env["ARROW_DEFAULT_MEMORY_POOL"] = pool  # the user's choice wins
    root = Path(process_tuning.__file__).resolve().parents[1]
    env["PYTHONPATH"] = str(root)
    out = subprocess.run([sys.executable, "-c", _ALLOCATORS_PROBE], env=env, cwd=root,
                         capture_output=True, text=True, check=True).stdout.split()
    assert int(out[0]) <= tuning.MALLOC_ARENAS, out
    assert out[1] == (pool or tuning.ARROW_POOL)
