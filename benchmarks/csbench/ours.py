"""How to call ``creator-sync sync`` as a measured child: a fresh warehouse and state each time.

Optional flags are read from ``creator-sync sync --help`` instead of being assumed, so that the
benchmark keeps working while the CLI grows (and says which flag it used for the rate limit).
"""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path

from csbench.measure import REPO, child_env
from csbench.sandbox_proc import CLIENT_ID, CLIENT_SECRET, creator_sync_executable

RATE_LIMIT_FLAGS = ("--rate-limit", "--requests-per-minute", "--max-requests-per-minute")


@functools.cache
def sync_help() -> str:
    result = subprocess.run(
        [creator_sync_executable(), "sync", "--help"],
        cwd=REPO,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    if result.returncode != 0:
        raise RuntimeError(f"`creator-sync sync --help` failed: {result.stderr.strip()[-500:]}")
    return result.stdout


def has_flag(flag: str) -> bool:
    return f"{flag} " in sync_help() or f"{flag}\n" in sync_help() or f"{flag}=" in sync_help()


def rate_limit_flag() -> str | None:
    return next((flag for flag in RATE_LIMIT_FLAGS if has_flag(flag)), None)


def sync_target(
    base_url: str,
    run_dir: Path,
    *,
    concurrency: int | None = None,
    rate_limit: int | None = None,
    fixed_rate: bool = False,
    resources: str | None = None,
) -> tuple[list[str], dict[str, str]]:
    """argv (console script first) and extra environment for one sync into ``run_dir``.

    The same ``run_dir`` twice means an incremental run on the same warehouse and dlt state.
    """
    argv = [
        os.environ.get("CSBENCH_CREATOR_SYNC", "creator-sync"),
        "sync",
        "--base-url",
        base_url,
        "--client-id",
        CLIENT_ID,
        "--duckdb",
        str(run_dir / "ours.duckdb"),
    ]
    if has_flag("--pipelines-dir"):
        argv += ["--pipelines-dir", str(run_dir / "pipelines")]
    if concurrency is not None:
        argv += ["--concurrency", str(concurrency)]
    if resources:
        argv += ["--resources", resources]
    if rate_limit is not None:
        flag = rate_limit_flag()
        if flag is None:
            raise RuntimeError("`creator-sync sync` has no client-side rate-limit flag")
        argv += [flag, str(rate_limit)]
    if fixed_rate:
        if not has_flag("--fixed-rate"):
            raise RuntimeError("`creator-sync sync` has no --fixed-rate flag")
        argv.append("--fixed-rate")
    if has_flag("--no-progress"):
        argv.append("--no-progress")
    # The secret goes by environment (dlt's convention), never on a command line. dlt keeps
    # pipeline state under DLT_DATA_DIR: isolate it per run directory.
    env = {
        "SOURCES__CREATOR_PLATFORM__CLIENT_SECRET": CLIENT_SECRET,
        "DLT_DATA_DIR": str(run_dir / "dlt-data"),
    }
    return argv, env
