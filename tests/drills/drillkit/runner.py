"""Run `creator-sync sync` as a real process in an isolated workspace.

Drills drive the console script's `main()`, not Python internals: a crash drill needs a process
to SIGKILL, and the user-facing contract (exit code, one-line error, what lands on disk) is what
we prove. Each sync is a process of its own (pid, process group, environment, output, exit
status), forked from the month's fork server (tests/month/zygote.py), which imported the CLI's
dependencies once per test process instead of once per sync; `DRILLS_FRESH=1` starts a new
interpreter for each, as cron does.
Each workspace has its own dlt data dir, home and working directory, so nothing leaks between
drills or from the developer's machine (`~/.dlt`, a stray `.dlt/secrets.toml`).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "month"))
from zygote import Run, shared

CLIENT_ID = "sandbox"
CLIENT_SECRET = "sandbox-secret"


def cli_argv() -> list[str]:
    """The `creator-sync` console script of the interpreter running the drills."""
    script = Path(sys.executable).parent / "creator-sync"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from creator_sync.cli import main; main()"]


@dataclass
class SyncResult:
    """What one sync run did, as seen from outside."""

    argv: list[str]
    returncode: int | None
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False
    killed: bool = False
    kill_stage: str | None = None

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    @property
    def error_line(self) -> str:
        """The one-line reason a failed run gave (the last `error` line, else the last line)."""
        lines = [ln.strip() for ln in (self.stderr + "\n" + self.stdout).splitlines() if ln.strip()]
        for line in reversed(lines):
            if line.lower().startswith(("error", "creator-sync: error")):
                return line
        return lines[-1] if lines else ""

    @property
    def reason(self) -> str:
        """The error line without the CLI's `(details: <log path>)` pointer (paths are noise)."""
        return re.sub(r"\s*\(details: [^)]*\)\s*$", "", self.error_line)

    def describe(self) -> str:
        tail = "\n".join((self.stdout + self.stderr).splitlines()[-25:])
        return f"rc={self.returncode} timed_out={self.timed_out} in {self.seconds:.1f}s\n{tail}"


@dataclass
class Workspace:
    """One isolated place for a pipeline: warehouse file, dlt data dir, home, logs."""

    root: Path
    dataset: str = "creator_platform"
    runs: list[SyncResult] = field(default_factory=list)
    extra_env: dict[str, str] = field(default_factory=dict)
    default_args: tuple[str, ...] = ()  # appended to every sync (e.g. a small --page-size)

    def __post_init__(self) -> None:
        for sub in ("dlt", "home", "cwd", "logs"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)

    @property
    def warehouse(self) -> Path:
        return self.root / "warehouse.duckdb"

    @property
    def dlt_dir(self) -> Path:
        return self.root / "dlt"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCES__", "DESTINATION__"))}
        env.update(
            DLT_DATA_DIR=str(self.dlt_dir),
            HOME=str(self.root / "home"),
            RUNTIME__DLTHUB_TELEMETRY="false",
            PYTHONUNBUFFERED="1",
            NO_COLOR="1",
            COLUMNS="200",
        )
        env.update(self.extra_env)
        return env

    def argv(
        self,
        base_url: str,
        *extra: str,
        client_id: str = CLIENT_ID,
        client_secret: str = CLIENT_SECRET,
    ) -> list[str]:
        return [
            *cli_argv(), "sync",
            "--base-url", base_url,
            "--client-id", client_id,
            "--client-secret", client_secret,
            "--duckdb", str(self.warehouse),
            *self.default_args,
            *extra,
        ]

    def start(self, argv: list[str]) -> tuple[subprocess.Popen, Path, Path]:
        n = len(list((self.root / "logs").glob("*.out")))
        out = self.root / "logs" / f"run{n:03d}.out"
        err = self.root / "logs" / f"run{n:03d}.err"
        prefix = cli_argv()
        if os.environ.get("DRILLS_FRESH") != "1" and argv[:len(prefix)] == prefix:
            run = shared("drills", _server_env).start(argv[len(prefix):], self.root / "cwd",
                                                     self.env())
            return ForkedProcess(run), run.out, run.err  # type: ignore[return-value]
        with out.open("wb") as fo, err.open("wb") as fe:
            proc = subprocess.Popen(
                _with_default_signals(argv), cwd=self.root / "cwd", env=self.env(), stdout=fo,
                stderr=fe, stdin=subprocess.DEVNULL, start_new_session=True,
            )
        return proc, out, err

    def finish(
        self, proc: subprocess.Popen, out: Path, err: Path, argv: list[str], started: float,
        timeout: float, kill_stage: str | None = None,
    ) -> SyncResult:
        timed_out = False
        try:
            rc = proc.wait(timeout=max(0.0, timeout - (time.monotonic() - started)))
        except subprocess.TimeoutExpired:
            timed_out = True
            kill_group(proc)
            rc = proc.wait()
        result = SyncResult(
            argv=argv, returncode=rc, stdout=out.read_text(errors="replace"),
            stderr=err.read_text(errors="replace"), seconds=time.monotonic() - started,
            timed_out=timed_out, killed=kill_stage is not None, kill_stage=kill_stage,
        )
        self.runs.append(result)
        return result

    def sync(self, base_url: str, *extra: str, timeout: float = 180.0, **creds: str) -> SyncResult:
        """Run one sync to completion (or until `timeout`, then kill it)."""
        argv = self.argv(base_url, *extra, **creds)
        started = time.monotonic()
        proc, out, err = self.start(argv)
        return self.finish(proc, out, err, argv, started, timeout)

    # ------------------------------------------------------------------ pipeline state on disk
    def pipeline_dirs(self) -> list[Path]:
        """Every dlt pipeline working dir in the workspace (wherever the CLI chose to put it)."""
        found = {p.parent for p in self.root.rglob("state.json") if (p.parent / "schemas").is_dir()}
        found |= {p.parent.parent for p in self.root.rglob("load/.version")}
        return sorted(found)

    def pending_packages(self) -> dict[str, list[str]]:
        """Load packages extracted or normalised but never loaded (must be empty after a run)."""
        pending: dict[str, list[str]] = {}
        for pdir in self.pipeline_dirs():
            for folder in ("normalize/extracted", "load/new", "load/normalized"):
                d = pdir / folder
                if d.is_dir():
                    for pkg in d.iterdir():
                        if pkg.is_dir():
                            pending.setdefault(str(pdir.name), []).append(f"{folder}/{pkg.name}")
        return pending

    def stage(self) -> str:
        """Which dlt stage the pipeline is in, judged from its package folders."""
        stages = []
        for pdir in self.pipeline_dirs():
            if _nonempty(pdir / "load/normalized"):
                stages.append("load")
            elif _nonempty(pdir / "load/new") or _nonempty(pdir / "normalize/extracted"):
                stages.append("normalize")
        if "load" in stages:
            return "load"
        if "normalize" in stages:
            return "normalize"
        return "extract"

    def lock_files(self) -> list[Path]:
        """Files that look like sync locks (name contains 'lock'), anywhere in the workspace."""
        return sorted(
            p for p in self.root.rglob("*")
            if p.is_file() and "lock" in p.name.lower() and "logs" not in p.parts
        )

    def snapshot(self, dst: Path) -> None:
        """Copy the whole workspace (closed warehouse + pipeline dirs) to `dst`."""
        if dst.exists():
            shutil.rmtree(dst)
        shutil.copytree(self.root, dst, ignore=shutil.ignore_patterns("logs"))

    def restore(self, src: Path) -> None:
        """Make this workspace an exact copy of a snapshot taken at the same path."""
        for sub in self.root.iterdir():
            if sub.name == "logs":
                continue
            if sub.is_dir():
                shutil.rmtree(sub)
            else:
                sub.unlink()
        for item in src.iterdir():
            target = self.root / item.name
            if item.is_dir():
                shutil.copytree(item, target)
            else:
                shutil.copy2(item, target)


class ForkedProcess:
    """A command forked by the fork server, with the part of `subprocess.Popen` drills use."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.pid = run.pid
        self.args = ["creator-sync", *run.argv]

    @property
    def returncode(self) -> int | None:
        return self.run.rc

    def poll(self) -> int | None:
        return self.run.rc

    def wait(self, timeout: float | None = None) -> int:
        try:
            return self.run.wait(1e9 if timeout is None else timeout)
        except TimeoutError:
            raise subprocess.TimeoutExpired(self.args, timeout) from None

    def send_signal(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.run.signal(signum)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def _server_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SOURCES__", "DESTINATION__", "CREATOR_SYNC__"))}
    env.update(HOME=str(home), RUNTIME__DLTHUB_TELEMETRY="false")
    return env


def _nonempty(path: Path) -> bool:
    return path.is_dir() and any(path.iterdir())


# Exec'd first when this process ignores SIGINT or SIGTERM: puts them back to their defaults,
# then becomes the sync (same pid, same process group).
_DEFAULT_SIGNALS = (
    "import os, signal, sys\n"
    "for signum in (signal.SIGINT, signal.SIGTERM): signal.signal(signum, signal.SIG_DFL)\n"
    "os.execvp(sys.argv[1], sys.argv[1:])\n"
)


def _with_default_signals(argv: list[str]) -> list[str]:
    """SIGINT and SIGTERM at their defaults in the drilled process, whoever started pytest: a
    suite started in the background (`make test &`) ignores SIGINT, the child would inherit
    that, and `creator-sync` rightly keeps a signal its parent ignores ignored.

    Not a `preexec_fn`: Python code between fork and exec can hang the child for good when other
    threads run (it did: drills start syncs from several threads, beside the sandbox's)."""
    ignored = [s for s in (signal.SIGINT, signal.SIGTERM) if signal.getsignal(s) == signal.SIG_IGN]
    return [sys.executable, "-S", "-c", _DEFAULT_SIGNALS, *argv] if ignored else argv


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the sync and anything it spawned: as abrupt as a machine losing power."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
