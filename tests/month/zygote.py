"""Run many `creator-sync` commands cheaply: a fork server that imports the CLI's dependencies once.

The month runs ~150 commands. Each started as a new interpreter spends 1-2 s of CPU importing dlt,
DuckDB, pyarrow, sqlglot and matplotlib before it does anything, which is most of a command at
`tiny`. Here one server process imports them once; each command is a fresh process forked from it
(its own pid, argv, working directory, environment, stdout and stderr files, signal handlers and
exit code, as the console script gives them), so a test can SIGTERM it mid-run and read its exit
status exactly as it would a cron job's. The code path is the console script's: `main()` of
`creator_sync.cli`, with `sys.argv` set.

Protocol (JSON lines): the client writes `{"argv", "cwd", "env", "out", "err"}`; the server
answers `{"n", "pid"}` at the fork and `{"n", "rc", "cpu"}` when the child ends (`rc` as
`subprocess` reports it: the exit code, or minus the signal that killed it; `cpu`, the child's
user+system seconds). `--cold` in the month's runner uses plain subprocesses instead.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

# what the subcommands import when they run (the CLI imports them lazily)
PRELOAD = (
    "creator_sync.cli", "creator_sync.init_command", "creator_sync.pipelines.sync",
    "creator_sync.pipelines.status", "creator_sync.pipelines.webhooks.cli",
    "creator_sync.models.cli", "creator_sync.models.runner", "creator_sync.report.cli",
    "creator_sync.report.render", "creator_sync.report.charts", "dlt",
    "dlt.destinations.impl.duckdb.duck", "duckdb", "pyarrow", "pyarrow.compute", "httpx",
    "sqlglot", "matplotlib.pyplot",
    # what the commands import at run time besides: dlt's runtime (its plugins and requests
    # helpers, on every command that reads configuration), the parquet writer of a load, and
    # pandas (DuckDB imports it to bind the first parameter of a connection: dlt's own SET ...)
    "dlt.sources.helpers.requests", "dlt._workspace._plugins", "pluggy", "pytz",
    "pyarrow.parquet", "pyarrow.fs", "numpy.random", "dateutil.easter", "pandas",
    "psycopg2", "dlt.destinations.impl.postgres.postgres",  # the PostgreSQL leg's warehouse
)


def _serve() -> None:  # pragma: no cover - runs in the server process
    import contextlib
    import gc
    import importlib

    gc.disable()  # as the CLI imports (`creator_sync.cli._imports_frozen`), then frozen:
    for name in PRELOAD:  # a child's collections never walk what it did not build
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    gc.freeze()
    gc.enable()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)
    children: dict[int, int] = {}  # pid -> request number
    n = 0
    stdin = sys.stdin.buffer
    out = sys.stdout
    print(json.dumps({"ready": True}), file=out, flush=True)
    buffer = b""
    while True:
        ready, _, _ = select.select([stdin], [], [], 0.02)
        if ready:
            chunk = os.read(stdin.fileno(), 65536)
            if not chunk:
                break
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                n += 1
                pid = _fork(json.loads(line))
                children[pid] = n
                print(json.dumps({"n": n, "pid": pid}), file=out, flush=True)
        while children:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
            if pid == 0:
                break
            rc = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
            print(json.dumps({"n": children.pop(pid), "rc": rc,
                              "cpu": usage.ru_utime + usage.ru_stime}), file=out, flush=True)


def _fork(request: dict) -> int:  # pragma: no cover - runs in the server process
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        os.setsid()  # its own process group, as a job cron starts
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        for fd, path in ((1, request["out"]), (2, request["err"])):
            target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(target, fd)
            os.close(target)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
        sys.argv = ["creator-sync", *request["argv"]]
        from creator_sync.cli import main

        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        import atexit

        atexit._run_exitfuncs()
    except BaseException as exc:  # report and die as the interpreter would
        import traceback

        traceback.print_exception(exc, file=sys.stderr)
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)
    return 0


@dataclass
class Run:
    """One command: started, maybe ended."""

    argv: list[str]
    out: Path
    err: Path
    started: float
    pid: int = 0
    rc: int | None = None
    cpu: float = 0.0
    ended: float | None = None
    _done: threading.Event = field(default_factory=threading.Event, repr=False)

    def wait(self, timeout: float = 300.0) -> int:
        if not self._done.wait(timeout):
            raise TimeoutError(f"creator-sync {' '.join(self.argv)} still running after {timeout}s")
        assert self.rc is not None
        return self.rc

    def signal(self, signum: int) -> None:
        os.kill(self.pid, signum)

    @property
    def stdout(self) -> str:
        return self.out.read_text(errors="replace")

    @property
    def stderr(self) -> str:
        return self.err.read_text(errors="replace")

    @property
    def seconds(self) -> float:
        return (self.ended or time.monotonic()) - self.started


_shared: dict[str, Launcher] = {}
_shared_lock = threading.Lock()


def shared(name: str, server_env: Callable[[Path], Mapping[str, str]]) -> Launcher:
    """This process's fork server `name`, started at its first command and closed at exit; its
    logs and home (`server_env(home)`: the server's own environment) in a temporary folder."""
    import atexit
    import shutil
    import tempfile

    with _shared_lock:
        if name not in _shared:
            root = Path(tempfile.mkdtemp(prefix=f"creator-sync-{name}-"))
            (root / "home").mkdir()
            launcher = Launcher(root / "logs", server_env=server_env(root / "home"))
            atexit.register(shutil.rmtree, root, True)
            atexit.register(launcher.close)
            _shared[name] = launcher
        return _shared[name]


class Launcher:
    """Start `creator-sync ARGV` in `cwd` with `env`; `cold` = a new interpreter each time."""

    def __init__(self, logs: Path, *, cold: bool = False,
                 server_env: Mapping[str, str] | None = None) -> None:
        self.logs = logs
        logs.mkdir(parents=True, exist_ok=True)
        self.cold = cold
        self.server_env = server_env  # the server's own (else the first command's)
        self._count = 0  # requests sent: the server numbers them in the order it reads them
        self._named = 0  # runs named (their output files)
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._pending: dict[int, Run] = {}
        self._server: subprocess.Popen | None = None
        self._started: dict[int, threading.Event] = {}

    def _start_server(self, env: Mapping[str, str]) -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, __file__], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, env=dict(env), text=True, bufsize=1)
        assert proc.stdout is not None
        first = proc.stdout.readline()
        if not first or not json.loads(first).get("ready"):
            raise RuntimeError("the CLI fork server did not start")
        threading.Thread(target=self._read, args=(proc,), daemon=True).start()
        return proc

    def _read(self, proc: subprocess.Popen) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            msg = json.loads(line)
            with self._lock:
                run = self._pending.get(msg["n"])
            if run is None:
                continue
            if "pid" in msg:
                run.pid = msg["pid"]
                self._started[msg["n"]].set()
            else:
                run.rc, run.cpu, run.ended = msg["rc"], msg["cpu"], time.monotonic()
                run._done.set()

    def start(self, argv: list[str], cwd: Path, env: Mapping[str, str]) -> Run:
        with self._lock:
            self._named += 1
            name = f"{self._named:03d}-{argv[0] if argv else 'x'}"
        run = Run(list(argv), self.logs / f"{name}.out", self.logs / f"{name}.err",
                  time.monotonic())
        if self.cold:
            return self._start_cold(run, cwd, env)
        request = json.dumps({"argv": run.argv, "cwd": str(cwd), "env": dict(env),
                              "out": str(run.out), "err": str(run.err)}) + "\n"
        started = threading.Event()
        with self._write_lock:  # one request at a time, in number order (threads start runs)
            if self._server is None:
                self._server = self._start_server(self.server_env or env)
            with self._lock:
                self._count += 1
                n = self._count
                self._pending[n] = run
                self._started[n] = started
            assert self._server.stdin is not None
            self._server.stdin.write(request)
            self._server.stdin.flush()
        if not started.wait(30):
            raise RuntimeError("the CLI fork server did not fork")
        return run

    def _start_cold(self, run: Run, cwd: Path, env: Mapping[str, str]) -> Run:
        exe = str(Path(sys.executable).with_name("creator-sync"))
        with run.out.open("wb") as out, run.err.open("wb") as err:
            proc = subprocess.Popen([exe, *run.argv], cwd=cwd, env=dict(env), stdout=out,
                                    stderr=err, stdin=subprocess.DEVNULL, start_new_session=True)
        run.pid = proc.pid

        def reap() -> None:
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = 0
            run.rc = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
            run.cpu, run.ended = usage.ru_utime + usage.ru_stime, time.monotonic()
            run._done.set()

        threading.Thread(target=reap, daemon=True).start()
        return run

    def close(self) -> None:
        if self._server is not None:
            assert self._server.stdin is not None
            self._server.stdin.close()
            try:
                self._server.wait(10)
            except subprocess.TimeoutExpired:
                self._server.kill()
                self._server.wait()
            self._server = None


if __name__ == "__main__":
    _serve()
