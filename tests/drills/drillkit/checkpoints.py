"""Checkpoint drills (issue 30): a first sync stopped by SIGTERM or SIGKILL partway keeps what
its checkpoints committed; the rerun exits 0, reads less than a whole sync, and the warehouse
equals a fresh sync of the same platform, table by table.

The moment is an API request number (a proxy trigger), a share of the reference sync's
requests. Platform activity (`POST /_sandbox/activity`) may come between the interruption and
the rerun: the rerun is then compared with a fresh sync of a sandbox given the same activity
(the same seed and the same activity give the same data). The suite commits every
`CHECKPOINT_EVERY` seconds (a `demo` sync lasts seconds); the benchmark's table
(`benchmarks/resume_drills`) runs on the default (30 s) behind a rate limit.
"""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from .drills import (
    CrashPoint,
    DrillOutcome,
    Job,
    Lab,
    judge_against_reference,
    run_and_stop,
    run_parallel,
)
from .proxy import DrillProxy
from .runner import kill_group

CHECKPOINT_EVERY = "1"
SIGNAL_EXIT_S = 10.0  # issue 30: SIGINT/SIGTERM commit what was read and exit within 10 s


@dataclass(frozen=True)
class Interruption:
    """One drill: `signum` at `share` of a whole sync's requests, then `activity` events."""

    share: float
    signum: signal.Signals
    activity: int = 0
    # the moment as seconds into the run instead (behind a rate limit, a sync's first minute
    # holds far more than its share of the requests)
    at_s: float | None = None


@dataclass
class ResumeOutcome(DrillOutcome):
    """A drill's row: how the interrupted run ended and what the rerun read."""

    first_rc: int | None = None
    exit_after_s: float | None = None  # from the signal to the interrupted run's exit
    rerun_requests: int = 0
    rerun_ratio: float = 0.0
    differing: list[str] = field(default_factory=list)  # tables unequal to the reference
    # the rerun's requests by endpoint ("/v1/contacts", "/v1/<payouts>/{id}"): where they went
    rerun_by_endpoint: dict[str, int] = field(default_factory=dict)


def by_endpoint(proxy: DrillProxy) -> dict[str, int]:
    """Requests per endpoint, single reads folded into `{id}`, most first."""
    counts: dict[str, int] = {}
    for exchange, _status in proxy.exchanges:
        parts = exchange.path.rstrip("/").split("/")
        if len(parts) > 3 and parts[3]:
            parts = [*parts[:3], "{id}", *parts[4:]]
        key = "/".join(parts)
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))


def reference_after(lab: Lab, activity: int) -> tuple[Path, int]:
    """A fresh sync of a sandbox given `activity` events first (the lab's reference when 0):
    its warehouse and its request count. Built once per lab and count."""
    if not activity:
        return lab.reference, len(lab.reference_requests)
    built: dict[int, tuple[Path, int]] = lab.__dict__.setdefault("_after_activity", {})
    if activity not in built:
        ws = lab.workspace(f"reference_after_{activity}")
        with lab.sandbox() as sb, DrillProxy(sb.base_url) as proxy:
            sb.activity(activity)
            run = ws.sync(proxy.base_url, timeout=1800)
            if not run.ok:
                raise RuntimeError(f"reference sync after activity failed: {run.describe()}")
            built[activity] = (ws.warehouse, len(proxy.exchanges))
    return built[activity]


def checkpoint_once(lab: Lab, sb: object, proxy: DrillProxy, name: str, drill: Interruption,
                    checkpoint_every: str | None = CHECKPOINT_EVERY,
                    expect_kept: bool = True) -> ResumeOutcome:
    """One drill. `expect_kept`: a rerun reading a whole sync fails it (the suite's moments all
    come after a checkpoint; the benchmark's table reports the ratio instead)."""
    signum = drill.signum
    point = CrashPoint("extract", max(1, int(drill.share * len(lab.reference_requests))))
    then = f", {drill.activity} events of activity" if drill.activity else ""
    moment = f"{point}" if drill.at_s is None else f"{drill.at_s:.0f} s into the run"
    out = ResumeOutcome(name, f"{signum.name} at {drill.share:.0%} of a sync ({moment}){then}", "")
    ws = lab.workspace(name)
    proxy.reset()
    every = ("--checkpoint-every", checkpoint_every) if checkpoint_every else ()
    argv = ws.argv(proxy.base_url, *every)
    started = time.monotonic()
    signalled: list[float] = []

    def stop(proc: subprocess.Popen) -> None:
        signalled.append(time.monotonic())
        kill_group(proc) if signum == signal.SIGKILL else proc.send_signal(signum)

    if drill.at_s is None:
        first, stopped = run_and_stop(ws, proxy, argv, point, started, stop=stop)
    else:
        first, stopped = _run_and_stop_at(ws, argv, drill.at_s, started, stop)
    out.first_rc = first.returncode
    if signalled:
        out.exit_after_s = started + first.seconds - signalled[0]
    expected = -signal.SIGKILL if signum == signal.SIGKILL else 128 + int(signum)
    if stopped is None:
        out.fail(f"the run was not interrupted (finished with rc={first.returncode} first)")
    elif first.returncode != expected:
        out.fail(f"{signum.name} ended the run with rc={first.returncode}, not {expected}: "
                 f"{first.describe()}")
    elif signum != signal.SIGKILL:
        # a signal between rounds says what the rounds loaded; one during a round's load,
        # that the rest waits in a pending package the next sync loads first
        kept = ("row(s) read by this run are loaded", "kept in a pending load package")
        if not any(words in first.stderr for words in kept):
            out.fail(f"the interrupted run did not say what it kept: {first.stderr.strip()!r}")
        if out.exit_after_s is not None and out.exit_after_s > SIGNAL_EXIT_S:
            out.fail(f"{signum.name}: exit {out.exit_after_s:.1f} s after the signal "
                     f"(at most {SIGNAL_EXIT_S:.0f})")
    if drill.activity:
        sb.activity(drill.activity)  # type: ignore[attr-defined]
    reference, whole = reference_after(lab, drill.activity)
    proxy.reset()
    rerun = ws.sync(proxy.base_url, timeout=1800)
    out.rerun_requests = requests = len(proxy.exchanges)
    out.rerun_by_endpoint = by_endpoint(proxy)
    if not rerun.ok:
        out.fail(f"rerun after {signum.name} failed: {rerun.describe()}")
    if expect_kept and requests >= whole:
        out.fail(f"the rerun made {requests} requests, a whole sync {whole}: nothing kept")
    cmp = judge_against_reference(out, lab, ws, reference=reference)
    out.differing = [t for t, diff in cmp.tables.items() if not diff.ok]
    out.seconds = time.monotonic() - started
    out.rerun_ratio = requests / whole if whole else 0.0
    out.outcome = (f"{signum.name} at request {point.arg}: rerun {requests} requests "
                   f"({out.rerun_ratio:.2f} of a sync), identical" if out.ok
                   else f"{signum.name}; FAILED")
    return out


def _run_and_stop_at(ws, argv: list[str], at_s: float, started: float, stop
                     ) -> tuple[object, str | None]:
    """Run a sync and `stop` it `at_s` seconds after it started (None: it finished first)."""
    proc, o, e = ws.start(argv)
    timer = threading.Timer(at_s, lambda: proc.poll() is None and stop(proc))
    timer.start()
    run = ws.finish(proc, o, e, argv, started, timeout=1800)
    timer.cancel()
    return run, ("extract" if run.returncode != 0 else None)


def checkpoint_jobs(lab: Lab, plan: list[Interruption], checkpoint_every: str | None = CHECKPOINT_EVERY,
                    names: list[str] | None = None, expect_kept: bool = True) -> list[Job]:
    def one(name: str, drill: Interruption) -> list[DrillOutcome]:
        with lab.sandbox() as sb, DrillProxy(sb.base_url) as proxy:
            return [checkpoint_once(lab, sb, proxy, name, drill, checkpoint_every, expect_kept)]

    names = names or [f"checkpoint_{n:02d}" for n in range(1, len(plan) + 1)]
    return [partial(one, name, drill) for name, drill in zip(names, plan, strict=True)]


def checkpoint_drill(lab: Lab, plan: list[Interruption], workers: int | None = None,
                     checkpoint_every: str | None = CHECKPOINT_EVERY) -> list[ResumeOutcome]:
    lab.reference  # noqa: B018 - records how many requests an uninterrupted sync makes
    for activity in {d.activity for d in plan}:
        reference_after(lab, activity)  # before the drills that compare against it
    outcomes = run_parallel(checkpoint_jobs(lab, plan, checkpoint_every), workers)
    return [o for chunk in outcomes for o in chunk]  # type: ignore[misc]


def budget_drill(lab: Lab, seconds: int, most_runs: int = 20) -> ResumeOutcome:
    """`sync --max-duration seconds` repeated until a run no longer says `partial` (issue 30):
    each run must exit 0 within `seconds` + 20 s; the row holds the runs' requests together
    as a ratio of a whole sync's, and the warehouse against the lab's reference."""
    out = ResumeOutcome(f"budget_{seconds}", f"--max-duration {seconds}, repeated", "")
    ws = lab.workspace(out.drill)
    started = time.monotonic()
    runs, requests, slowest = 0, 0, 0.0
    with lab.sandbox() as sb, DrillProxy(sb.base_url) as proxy:
        while True:
            runs += 1
            proxy.reset()
            run = ws.sync(proxy.base_url, "--max-duration", str(seconds), timeout=seconds + 120)
            requests += len(proxy.exchanges)
            slowest = max(slowest, run.seconds)
            if not run.ok:
                out.fail(f"run {runs} failed: {run.describe()}")
                break
            if run.seconds > seconds + 20:
                out.fail(f"run {runs} took {run.seconds:.0f} s (budget {seconds} s)")
            if "partial" not in run.stdout + run.stderr:
                break
            if runs >= most_runs:
                out.fail(f"still partial after {runs} runs")
                break
    whole = len(lab.reference_requests)
    out.rerun_requests, out.rerun_ratio = requests, requests / whole if whole else 0.0
    cmp = judge_against_reference(out, lab, ws)
    out.differing = [t for t, diff in cmp.tables.items() if not diff.ok]
    out.first_rc, out.seconds = 0, time.monotonic() - started
    out.outcome = (f"{runs} runs, slowest {slowest:.0f} s, {requests} requests "
                   f"({out.rerun_ratio:.2f} of a sync)")
    return out
