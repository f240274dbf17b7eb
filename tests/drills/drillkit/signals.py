"""Signal drills: SIGINT or SIGTERM at a seeded moment of a sync (extract, normalise, load).

After each interrupted run: the exit code is 130 (SIGINT) or 143 (SIGTERM), stderr says
"interrupted" on one line without a traceback or a Python class name, no file the run could have
written holds the client secret, an access/refresh token or the PII salt, and a rerun equals a
clean sync (the reference). Secrets are unique per drill (the proxy swaps the client secret for
the sandbox's and records every token issued), so a hit can only be a leak.
"""

from __future__ import annotations

import re
import secrets
import signal
import time
from collections.abc import Sequence
from functools import partial

from creator_sync.sources.creator_platform.endpoints import PII_ANY_COLUMNS as PII_COLUMNS

from .drills import (
    DRILL_SEED,
    CrashPoint,
    DrillOutcome,
    Job,
    Lab,
    judge_against_reference,
    plan_crashes,
    run_and_stop,
    run_parallel,
)
from .proxy import DrillProxy
from .runner import CLIENT_ID, CLIENT_SECRET
from .scan import Scanner

SIGNALS = (signal.SIGINT, signal.SIGTERM)
# the run hashes PII with a salt (a secret too): hashed columns (the source's PII_COLUMNS)
# differ from the reference's
PII_ARGS = ("--pii", "hash")
CLASS_NAME = re.compile(r"\b[A-Z][A-Za-z]+(Error|Exception|Interrupt)\b")


def plan_signals(n: int, total_requests: int, seed: int = DRILL_SEED + 1
                 ) -> list[tuple[CrashPoint, signal.Signals]]:
    """`n` seeded moments over extract, normalise and load, SIGINT and SIGTERM in turn."""
    points = plan_crashes(n, total_requests, seed=seed)
    return [(p, SIGNALS[i % 2]) for i, p in enumerate(points)]


def signal_jobs(lab: Lab, plan: Sequence[tuple[CrashPoint, signal.Signals]],
                numbers: Sequence[int] | None = None) -> list[Job]:
    numbers = numbers or range(1, len(plan) + 1)

    def one(name: str, point: CrashPoint, signum: signal.Signals) -> list[DrillOutcome]:
        secret = f"drill-signal-{secrets.token_hex(12)}"
        with lab.sandbox() as sb, DrillProxy(sb.base_url, secret_map={secret: CLIENT_SECRET}) as proxy:
            return [signal_once(lab, proxy, name, point, signum, secret)]

    return [partial(one, f"signal_{n:02d}", p, s) for n, (p, s) in zip(numbers, plan, strict=True)]


def signal_drill(lab: Lab, plan: Sequence[tuple[CrashPoint, signal.Signals]],
                 workers: int | None = None, numbers: Sequence[int] | None = None,
                 ) -> list[DrillOutcome]:
    lab.reference  # noqa: B018
    return [o for chunk in run_parallel(signal_jobs(lab, plan, numbers), workers) for o in chunk]


def signal_once(lab: Lab, proxy: DrillProxy, name: str, point: CrashPoint,
                signum: signal.Signals, secret: str) -> DrillOutcome:
    out = DrillOutcome(name, f"{signum.name} {point}", "")
    ws = lab.workspace(name)
    salt = f"drill-salt-{secrets.token_hex(12)}"
    ws.extra_env = {"SOURCES__CREATOR_PLATFORM__PII_SALT": salt}
    proxy.reset()
    argv = ws.argv(proxy.base_url, *PII_ARGS, client_secret=secret)
    started = time.monotonic()
    first, signalled = run_and_stop(ws, proxy, argv, point, started,
                                    stop=lambda proc: proc.send_signal(signum))
    expected = 128 + int(signum)
    if signalled is None:
        out.fail(f"the run was not interrupted (finished with rc={first.returncode} first)")
    elif first.returncode != expected:
        out.fail(f"{signum.name} ended the run with rc={first.returncode}, not {expected}: "
                 f"{first.describe()}")
    else:
        problems = _judge_output(first.stderr)
        for problem in problems:
            out.fail(problem)
    rerun = ws.sync(proxy.base_url, *PII_ARGS, client_secret=secret)
    if not rerun.ok:
        out.fail(f"rerun after {signum.name} failed: {rerun.describe()}")
    needles = {"client_secret": secret, "pii_salt": salt}
    needles.update({f"token #{i + 1}": t for i, t in enumerate(sorted(proxy.tokens))})
    if not proxy.tokens:
        out.fail("no token was captured: the scan would prove nothing")
    scanner = Scanner(needles, client_id=CLIENT_ID)
    findings = scanner.scan_tree(ws.root)
    for i, run in enumerate((first, rerun)):
        findings += scanner.scan_text(run.stdout + run.stderr, f"output of run {i + 1}")
    for finding in sorted({str(f) for f in findings}):
        out.fail(finding)
    judge_against_reference(out, lab, ws, exclude_columns=PII_COLUMNS)
    out.seconds = time.monotonic() - started
    files = sum(1 for p in ws.root.rglob("*") if p.is_file())
    out.outcome = (f"{signum.name} in {signalled}: rc {first.returncode}, {len(needles)} secrets "
                   f"absent from {files} files, rerun identical" if out.ok
                   else f"{signum.name} in {signalled}; FAILED")
    return out


def _judge_output(stderr: str) -> list[str]:
    """One `error: interrupted ...` line; no traceback, no Python class name."""
    problems = []
    errors = [ln for ln in stderr.splitlines() if ln.startswith("error:")]
    if len(errors) != 1 or "interrupted" not in errors[0]:
        problems.append(f"stderr does not end with one 'error: interrupted' line: {stderr[-600:]!r}")
    if "Traceback" in stderr:
        problems.append("a traceback was printed")
    if CLASS_NAME.search(stderr):
        problems.append(f"a Python class name was printed: {CLASS_NAME.search(stderr).group(0)}")
    return problems
