"""File locks that keep two writers apart and cannot go stale.

`flock` locks belong to the open file description: the kernel drops them when the process dies
(even on SIGKILL), so a crashed sync never blocks the next one. The lock file itself stays; its
presence means nothing.

- `pipeline_lock(pipelines_dir, name)`: one sync per pipeline (state + load packages).
- `warehouse_lock(duckdb_path)`: held around writes to a DuckDB file (the pull sync's load step
  and the webhook loader's micro-batches) so they never contend for DuckDB's single writer.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

from .files import make_state_dir


class LockTimeout(RuntimeError):
    """Another process holds the lock for longer than we were willing to wait."""


@contextlib.contextmanager
def file_lock(path: str | os.PathLike[str], *, timeout: float | None = 0.0, what: str = "lock",
              poll: float = 0.1) -> Iterator[Path]:
    """Exclusive flock on `path`. timeout=None waits forever; 0 fails at once if held."""
    lock_path = Path(path)
    make_state_dir(lock_path.parent)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                if deadline is not None and time.monotonic() >= deadline:
                    holder = _read_holder(fd)
                    raise LockTimeout(
                        f"{what} is held by another process{holder} "
                        f"(waited {timeout:.0f}s; lock file {lock_path})"
                    ) from None
                time.sleep(poll)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        try:
            yield lock_path
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _read_holder(fd: int) -> str:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        pid = os.read(fd, 32).decode().strip()
        return f" (pid {pid})" if pid.isdigit() else ""
    except OSError:
        return ""


def pipeline_lock(pipelines_dir: str | os.PathLike[str], pipeline_name: str, *,
                  timeout: float | None = 0.0) -> contextlib.AbstractContextManager[Path]:
    """Lock for one dlt pipeline; the second sync waits `timeout` seconds, then fails clearly."""
    path = Path(pipelines_dir) / f"{pipeline_name}.lock"
    return file_lock(path, timeout=timeout, what=f"pipeline {pipeline_name!r}")


def warehouse_lock(duckdb_path: str | os.PathLike[str], *,
                   timeout: float | None = 600.0) -> contextlib.AbstractContextManager[Path]:
    """Lock `<duckdb path>.lock` around writes to that DuckDB file."""
    path = Path(f"{os.fspath(duckdb_path)}.lock")
    return file_lock(path, timeout=timeout, what=f"warehouse {os.fspath(duckdb_path)!r}")
