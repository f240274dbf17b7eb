"""CPU of a day's commands at `tiny` (`sync`, `models`, `report`, `status --json`): two
checkouts side by side on the same data (issue 38: the month of daily use is CPU-bound).

    .venv/bin/python benchmarks/daily_cpu.py BASE_CHECKOUT NEW_CHECKOUT [--days 5] [--cold]

Each checkout needs its own `.venv` (`make setup`). A `tiny` sandbox runs in this process; a
directory per checkout is `init`ed, synced, modelled and reported by that checkout. Each day
the sandbox's clock moves with 12 events of activity (`POST /_sandbox/activity`), and each
checkout (alternating which goes first) runs the four commands on its copy. Every command is
its own process: forked from the month's fork server (tests/month/zygote.py: the imports done
once, what the month pays), or with `--cold` a new interpreter (what cron pays, imports
included). Prints each command's median CPU (user+sys of the command's process) per checkout
and their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx

COMMANDS = (["sync"], ["models"], ["report"], ["status", "--json"])
EVENTS_PER_DAY = 12


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SOURCES__", "DESTINATION__", "CREATOR_SYNC", "RUNTIME__"))}
    env.update(RUNTIME__DLTHUB_TELEMETRY="false", NO_COLOR="1")
    return env


def one_day(work: Path, checkout: Path, cold: bool) -> dict[str, float]:
    """Run the day's commands in `work` with `checkout` (this interpreter is its `.venv`'s, and
    its own fork server serves them): CPU s per command."""
    sys.path.insert(0, str(checkout / "tests" / "month"))
    from zygote import Launcher

    launcher = Launcher(work.parent / f"logs-{work.name}", cold=cold)
    cpu: dict[str, float] = {}
    try:
        for argv in COMMANDS:
            run = launcher.start(argv, work, _env())
            if run.wait(600) != 0:
                raise SystemExit(f"{' '.join(argv)} failed in {work}:\n{run.stderr[-2000:]}")
            cpu[argv[0]] = run.cpu
    finally:
        launcher.close()
    return cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--days", type=int, default=5)
    parser.add_argument("--cold", action="store_true", help="a new interpreter per command")
    parser.add_argument("--one-day", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--checkout", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one_day:
        print(json.dumps(one_day(args.one_day, args.checkout, args.cold)))
        return
    from creator_sync.sandbox.testing import start_sandbox

    checkouts = {"base": args.base.resolve(), "new": args.new.resolve()}
    sandbox = start_sandbox(scale="tiny", sites=2, seed=38)
    root = Path(tempfile.mkdtemp(prefix="daily-cpu-"))
    try:
        for name, checkout in checkouts.items():
            # each checkout sets up its own directory (the same data: no activity yet), so
            # that a base older than the warehouse layout of the new one still runs
            (root / name).mkdir()
            exe = checkout / ".venv" / "bin" / "creator-sync"
            subprocess.run([str(exe), "init", "--base-url", sandbox.base_url, "--client-id",
                            "sandbox", "--client-secret", "sandbox-secret", "--yes"],
                           cwd=root / name, env=_env(), check=True, capture_output=True)
            for argv in COMMANDS[:3]:
                subprocess.run([str(exe), *argv], cwd=root / name, env=_env(), check=True,
                               capture_output=True)
        cpu: dict[str, dict[str, list[float]]] = {n: {} for n in checkouts}
        for day in range(args.days):
            httpx.post(f"{sandbox.base_url}/_sandbox/activity",
                       json={"count": EVENTS_PER_DAY}, timeout=120).raise_for_status()
            order = list(checkouts) if day % 2 == 0 else list(checkouts)[::-1]
            for name in order:
                python = checkouts[name] / ".venv" / "bin" / "python"
                out = subprocess.run(
                    [str(python), str(Path(__file__).resolve()), str(checkouts["base"]),
                     str(checkouts["new"]), "--one-day", str(root / name), "--checkout",
                     str(checkouts[name]), *(["--cold"] if args.cold else [])],
                    check=True, capture_output=True, text=True, env=_env())
                for command, seconds in json.loads(out.stdout.splitlines()[-1]).items():
                    cpu[name].setdefault(command, []).append(seconds)
        print(f"CPU s (user+sys) per command, median of {args.days} days at tiny, "
              f"{'a new interpreter per command' if args.cold else 'forked after imports'}")
        print(f"{'command':<8} {'base':>7} {'new':>7} {'new/base':>9}")
        totals = {n: 0.0 for n in checkouts}
        for command in cpu["new"]:
            b, n = (statistics.median(cpu[k][command]) for k in ("base", "new"))
            totals["base"] += b
            totals["new"] += n
            print(f"{command:<8} {b:>7.2f} {n:>7.2f} {n / b:>9.2f}")
        print(f"{'day':<8} {totals['base']:>7.2f} {totals['new']:>7.2f} "
              f"{totals['new'] / totals['base']:>9.2f}")
    finally:
        sandbox.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
