"""`creator-sync sync`: one locked, resumable run of the source into the warehouse.

Steps: lock the pipeline -> restore state from the destination -> finish any pending load
package left by a crashed run -> extract (API; the source flags deleted rows and writes the
run's bookkeeping, `sync_resources`, in the same load) -> normalise -> load (under the warehouse
lock) -> restore fresher pushes -> revoke the token -> print a summary.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import signal
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from creator_sync.common.duckdb_names import no_empty_file_left
from creator_sync.common.locking import pipeline_lock
from creator_sync.common.settings import BadSetting, checked
from creator_sync.common.terminal import (
    EXIT_SIGNAL_BASE,
    HANDLED_SIGNALS,
    chain,
    describe,
    fail,
    note_signal,
    received_signal,
    reported_failures,
    setup_logging,
    signal_name,
)
from creator_sync.common.warehouse import Warehouse, warehouse_of
from creator_sync.common.warehouse_db import writer_lock
from creator_sync.sources.creator_platform import (
    RESOURCES,
    SOURCE_SECTION,
    LimiterClosed,
    Outcome,
    RateLimiter,
    RunStats,
    Runtime,
    Secret,
    creator_platform_source,
    lookback_days,
    quiet_hint_merge_warnings,
    sync_run,
)

from .command_settings import SOURCE_KEYS, by_key, check_base_url, option, warn_unknown_keys
from .command_settings import settings as command_settings
from .counts import loaded_counts, row_counts
from .crash_repair import dedupe_appended
from .factory import build_pipeline
from .kept_open import database_kept_open, package_bytes
from .postload import finish_sync
from .process_tuning import release_free_memory, trimmed_heap
from .progress import progress_reporter
from .tuning import HOLD_OPEN_MAX_BYTES
from .warehouse_facts import kept_tables, webhook_written_keys
from .warehouse_sql import data_tables

log = logging.getLogger("creator_sync.sync")


# the `[creator_sync]` keys a sync reads besides the source's own
SYNC_KEYS = ("checkpoint_every", "max_duration", "deleted_people", "erasure_salt")


@dataclass(kw_only=True)
class SyncSettings:
    """Everything one sync needs, resolved and checked (flags > env > .dlt files > defaults):
    the source's arguments, the app's keys it reads (`SYNC_KEYS`) and the run's own flags.
    Built by `resolve_settings` (the CLI) or `sync_settings` (a host program, the tests)."""

    # `creator_platform_source`'s configuration arguments, by key, each checked by its kind
    # (`SOURCE_KEYS`); a secret held as a `Secret`
    source: dict[str, Any] = field(repr=False)
    warehouse: Warehouse
    checkpoint_every: float
    max_duration: float | None
    deleted_people: str
    erasure_salt: str | None = field(repr=False)
    full_refresh: bool = False
    verify: bool = True
    lock_timeout: float = 0.0
    lookback_days: dict[str, float] = field(default_factory=dict)  # resource -> days

    def __post_init__(self) -> None:
        """A secret given as text (a test, a host program) is held as a `Secret` all the same."""
        for item in SOURCE_KEYS:
            value = self.source.get(item.key)
            if item.secret and not isinstance(value, Secret):
                self.source[item.key] = Secret(value or "")

    def __repr__(self) -> str:  # never a secret; short
        return (f"SyncSettings(base_url={self.source.get('base_url')!r}, "
                f"client_id={self.source.get('client_id')!r}, warehouse={self.warehouse!r})")


def sync_settings(*, warehouse: Warehouse, full_refresh: bool = False, verify: bool = True,
                  lock_timeout: float = 0.0, lookback_days: dict[str, float] | None = None,
                  **values: Any) -> SyncSettings:
    """`SyncSettings` from a host program's values by key (`base_url=...`, `page_size=...`,
    `checkpoint_every=...`: the demo, the tests), each checked once by its kind (a `Secret` is
    taken as it is), each setting not given at its default (a source key's: the def's)."""
    unknown = set(values) - {s.key for s in SOURCE_KEYS} - set(SYNC_KEYS)
    if unknown:
        raise TypeError(f"not settings of a sync: {', '.join(sorted(unknown))}")
    pick = {item.key: values[item.key] if isinstance(values.get(item.key), Secret)
            else checked(item, values.get(item.key), f"argument={item.key}")
            for item in (*SOURCE_KEYS, *(by_key(key) for key in SYNC_KEYS))}
    return SyncSettings(
        source={item.key: pick[item.key] for item in SOURCE_KEYS},
        **{key: pick[key] for key in SYNC_KEYS}, warehouse=warehouse,
        full_refresh=full_refresh, verify=verify, lock_timeout=lock_timeout,
        lookback_days=lookback_days or {},
    )


@dataclass
class SyncResult:
    tables: dict[str, tuple[int, int]]  # table -> (new rows, updated rows)
    stats: RunStats
    load_ids: list[str]
    deleted: dict[str, int]
    sites: list[str]
    plans: dict[str, str]
    warehouse: Warehouse
    pending_loaded: int = 0
    outcomes: dict[str, Outcome] = field(default_factory=dict)  # resource -> how it ended
    notices: list[str] = field(default_factory=list)
    without_lines: dict[str, int] = field(default_factory=dict)  # resource -> detail reads

    @property
    def failed(self) -> dict[str, str]:
        """Resources that failed in this run -> why (the others were loaded and committed)."""
        return {n: o.reason or "failed" for n, o in self.outcomes.items() if o.status == "failed"}

    @property
    def partial(self) -> dict[str, str]:
        """Resources this run stopped before their listing completed -> what is left."""
        return {n: o.reason or "" for n, o in self.outcomes.items() if o.status == "partial"}


def resolve_settings(**flags: Any) -> SyncSettings:
    """Merge CLI flags (by setting key; None = not given) with dlt config/secrets and defaults,
    each checked once by its kind (`common.settings.Settings`); a bad one is a usage error
    naming the flag, variable or key it came from. `full_refresh` and `lock_timeout` are flags
    of this run only."""
    full_refresh = bool(flags.pop("full_refresh", False))
    lock_timeout = float(flags.pop("lock_timeout", 0) or 0)
    conf = command_settings(**flags)
    values = {item.key: conf[item.key] for item in SOURCE_KEYS}
    if not values["base_url"]:
        raise BadSetting("no base URL: run `creator-sync init` once, or pass --base-url or set "
                         "base_url", f"key={SOURCE_SECTION}.base_url")
    if not values["client_id"]:
        raise BadSetting("no client id: pass --client-id or set client_id", f"key={SOURCE_SECTION}.client_id")
    if not values["client_secret"]:
        raise BadSetting(
            "no client secret: set SOURCES__CREATOR_PLATFORM__CLIENT_SECRET or "
            "[sources.creator_platform] client_secret in .dlt/secrets.toml (or --client-secret)",
            f"key={SOURCE_SECTION}.client_secret",
        )
    check_base_url(conf)
    if lock_timeout < 0:
        raise BadSetting(f"--lock-timeout must be at least 0, got {lock_timeout:g}", "flag=--lock-timeout")
    return SyncSettings(
        source=values, **{key: conf[key] for key in SYNC_KEYS},
        warehouse=warehouse_of(conf), full_refresh=full_refresh, lock_timeout=lock_timeout,
        lookback_days=lookback_days(),
    )


def source_arguments(settings: SyncSettings) -> dict[str, Any]:
    """`creator_platform_source`'s arguments: a sync's settings of its section, every one
    explicit (they are resolved and checked already: dlt must not look them up again, the
    source need not check them again: `Runtime(checked=True)`). The CLI builds the source
    through the signature a user's dlt script calls."""
    out: dict[str, Any] = {}
    for key, value in settings.source.items():
        if isinstance(value, Secret):
            value = value.reveal() or None
        elif isinstance(value, tuple):
            value = list(value)
        out[key] = value
    return {**out, "full_refresh": settings.full_refresh, "lookback_days": settings.lookback_days,
            "deleted_people": settings.deleted_people}


KILL_ENV = "CREATOR_SYNC_KILL_AT"
HOLD_WATCH_S = 0.2  # how often a round looks whether a 429 hold must be cut (RunClock)


def _kill_point(name: str) -> None:
    """Crash drills: `CREATOR_SYNC_KILL_AT=<step>` SIGKILLs the process at that step."""
    if os.environ.get(KILL_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)


def _page_kill_hook() -> Callable[[str, int], None] | None:
    """Crash drills: `CREATOR_SYNC_KILL_AT=page:<resource>:<n>` SIGKILLs mid-extract; no hook
    (nothing in the page loop) otherwise."""
    where = os.environ.get(KILL_ENV, "")
    if not where.startswith("page:"):
        return None
    return lambda resource, number: _kill_point(f"page:{resource}:{number}")


def _warehouse_guard(warehouse: Warehouse) -> contextlib.AbstractContextManager[None]:
    """The writer lock the webhook loader takes too (DuckDB's file, PostgreSQL's advisory)."""
    return writer_lock(warehouse)


def run_sync(
    settings: SyncSettings, *, show_progress: bool | None = None, transport: Any = None,
    on_locked: Callable[[], None] | None = None,
) -> SyncResult:
    """Run one sync. Raises CreatorPlatformError / LockTimeout / dlt errors on failure.

    `transport` (an httpx transport) is for tests that serve the API in memory. `on_locked`
    runs once the pipeline lock is held (the CLI opens its log there, never before).
    """
    wh = settings.warehouse
    quiet_hint_merge_warnings()
    with pipeline_lock(wh.pipelines_dir, wh.pipeline_name, timeout=settings.lock_timeout):
        if on_locked is not None:
            on_locked()
        # a new warehouse (or a full refresh) is filled by appends: see build_pipeline
        fresh = settings.full_refresh or (wh.duckdb_path is not None and not Path(wh.duckdb_path).exists())
        pipeline = build_pipeline(wh, fresh_load=fresh)
        if not destination_unchanged(wh, pipeline):
            with _warehouse_guard(wh), database_kept_open(wh):
                pipeline.sync_destination()
        pending_loaded = finish_pending(pipeline, wh)
        clock = RunClock(settings.checkpoint_every, settings.max_duration,
                         RateLimiter(settings.source["rate_limit"],
                                     adaptive=settings.source["adaptive_rate"]))
        result = SyncResult(tables={}, stats=RunStats(), load_ids=[], deleted={}, sites=[],
                            plans={}, warehouse=wh, pending_loaded=pending_loaded)
        left: tuple[str, ...] | None = settings.source["resources"]
        with clock.signals():
            while True:  # one round per checkpoint: extract, normalise, load, commit state
                clock.next_round()
                outcomes = _sync_round(settings, pipeline, result, clock, left,
                                       show_progress=show_progress, transport=transport)
                result.outcomes.update(outcomes)
                partial = tuple(n for n, o in outcomes.items() if o.status == "partial")
                if not partial or clock.spent() is not None:
                    break
                left = partial
        note_destination(wh, pipeline)
    if clock.signum is not None:
        raise CheckpointedStop(clock.signum, kept_line(result))
    return result


class RunClock:
    """When a sync commits what it read (`checkpoint_every` seconds of reading), when it stops
    (`max_duration` seconds after it began) and whether a signal asked it to stop."""

    def __init__(self, checkpoint_every: float, max_duration: float | None,
                 limiter: RateLimiter) -> None:
        self.began = time.monotonic()
        self.every = checkpoint_every
        self.budget = max_duration
        self.round_end = self.began
        self.rounds = 0
        self.signum: int | None = None
        self.limiter = limiter  # one for every round: what it learnt of the limit stays
        # a round is building its source (token, site discovery) and reads nothing yet: a
        # signal then closes the limiter (during the extract, listings stop by `verdict`)
        self.starting = False

    def next_round(self) -> None:
        self.rounds += 1
        self.round_end = time.monotonic() + self.every

    @contextlib.contextmanager
    def round_start(self) -> Iterator[None]:
        """A later round builds its source (token, site discovery) and may wait there on a
        429 hold it learnt: a signal (see `signals`) or the budget's end closes the limiter
        then, so the waiting requests are refused instead of held past the budget."""
        self.starting = self.rounds > 1  # (a first round has seen no 429 to wait on)
        timer = None
        if self.starting and self.budget is not None:
            left = self.began + self.budget - time.monotonic()
            timer = threading.Timer(max(0.0, left), self.limiter.close)
            timer.daemon = True
            timer.start()
        try:
            yield
        finally:
            self.starting = False
            if timer is not None:
                timer.cancel()

    @contextlib.contextmanager
    def holds_watched(self, went_forward: Callable[[], bool]) -> Iterator[None]:
        """While a round reads: a 429 hold delays neither a checkpoint nor a stop. Every
        `HOLD_WATCH_S`, once a signal came the limiter closes; once the budget is spent, or a
        checkpoint is due and the round `went_forward()`, the requests a 429 holds are dropped
        (`RateLimiter.drop_held`): the listings that asked stop at their place, and read those
        pages again next round or run. Without it, anything waiting on the hold (a change feed,
        a window, the payouts path) kept the round from committing until the platform's
        window ended. (The budget leaves the limiter open: the customers named by new money
        are still read after the extract.)"""
        done = threading.Event()

        def watch() -> None:
            while not done.wait(HOLD_WATCH_S):
                if self.spent() == "signal":
                    self.limiter.close()
                    return
                if self.spent() is not None or (
                        self.verdict() == "checkpoint" and went_forward()):
                    self.limiter.drop_held()

        watcher = threading.Thread(target=watch, name="hold-watch", daemon=True)
        watcher.start()
        try:
            yield
        finally:
            done.set()
            watcher.join()

    def spent(self) -> str | None:
        """"signal" or "budget" once the run must stop reading."""
        if self.signum is not None:
            return "signal"
        if self.budget is not None and time.monotonic() - self.began >= self.budget:
            return "budget"
        return None

    def verdict(self) -> str | None:
        """What a listing is told after each page (`Runtime.stop`)."""
        if self.spent() is not None:
            return "stop"
        return "checkpoint" if time.monotonic() >= self.round_end else None

    @contextlib.contextmanager
    def signals(self) -> Iterator[None]:
        """SIGINT/SIGTERM stop the reading; what was read is committed, then the run ends
        (`CheckpointedStop`). A second signal exits at once. Main thread only (else nothing)."""

        def on_signal(signum: int, _frame: Any) -> None:
            if self.signum is not None:
                os._exit(EXIT_SIGNAL_BASE + signum)
            self.signum = signum
            note_signal(signum)
            if self.starting:  # a round's first requests (its sites) may wait on a 429 hold:
                # refused now, not when the hold ends; from a thread, since the handler may
                # have interrupted this thread inside the limiter's lock
                threading.Thread(target=self.limiter.close, daemon=True).start()
            log.warning("%s: stopping the reading, committing what was read",
                        signal.Signals(signum).name)

        previous = {}
        try:
            for signum in HANDLED_SIGNALS:
                if signal.getsignal(signum) is not signal.SIG_IGN:
                    previous[signum] = signal.signal(signum, on_signal)
        except ValueError:  # not the main thread: the host handles signals
            previous = {}
        try:
            yield
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)


class CheckpointedStop(Exception):
    """A signal stopped the sync after it committed what it read; `kept` says what."""

    def __init__(self, signum: int, kept: str) -> None:
        super().__init__(kept)
        self.signum = signum
        self.kept = kept


def kept_line(result: SyncResult) -> str:
    """What a stopped run kept, in words."""
    partial = result.partial
    rows = sum(new + updated for new, updated in result.tables.values())
    done = [n for n, o in result.outcomes.items() if o.status == "synced"]
    text = f"{rows} row(s) read by this run are loaded ({len(done)} resource(s) complete)"
    if partial:
        text += f"; the next sync goes on with {', '.join(partial)}"
    return text


def _sync_round(
    settings: SyncSettings, pipeline: Any, result: SyncResult, clock: RunClock,
    resources: tuple[str, ...] | None, *, show_progress: bool | None, transport: Any,
) -> dict[str, Outcome]:
    """One round: extract until the checkpoint (or the end), normalise, load with the state,
    finish; `result` gains its counts. Returns each resource's outcome in this round."""
    wh = settings.warehouse
    kept: frozenset[str] | None = None
    pushed: dict[str, frozenset[str]] = {}
    if wh.destination == "duckdb":  # append loads of new tables (crash repair is DuckDB SQL)
        dropped = ((settings.source["resources"] or tuple(RESOURCES))
                   if settings.full_refresh and clock.rounds == 1 else ())
        with _warehouse_guard(wh), database_kept_open(wh):  # two reads, one open of the file
            kept = kept_tables(pipeline, dropped)
            pushed = webhook_written_keys(pipeline, kept)
    stats = result.stats  # one set of counters across rounds (progress, summary)
    args = source_arguments(settings)
    args["resources"] = list(resources) if resources is not None else args["resources"]
    # a full refresh drops and restarts in its first round; later rounds go on from the
    # places the first one kept (the dropped state left every other listing a first sync)
    args["full_refresh"] = settings.full_refresh and clock.rounds == 1
    with progress_reporter(stats, enabled=show_progress), trimmed_heap():
        try:
            with clock.round_start():
                source = creator_platform_source(
                    **args, kept_tables=kept, webhook_written_keys=pushed, host=Runtime(
                        stats=stats, transport=transport, verify=settings.verify,
                        on_page=_page_kill_hook(), stop=clock.verdict, limiter=clock.limiter,
                        checked=True, warehouse_lock=lambda: _warehouse_guard(wh),
                        reads_held=False))  # it passes what it read (DuckDB), else skips none
        except Exception as exc:
            if clock.spent() is None or not any(isinstance(e, LimiterClosed) for e in chain(exc)):
                raise
            source = None  # its sites were refused: the source closed its session
        if source is None or clock.spent() is not None:
            # a signal or the budget's end before this round read anything: the rounds before
            # it committed what they read, this one has nothing to commit
            if source is not None:
                sync_run(source).close()
            log.info("stopping before the round's first listing")
            return {}
        run = sync_run(source)
        try:
            with clock.holds_watched(lambda: run.report.advanced > 0):
                # (the customers named by new money are re-read within it, by a resource of
                # the source; a budget still re-reads them, a signal leaves them for next run)
                pipeline.extract(
                    source,
                    refresh="drop_resources" if settings.full_refresh and clock.rounds == 1 else None,
                    workers=max(2, settings.source["concurrency"]),
                )
            if clock.spent() is not None:  # stopping: reads still waiting are not sent
                clock.limiter.close()
            else:  # a checkpoint: the reads its listings abandoned are not sent either
                clock.limiter.cut_waits()
        finally:
            run.close()  # revoke the session before the long local steps
    report = run.report
    _kill_point("extracted")
    log.info("extracted: %s requests, %s retries", stats.requests, stats.retries)
    release_free_memory()  # the load's DuckDB memory must not stack on extraction's leftovers
    pipeline.normalize()
    _kill_point("normalized")
    # nothing to load (every row read was stored unchanged, no state moved): no load step
    to_load = bool(pipeline.list_normalized_load_packages())
    # only tables this run extracted rows into can change by its load
    tables = [t for t in data_tables(pipeline) if stats.rows.get(t)] if to_load else []
    # a small package (a scheduled incremental run, a small account's first sync) loads
    # through one open database
    small = package_bytes(wh) <= HOLD_OPEN_MAX_BYTES
    with _warehouse_guard(wh), database_kept_open(wh, enabled=small, create=True):
        before = row_counts(pipeline, tables)
        info = pipeline.load() if to_load else NOTHING_LOADED
        _kill_point("loaded")
        finished = finish_sync(pipeline, source, info, lock=False,
                               erasure_salt=settings.erasure_salt)
        after = row_counts(pipeline, tables)
        loaded = loaded_counts(pipeline, tables, finished.load_ids)
    result.load_ids += finished.load_ids
    for table, count in finished.deleted.items():
        result.deleted[table] = result.deleted.get(table, 0) + count
    if finished.erased:  # ([creator_sync] deleted_people = "erase")
        result.notices.append("deleted people: personal fields erased in " + ", ".join(
            f"{table} {count}" for table, count in sorted(finished.erased.items())))
    for table in sorted(set(stats.rows) | set(loaded)):
        new = max(0, after.get(table, 0) - before.get(table, 0))
        was_new, was_updated = result.tables.get(table, (0, 0))
        result.tables[table] = (was_new + new, was_updated + max(0, loaded.get(table, 0) - new))
    result.sites = result.sites or report.sites
    result.plans.update(report.plans)
    result.notices += [n for n in report.notices if n not in result.notices]
    for name, count in report.without_lines.items():
        result.without_lines[name] = result.without_lines.get(name, 0) + count
    return dict(report.outcomes)


NOTHING_LOADED = types.SimpleNamespace(loads_ids=[])  # `finish_sync`'s load info of no load
SYNCED_MARK = "destination-synced.json"


def _destination_mark(wh: Warehouse, pipeline: Any) -> dict[str, Any] | None:
    """What a DuckDB warehouse and the local state are now: the file's size and modification
    time (any write changes them: another sync, models, the webhook loader, a restored copy)
    and a digest of the local state file. None where that cannot tell (another destination,
    no file, a WAL left by a writer that did not close).

    The state file's bytes, not `pipeline.state`: dlt decodes the whole state on each read
    (~5 ms at `small`, it walks every string), and this runs twice a sync; any change of the
    state changes its file.
    """
    path = wh.duckdb_path
    if wh.destination != "duckdb" or not path or Path(f"{path}.wal").exists():
        return None
    try:
        st = os.stat(path)
        state = (Path(pipeline.working_dir) / pipeline.STATE_FILE).read_bytes()
    except Exception:  # no file, or no local state yet: sync
        return None
    return {"path": str(Path(path).resolve()), "dataset": wh.dataset, "size": st.st_size,
            "mtime_ns": st.st_mtime_ns, "state_sha256": hashlib.sha256(state).hexdigest()}


def destination_unchanged(wh: Warehouse, pipeline: Any) -> bool:
    """Is the warehouse as this pipeline's last successful sync left it, with the same local
    state? Then dlt's `sync_destination` (restore state and schemas from the destination,
    ~0.3 s: a destination client, its config, a query) has nothing to restore."""
    mark = _destination_mark(wh, pipeline)
    if mark is None:
        return False
    try:
        noted = json.loads((Path(wh.pipelines_dir) / wh.pipeline_name / SYNCED_MARK).read_text())
    except (OSError, ValueError):
        return False
    return noted == mark


def note_destination(wh: Warehouse, pipeline: Any) -> None:
    """After a successful sync (the file closed): the mark `destination_unchanged` compares."""
    target = Path(wh.pipelines_dir) / wh.pipeline_name / SYNCED_MARK
    mark = _destination_mark(wh, pipeline)
    with contextlib.suppress(OSError):
        if mark is None:
            target.unlink(missing_ok=True)
        else:
            target.write_text(json.dumps(mark))


def finish_pending(pipeline: Any, wh: Warehouse) -> int:
    """Load packages a killed run left behind (they carry their state), before new work."""
    if not pipeline.has_pending_data:
        return 0
    pipeline.normalize()
    with _warehouse_guard(wh):
        info = pipeline.load()
        repaired = dedupe_appended(pipeline)  # a job re-run after the kill appended twice
        if repaired:
            log.warning("removed rows loaded twice by an interrupted run: %s", repaired)
    return len(info.loads_ids)


# ------------------------------------------------------------------ CLI
def format_summary(result: SyncResult) -> str:
    s = result.stats
    if any(new or updated for new, updated in result.tables.values()):
        lines = [f"{'table':<34}{'new':>10}{'updated':>10}"]
        for table, (new, updated) in result.tables.items():
            lines.append(f"{table:<34}{new:>10}{updated:>10}")
    else:  # no empty table under a header: say it
        lines = ["nothing new: no record was added or changed since the last sync"]
    deleted = sum(result.deleted.values())
    lines.append(
        f"sites: {len(result.sites)}  requests: {s.requests}  retries: {s.retries}  "
        f"429s: {s.throttled}  marked deleted: {deleted}  time: {s.elapsed:.1f}s"
    )
    if s.rate is not None:
        lines.append(s.rate.describe())
    if result.pending_loaded:
        lines.append(f"finished {result.pending_loaded} load package(s) left by an interrupted run")
    lines += result.notices
    for name, count in result.without_lines.items():
        lines.append(f"{name}: {count} detail read(s) carried no lines (no `transactions`): "
                     "their lines are not in the warehouse")
    if result.partial:
        lines.append(f"partial: stopped before {len(result.partial)} resource(s) completed; the "
                     "next sync goes on from there")
        lines += [f"  {name}: {left}" for name, left in result.partial.items()]
    target = result.warehouse.duckdb_path or result.warehouse.destination
    lines.append(f"warehouse: {target} (dataset {result.warehouse.dataset})")
    return "\n".join(lines)


def one_line(exc: BaseException, verbose: bool = False) -> str:
    """The most specific message in an exception chain, on one line."""
    return describe(exc, verbose)


def pending_packages(wh: Warehouse) -> dict[str, int]:
    """Load packages of this pipeline not loaded yet, per stage folder (what a stopped run kept)."""
    root = Path(wh.pipelines_dir) / wh.pipeline_name
    out = {}
    for stage, folder in (("extracted", "normalize/extracted"), ("normalized", "load/new"),
                          ("loading", "load/normalized")):
        path = root / folder
        count = sum(1 for p in path.iterdir() if p.is_dir()) if path.is_dir() else 0
        if count:
            out[stage] = count
    return out


def interrupted_line(code: int, wh: Warehouse) -> str:
    """What an interrupted sync kept, for the one line it prints."""
    pending = pending_packages(wh)
    if pending.get("loading"):
        kept = ("part of this run's data is loaded and the rest is kept in a pending load "
                "package; the next sync finishes loading it first")
    elif pending:
        kept = ("this run's extracted data is kept in a pending load package; the next sync "
                "loads it first")
    else:
        kept = ("nothing of this run was loaded; the warehouse keeps what earlier syncs loaded "
                "and the next sync starts this one over")
    return f"interrupted by {signal_name(code)}: {kept} [pipeline={wh.pipelines_dir}]"


def log_path(wh: Warehouse) -> Path:
    return Path(wh.pipelines_dir) / "last-sync.log"


@click.command("sync")
@option("base_url")
@option("client_id")
@option("client_secret")
@option("duckdb")
@option("dataset")
@option("destination")
@option("postgres_dsn")
@option("resources")
@option("site_ids", multiple=True)
@click.option("--full-refresh", is_flag=True, help="Drop state and tables of the selected resources and start over.")
@option("concurrency")
@option("detail_concurrency")
@option("rate_limit")
@option("adaptive_rate")
@option("page_size")
@option("pii")
@option("insecure")
@click.option("--lock-timeout", type=float, default=0, show_default=True, help="Seconds to wait for a running sync of the same pipeline.")
@option("payouts_path")
@option("details")
@option("pipelines_dir")
@option("checkpoint_every")
@option("max_duration")
@click.option("--verbose", "-v", is_flag=True, help="Debug log on stderr.")
@click.option("--progress/--no-progress", default=None, help="Progress bar [on a TTY].")
def sync_command(verbose: bool, progress: bool | None, **flags: Any) -> None:
    """Sync every collection of every site into the warehouse (incrementally).

    Exit status: 0 success, 1 failure at run time, 2 usage or configuration error,
    130 SIGINT, 143 SIGTERM.
    """
    with reported_failures(verbose):
        warn_unknown_keys()
        settings = resolve_settings(**flags)
    log_file = log_path(settings.warehouse)
    with reported_failures(verbose, log_file,
                           interrupted=lambda code: interrupted_line(code, settings.warehouse)):
        # the log is opened under the lock: a sync that loses the race must not touch the
        # winner's log
        try:
            with no_empty_file_left(settings.warehouse.duckdb_path):
                result = run_sync(settings, show_progress=progress,
                                  on_locked=lambda: setup_logging(verbose, log_file, what="sync"))
        except CheckpointedStop as stop:  # what was read is committed: say what
            code = EXIT_SIGNAL_BASE + stop.signum
            logging.getLogger("creator_sync").warning("interrupted by %s", signal_name(code))
            fail(f"interrupted by {signal_name(code)}: {stop.kept} [pipeline="
                 f"{settings.warehouse.pipelines_dir}]", code)
            return
    click.echo(format_summary(result))
    signum = received_signal()
    if signum is not None:  # it landed where the run could not stop (inside an import): the
        code = EXIT_SIGNAL_BASE + signum  # run went on, but it was interrupted all the same
        fail(interrupted_line(code, settings.warehouse), code)
    if result.failed:
        click.echo(f"error: {failure_line(result)}", err=True)
        sys.exit(1)


def failure_line(result: SyncResult) -> str:
    """One line naming each failed resource and why; the others were loaded."""
    failed = result.failed
    reasons = "; ".join(f"{name}: {reason}" for name, reason in failed.items())
    return f"{len(failed)} resource(s) failed (the others were loaded and committed): {reasons}"
