"""The drills, as plain functions shared by the pytest suite and `benchmarks/drills/run`.

Each drill returns a `DrillOutcome` (one row of the benchmark table) and never asserts: the test
asserts `outcome.ok` and prints `outcome.details` when it is not, the benchmark prints the row.
`Lab` holds what drills share: sandbox options, a scratch root, and the reference warehouse (a
clean sync of the same seed through the same CLI).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
import re
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property, partial
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlencode

from .badinput import Case, CaseRun
from .proxy import DrillProxy, Exchange, Fetch, Reply
from .runner import SyncResult, Workspace, kill_group
from .warehouse import (
    Comparison,
    check_versions,
    compare_warehouses,
    copy_warehouse,
    duplicated_keys,
    set_aside,
    table_ids,
)

CORE_TABLES = ("sites", "contacts", "customers", "products", "offers", "courses", "purchases",
               "orders", "order_items", "transactions", "payouts")
DRILL_SEED = 5150
DRILL_NOW = "2026-06-30T12:00:00Z"


@dataclass
class DrillOutcome:
    drill: str
    faults: str
    outcome: str
    lost: int = 0
    duplicated: int = 0
    ok: bool = True
    details: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def fail(self, message: str) -> None:
        self.ok = False
        self.details.append(message)

    def explain(self) -> str:
        return f"{self.drill}: {self.outcome}\n" + "\n".join(self.details)


class Lab:
    """Shared drill context: one seed, one scale, a reference warehouse built on first use."""

    def __init__(self, root: Path, sync_args: tuple[str, ...] = (), **sandbox_options: Any) -> None:
        self.root = root
        self.sync_args = sync_args
        self.options: dict[str, Any] = {"seed": DRILL_SEED, "scale": "tiny", "sites": 2,
                                        "now": DRILL_NOW, **sandbox_options}
        self.reference_requests: list[Exchange] = []
        self.reference_run: SyncResult | None = None
        root.mkdir(parents=True, exist_ok=True)

    @contextlib.contextmanager
    def sandbox(self, **extra: Any) -> Iterator[Any]:
        from creator_sync.sandbox.testing import run_sandbox

        with run_sandbox(**{**self.options, **extra}) as handle:
            yield handle

    def workspace(self, name: str) -> Workspace:
        path = self.root / name
        if path.exists():
            import shutil

            shutil.rmtree(path)
        return Workspace(path, default_args=self.sync_args)

    @cached_property
    def reference(self) -> Path:
        """A clean sync of a fresh sandbox: what every drill must end up equal to."""
        ws = self.workspace("reference")
        with self.sandbox() as sb, DrillProxy(sb.base_url) as proxy:
            run = ws.sync(proxy.base_url, timeout=1800)  # (`small` on a busy machine: minutes)
            if not run.ok:
                raise RuntimeError(f"reference sync failed: {run.describe()}")
            self.reference_requests = [ex for ex, _ in proxy.exchanges]
            self.reference_run = run
        dups = duplicated_keys(ws.warehouse)
        if dups:
            raise RuntimeError(f"reference sync holds duplicated ids: {dups}")
        empty = [t for t in CORE_TABLES if not table_ids(ws.warehouse, t)]
        if empty:  # a drill against an empty reference would prove nothing
            raise RuntimeError(f"reference sync left core tables empty: {empty}")
        return ws.warehouse


def judge_against_reference(out: DrillOutcome, lab: Lab, ws: Workspace,
                            reference: Path | None = None, **compare: Any) -> Comparison:
    """Fill lost/duplicated and fail the outcome on any difference or leftover; `reference`:
    another warehouse than the lab's (a fresh sync after the drill's platform activity)."""
    cmp = compare_warehouses(reference or lab.reference, ws.warehouse, **compare)
    out.lost += cmp.lost
    out.duplicated += cmp.duplicated
    if not cmp.ok:
        out.fail("warehouse differs from the reference:\n  " + "\n  ".join(cmp.problems()))
    pending = ws.pending_packages()
    if pending:
        out.fail(f"pending load packages left behind: {pending}")
    held = held_locks(ws)
    if held:
        out.fail(f"locks still held after the run: {held}")
    return cmp


def held_locks(ws: Workspace) -> list[str]:
    """Lock files someone still holds (flock is released by the kernel when a holder dies)."""
    held = []
    for path in ws.lock_files():
        fd = os.open(path, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(fd, fcntl.LOCK_UN)
        except OSError:
            held.append(str(path))
        finally:
            os.close(fd)
    return held


def _retries(run: SyncResult) -> str:
    m = re.search(r"requests:\s*(\d+)\s+retries:\s*(\d+)\s+429s:\s*(\d+)", run.stdout)
    return f"{m.group(1)} requests, {m.group(2)} retries, {m.group(3)} 429s" if m else "?"


# ---------------------------------------------------------------------- running drills side by side
Job = Callable[[], list[DrillOutcome]]


def default_workers() -> int:
    """Drills run two at a time unless `DRILLS_WORKERS` says otherwise (1 = one after another)."""
    return max(1, int(os.environ.get("DRILLS_WORKERS", "2")))


def run_parallel(jobs: Sequence[Job], workers: int | None = None,
                 on_done: Callable[[list[DrillOutcome]], None] | None = None,
                 ) -> list[list[DrillOutcome]]:
    """Run independent drill jobs `workers` at a time; results in job order.

    Why threads: a drill spends its time waiting on its sync subprocess and on the sandbox, so
    two drills side by side use the machine's two cores instead of one. Jobs that run together
    share no workspace, proxy or sandbox (each job opens its own). An outcome that did not time
    itself gets its share of the job's wall time. `on_done` sees each job's outcomes as it ends.
    """
    workers = default_workers() if workers is None else max(1, workers)

    def timed(job: Job) -> list[DrillOutcome]:
        started = time.monotonic()
        outcomes = job()
        elapsed = time.monotonic() - started
        for out in outcomes:
            if not out.seconds:
                out.seconds = elapsed / len(outcomes)
        if on_done is not None:
            on_done(outcomes)
        return outcomes

    if workers == 1 or len(jobs) <= 1:
        return [timed(job) for job in jobs]
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="drill") as pool:
        return list(pool.map(timed, jobs))


# ---------------------------------------------------------------------- faults
def fault_drill(lab: Lab, name: str, faults: str, timeout: float = 300.0,
                sync_args: tuple[str, ...] = (), **sandbox_extra: Any) -> DrillOutcome:
    """Sync from a sandbox that misbehaves (faults, 429s, short tokens): expect the reference."""
    out = DrillOutcome(name, faults, "")
    lab.reference  # noqa: B018 - build it outside the timed part
    ws = lab.workspace(name)
    started = time.monotonic()
    with lab.sandbox(**sandbox_extra) as sb:
        run = ws.sync(sb.base_url, *sync_args, timeout=timeout)
    out.seconds = time.monotonic() - started
    out.faults = f"{faults} ({_retries(run)})"
    if not run.ok:
        out.fail(f"sync failed: {run.describe()}")
        out.outcome = "FAILED: sync did not complete"
        if ws.warehouse.exists():
            judge_against_reference(out, lab, ws)
        return out
    judge_against_reference(out, lab, ws)
    out.outcome = "identical to reference" if out.ok else "DIFFERS from reference"
    return out


def storm_drill(lab: Lab, count: int = 60) -> DrillOutcome:
    """A 429 storm served by the proxy: 2 of every 3 API requests refused until `count` were.

    Half of the 429s carry `Retry-After: 1`, half none (the real platform sends none), so both
    back-off paths run. Cheap enough for CI; the benchmark adds the sandbox's real limiter.
    """
    out = DrillOutcome("429_storm", "", "")
    lab.reference  # noqa: B018
    ws = lab.workspace("429_storm")
    served = [0]
    lock = threading.Lock()

    def storm(ex: Exchange, fetch: Fetch) -> Reply:
        with lock:
            refuse = ex.collection is not None and served[0] < count and ex.number % 3 != 0
            if refuse:
                served[0] += 1
                with_header = served[0] % 2 == 0
        if not refuse:
            return fetch()
        headers = [("Content-Type", "application/vnd.api+json")]
        if with_header:
            headers.append(("Retry-After", "1"))
        body = b'{"errors":[{"status":"429","title":"Too Many Requests","detail":"rate limit"}]}'
        return Reply(429, headers, body)

    with lab.sandbox() as sb, DrillProxy(sb.base_url) as proxy:
        proxy.mutator = storm
        run = ws.sync(proxy.base_url, timeout=600)
    out.faults = f"{served[0]} x 429 (half with Retry-After) ({_retries(run)})"
    if served[0] < count:
        out.fail(f"only {served[0]} of {count} 429s were served: the storm did not happen")
    if not run.ok:
        out.fail(f"sync failed: {run.describe()}")
    judge_against_reference(out, lab, ws)
    out.outcome = "identical to reference" if out.ok else "FAILED"
    return out


def rate_limit_drill(lab: Lab, retry_after: bool) -> DrillOutcome:
    """The sandbox's real per-minute limiter, and a sync told no limit: it must find it.

    The limit is set to ~60% of the reference sync's requests, so the first 429 comes mid-run
    (after slow start spent the minute's allowance in a second or two) and the rest has to wait
    for the window and then be paced. Expected: the reference, no request given up, the rate
    found reported in the summary.
    """
    name = "rate_limit_" + ("retry_after" if retry_after else "no_retry_after")
    out = DrillOutcome(name, "", "")
    lab.reference  # noqa: B018
    limit = max(20, int(0.6 * len(lab.reference_requests)))
    ws = lab.workspace(name)
    started = time.monotonic()
    with lab.sandbox(rate_limit=limit, retry_after=retry_after) as sb:
        run = ws.sync(sb.base_url, timeout=600)
    out.seconds = time.monotonic() - started
    found = re.search(r"rate: ~(\d+) req/min found", run.stdout)
    out.faults = (f"sandbox {limit}/min, {'with' if retry_after else 'no'} Retry-After "
                  f"({_retries(run)}; found {found.group(1) if found else '?'}/min)")
    if not run.ok:
        out.fail(f"sync failed: {run.describe()}")
    throttled = re.search(r"429s:\s*(\d+)", run.stdout)
    if not throttled or int(throttled.group(1)) == 0:
        out.fail("no 429 was served: the limit never bound, the drill proved nothing")
    # what answered in the minute before the 429: the limit, plus the token grant (own budget)
    if not found or not 0.8 * limit <= int(found.group(1)) <= limit + 2:
        out.fail(f"summary does not report the {limit}/min limit as found: {run.stdout[-300:]}")
    gave_up = [line for log in ws.root.rglob("last-sync.log")
               for line in log.read_text(errors="replace").splitlines() if "gave up on" in line]
    if gave_up:
        out.fail(f"{len(gave_up)} request(s) given up: {gave_up[:3]}")
    judge_against_reference(out, lab, ws)
    out.outcome = "identical to reference" if out.ok else "FAILED"
    return out


def token_ttl_drill(lab: Lab, ttl: int, latency_ms: int = 10) -> DrillOutcome:
    """Tokens that expire every `ttl` seconds during the run: refreshed in time, not hammered.

    Expected: identical to the reference, and no more token requests than one per half
    lifetime (plus the first grant and some slack): a client that refreshes before every
    request doubles its traffic and would trip the token endpoint's own limits.
    """
    out = DrillOutcome(f"token_ttl_{ttl}s", "", "")
    lab.reference  # noqa: B018
    # Enough latency that the run lasts about two token lifetimes at 4 requests in flight.
    latency_ms = max(latency_ms, 2000 * ttl * 4 // max(1, len(lab.reference_requests)))
    for _ in range(3):
        ws = lab.workspace(f"token_ttl_{ttl}")
        with lab.sandbox(token_ttl=ttl, latency_ms=latency_ms) as sb, \
                DrillProxy(sb.base_url) as proxy:
            run = ws.sync(proxy.base_url, timeout=1800)
            tokens = [ex for ex, _ in proxy.exchanges if ex.path.endswith("/oauth/token")]
            api = [ex for ex, _ in proxy.exchanges if ex.collection is not None]
        if not run.ok or run.seconds >= ttl:
            break
        # Over before one token expired, so nothing was tested (detail reads run 16 at a time,
        # and syncs get faster): slow the sandbox down in proportion and run again.
        latency_ms = int(latency_ms * 2 * ttl / max(run.seconds, 1.0)) + 1
    allowed = 3 + int(2 * run.seconds / ttl)
    out.faults = (f"token_ttl={ttl}s over a {run.seconds:.0f}s run ({latency_ms} ms latency): "
                  f"{len(tokens)} token requests for {len(api)} API requests")
    if not run.ok:
        out.fail(f"sync failed: {run.describe()}")
    if run.seconds < ttl:
        out.fail(f"the run ({run.seconds:.0f}s) did not outlive one token ({ttl}s)")
    if len(tokens) > allowed:
        out.fail(f"{len(tokens)} token requests for {len(api)} API requests in {run.seconds:.0f}s "
                 f"(at most {allowed} needed): the client refreshes far too early")
    judge_against_reference(out, lab, ws)
    out.outcome = "identical to reference" if out.ok else "FAILED"
    return out


def revoke_drill(lab: Lab, at_requests: tuple[int, ...] = (15, 45)) -> DrillOutcome:
    """Revoke the session (access + refresh token) at the sandbox while the sync pages."""
    out = DrillOutcome("token_revoked", "", "")
    lab.reference  # noqa: B018 - build it outside the timed part
    ws = lab.workspace("token_revoked")
    revoked: list[int] = []
    with lab.sandbox() as sb, DrillProxy(sb.base_url) as proxy:
        def trigger(ex: Exchange) -> None:
            auth = ex.headers.get("Authorization") or ex.headers.get("authorization") or ""
            if ex.number in at_requests and auth.lower().startswith("bearer "):
                revoked.append(proxy.revoke(auth[7:].strip()))

        proxy.triggers.append(trigger)
        run = ws.sync(proxy.base_url)
        statuses = [status for _, status in proxy.exchanges]
    out.faults = f"{len(revoked)} revocations, {statuses.count(401)} requests got 401"
    if len(revoked) != len(at_requests) or any(code >= 400 for code in revoked):
        out.fail(f"revocation did not happen as planned: {revoked}")
    if statuses.count(401) == 0:
        out.fail("no request was refused after revocation: the drill did not bite")
    if not run.ok:
        out.fail(f"sync failed: {run.describe()}")
    judge_against_reference(out, lab, ws)
    out.outcome = "identical to reference" if out.ok else "FAILED"
    return out


# ---------------------------------------------------------------------- activity while paging
@dataclass(frozen=True)
class ActivityPlan:
    """One activity call fired when the sync asks for a given page of a collection.

    One call, so that every record has exactly two versions (before, after); the call lands
    after page 1 of `collection` was read, so that page's `total_pages` is stale (the meta lies)
    and the records inserted and updated are read by pages still to come.
    """

    collection: str = "contacts"
    page: int = 2
    count: int = 150
    # Sandbox clock advance per event. 20 s x 150 events = 50 min of changes inside one run:
    # within the 1 h look-back of `updated_at` cursors (see FINDINGS #8 for longer overlaps).
    seconds_per_event: int | None = 20

    def sandbox_options(self) -> dict[str, Any]:
        return {} if self.seconds_per_event is None else {"seconds_per_event": self.seconds_per_event}


def activity_drill(lab: Lab, plan: ActivityPlan = ActivityPlan()) -> DrillOutcome:
    """Insert and update records while the sync pages; the meta's totals change under it.

    Reference design: the sandbox's activity is a pure function of (seed, call sequence), so a
    fresh sandbox that receives the same calls with no sync running reaches the same final state.
    R0 = the clean reference (before), R1 = a clean sync after the same activity.
    1. Right after the overlapping run, every row must be R0's or R1's version of that row (a run
       that overlaps changes may see either), nothing lost that exists in both, no duplicate.
    2. A second, incremental run must then hold every R1 row, and the tables that every run reads
       in full or by `updated_at` must equal R1 exactly; rows of created-at-window tables may
       stay at R0 (edits older than the look-back wait for the periodic full refresh): reported.
    """
    out = DrillOutcome("activity_during_sync", "", "")
    r0 = lab.reference
    after_ws = lab.workspace("activity_reference")
    with lab.sandbox(**plan.sandbox_options()) as sb:
        sb.activity(plan.count)
        ref_run = after_ws.sync(sb.base_url)
    if not ref_run.ok:
        out.fail(f"R1 reference sync failed: {ref_run.describe()}")
        out.outcome = "FAILED: no reference"
        return out
    r1 = after_ws.warehouse

    ws = lab.workspace("activity_during_sync")
    first_copy = ws.root / "after_first_run.duckdb"
    fired: list[str] = []
    lock = threading.Lock()
    with lab.sandbox(**plan.sandbox_options()) as sb, DrillProxy(sb.base_url) as proxy:

        def trigger(ex: Exchange) -> None:
            with lock:
                if not fired and ex.collection == plan.collection and ex.page == plan.page:
                    before = _total_pages(proxy, ex)
                    summary = sb.activity(plan.count)
                    after = _total_pages(proxy, ex)
                    fired.append(f"{plan.count} events at {plan.collection} page {plan.page} "
                                 f"(request {ex.number}), total_pages {before}->{after}: "
                                 f"{_short(summary)}")

        proxy.triggers.append(trigger)
        first = ws.sync(proxy.base_url)
        proxy.triggers.clear()
        if not fired:
            out.fail("the activity never fired: the sync never asked for that page")
        if first.ok:
            copy_warehouse(ws.warehouse, first_copy)
        second = ws.sync(proxy.base_url) if first.ok else None
    out.faults = "; ".join(fired)
    if not first.ok:
        out.fail(f"sync during activity failed: {first.describe()}")
        out.outcome = "FAILED"
        return out
    for v in check_versions(r0, r1, first_copy).values():
        out.lost += v.lost
        out.duplicated += v.duplicated
        if not v.ok:
            out.fail(f"overlapping run: {v.describe()}")
    if second is None or not second.ok:
        out.fail(f"follow-up sync failed: {second.describe() if second else 'not run'}")
    checks = check_versions(r0, r1, ws.warehouse)
    for v in checks.values():
        # A record created during the run must be there now. Link rows without an id that are
        # missing belong to a parent left at its old version: stale, like the parent.
        has_id = v.table in _tables_with_id(r1)
        missing_new = v.new_missing if has_id else 0
        v.stale += 0 if has_id else v.new_missing
        out.lost += missing_new + v.lost
        out.duplicated += v.duplicated
        if not v.ok or missing_new:
            out.fail(f"after the follow-up run: {v.describe()}")
    exact = _exact_tables()
    for table, diff in compare_warehouses(r1, ws.warehouse).tables.items():
        if table in exact and not diff.ok:
            out.fail(f"{table} must equal R1 (read in full or by updated_at): {diff.describe()}")
    if ws.pending_packages():
        out.fail(f"pending load packages: {ws.pending_packages()}")
    stale = {t: v.stale for t, v in checks.items() if v.stale}
    out.outcome = ("consistent; follow-up = R1" + (f" (stale by design: {stale})" if stale else "")
                   if out.ok else "FAILED")
    return out


def _total_pages(proxy: DrillProxy, ex: Exchange) -> object:
    """What page 1 of the same listing announces now (to show the meta changing under the run)."""
    query = [(k, v) for k, v in ex.query if k != "page[number]"]
    target = ex.path + "?" + urlencode([*query, ("page[number]", "1")])
    reply = proxy._forward("GET", target, ex.headers, b"")
    try:
        meta = reply.json().get("meta") or {}
    except (ValueError, AttributeError):
        return "?"
    return meta.get("total_pages", meta.get("pagination", {}).get("last", "?"))


def _short(summary: object) -> str:
    if isinstance(summary, dict):
        parts = [f"{k}={v}" for k, v in summary.items() if isinstance(v, int) and v]
        return ", ".join(parts[:8])
    return str(summary)[:80]


def _tables_with_id(path: Path) -> set[str]:
    import duckdb

    con = duckdb.connect(str(path), read_only=True)
    try:
        rows = con.execute("SELECT table_name FROM information_schema.columns "
                           "WHERE column_name = 'id'").fetchall()
        return {r[0] for r in rows}
    finally:
        con.close()


def _exact_tables() -> set[str]:
    """Tables whose every run reads all rows or all changes: full listings, `updated_at`
    cursors, and immutable records read newest first down to the cursor (form submissions)."""
    from creator_sync.sources.creator_platform.endpoints import RESOURCES

    return {r.table for r in RESOURCES.values()
            if r.incremental.strategy in ("full", "updated_since", "newest_first")}


# ---------------------------------------------------------------------- crashes
@dataclass(frozen=True)
class CrashPoint:
    stage: str  # extract | normalize | load
    arg: int  # extract: request number; normalize: delay in ms; load: completed jobs first

    def __str__(self) -> str:
        unit = {"extract": "at request", "normalize": "ms after extract", "load": "after jobs"}
        return f"{self.stage} {unit[self.stage]} {self.arg}"


def plan_crashes(n: int, total_requests: int, seed: int = DRILL_SEED) -> list[CrashPoint]:
    """`n` seeded kill points spread over the three stages (about 40/25/35 %)."""
    rng = random.Random(seed)
    n_extract = max(1, round(n * 0.4))
    n_normalize = max(1, round(n * 0.25))
    n_load = max(1, n - n_extract - n_normalize)
    points = [CrashPoint("extract", rng.randint(2, max(3, total_requests - 1)))
              for _ in range(n_extract)]
    points += [CrashPoint("normalize", rng.choice([0, 0, 5, 20, 60])) for _ in range(n_normalize)]
    points += [CrashPoint("load", rng.randint(0, 12)) for _ in range(n_load)]
    return points


def _watch_and_kill(ws: Workspace, proc: subprocess.Popen, point: CrashPoint,
                    kill: Callable[[subprocess.Popen], None] = kill_group) -> str | None:
    """Poll the pipeline's package folders; `kill` (SIGKILL) when the point is reached.
    Returns the stage."""
    pdir: Path | None = None
    seen_extracted_at: float | None = None
    while proc.poll() is None:
        if pdir is None:
            dirs = ws.pipeline_dirs()
            pdir = dirs[0] if dirs else None
            if pdir is None:
                time.sleep(0.005)
                continue
        normalized = _entries(pdir / "load/normalized")
        if point.stage == "normalize":
            if _entries(pdir / "normalize/extracted") or _entries(pdir / "load/new"):
                seen_extracted_at = seen_extracted_at or time.monotonic()
                if time.monotonic() - seen_extracted_at >= point.arg / 1000:
                    stage = ws.stage()
                    kill(proc)
                    return stage
            if normalized:  # normalise finished before the delay ran out: kill at load start
                kill(proc)
                return "load"
        elif point.stage == "load" and normalized:
            jobs = sum(len(_entries(pdir / "load/normalized" / p / "completed_jobs"))
                       for p in normalized)
            if jobs >= point.arg:
                kill(proc)
                return "load"
        time.sleep(0.002)
    return None


def _entries(path: Path) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def crash_jobs(lab: Lab, points: list[CrashPoint], numbers: Sequence[int] | None = None) -> list[Job]:
    """One job per crash point, each with its own sandbox and proxy (request-count triggers are
    per proxy; a sandbox starts in about a second), so that points can run side by side.
    `numbers` name the points (`crash_NN`, default 1, 2, ...) when they are a selection."""
    numbers = numbers or range(1, len(points) + 1)

    def one(name: str, point: CrashPoint) -> list[DrillOutcome]:
        with lab.sandbox() as sb, DrillProxy(sb.base_url) as proxy:
            return [crash_once(lab, proxy, name, point)]

    return [partial(one, f"crash_{n:02d}", p) for n, p in zip(numbers, points, strict=True)]


def crash_drill(lab: Lab, points: list[CrashPoint], workers: int | None = None,
                numbers: Sequence[int] | None = None) -> list[DrillOutcome]:
    """For each point: fresh warehouse, sync, SIGKILL at the point, rerun, compare."""
    lab.reference  # noqa: B018
    return [out for chunk in run_parallel(crash_jobs(lab, points, numbers), workers) for out in chunk]


def run_and_stop(ws: Workspace, proxy: DrillProxy, argv: list[str], point: CrashPoint,
                 started: float, stop: Callable[[subprocess.Popen], None] = kill_group,
                 ) -> tuple[SyncResult, str | None]:
    """Run a sync and `stop` it (SIGKILL) at `point`: at an API request number in extract (a
    proxy trigger), by its package folders in normalise and load. Returns the run and the
    stage it was stopped in (None: it finished first)."""
    proc, o, e = ws.start(argv)
    stage: list[str] = []
    if point.stage == "extract":
        def trigger(ex: Exchange) -> None:
            if ex.number == point.arg and not stage:
                stage.append(ws.stage())
                stop(proc)

        proxy.triggers.append(trigger)
        stopped = None
    else:
        stopped = _watch_and_kill(ws, proc, point, stop)
    run = ws.finish(proc, o, e, argv, started, timeout=300)
    proxy.triggers.clear()
    return run, stopped or (stage[0] if stage else None)


def crash_once(lab: Lab, proxy: DrillProxy, name: str, point: CrashPoint) -> DrillOutcome:
    out = DrillOutcome(name, f"SIGKILL {point}", "")
    ws = lab.workspace(name)
    proxy.reset()
    argv = ws.argv(proxy.base_url)
    started = time.monotonic()
    first, killed_stage = run_and_stop(ws, proxy, argv, point, started)
    if killed_stage is None or first.returncode == 0:
        out.fail(f"the run was not killed (finished with rc={first.returncode} first)")
    rerun = ws.sync(proxy.base_url)
    if not rerun.ok:
        out.fail(f"rerun after the kill failed: {rerun.describe()}")
    judge_against_reference(out, lab, ws)
    out.seconds = time.monotonic() - started
    resumed = "finished the pending package, " if "left by an interrupted run" in rerun.stdout else ""
    out.outcome = (f"killed in {killed_stage}; rerun {resumed}identical" if out.ok
                   else f"killed in {killed_stage}; FAILED")
    return out


# ---------------------------------------------------------------------- concurrency
def concurrency_drill(lab: Lab, latency_ms: int = 15) -> DrillOutcome:
    """Two syncs of the same pipeline start together: one wins, the other waits or exits clearly."""
    out = DrillOutcome("two_syncs_at_once", "2 concurrent syncs, same pipeline and warehouse", "")
    lab.reference  # noqa: B018
    ws = lab.workspace("concurrency")
    with lab.sandbox(latency_ms=latency_ms) as sb:
        argv = ws.argv(sb.base_url)
        started = time.monotonic()
        procs = [ws.start(argv) for _ in range(2)]
        runs = [ws.finish(p, o, e, argv, started, timeout=300) for p, o, e in procs]
        winners = [r for r in runs if r.ok]
        losers = [r for r in runs if not r.ok]
        if not winners:
            out.fail("neither sync succeeded:\n" + "\n".join(r.describe() for r in runs))
        for r in losers:
            line = r.reason.lower()
            if not any(w in line for w in ("lock", "another", "running", "held", "busy")):
                out.fail(f"the losing sync did not say why clearly: {r.error_line!r}")
            if "traceback" in r.stderr.lower():
                out.fail("the losing sync printed a traceback")
    judge_against_reference(out, lab, ws)  # also: no lock left held by either
    how = "both completed (second waited)" if len(winners) == 2 else (
        f"one won, the other exited: {losers[0].error_line[:90]!r}" if losers else "")
    out.outcome = how if out.ok else "FAILED"
    return out


# ---------------------------------------------------------------------- bad input
# A persistent bad body is retried like a transient one before the run gives up; three attempts
# prove the same as eight in a fraction of the time (read by the sync once it supports them).
BAD_INPUT_ENV = {"SOURCES__CREATOR_PLATFORM__MAX_ATTEMPTS": "3",
                 "SOURCES__CREATOR_PLATFORM__BACKOFF_INITIAL": "0.1"}


class BadInputBench:
    """Sandbox + proxy + one workspace, and a baseline snapshot per starting point.

    The baseline of an ordinary case is a full sync; that of a `fresh` case a sync of every
    resource but the case's, so that the bad run reads that resource from page 1. `name` keeps
    benches that run side by side in separate workspaces.
    """

    def __init__(self, lab: Lab, proxy: DrillProxy, evil_hits: Callable[[], int] = lambda: 0,
                 name: str = "bad_input"):
        self.lab = lab
        self.proxy = proxy
        self.evil_hits = evil_hits
        self.name = name
        self.ws = lab.workspace(name)
        self.goldens: dict[str, Path] = {}
        self.ws.extra_env = dict(BAD_INPUT_ENV)

    def golden(self, without: str | None) -> Path:
        key = without or "all"
        if key not in self.goldens:
            from creator_sync.sources.creator_platform.endpoints import RESOURCES

            self.proxy.reset()
            self.ws = self.lab.workspace(self.name)
            self.ws.extra_env = dict(BAD_INPUT_ENV)
            args = ("--resources", ",".join(r for r in RESOURCES if r != without)) if without else ()
            run = self.ws.sync(self.proxy.base_url, *args)
            if not run.ok:
                raise RuntimeError(f"bad-input baseline ({key}) failed: {run.describe()}")
            self.goldens[key] = self.lab.root / f"{self.name}_golden_{key}"
            self.ws.snapshot(self.goldens[key])
        return self.goldens[key]

    def run(self, case: Case) -> DrillOutcome:
        return bad_input_case(case, self.lab, self.proxy, self.ws,
                              self.golden(golden_key(case)), self.evil_hits)


def golden_key(case: Case) -> str | None:
    """The baseline a case starts from: None = a full sync, else the resource left out."""
    return case.table if case.fresh else None


def bad_input_jobs(lab: Lab, names: Sequence[str] | None = None,
                   count: int | None = None) -> list[Job]:
    """Bad-input cases (all, or those named) dealt into `count` benches to run side by side.

    Cases are dealt by baseline, so that each baseline sync runs once: a bench builds the
    baselines of its own cases only. Each bench has its own sandbox, proxy, workspace and "evil"
    host (a loopback server that response links point at and that must never be contacted).
    """
    from .badinput import catalogue

    cases = [c for c in catalogue() if names is None or c.name in names]

    def bench_job(name: str, case_names: list[str]) -> list[DrillOutcome]:
        with DrillProxy("http://127.0.0.1:9") as evil, lab.sandbox() as sb, \
                DrillProxy(sb.base_url) as proxy:
            evil.mutator = lambda ex, fetch: Reply(404)
            cases = {c.name: c for c in catalogue(evil.base_url)}
            bench = BadInputBench(lab, proxy, evil_hits=lambda: len(evil.exchanges), name=name)
            return [bench.run(cases[n]) for n in case_names]

    return [partial(bench_job, "bad_input" if i == 0 else f"bad_input_{i + 1}", b)
            for i, b in enumerate(deal_by_baseline(cases, count or default_workers()))]


def deal_by_baseline(cases: Sequence[Case], count: int) -> list[list[str]]:
    """Case names in at most `count` benches; all cases of one baseline in the same bench.

    Greedy: the biggest group of cases goes to the lightest bench, a baseline sync weighing
    about two cases. Empty benches are dropped.
    """
    groups: dict[str | None, list[str]] = {}
    for case in cases:
        groups.setdefault(golden_key(case), []).append(case.name)
    count = max(1, min(count, len(groups)))
    benches: list[list[str]] = [[] for _ in range(count)]
    weight = [0] * count
    for group in sorted(groups.values(), key=len, reverse=True):
        lightest = weight.index(min(weight))
        benches[lightest] += group
        weight[lightest] += len(group) + 2
    return [b for b in benches if b]


def bad_input_drills(lab: Lab, names: Sequence[str] | None = None,
                     workers: int | None = None) -> list[DrillOutcome]:
    """Run bad-input cases side by side; outcomes in catalogue order."""
    from .badinput import catalogue

    lab.reference  # noqa: B018 - built once, before the benches start
    done = run_parallel(bad_input_jobs(lab, names, workers), workers)
    order = {f"bad_input:{c.name}": i for i, c in enumerate(catalogue())}
    return sorted((o for chunk in done for o in chunk), key=lambda o: order[o.drill])


def bad_input_case(
    case: Case, lab: Lab, proxy: DrillProxy, ws: Workspace, golden: Path,
    evil_hits: Callable[[], int] = lambda: 0,
) -> DrillOutcome:
    """Serve one crafted response; judge the run; then heal with a clean run."""
    out = DrillOutcome(f"bad_input:{case.name}", case.problem, "")
    ws.restore(golden)
    proxy.reset()
    run_state = CaseRun(proxy)
    proxy.mutator = case.mutator(run_state)
    hits_before = evil_hits()
    bad = ws.sync(proxy.base_url, "--resources", case.table, timeout=case.timeout)
    served = [ex for ex, _ in proxy.exchanges if case.matches(ex)]
    proxy.mutator = None
    if proxy.injected == 0:
        out.fail(f"the crafted response was never served (requests: {len(proxy.exchanges)})")
    if evil_hits() != hits_before:
        out.fail("the sync contacted a host taken from a response link")
    loaded = bad.ok
    if loaded:
        if "load" not in case.accept:
            out.fail(f"the sync accepted {case.problem!r} and exited 0")
        altered = run_state.altered if case.check else None
        # a record whose value cannot be read is set aside (rejected_records), not loaded: only
        # the altered ones, and a record set aside is missing for a reason, not lost
        aside = set_aside(ws.warehouse)
        strays = [r for r in aside if r[1] not in run_state.altered.get(case.table, set())]
        if strays:
            out.fail(f"records set aside that the case did not alter: {strays[:5]}")
        if aside and altered is None:
            altered = {case.table: {r[1] for r in aside}}
        cmp = compare_warehouses(lab.reference, ws.warehouse, ignore_ids=altered,
                                 allow_extra_tables=case.extra_tables)
        if not cmp.ok:
            out.fail("loaded data differs from the reference:\n  " + "\n  ".join(cmp.problems()))
        if case.check:
            for problem in case.check(run_state, str(ws.warehouse)):
                out.fail(problem)
        out.lost, out.duplicated = cmp.lost, cmp.duplicated
    else:
        if "fail" not in case.accept:
            out.fail(f"the sync failed on a case it should load: {bad.error_line!r}")
        for problem in judge_error(bad, case, served):
            out.fail(problem)
        # Earlier rows intact; rows a partial run added (if any) must be the reference's.
        for v in check_versions(golden / "warehouse.duckdb", lab.reference, ws.warehouse).values():
            out.lost += v.lost
            out.duplicated += v.duplicated
            if not v.ok:
                out.fail(f"the failed run damaged the warehouse: {v.describe()}")
    heal = ws.sync(proxy.base_url, "--resources", case.table)
    if not heal.ok:
        out.fail(f"the next good run failed: {heal.describe()}")
    if set_aside(ws.warehouse):
        out.fail(f"records still set aside after the good run: {set_aside(ws.warehouse)[:5]}")
    cmp = compare_warehouses(lab.reference, ws.warehouse,
                             ignore_ids=run_state.altered if loaded and case.check else None,
                             allow_extra_tables=case.extra_tables)
    if not cmp.ok:
        out.fail("the next good run did not heal:\n  " + "\n  ".join(cmp.problems()))
    if ws.pending_packages():
        out.fail(f"pending load packages after the good run: {ws.pending_packages()}")
    verdict = "loaded correctly" if loaded else f"failed clearly: {bad.error_line[:100]}"
    out.outcome = f"{verdict}; healed" if out.ok else f"FAILED ({verdict[:60]})"
    return out


def judge_error(run: SyncResult, case: Case, served: list[Exchange]) -> list[str]:
    """A failed run must say, on one line, which resource, which page URL and what was wrong."""
    problems = []
    if run.timed_out:
        return [f"the sync did not finish within {case.timeout:.0f}s"]
    line = unquote(run.reason)
    low = line.lower()
    if "traceback (most recent call last)" in run.stderr.lower():
        problems.append("a traceback was printed instead of a one-line error")
    if case.table not in line and case.collection not in line:
        problems.append(f"error does not name the resource {case.table!r}: {line!r}")
    if not any(ex.path in line and _params_in(ex, line) for ex in served):
        urls = sorted({unquote(ex.url) for ex in served})[:3]
        problems.append(f"error does not name the page URL (one of {urls}): {line!r}")
    if case.words and not any(w in low for w in case.words):
        problems.append(f"error does not name the problem ({case.problem}; any of {case.words}): {line!r}")
    return problems


def _params_in(ex: Exchange, line: str) -> bool:
    for key in ("page[number]", "filter[site_id]"):
        value = ex.param(key)
        if value is not None and f"{key}={value}" not in line:
            return False
    return True
