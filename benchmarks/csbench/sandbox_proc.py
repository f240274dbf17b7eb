"""The sandbox in its own process, so that serving never competes with a client for the GIL.

We start ``creator-sync sandbox`` ourselves rather than in-process: the benchmark must measure
clients, not a server sharing their interpreter. The child dies with the harness (PDEATHSIG),
its output goes to a file (a pipe could fill and stall it), and it is stopped by pid on exit.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from csbench.measure import REPO, child_env

READY = re.compile(r"sandbox ready at (http://\S+)")
CLIENT_ID = "sandbox"
CLIENT_SECRET = "sandbox-secret"  # the sandbox's documented built-in credential, not a secret


@dataclass
class Sandbox:
    base_url: str
    scale: str
    options: dict[str, object]
    log_path: Path

    @property
    def api_url(self) -> str:
        return f"{self.base_url}/v1"

    def activity(self, count: int) -> dict[str, object]:
        """``POST /_sandbox/activity``: advance the data by ``count`` changes."""
        response = httpx.post(
            f"{self.base_url}/_sandbox/activity", json={"count": count}, timeout=300.0
        )
        response.raise_for_status()
        return dict(response.json()) if response.content else {}

    def token(self) -> str:
        response = httpx.post(
            f"{self.api_url}/oauth/token",
            data={
                "grant_type": "client_credentials",
                "client_id": CLIENT_ID,
                "client_secret": CLIENT_SECRET,
            },
            timeout=60.0,
        )
        response.raise_for_status()
        return str(response.json()["access_token"])


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> None:
    """Runs in the child before exec: SIGTERM it if the harness dies (Linux prctl)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def creator_sync_executable() -> str:
    """The console script of the interpreter running us (the repo's .venv).

    ``CSBENCH_CREATOR_SYNC`` overrides it (a path), to benchmark another build of the CLI.
    """
    override = os.environ.get("CSBENCH_CREATOR_SYNC")
    if override:
        return override
    beside = Path(sys.executable).with_name("creator-sync")
    return str(beside) if beside.exists() else (shutil.which("creator-sync") or "creator-sync")


@contextlib.contextmanager
def run_sandbox(
    scale: str,
    workdir: Path,
    *,
    seed: int = 42,
    sites: int = 2,
    latency_ms: int = 0,
    rate_limit: int | None = None,
    retry_after: bool = True,
    seconds_per_event: int | None = None,
    ready_timeout_s: float = 300.0,
    repo: Path = REPO,
) -> Iterator[Sandbox]:
    """Start the sandbox at ``scale`` and yield it once it prints its ready line (``repo``:
    another build's checkout, with ``CSBENCH_CREATOR_SYNC`` its console script)."""
    workdir.mkdir(parents=True, exist_ok=True)
    options: dict[str, object] = {"seed": seed, "sites": sites, "latency_ms": latency_ms}
    argv = [
        creator_sync_executable(),
        "sandbox",
        "--host",
        "127.0.0.1",
        "--port",
        str(_free_port()),
        "--scale",
        scale,
        "--seed",
        str(seed),
        "--sites",
        str(sites),
    ]
    if latency_ms:
        argv += ["--latency-ms", str(latency_ms)]
    if rate_limit:
        argv += ["--rate-limit", str(rate_limit)]
        options["rate_limit"] = rate_limit
    if not retry_after:
        argv.append("--no-retry-after")
        options["retry_after"] = False
    if seconds_per_event is not None:
        argv += ["--seconds-per-event", str(seconds_per_event)]
        options["seconds_per_event"] = seconds_per_event
    label = f"sandbox-{scale}-lat{latency_ms}" + (f"-rl{rate_limit}" if rate_limit else "")
    label += "" if retry_after else "-nora"
    log_path = workdir / f"{label}.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            argv,
            cwd=REPO,
            env=child_env({"PYTHONUNBUFFERED": "1"}, repo),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            preexec_fn=_die_with_parent,
        )
    try:
        base_url = _await_ready(proc, log_path, ready_timeout_s)
        yield Sandbox(base_url=base_url, scale=scale, options=options, log_path=log_path)
    finally:
        _stop(proc)


def _await_ready(proc: subprocess.Popen[bytes], log_path: Path, timeout_s: float) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        match = READY.search(log_path.read_text(errors="replace"))
        if match:
            return match.group(1).rstrip("/")
        if proc.poll() is not None:
            tail = log_path.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"sandbox exited {proc.returncode} before ready:\n{tail}")
        time.sleep(0.1)
    raise TimeoutError(f"sandbox not ready after {timeout_s:.0f}s (log {log_path})")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)
