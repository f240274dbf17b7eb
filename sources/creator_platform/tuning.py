"""Every performance knob of the source, with why it has its value (docs/performance.md#tuning).

The source's batch sizes, remembered pages and key sets. A value here was measured side by side
against its neighbours; the figures are in docs/performance.md, whose tuning table
tests/benchmarks/test_performance_doc.py holds to these values. The load's and the process's
knobs are the pipeline's: `pipelines/tuning.py`.

Settings a user may change (page size, concurrency) are not here: they are settings, declared
once in `config.SOURCE_SETTINGS`. The rate controller's constants are its algorithm and stay
beside it (`ratelimit.py`).
"""

from __future__ import annotations

from .config import by_key

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
HASHED_PAGE_ROWS_MAX = by_key("page_size").check.high

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
