"""``benchmarks/run``: measure ours, dlt's rest_api peer and the httpx floor side by side."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from csbench import figures, machine
from csbench.measure import BENCH_DIR, compile_repo
from csbench.suite import (
    ADAPTIVE_BOUND_S,
    ADAPTIVE_LIMITS,
    DEFAULT_ADAPTIVE_BOUND_S,
    DEFAULT_ADAPTIVE_LIMITS,
    DEFAULT_RATE_WINDOW_S,
    OPTIONAL_PHASES,
    PHASES,
    RATE_WINDOW_S,
    Bench,
    Options,
    cleanup,
)

SCALES = ("tiny", "demo", "small", "medium", "large")
DEFAULT_BUDGET_MIN = {"tiny": 14.0, "demo": 14.0, "small": 14.0}
RESULTS_DIR = BENCH_DIR / "results"


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="benchmarks/run",
        description="Side-by-side benchmark of creator-sync against dlt's rest_api source and "
        "a minimal httpx floor, on the sandbox in its own process. Prints one table of ratios "
        "of medians and saves it as JSON under benchmarks/results/.",
    )
    parser.add_argument("--scale", choices=SCALES, default="small")
    parser.add_argument("--runs", type=int, default=3, help="runs per client; medians (default 3)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--sites", type=int, default=2)
    parser.add_argument("--latency-ms", type=int, default=50, help="for the wall-time figures")
    parser.add_argument("--rate-limit", type=int, default=600, help="requests/min, both sides")
    parser.add_argument(
        "--rate-window",
        type=float,
        default=None,
        help="seconds the rate-limited run may last (default by scale)",
    )
    parser.add_argument(
        "--adaptive-limits",
        default=None,
        help="sandbox limits (requests/min) that ours, told no limit, must find; each runs with "
        "and without Retry-After, side by side (default 100,300,1200; 30 at tiny; '' = none)",
    )
    parser.add_argument(
        "--adaptive-bound",
        type=float,
        default=None,
        help="seconds each adaptive-rate run may last (default 300; 45 at tiny, 180 at demo)",
    )
    parser.add_argument(
        "--concurrency",
        type=int,
        default=None,
        help="ours' --concurrency (default: ours' own default)",
    )
    parser.add_argument(
        "--peer-parallelized",
        action="store_true",
        help="also run the peer with parallelized=True (an extra row)",
    )
    parser.add_argument(
        "--budget-min",
        type=float,
        default=None,
        help="repeat runs only while the suite fits this many minutes "
        "(default 14 up to small, unlimited above; 0: no budget)",
    )
    parser.add_argument(
        "--floor-budget",
        type=float,
        default=30.0,
        help="sample the floors' pages so that the sequential floor fetches for about this many "
        "seconds, then extrapolate (0: replay every page)",
    )
    parser.add_argument(
        "--phases",
        default=",".join(PHASES),
        help="comma-separated subset of wall,cpu,baseline,rate, plus large (not by default: a "
        "full sync at large, ~30 min on 2 cores; its peak RSS is compared with ours at --scale) "
        "(e.g. cpu,baseline for memory flatness at medium without the long latency runs)",
    )
    parser.add_argument(
        "--no-peer",
        action="store_true",
        help="skip the peer (its figures print n/a): e.g. memory flatness at medium, where the "
        "peer alone takes most of an hour",
    )
    parser.add_argument(
        "--client-timeout",
        type=float,
        default=1800.0,
        help="seconds before a client is considered hung",
    )
    parser.add_argument(
        "--workdir",
        type=Path,
        default=None,
        help="where runs write (default: a temp dir, removed unless --keep)",
    )
    parser.add_argument("--keep", action="store_true", help="keep run directories and logs")
    parser.add_argument(
        "--json",
        type=Path,
        default=None,
        help="write results here (default benchmarks/results/<date>-<scale>.json)",
    )
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    phases = tuple(p.strip() for p in args.phases.split(",") if p.strip())
    unknown = sorted(set(phases) - set(PHASES) - set(OPTIONAL_PHASES))
    if unknown or not phases:
        parser.error(
            f"--phases: unknown {', '.join(unknown) or '(none given)'}; "
            f"choose from {', '.join(PHASES + OPTIONAL_PHASES)}"
        )
    args.phases = phases
    if args.adaptive_limits is None:
        args.adaptive_limits = ADAPTIVE_LIMITS.get(args.scale, DEFAULT_ADAPTIVE_LIMITS)
    else:
        try:
            args.adaptive_limits = tuple(
                int(v) for v in args.adaptive_limits.split(",") if v.strip())
        except ValueError:
            parser.error(f"--adaptive-limits: not a comma-separated list of integers: "
                         f"{args.adaptive_limits!r}")
        if any(v <= 0 for v in args.adaptive_limits):
            parser.error("--adaptive-limits: limits must be positive")
    if args.adaptive_bound is None:
        args.adaptive_bound = ADAPTIVE_BOUND_S.get(args.scale, DEFAULT_ADAPTIVE_BOUND_S)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    command = "benchmarks/run " + shlex.join(sys.argv[1:] if argv is None else argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="csbench-"))
    options = Options(
        scale=args.scale,
        runs=args.runs,
        seed=args.seed,
        sites=args.sites,
        latency_ms=args.latency_ms,
        rate_limit=args.rate_limit,
        rate_window_s=args.rate_window or RATE_WINDOW_S.get(args.scale, DEFAULT_RATE_WINDOW_S),
        concurrency=args.concurrency,
        peer_parallelized=args.peer_parallelized,
        phases=args.phases,
        with_peer=not args.no_peer,
        workdir=workdir,
        client_timeout_s=args.client_timeout,
        budget_s=60
        * (
            args.budget_min
            if args.budget_min is not None
            else DEFAULT_BUDGET_MIN.get(args.scale, 0)
        ),
        floor_budget_s=args.floor_budget,
        adaptive_limits=args.adaptive_limits,
        adaptive_bound_s=args.adaptive_bound,
    )
    info = machine.describe()
    compile_repo()
    started = time.monotonic()
    try:
        results = Bench(options).run_all()
    finally:
        cleanup(workdir, keep=args.keep or args.workdir is not None)
    elapsed = time.monotonic() - started
    figs = figures.compute(results, options)
    rows = figures.row_medians(results, options)
    header = _header(info, command, options, elapsed, results.load_avgs)
    print(figures.render(header, rows, figs, results.skipped), flush=True)
    path = _save(args, info, command, options, elapsed, results, rows, figs)
    print(f"\nsaved {path}", flush=True)
    return 1 if results.failures else 0


def _header(
    info: dict[str, object],
    command: str,
    options: Options,
    elapsed: float,
    loads: list[float],
) -> list[str]:
    versions = ", ".join(f"{k} {v}" for k, v in info["versions"].items())  # type: ignore[attr-defined]
    return [
        f"creator-sync benchmarks: scale {options.scale}, {options.sites} sites, seed "
        f"{options.seed}, medians of up to {options.runs} run(s) per row (see column runs)",
        f"command: {command}",
        f"date: {info['date_utc']}  (suite took {elapsed / 60:.1f} min)",
        f"machine: {info['cores']} cores, {info['cpu']}, {info['ram_gib']} GiB RAM, {info['os']}",
        f"python {info['python']}; {versions}; commit {info['commit']}",
        _load_line(info, loads),
    ]


def _load_line(info: dict[str, object], loads: list[float]) -> str:
    """Wall times mean little on a busy machine: say how busy it was."""
    start = info.get("load_avg_1m_start", float("nan"))
    peak = max(loads, default=float("nan"))
    line = f"load average (1 min): {start} at start, {peak:.2f} at most after a client run"
    cores = info.get("cores") or 1
    if peak > cores:  # type: ignore[operator]
        line += f"  WARNING: above {cores} cores, other work competed with the clients"
    return line


def _save(
    args: argparse.Namespace,
    info: dict[str, object],
    command: str,
    options: Options,
    elapsed: float,
    results: object,
    rows: list[dict[str, object]],
    figs: list[figures.Figure],
) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = args.json or RESULTS_DIR / f"{stamp}-{options.scale}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "command": command,
        "machine": info,
        "elapsed_s": round(elapsed, 1),
        "options": {k: str(v) if isinstance(v, Path) else v for k, v in vars(options).items()},
        "rows": rows,
        "figures": figures.as_json(figs),
        "facts": results.facts,  # type: ignore[attr-defined]
        "peak_in_flight": results.peak_in_flight,  # type: ignore[attr-defined]
        "load_avgs": results.load_avgs,  # type: ignore[attr-defined]
        "failures": results.failures,  # type: ignore[attr-defined]
        "skipped": results.skipped,  # type: ignore[attr-defined]
        "runs": {label: [m.summary() for m in ms] for label, ms in results.measurements.items()},  # type: ignore[attr-defined]
    }
    path.write_text(json.dumps(payload, indent=2, default=str, allow_nan=True))
    return path
