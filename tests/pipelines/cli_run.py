"""Run the `creator-sync` console script as a new user would: a subprocess in a directory of
its own, with no configuration leaking in from the developer's environment or home."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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
            secret: str | None = SANDBOX_SECRET) -> subprocess.CompletedProcess[str]:
    """`creator-sync ARGS` in `cwd`; the client secret comes from the environment, as the
    docs/operations.md recommends (None: no secret at all)."""
    cwd.mkdir(parents=True, exist_ok=True)
    environment = env if env is not None else clean_env(cwd.parent / f"{cwd.name}-home")
    if secret is not None:
        environment = {**environment, "SOURCES__CREATOR_PLATFORM__CLIENT_SECRET": secret}
    return subprocess.run([EXE, *args], cwd=cwd, env=environment, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def error_lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.strip()]
