"""The benchmark phases: every client measured side by side against the same sandbox.

Each phase starts its own sandbox process with the options it needs and runs the clients in
turn against it, so that drift on a noisy machine hits all of them alike. Every phase runs once;
then rounds 2..N of the latency and no-latency phases run while they fit the time budget.
Ratios are built from the medians in ``csbench.figures``.
"""

from __future__ import annotations

import contextlib
import json
import math
import shutil
import sys
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path

from csbench import budget, machine, ours, traffic
from csbench.measure import ClientFailed, Measurement, run_measured
from csbench.sandbox_proc import CLIENT_ID, CLIENT_SECRET, Sandbox, run_sandbox

# The next smaller scale, to see whether peak RSS grows with data size.
BASELINE_SCALE = {
    "tiny": "tiny",
    "demo": "tiny",
    "small": "demo",
    "medium": "small",
    "large": "medium",
}
# How long the rate-limit run may last: long enough for the limit to bind, bounded in time.
RATE_WINDOW_S = {"tiny": 15.0, "demo": 45.0, "small": 45.0}
DEFAULT_RATE_WINDOW_S = 120.0
# Adaptive rate control: the sandbox's limits (requests/min), each with and without Retry-After,
# and how long ours (told no limit) may run against each. At tiny the sync is ~65 requests, so
# one limit small enough to bind (the code path of every limit); the bound keeps the smoke
# run short.
ADAPTIVE_LIMITS = {"tiny": (30,)}
DEFAULT_ADAPTIVE_LIMITS = (100, 300, 1200)
ADAPTIVE_BOUND_S = {"tiny": 45.0, "demo": 180.0}
DEFAULT_ADAPTIVE_BOUND_S = 300.0
# the settings run side by side; their starts (slow start) this far apart, at most a third of
# the bound (a shorter bound, e.g. the smoke run's, staggers less and waits less)
ADAPTIVE_STAGGER_S = 15.0
ACTIVITY_CHANGES = 1000
PHASES = ("wall", "cpu", "baseline", "rate")
# Phases run only when asked for (`--phases ...,large`): a full sync at `large` takes more than
# an hour on the shared 2-core machine.
OPTIONAL_PHASES = ("large",)
LARGE_SCALE = "large"
# How far one activity event moves the sandbox clock in the latency phase: 1,000 changes then
# span ~17 hours, a nightly sync's worth. (The sandbox default, 1 h, would move the clock 41
# days and trip ours' periodic full refresh, measuring a full sync instead of an incremental.)
SECONDS_PER_EVENT = 60


@dataclass
class Options:
    scale: str
    runs: int
    seed: int
    sites: int
    latency_ms: int
    rate_limit: int
    rate_window_s: float
    concurrency: int | None
    peer_parallelized: bool
    workdir: Path
    client_timeout_s: float
    budget_s: float = 0.0  # 0: no budget; else repeat rounds only while they fit
    floor_budget_s: float = 30.0  # sample the floors' pages to fetch for about this long
    phases: tuple[str, ...] = PHASES
    with_peer: bool = True  # False: ours only (e.g. memory flatness at medium)
    adaptive_limits: tuple[int, ...] = DEFAULT_ADAPTIVE_LIMITS
    adaptive_bound_s: float = DEFAULT_ADAPTIVE_BOUND_S


@dataclass(frozen=True)
class RateSetting:
    """One adaptive-rate run: the sandbox's limit, with or without Retry-After on its 429s."""

    limit: int
    retry_after: bool

    @property
    def label(self) -> str:
        return f"adaptive_{self.limit}_{'ra' if self.retry_after else 'nora'}"

    @property
    def description(self) -> str:
        header = "Retry-After" if self.retry_after else "no Retry-After"
        return f"ours, no --rate-limit: sandbox {self.limit}/min, {header}"


def rate_settings(options: Options) -> list[RateSetting]:
    return [RateSetting(limit, ra) for limit in options.adaptive_limits for ra in (True, False)]


@dataclass
class Results:
    """Measurements by row label, plus facts the figures need."""

    measurements: dict[str, list[Measurement]] = field(default_factory=lambda: defaultdict(list))
    failures: dict[str, str] = field(default_factory=dict)
    facts: dict[str, object] = field(default_factory=dict)
    peak_in_flight: list[int] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    load_avgs: list[float] = field(default_factory=list)  # 1-min load after each client run

    def ok(self, label: str) -> list[Measurement]:
        return [
            m for m in self.measurements.get(label, []) if m.exit_code == 0 or m.stopped_at_bound
        ]


class Bench:
    def __init__(self, options: Options) -> None:
        self.options = options
        self.results = Results()
        self._counter = 0
        self.started = time.monotonic()

    def _log(self, message: str) -> None:
        print(f"[bench] {message}", file=sys.stderr, flush=True)

    def _run_dir(self, name: str) -> Path:
        self._counter += 1  # (main thread only: the side-by-side phases number theirs first)
        path = self.options.workdir / f"{self._counter:03d}-{name}"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def measure(
        self,
        label: str,
        target: list[str],
        run_dir: Path,
        env: dict[str, str] | None = None,
        stop_after_s: float | None = None,
    ) -> Measurement | None:
        """Run one client; a failure is recorded against its row instead of ending the suite."""
        self._log(f"{label}: running in {run_dir}")
        try:
            m = run_measured(
                label,
                target,
                run_dir,
                env=env,
                stop_after_s=stop_after_s,
                timeout_s=self.options.client_timeout_s,
            )
        except ClientFailed as failure:
            self._log(f"{label}: FAILED {failure}")
            self.results.failures[label] = str(failure).splitlines()[0]
            return None
        self.results.measurements[label].append(m)
        m.load_avg = machine.load_average()
        self.results.load_avgs.append(m.load_avg)
        self._log(
            f"{label}: load {m.load_avg:.1f} wall {m.wall_s:.2f}s cpu {m.cpu_s:.2f}s rss {m.max_rss_mib:.0f}MiB "
            f"requests {len(m.requests)} (429: {m.count(429)})"
        )
        return m

    # -- clients ---------------------------------------------------------------------------

    def ours_full(self, sandbox: Sandbox, label: str) -> tuple[Measurement | None, Path]:
        run_dir = self._run_dir(label)
        argv, env = ours.sync_target(
            sandbox.base_url, run_dir, concurrency=self.options.concurrency
        )
        return self.measure(label, argv, run_dir, env), run_dir

    def ours_again(self, sandbox: Sandbox, label: str, state_dir: Path) -> Measurement | None:
        argv, env = ours.sync_target(
            sandbox.base_url, state_dir, concurrency=self.options.concurrency
        )
        return self.measure(label, argv, state_dir, env)

    def peer(self, sandbox: Sandbox, label: str, parallelized: bool = False) -> None:
        run_dir = self._run_dir(label)
        target = [
            "-m",
            "csbench.peer",
            "--base-url",
            sandbox.base_url,
            "--duckdb",
            str(run_dir / "peer.duckdb"),
            "--pipelines-dir",
            str(run_dir / "pipelines"),
        ]
        if parallelized:
            target.append("--parallelized")
        self.measure(label, target, run_dir, _credentials())

    def floor(
        self, sandbox: Sandbox, label: str, pages: list[str], concurrency: int, every: int
    ) -> None:
        """Replay ``pages`` (or every ``every``-th of them) and extrapolate to all of them.

        A floor is linear in pages by construction (same latency each), so a 1-in-k sample
        extrapolates exactly enough while keeping the suite inside its time budget.
        """
        run_dir = self._run_dir(label)
        sample = pages[::every]
        (run_dir / "pages.txt").write_text("\n".join(sample) + "\n")
        report = run_dir / "floor.json"
        target = [
            "-m",
            "csbench.floor",
            "--base-url",
            sandbox.base_url,
            "--pages",
            str(run_dir / "pages.txt"),
            "--concurrency",
            str(concurrency),
            "--report",
            str(report),
        ]
        measured = self.measure(label, target, run_dir, _credentials())
        if measured is None or every == 1:
            return
        fetched = json.loads(report.read_text())
        scale = len(pages) / max(1, fetched["pages"])
        measured.raw_wall_s = measured.wall_s
        measured.wall_s += fetched["fetch_s"] * (scale - 1)
        measured.note = f"1 in {every} of {len(pages)} pages, extrapolated"
        self._log(f"{label}: extrapolated wall {measured.wall_s:.1f}s ({measured.note})")

    def _floor_every(self, pages: int) -> int:
        """Sample step so that the sequential floor fetches for about ``floor_budget_s``."""
        per_page = self.options.latency_ms / 1000 + 0.004
        if self.options.floor_budget_s <= 0:
            return 1
        return max(1, math.ceil(pages * per_page / self.options.floor_budget_s))

    # -- phases ----------------------------------------------------------------------------

    def peer_first(self, label: str) -> bool:
        """Which of ours and the peer runs first alternates from round to round (the second
        round puts the peer first), so that a drift of the machine does not favour either."""
        return len(self.results.measurements.get(label, [])) % 2 == 1

    def wall_round(self, sandbox: Sandbox) -> None:
        """One side-by-side round with latency, on a fresh sandbox.

        Ours full, the floors on ours' pages, the peer (before ours in every other round);
        then ours incremental on the state of that full run: once with nothing new, once
        after 1,000 changes.
        """
        o = self.options
        peer_first = o.with_peer and self.peer_first("ours_full")
        if peer_first:
            self.peer(sandbox, "peer")
        measured, state_dir = self.ours_full(sandbox, "ours_full")
        if measured is None:
            return
        self.no_limit_ab(sandbox)
        pages = traffic.pages(measured.requests)
        concurrency = max(1, traffic.peak_in_flight(measured.requests))
        self.results.peak_in_flight.append(concurrency)
        self.results.facts["resource_site_pairs"] = len(traffic.list_endpoints(measured.requests))
        self.note_request_floor(sandbox, measured)
        every = self._floor_every(len(pages))
        self.floor(sandbox, "floor_seq", pages, 1, every)
        self.floor(sandbox, "floor_conc", pages, concurrency, every)
        if o.with_peer and not peer_first:
            self.peer(sandbox, "peer")
        if o.with_peer and o.peer_parallelized:
            self.peer(sandbox, "peer_parallel", parallelized=True)
        self.ours_again(sandbox, "ours_incr_none", state_dir)
        self.results.facts["activity"] = sandbox.activity(ACTIVITY_CHANGES)
        self.ours_again(sandbox, "ours_incr_1000", state_dir)

    def no_limit_ab(self, sandbox: Sandbox) -> None:
        """What slow start costs with no limit: ours adaptive and ours --fixed-rate (unpaced, as
        before), each a fresh full sync, both after ours_full warmed the sandbox's response
        cache (the first sync of a sandbox is slower), in alternating order from round to round."""
        o = self.options
        pair = [("ours_adaptive_ab", False), ("ours_fixed_rate", True)]
        if len(self.results.measurements["ours_fixed_rate"]) % 2:
            pair.reverse()
        for label, fixed in pair:
            run_dir = self._run_dir(label)
            argv, env = ours.sync_target(
                sandbox.base_url, run_dir, concurrency=o.concurrency, fixed_rate=fixed)
            self.measure(label, argv, run_dir, env)

    def phase_wall(self) -> None:
        """Latency on: ours, floors, peer and ours incremental, side by side."""
        o = self.options
        self._log(f"phase wall: scale {o.scale}, latency {o.latency_ms} ms")
        with self.sandbox(
            o.scale, latency_ms=o.latency_ms, seconds_per_event=SECONDS_PER_EVENT
        ) as sandbox:
            self.wall_round(sandbox)

    def note_request_floor(self, sandbox: Sandbox, measured: Measurement) -> None:
        """Once per suite: ours' full-sync requests beside the floor for the same data."""
        if "request_floor" in self.results.facts:
            return
        floor = budget.request_floor(sandbox.base_url, sandbox.token(), measured.requests)
        self.results.facts["request_floor"] = floor.as_json()
        self.results.facts["full_sync_requests"] = {
            "total": len(measured.requests),
            "by_endpoint": traffic.requests_by_endpoint(measured.requests),
        }
        self._log(f"request floor: {floor.total} (ours' full sync: {len(measured.requests)})")

    def cpu_round(self, sandbox: Sandbox) -> None:
        """No latency: ours full and the peer (alternating which goes first), then ours again
        on that full run's state with nothing new (the fixed cost of a scheduled sync)."""
        peer_first = self.options.with_peer and self.peer_first("ours_cpu")
        if peer_first:
            self.peer(sandbox, "peer_cpu")
        measured, state_dir = self.ours_full(sandbox, "ours_cpu")
        if measured is not None:
            self.note_request_floor(sandbox, measured)
            self.ours_again(sandbox, "ours_incr_none_cpu", state_dir)
        if self.options.with_peer and not peer_first:
            self.peer(sandbox, "peer_cpu")
        if measured is not None and "records" not in self.results.facts:
            counts = traffic.census(sandbox.base_url, sandbox.token(), measured.requests)
            self.results.facts["census"] = counts
            self.results.facts["records"] = sum(counts.values())

    def phase_cpu(self) -> None:
        """No latency: CPU and peak RSS of ours and the peer, and the record census."""
        self._log(f"phase cpu: scale {self.options.scale}, no latency")
        with self.sandbox(self.options.scale) as sandbox:
            self.cpu_round(sandbox)

    def phase_baseline(self) -> None:
        """Ours at the next smaller scale: is peak RSS flat in data size?"""
        o = self.options
        scale = BASELINE_SCALE[o.scale]
        self.results.facts["baseline_scale"] = scale
        if scale == o.scale:  # tiny: nothing smaller; the smoke run only needs the figure
            self.results.measurements["ours_baseline"] = list(self.results.ok("ours_cpu"))
            self._log("phase memory baseline: same scale, reusing the no-latency runs")
            return
        self._log(f"phase memory baseline: scale {scale}")
        with self.sandbox(scale) as sandbox:
            for run in range(o.runs):
                if run and o.budget_s and time.monotonic() - self.started > o.budget_s / 2:
                    self.results.skipped.append(f"baseline run {run + 1}: past half the budget")
                    break
                self.ours_full(sandbox, "ours_baseline")

    def phase_large(self) -> None:
        """Ours alone, one full sync at `large` with no latency, in its own process: does
        peak RSS stay flat (÷ ours at this run's scale), and what wall and requests?

        The sandbox generates `large` once before it is ready (~5 s, ~1.3 GiB) and serves from
        memory; it is another process, so its CPU is not ours. Its share of the wall time is
        what a platform answering at no latency would cost too, and the row says so.
        """
        self._log(f"phase large: ours full sync at {LARGE_SCALE}, no latency")
        with self.sandbox(LARGE_SCALE) as sandbox:
            measured, _ = self.ours_full(sandbox, "ours_large")
            if measured is not None:
                measured.note = "no latency; sandbox serving in its own process"

    def phase_rate(self) -> None:
        """Ours capped at the sandbox's limit; then ours finding each limit on its own."""
        self.rate_capped()
        self.rate_adaptive()

    def rate_adaptive(self) -> None:
        """Ours with no --rate-limit against each setting, side by side (each client mostly
        sleeps), every one with its own sandbox, starts staggered, bounded in time."""
        o = self.options
        settings = rate_settings(o)
        if not settings:
            return
        self._log(f"phase adaptive rate: {len(settings)} settings side by side, "
                  f"{o.adaptive_bound_s:.0f}s bound each")
        with contextlib.ExitStack() as stack:
            sandboxes = [
                stack.enter_context(
                    self.sandbox(o.scale, rate_limit=s.limit, retry_after=s.retry_after))
                for s in settings
            ]
            run_dirs = [self._run_dir(s.label) for s in settings]
            stagger = min(ADAPTIVE_STAGGER_S, o.adaptive_bound_s / 3)

            def run(index: int) -> None:
                setting, run_dir = settings[index], run_dirs[index]
                time.sleep(index * stagger)
                argv, env = ours.sync_target(
                    sandboxes[index].base_url, run_dir, concurrency=o.concurrency)
                env["CSBENCH_PROBE_FLUSH_S"] = "1"
                measured = self.measure(
                    setting.label, argv, run_dir, env, stop_after_s=o.adaptive_bound_s)
                if measured is not None:
                    self.results.facts[setting.label] = {
                        "gave_up": traffic.gave_up(run_dir / "pipelines" / "last-sync.log"),
                        "bound_s": o.adaptive_bound_s,
                    }

            with ThreadPoolExecutor(len(settings), thread_name_prefix="rate") as pool:
                list(pool.map(run, range(len(settings))))

    def rate_capped(self) -> None:
        """Sandbox and ours both at the rate limit; bounded in time."""
        o = self.options
        flag = ours.rate_limit_flag()
        self.results.facts["rate_limit_flag"] = flag
        self._log(f"phase rate limit: {o.rate_limit}/min via {flag}, {o.rate_window_s:.0f}s bound")
        with self.sandbox(o.scale, rate_limit=o.rate_limit) as sandbox:
            run_dir = self._run_dir("ours_rate")
            argv, env = ours.sync_target(
                sandbox.base_url,
                run_dir,
                concurrency=o.concurrency,
                rate_limit=o.rate_limit if flag else None,
            )
            env["CSBENCH_PROBE_FLUSH_S"] = "1"
            self.measure("ours_rate", argv, run_dir, env, stop_after_s=o.rate_window_s)

    def repeat_rounds(self, started: float, durations: dict[str, float]) -> None:
        """Runs 2..N of the wall and CPU rounds, each only if it still fits the time budget."""
        o = self.options
        for run in range(2, o.runs + 1):
            for name, latency in (("wall", o.latency_ms), ("cpu", 0)):
                if name not in durations:
                    continue
                spent = time.monotonic() - started
                if o.budget_s and spent + durations[name] > o.budget_s:
                    self.results.skipped.append(
                        f"{name} run {run}: would end after {(spent + durations[name]) / 60:.1f} "
                        f"min, over the {o.budget_s / 60:.0f} min budget"
                    )
                    self._log(f"skip: {self.results.skipped[-1]}")
                    continue
                self._log(f"{name} run {run}/{o.runs}")
                extra = {"seconds_per_event": SECONDS_PER_EVENT} if name == "wall" else {}
                with self.sandbox(o.scale, latency_ms=latency, **extra) as sandbox:
                    if name == "wall":
                        self.wall_round(sandbox)
                    else:
                        self.cpu_round(sandbox)

    def run_all(self) -> Results:
        started = self.started = time.monotonic()
        durations: dict[str, float] = {}
        for name, phase in (
            ("wall", self.phase_wall),
            ("cpu", self.phase_cpu),
            ("baseline", self.phase_baseline),
            ("rate", self.phase_rate),
        ):
            if name not in self.options.phases:
                self.results.skipped.append(f"{name} phase: not selected (--phases)")
                continue
            begun = time.monotonic()
            phase()
            durations[name] = time.monotonic() - begun
        self.repeat_rounds(started, durations)
        if "large" in self.options.phases:  # last: it does not count against the budget
            begun = time.monotonic()
            self.phase_large()
            durations["large"] = time.monotonic() - begun
        self.results.facts["phase_seconds"] = {k: round(v, 1) for k, v in durations.items()}
        return self.results

    def sandbox(self, scale: str, **kwargs: int | bool) -> AbstractContextManager[Sandbox]:
        return run_sandbox(
            scale, self.options.workdir, seed=self.options.seed, sites=self.options.sites, **kwargs
        )


def _credentials() -> dict[str, str]:
    return {"CSBENCH_CLIENT_ID": CLIENT_ID, "CSBENCH_CLIENT_SECRET": CLIENT_SECRET}


def cleanup(workdir: Path, keep: bool) -> None:
    if not keep:
        shutil.rmtree(workdir, ignore_errors=True)
