"""Every performance knob of the load and of a sync's process, with why it has its value
(docs/performance.md#tuning).

The load's DuckDB and dlt settings, and the process's allocators and garbage collector
(`process_tuning.py` applies those). A value here was measured side by side against its
neighbours; the figures are in docs/performance.md, whose tuning table
tests/benchmarks/test_performance_doc.py holds to these values. The source's own knobs (batch
sizes, key sets) are in `sources/creator_platform/tuning.py`.

Settings a user may change (DuckDB's memory limit, threads) are not here: they are the app's
settings, declared once in `common.settings.APP_SETTINGS`.
"""

from __future__ import annotations

# ------------------------------------------------------------------ the load (DuckDB, dlt)
# rows per extract/load file: DuckDB holds a job's rows uncompressed until its commit; 50,000
# cost +46-54 MiB, 25,000 +31-37; fewer cost a job and a row group (122,880 rows) more
# (docs/performance.md#memory)
FILE_MAX_ITEMS = 25_000
# a load package up to this size (its files, compressed; `small`'s first load is ~6.8 MB)
# loads through one open database (-8 % CPU, +16 MiB at `small`); bigger ones close the file
# per job, so memory stays flat (docs/performance.md#cpu)
HOLD_OPEN_MAX_BYTES = 16 * 1024 * 1024
# while the database is held open, a commit leaving this much log checkpoints, or each job's
# rows stay in memory (+250 MiB in a nothing-new run at `small`, docs/performance.md#memory)
WAL_CHECKPOINT = "256KB"
# row-group merges at each checkpoint while a sync fills a new warehouse (it appends and
# deletes nothing): -50 MiB at `medium`, -25 % load CPU (docs/performance.md#memory)
FRESH_LOAD_VACUUM_TASKS = 0
# DuckDB's buffer pool for the table scans around a load: uncapped they kept every block they
# read (+150 and +480 MiB at `large`); capped, +32 and +75-100 (docs/performance.md#memory)
SCAN_MEMORY_LIMIT = "32MB"
# the duplicate check after a killed run hashes every key of a table: it failed at 16MB at
# `large` (docs/performance.md#memory)
REPAIR_MEMORY_LIMIT = "64MB"

# ------------------------------------------------------------------ the process (process_tuning.py)
# glibc's free pages go back to the OS this often during extraction: arenas grew 67 -> 196 MiB
# in 5 minutes at `large` with 40-90 MiB in use (docs/performance.md#memory)
TRIM_EVERY_S = 10.0
# allocations between the cyclic GC's young collections (CPython's default: 700): most pages
# are freed by reference counting first; 2-3 s of a ~20 s `small` sync's CPU down to ~1.25 s,
# for +5-12 MiB (docs/performance.md#cpu)
GC_YOUNG_THRESHOLD = 10_000
# glibc malloc arenas at most (default: 8 per core): ~20 HTTP threads each kept an arena of
# freed page bodies (docs/performance.md#memory)
MALLOC_ARENAS = 2
# arrow's memory pool (a user's ARROW_DEFAULT_MEMORY_POOL wins): the default held ~60 MiB of
# RSS for ~10 MiB allocated; jemalloc is purged before the load (docs/performance.md#memory)
ARROW_POOL = "jemalloc"
