"""How a sync's process is tuned, once, before and around its steps: allocators, heap trimming,
CPython's cyclic GC, and dlt's repeated lookups remembered (docs/performance.md#cpu and #memory).

The values and why each has its own: `tuning.py`. The factory applies
the set-up when it builds a pipeline (`tune_process`); the sync trims the heap while it extracts
(`trimmed_heap`) and hands freed memory back before the load (`release_free_memory`).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import logging
import os
import sys
from collections.abc import Iterator
from typing import Any

from creator_sync.common.repeating import every

from .tuning import ARROW_POOL, GC_YOUNG_THRESHOLD, MALLOC_ARENAS, TRIM_EVERY_S

log = logging.getLogger("creator_sync.process_tuning")
_M_ARENA_MAX = -8  # glibc's mallopt parameter (malloc.h)


def tune_process() -> None:
    """Everything a sync's process sets once, before its threads start (idempotent)."""
    tune_allocators()
    remember_secret_hints()
    remember_type_hints()
    settle_gc()


def release_free_memory() -> None:
    """Give the C heap's free pages back to the OS before the load step.

    Extraction leaves ~25 MiB (medium) of freed glibc and arrow memory mapped; DuckDB allocates
    with its own jemalloc and cannot reuse it, so without this the load's peak stacks on top of
    it (docs/performance.md#memory). A few milliseconds, once per sync; a no-op where glibc is
    not the libc.
    """
    pa = sys.modules.get("pyarrow")  # not imported: this run built no arrow data to release
    try:
        if pa is not None:
            pa.default_memory_pool().release_unused()
    except Exception:  # an arrow build without the call: nothing to release there
        log.debug("arrow pool: release_unused not available")
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def _libc(name: str) -> Any:
    """A glibc function (`malloc_trim`, `mallopt`), or None where the libc has none."""
    try:  # the symbols the process already has: no `ldconfig` run to find libc
        return getattr(ctypes.CDLL(None), name, None)
    except OSError:
        return None


def _malloc_trim() -> Any:
    return _libc("malloc_trim")


def tune_allocators() -> None:
    """Keep a long extraction's free-but-held heap memory small, before its threads start.

    At `large` extraction sat at 450-510 MiB RSS for 35 minutes although Python's live data is
    ~70 MiB (tracemalloc): the rest was allocator memory. ~20 HTTP threads each got a glibc
    arena (up to 8 per core) that kept the pieces of the page bodies it parsed, and glibc's
    dynamic mmap threshold moved those bodies (100 KiB-1 MiB) from mmap into the arenas after
    the first ones were freed; arrow's default pool (mimalloc) held ~60 MiB of RSS for ~10 MiB
    allocated. Two arenas (`MALLOC_ARENAS`), a fixed 128 KiB threshold (bodies are mapped and
    unmapped) and jemalloc for arrow (`ARROW_POOL`, which `release_free_memory` purges before
    the load) took 90 MiB off the first minutes' level at `large` (docs/performance.md#memory).
    The fixed threshold is left out: it cost ~1 s of system CPU in a `small` sync (+3.5 %), and
    CPU against the peer has no margin (docs/performance.md#figures). Once per process; a no-op
    where glibc is not the libc.
    """
    if getattr(tune_allocators, "done", False):
        return
    tune_allocators.done = True  # type: ignore[attr-defined]
    if "pyarrow" not in sys.modules:  # read once, when arrow makes its default pool
        os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", ARROW_POOL)
    mallopt = _libc("mallopt")
    if mallopt is not None:
        mallopt(_M_ARENA_MAX, MALLOC_ARENAS)


@contextlib.contextmanager
def trimmed_heap(every_s: float = TRIM_EVERY_S) -> Iterator[None]:
    """Hand glibc's free pages back to the OS every `every_s` seconds while the block runs.

    During extraction the threads' malloc arenas keep what page bodies and parsed JSON freed:
    at `large` they grew 67 -> 196 MiB in 5 minutes with 40-90 MiB in use, and trimming every
    40 s kept RSS ~75 MiB lower after 4 minutes (docs/performance.md#memory). A trim takes
    milliseconds and runs without the GIL (ctypes releases it). Arrow's pool is not purged here, only once
    before the load (`release_free_memory`): purging jemalloc every 10 s cost ~+0.9 s CPU in
    a `small` sync for no lower peak; its own decay hands pages back (docs/performance.md#memory).
    """
    trim = _malloc_trim()
    if trim is None:  # not glibc: nothing to trim there
        yield
        return
    with every(every_s, lambda: trim(0), name="creator-sync-trim"):
        yield


def remember_secret_hints() -> None:
    """Answer dlt's "is this type hint a secret?" once per hint instead of once per lookup.

    dlt resolves a configuration every time it opens a file writer, a destination client or a
    load job, and asks that question for every key in every provider and section it tries:
    ~28,000 times in a nothing-new sync at `small`, about half of the ~1,100 resolutions' cost
    (docs/performance.md#nothing-new). The answer depends on the hint alone, so it is kept per
    hint. Idempotent; a dlt that renamed the function is left as it is.
    """
    from dlt.common.configuration import resolve
    from dlt.common.configuration.providers import environ
    from dlt.common.configuration.specs import base_configuration

    original = getattr(base_configuration, "is_secret_hint", None)
    if original is None or getattr(original, "remembered", False):
        return
    known: dict[Any, bool] = {}

    def is_secret_hint(hint: Any) -> bool:
        try:
            return known[hint]
        except KeyError:
            answer = known[hint] = original(hint)
            return answer
        except TypeError:  # an unhashable hint: ask every time
            return bool(original(hint))

    is_secret_hint.remembered = True  # type: ignore[attr-defined]
    for module in (base_configuration, resolve, environ):
        if getattr(module, "is_secret_hint", None) is original:
            module.is_secret_hint = is_secret_hint  # type: ignore[attr-defined]


def remember_type_hints() -> None:
    """Resolve each TypedDict's type hints once in dlt's `validate_dict`, not per call.

    dlt validates a table schema for every item a resource yields (and schemas at each step),
    and each validation calls `typing.get_type_hints` for the table and again for each of its
    columns (dlt's own TODO says "very slow ... should cache"): ~4.8 ms per item of a
    21-column table, 0.6 ms with the hints kept. Hints of a class in its module's namespace do
    not change after import, so they are kept per class when asked in its own module's
    namespace (what `validate_dict` passes); other calls pass through.
    `validate_dict` only reads the result. Idempotent; a dlt without the name is left alone.
    """
    from dlt.common import validation

    original = getattr(validation, "get_type_hints", None)
    if original is None or getattr(original, "remembered", False):
        return
    known: dict[Any, Any] = {}

    def get_type_hints(obj: Any, globalns: Any = None, localns: Any = None,
                       include_extras: bool = False) -> Any:
        module = sys.modules.get(getattr(obj, "__module__", None) or "")
        if localns is not None or include_extras or globalns is not getattr(module, "__dict__", None):
            return original(obj, globalns=globalns, localns=localns, include_extras=include_extras)
        try:
            return known[obj]
        except KeyError:
            hints = known[obj] = original(obj, globalns=globalns)
            return hints
        except TypeError:  # unhashable: resolve every time
            return original(obj, globalns=globalns)

    get_type_hints.remembered = True  # type: ignore[attr-defined]
    validation.get_type_hints = get_type_hints  # type: ignore[attr-defined]


def settle_gc() -> None:
    """Keep CPython's cyclic garbage collector from re-walking what a sync never frees.

    A full `small` sync parses ~2,000 JSON pages into millions of short-lived dicts and lists:
    with the default thresholds the collector ran ~1,600 young, ~150 middle and 13 full
    collections, each full one walking every object the imports made (dlt, pyarrow, duckdb,
    sqlglot): 2.1-3.2 s of a ~20 s sync's CPU. Once imports are done, the objects alive are
    moved to the permanent generation (`gc.freeze`: never walked again), and the young
    threshold is raised so that most pages are freed by reference counting before a
    collection sees them: ~1.25 s left. Only the young generations are collected first
    (2 ms): a full collection there costs ~0.1 s, a nothing-new sync's 3 %, to free ~40
    import-time objects. Memory: cycles wait a little longer (peak RSS +5-12 MiB at `small`).
    Once per process.
    """
    if getattr(settle_gc, "done", False):
        return
    settle_gc.done = True  # type: ignore[attr-defined]
    gc.collect(1)
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, middle, old)
