"""Run `creator-sync listen` as a real subprocess: for crash tests, end-to-end tests and the burst
benchmark, which all need a receiver that can be SIGKILLed like a production one."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

READY = re.compile(r"webhook receiver ready at (http://[\d.]+:\d+)/hooks/")


class ListenProcess:
    def __init__(self, duckdb_path: Path | None, secret: str, *extra: str, timeout: float = 30.0,
                 cwd: Path | None = None, env: dict[str, str] | None = None):
        """`duckdb_path` None: listen's default warehouse (config, else creator_platform.duckdb
        in `cwd`)."""
        where = ["--duckdb", str(duckdb_path)] if duckdb_path is not None else []
        cmd = [
            sys.executable, "-c", "from creator_sync.cli import main; main()", "listen",
            "--port", "0", *where, "--secret", secret, *extra,
        ]
        self.proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=cwd,
            env={**(os.environ if env is None else env), "PYTHONUNBUFFERED": "1"},
        )
        self.lines: list[str] = []
        self.base_url = self._wait_ready(timeout)
        self.url = f"{self.base_url}/hooks/{secret}"
        threading.Thread(target=self._drain, daemon=True).start()

    def _wait_ready(self, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        assert self.proc.stdout is not None
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            self.lines.append(line)
            match = READY.search(line)
            if match:
                return match.group(1)
        self.proc.kill()
        raise RuntimeError("listen did not become ready:\n" + "".join(self.lines))

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)

    def kill(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def terminate(self, timeout: float = 30.0) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def __enter__(self) -> ListenProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
