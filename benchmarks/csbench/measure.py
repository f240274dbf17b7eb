"""Run one client as a child process and measure it: wall, CPU, peak RSS, requests.

Why a child per client: CPU seconds and peak RSS must belong to that client alone. ``os.wait4``
returns the rusage of exactly that child (and the descendants it waited for), unlike
``RUSAGE_CHILDREN``, whose ``ru_maxrss`` is a maximum over every child the harness ever had.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from csbench.probe import read_requests

BENCH_DIR = Path(__file__).resolve().parent.parent
REPO = BENCH_DIR.parent


def compile_repo() -> None:
    """Write the bytecode of the repository's packages, as installing the package would.

    `pip install` compiles a package's modules; the editable checkout the benchmark runs has
    none until a run writes them, and under `PYTHONDONTWRITEBYTECODE=1` (set on the
    development machines) no run does: every client then compiled ~40 modules of ours from
    source, ~0.1 s CPU of each nothing-new run (docs/performance.md#nothing-new). Stale files are
    harmless: Python
    checks each against its source and compiles in memory when they differ.
    """
    import compileall
    import tomllib

    for folder in package_folders(tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))):
        compileall.compile_dir(folder, quiet=1)


def package_folders(pyproject: dict) -> list[Path]:
    """The repository's folders the wheel's packages are built from: the top-level package's
    own, and each folder `package-dir` maps under it (`sources/` is `creator_sync.sources`)."""
    setuptools = pyproject["tool"]["setuptools"]
    names = [p for p in setuptools["packages"] if "." not in p]
    names += list(setuptools.get("package-dir", {}).values())
    return [REPO / name for name in sorted(set(names)) if (REPO / name).is_dir()]


@dataclass
class Request:
    start_s: float
    end_s: float
    method: str
    path: str
    query: str
    status: int


@dataclass
class Measurement:
    """What one client run cost. ``requests`` comes from the in-process probe."""

    label: str
    exit_code: int
    wall_s: float
    cpu_s: float
    max_rss_mib: float
    requests: list[Request] = field(default_factory=list)
    timed_out: bool = False
    stopped_at_bound: bool = False
    log_path: str = ""
    raw_wall_s: float | None = None  # before extrapolation (sampled floors)
    load_avg: float = float("nan")  # machine's 1-min load average when the run ended
    note: str = ""

    def count(self, status: int | None = None) -> int:
        return sum(1 for r in self.requests if status is None or r.status == status)

    def summary(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "exit_code": self.exit_code,
            "wall_s": round(self.wall_s, 3),
            "cpu_s": round(self.cpu_s, 3),
            "max_rss_mib": round(self.max_rss_mib, 1),
            "requests": len(self.requests),
            "status_429": self.count(429),
            "timed_out": self.timed_out,
            "stopped_at_bound": self.stopped_at_bound,
            "raw_wall_s": None if self.raw_wall_s is None else round(self.raw_wall_s, 3),
            "note": self.note,
            "load_avg_1m": self.load_avg,
            "log": self.log_path,
        }


class ClientFailed(RuntimeError):
    """A measured client exited non-zero: its figures would be meaningless."""


def child_env(extra: dict[str, str] | None = None, repo: Path = REPO) -> dict[str, str]:
    """Environment for a measured child: our package importable (from `repo`, another
    checkout for another build), no telemetry, no colour."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(BENCH_DIR), str(repo), env.get("PYTHONPATH", "")) if p
    )
    env.setdefault("RUNTIME__DLTHUB_TELEMETRY", "false")
    env["NO_COLOR"] = "1"
    env["TERM"] = "dumb"
    if extra:
        env.update(extra)
    return env


def run_measured(
    label: str,
    target: list[str],
    workdir: Path,
    env: dict[str, str] | None = None,
    stop_after_s: float | None = None,
    timeout_s: float = 1800.0,
    check: bool = True,
    python: str = sys.executable,
    repo: Path = REPO,
) -> Measurement:
    """Run ``target`` under the probe in ``workdir``; stop it with SIGINT after ``stop_after_s``.
    ``python`` and ``repo``: another build's interpreter and checkout (the probe runs in it).

    stdout and stderr go to ``workdir/<label>.log`` so that a failure can be read afterwards.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    probe_out = workdir / f"{label}.requests.json"
    log_path = workdir / f"{label}.log"
    argv = [python, "-m", "csbench.probe", str(probe_out), "--", *target]
    with log_path.open("wb") as log:
        started = time.monotonic()
        proc = subprocess.Popen(
            argv, cwd=workdir, env=child_env(env, repo), stdout=log, stderr=subprocess.STDOUT
        )
        status, rusage, stopped = _wait(proc, started, stop_after_s, timeout_s)
        wall = time.monotonic() - started
    exit_code = os.waitstatus_to_exitcode(status)
    proc.returncode = exit_code
    requests = _read_probe(probe_out)
    measurement = Measurement(
        label=label,
        exit_code=exit_code,
        wall_s=wall,
        cpu_s=rusage.ru_utime + rusage.ru_stime,
        max_rss_mib=rusage.ru_maxrss / 1024.0,  # Linux reports KiB
        requests=requests,
        timed_out=stopped == "timeout",
        stopped_at_bound=stopped == "bound",
        log_path=str(log_path),
    )
    if measurement.timed_out or (check and exit_code != 0 and stopped != "bound"):
        tail = log_path.read_text(errors="replace")[-2000:]
        raise ClientFailed(f"{label} exited {exit_code} (log {log_path}):\n{tail}")
    return measurement


def _wait(
    proc: subprocess.Popen[bytes], started: float, stop_after_s: float | None, timeout_s: float
) -> tuple[int, Any, str | None]:
    """Poll with ``wait4(WNOHANG)`` so that we can interrupt at a time bound and still get rusage.

    Returns the wait status, the child's rusage, and why we stopped it: ``"bound"`` (the caller's
    time bound, expected), ``"timeout"`` (a hang: an error) or None (it ended by itself).
    """
    stopped: str | None = None
    stopped_at = 0.0
    killed = False
    while True:
        pid, status, rusage = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            return status, rusage, stopped
        elapsed = time.monotonic() - started
        if stopped is None and stop_after_s is not None and elapsed >= stop_after_s:
            stopped, stopped_at = "bound", elapsed
        elif stopped is None and elapsed >= timeout_s:
            stopped, stopped_at = "timeout", elapsed
        if stopped is not None and stopped_at == elapsed:
            proc.send_signal(signal.SIGTERM)  # the probe writes its log, then unwinds
        grace = 3.0 if stopped == "bound" else 20.0
        if stopped is not None and not killed and elapsed - stopped_at > grace:
            proc.kill()
            killed = True
        time.sleep(0.02)


def _read_probe(path: Path) -> list[Request]:
    if not path.exists():
        return []
    return [Request(*row) for row in read_requests(str(path))]
