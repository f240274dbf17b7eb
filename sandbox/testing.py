"""Start the sandbox for tests and benchmarks: in-process (thread) or as a subprocess."""

from __future__ import annotations

import collections
import contextlib
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path

import httpx

from creator_sync.sandbox.dataset import Store
from creator_sync.sandbox.options import Options
from creator_sync.sandbox.server import RunningServer, build_app

READY_PREFIX = "sandbox ready at "


def _activity(base_url: str, count: int) -> dict:
    response = httpx.post(f"{base_url}/_sandbox/activity", json={"count": count}, timeout=120)
    response.raise_for_status()
    return response.json()


class SandboxHandle:
    """An in-process sandbox: `base_url`, `api_url`, `activity()`, `store`, `stop()`."""

    def __init__(self, server: RunningServer, options: Options):
        self._server = server
        self.options = options
        self.app = server.app
        self.store: Store = server.app.store
        self.base_url = server.base_url
        self.api_url = self.base_url + "/v1"
        self._stopped = False

    def activity(self, count: int) -> dict:
        """Same as `POST /_sandbox/activity {"count": count}`."""
        return _activity(self.base_url, count)

    def stop(self) -> None:
        if not self._stopped:
            self._stopped = True
            self._server.stop()

    def __repr__(self) -> str:
        return f"SandboxHandle({self.base_url}, scale={self.options.scale})"


def start_sandbox(**options: object) -> SandboxHandle:
    """Start an in-process sandbox (default scale `tiny`, free loopback port); call `stop()`."""
    opts = Options.from_kwargs(**{"scale": "tiny", **options})
    app = build_app(opts)
    server = RunningServer(app, opts.host, opts.port).start()
    return SandboxHandle(server, opts)


@contextlib.contextmanager
def run_sandbox(**options: object) -> Iterator[SandboxHandle]:
    handle = start_sandbox(**options)
    try:
        yield handle
    finally:
        handle.stop()


def cli_args(options: Options) -> list[str]:
    """Command-line flags equivalent to `options`."""
    args: list[str] = []
    defaults = Options()
    for f in fields(Options):
        value = getattr(options, f.name)
        flag = "--" + f.name.replace("_", "-")
        if isinstance(value, bool):
            if value != getattr(defaults, f.name):
                args.append(flag if value else "--no-" + f.name.replace("_", "-"))
        elif value is not None:
            args += [flag, str(value)]
    return args


def _command() -> list[str]:
    script = Path(sys.executable).with_name("creator-sync")
    if script.exists():
        return [str(script)]
    found = shutil.which("creator-sync")
    if found:
        return [found]
    return [sys.executable, "-c", "from creator_sync.cli import main; main()"]


class SandboxProcess:
    """`creator-sync sandbox` as a subprocess; usable directly or as a context manager."""

    def __init__(self, timeout: float = 300.0, **options: object):
        self.options = Options.from_kwargs(**{"scale": "tiny", **options})
        argv = [*_command(), "sandbox", *cli_args(self.options), "--parent-pid", str(os.getpid())]
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, bufsize=1)
        self.pid = self.proc.pid
        lines: queue.Queue[str | None] = queue.Queue()

        def pump() -> None:
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                lines.put(line)
            lines.put(None)

        # stderr is drained all the time: a full pipe (64 KiB of access log or warnings over a
        # long drill) would block the sandbox mid-response; the tail is kept for errors
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=200)

        def drain() -> None:
            assert self.proc.stderr is not None
            for line in self.proc.stderr:
                self._stderr_tail.append(line)

        threading.Thread(target=pump, daemon=True).start()
        drainer = threading.Thread(target=drain, daemon=True)
        drainer.start()
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                self.stop()
                raise RuntimeError(f"sandbox process gave no ready line in {timeout} s") from None
            if line is None:
                self.proc.wait(10)
                drainer.join(5)
                err = "".join(self._stderr_tail)
                self.stop()
                raise RuntimeError(f"sandbox process exited before ready: {err[-2000:]}")
            if line.startswith(READY_PREFIX):
                self.base_url = line[len(READY_PREFIX):].strip()
                self.api_url = self.base_url + "/v1"
                break

    def activity(self, count: int) -> dict:
        return _activity(self.base_url, count)

    def stop(self, timeout: float = 10.0) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream:
                with contextlib.suppress(Exception):
                    stream.close()

    def __enter__(self) -> SandboxProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def run_sandbox_process(**options: object) -> SandboxProcess:
    """Start `creator-sync sandbox` and wait for its ready line (`with` stops it)."""
    return SandboxProcess(**options)
