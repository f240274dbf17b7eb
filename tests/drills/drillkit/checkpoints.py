"""Checkpoint drills (issue 30): a first sync stopped by SIGTERM or SIGKILL partway keeps what
its checkpoints committed; the rerun exits 0, reads less than a whole sync, and the warehouse
equals an uninterrupted one, table by table.

The interrupted run commits every `CHECKPOINT_EVERY` seconds (the default is 30; a drill's sync
lasts seconds). The moment is an API request number (a proxy trigger), a share of the
reference sync's requests.
"""

from __future__ import annotations

import signal
import time
from functools import partial

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


def checkpoint_once(lab: Lab, proxy: DrillProxy, name: str, share: float,
                    signum: signal.Signals) -> DrillOutcome:
    point = CrashPoint("extract", max(1, int(share * len(lab.reference_requests))))
    out = DrillOutcome(name, f"{signum.name} at {share:.0%} of a sync ({point})", "")
    ws = lab.workspace(name)
    proxy.reset()
    argv = ws.argv(proxy.base_url, "--checkpoint-every", CHECKPOINT_EVERY)
    started = time.monotonic()
    stop = kill_group if signum == signal.SIGKILL else (lambda proc: proc.send_signal(signum))
    first, stopped = run_and_stop(ws, proxy, argv, point, started, stop=stop)
    expected = -signal.SIGKILL if signum == signal.SIGKILL else 128 + int(signum)
    if stopped is None:
        out.fail(f"the run was not interrupted (finished with rc={first.returncode} first)")
    elif first.returncode != expected:
        out.fail(f"{signum.name} ended the run with rc={first.returncode}, not {expected}: "
                 f"{first.describe()}")
    elif signum != signal.SIGKILL and "row(s) read by this run are loaded" not in first.stderr:
        out.fail(f"the interrupted run did not say what it kept: {first.stderr.strip()!r}")
    proxy.reset()
    rerun = ws.sync(proxy.base_url)
    requests = len(proxy.exchanges)
    if not rerun.ok:
        out.fail(f"rerun after {signum.name} failed: {rerun.describe()}")
    reference = len(lab.reference_requests)
    if requests >= reference:
        out.fail(f"the rerun made {requests} requests, a whole sync {reference}: nothing kept")
    judge_against_reference(out, lab, ws)
    out.seconds = time.monotonic() - started
    ratio = requests / reference if reference else 0.0
    out.outcome = (f"{signum.name} at request {point.arg}: rerun {requests} requests "
                   f"({ratio:.2f} of a sync), identical" if out.ok else f"{signum.name}; FAILED")
    out.rerun_ratio = ratio  # type: ignore[attr-defined]
    return out


def checkpoint_jobs(lab: Lab, plan: list[tuple[float, signal.Signals]]) -> list[Job]:
    def one(name: str, share: float, signum: signal.Signals) -> list[DrillOutcome]:
        with lab.sandbox() as sb, DrillProxy(sb.base_url) as proxy:
            return [checkpoint_once(lab, proxy, name, share, signum)]

    return [partial(one, f"checkpoint_{n:02d}", share, signum)
            for n, (share, signum) in enumerate(plan, start=1)]


def checkpoint_drill(lab: Lab, plan: list[tuple[float, signal.Signals]],
                     workers: int | None = None) -> list[DrillOutcome]:
    lab.reference  # noqa: B018 - records how many requests an uninterrupted sync makes
    return [o for chunk in run_parallel(checkpoint_jobs(lab, plan), workers) for o in chunk]
