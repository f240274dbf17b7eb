"""Run the `creator-sync` console script as a new user would: a process in a directory of its
own, with no configuration leaking in from the developer's environment or home.

Each command is a process of its own (its pid, argv, working directory, environment, output,
exit code), forked from the month's fork server (tests/month/zygote.py), which imported the
CLI's dependencies once per test worker: a new interpreter spends 1-2 s of CPU on those imports
before it does anything, most of a command at `tiny`, and the suite runs hundreds. `fresh=True`
starts a new interpreter instead, for what happens at import time (a read-only home).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "month"))
from zygote import shared

EXE = str(Path(sys.executable).with_name("creator-sync"))
SANDBOX_ID = "sandbox"
SANDBOX_SECRET = "sandbox-secret"


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment minus creator-sync/dlt settings, with a private HOME and dlt data dir."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SOURCES__", "DESTINATION__", "CREATOR_SYNC__", "RUNTIME__"))}
    home.mkdir(parents=True, exist_ok=True)
    env.update(HOME=str(home), DLT_DATA_DIR=str(home / ".dlt-data"),
               RUNTIME__DLTHUB_TELEMETRY="false", PYTHONUNBUFFERED="1", NO_COLOR="1")
    env.update(extra)
    return env


def run_cli(cwd: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 300,
            secret: str | None = SANDBOX_SECRET, fresh: bool = False,
            ) -> subprocess.CompletedProcess[str]:
    """`creator-sync ARGS` in `cwd`; the client secret comes from the environment, as the
    docs/operations.md recommends (None: no secret at all). `fresh`: a new interpreter."""
    cwd.mkdir(parents=True, exist_ok=True)
    environment = env if env is not None else clean_env(cwd.parent / f"{cwd.name}-home")
    if secret is not None:
        environment = {**environment, "SOURCES__CREATOR_PLATFORM__CLIENT_SECRET": secret}
    argv = [EXE, *args]
    if fresh:
        return subprocess.run(argv, cwd=cwd, env=environment, capture_output=True,
                              text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    run = shared("cli", clean_env).start(list(args), cwd, environment)
    try:
        code = run.wait(timeout)
    except TimeoutError:
        run.signal(signal.SIGKILL)
        raise subprocess.TimeoutExpired(argv, timeout) from None
    out, err = run.stdout, run.stderr
    run.out.unlink(missing_ok=True)
    run.err.unlink(missing_ok=True)
    return subprocess.CompletedProcess(argv, code, out, err)


def error_lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.strip()]
