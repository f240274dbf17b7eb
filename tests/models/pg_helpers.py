"""A throw-away PostgreSQL cluster for the portability tests.

It uses Debian's `postgresql` binaries (installed by .ci/run), a fresh data directory in /tmp,
loopback only, a free port, trust auth. PostgreSQL refuses to run as root, so as root it runs as
the `postgres` system user. A watchdog process stops the server if the test process dies, so a
killed test run leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


class PostgresUnavailable(RuntimeError):
    """Why a local PostgreSQL server cannot be started here (the test skips with this reason)."""


def _bin_dir() -> Path:
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not candidates:
        raise PostgresUnavailable(
            "no /usr/lib/postgresql/*/bin/initdb: install Debian's postgresql package "
            "(`apt-get install -y postgresql`; .ci/run does this in CI)"
        )
    return Path(candidates[-1]).parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _runner() -> tuple[list[str], int | None, int | None]:
    """The command prefix that runs a binary as a user PostgreSQL accepts, and that user's ids."""
    if os.geteuid() != 0:
        return [], None, None
    try:
        user = pwd.getpwnam("postgres")
    except KeyError as exc:
        raise PostgresUnavailable("running as root and there is no `postgres` user") from exc
    tool = shutil.which("runuser") or shutil.which("su")
    if tool is None:
        raise PostgresUnavailable("running as root without runuser/su to drop privileges")
    if tool.endswith("runuser"):
        return [tool, "-u", "postgres", "--"], user.pw_uid, user.pw_gid
    return [tool, "postgres", "-s", "/bin/sh", "-c"], user.pw_uid, user.pw_gid


def _run(prefix: list[str], args: list[str]) -> subprocess.CompletedProcess[str]:
    if prefix and prefix[-1] == "-c":  # su: one shell string
        import shlex

        args = [shlex.join(args)]
    return subprocess.run([*prefix, *args], capture_output=True, text=True, timeout=120, check=False)


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """Start a server; yield a DSN (`postgresql://postgres:throwaway@127.0.0.1:PORT/postgres`)."""
    bin_dir = _bin_dir()
    prefix, uid, gid = _runner()
    root = Path(tempfile.mkdtemp(prefix="creator-sync-pg-"))
    data = root / "data"
    if uid is not None:
        os.chown(root, uid, gid or -1)
    port = _free_port()
    try:
        result = _run(prefix, [str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres",
                               "--auth=trust", "-E", "UTF8", "--no-sync"])
        if result.returncode != 0:
            raise PostgresUnavailable(f"initdb failed: {result.stderr.strip()[-500:]}")
        options = (f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off -c max_connections=20")
        result = _run(prefix, [str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options,
                               "-l", str(root / "server.log"), "-w", "-t", "60", "start"])
        if result.returncode != 0:
            log = (root / "server.log").read_text() if (root / "server.log").exists() else ""
            raise PostgresUnavailable(f"pg_ctl start failed: {result.stderr.strip()} {log[-500:]}")
        stop = [*prefix, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]
        if prefix and prefix[-1] == "-c":
            import shlex

            stop = [*prefix, shlex.join(stop[len(prefix):])]
        # The watchdog stops the server when this process is gone, even after a SIGKILL.
        watchdog = subprocess.Popen(
            ["/bin/sh", "-c", f'while kill -0 {os.getpid()} 2>/dev/null; do sleep 1; done; "$@"',
             "watchdog", *stop],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )
        try:
            # trust auth ignores the password; dlt insists on one being present
            yield f"postgresql://postgres:throwaway@127.0.0.1:{port}/postgres"
        finally:
            subprocess.run(stop, capture_output=True, timeout=60, check=False)
            watchdog.kill()
            watchdog.wait(timeout=10)
    finally:
        for _ in range(20):
            shutil.rmtree(root, ignore_errors=True)
            if not root.exists():
                break
            time.sleep(0.1)


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    """A throw-away PostgreSQL server for the session (models' portability test, the report on
    PostgreSQL); skips loudly locally, fails in CI. Conftests import it to register it."""
    try:
        server = postgres_server()
        dsn = server.__enter__()
    except PostgresUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"PostgreSQL is required in CI (models and report on PostgreSQL): {exc}")
        pytest.skip(f"POSTGRES TESTS SKIPPED: cannot start PostgreSQL locally: {exc}")
    try:
        yield dsn
    finally:
        server.__exit__(None, None, None)
