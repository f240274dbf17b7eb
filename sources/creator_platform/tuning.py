"""Every performance knob of a sync, with why it has its value (docs/performance.md#tuning).

The source's batch sizes and key sets, the load's DuckDB settings, and the process's allocators
and garbage collector. A value here was measured side by side against its neighbours; the
figures are in docs/performance.md, whose tuning table tests/benchmarks/test_performance_doc.py
holds to these values. The module sits in the bottom layer, so the source, the pipeline and
the process set-up (`pipelines.process_tuning`) all read it from here.

Settings a user may change (page size, concurrency, DuckDB's memory limit) are not here: they
are settings (`settings.py`, `common.config`). The rate controller's constants are its algorithm
and stay beside it (`ratelimit.py`).
"""

from __future__ import annotations

from .settings import PAGE_SIZE_RANGE

# ------------------------------------------------------------------ extraction: rows in memory
# rows per arrow table handed to dlt: dlt's per-item schema work is per batch, not per page
# (docs/performance.md#cpu)
BATCH_ROWS = 5_000
# a page whose details carry more rows is normalised and batched in parts of about this many
# (whole records; a streamed line array in parts of this many lines): 5,000 held ~18 MiB more
# at `medium` (docs/performance.md#memory)
PAGE_PART_ROWS = 1_000
# rows the detail reads running ahead of normalisation carry at most: one payout ahead at
# `large` (~1,700 lines each), 16 reads at `small` (docs/performance.md#memory)
DETAIL_ROWS_AHEAD = 2 * PAGE_PART_ROWS
# weight of the latest read in the rows-per-detail-read average: a listing in date order reads
# ever bigger payouts, and the mean of all reads lagged behind them (docs/performance.md#memory)
DETAIL_RECENT_WEIGHT = 0.25
# a sparse link table's one-row arrow tables (~4 KiB each) are merged into one every this many
# pages, instead of thousands waiting for BATCH_ROWS at `large` (docs/performance.md#memory)
ARROW_PARTS_MAX = 64

# ------------------------------------------------------------------ the next run's unchanged rows
# pages of row hashes kept per listing: bounded whatever the data size
# (docs/performance.md#nothing-new)
HASHED_PAGES_MAX = 12
# a kept page's table with more rows (detail lines: thousands a payout at `large`) is not
# remembered: holding and hashing them cost a third more CPU (docs/performance.md#memory);
# the largest page size, so a listed table's page always is
HASHED_PAGE_ROWS_MAX = PAGE_SIZE_RANGE[1]

# ------------------------------------------------------------------ key sets (key_sets.py)
# integer keys gathered before they are merged into the bitmap chunks, in bulk; also the keys a
# set holds before it moves to a bitmap (numpy's import, ~0.15 s, is then worth it)
KEYS_PENDING_MAX = 4_096
# integer keys per bitmap chunk, as a power of two: 2**16 values, an 8 KiB bitmap, about a bit
# per id handed out in sequence instead of ~100 bytes a string (docs/performance.md#memory)
KEY_CHUNK_SHIFT = 16
# ids a listing's distinct-id count holds in a set (~0.5 MiB at most) before a bitmap: a
# nothing-new run's listings never import numpy (docs/performance.md#nothing-new)
ID_COUNT_SET_MAX = 8_192

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

# ------------------------------------------------------------------ the process (pipelines.process_tuning)
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
