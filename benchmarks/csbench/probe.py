"""Run a program with its HTTP requests counted, from inside its own process.

Usage: ``python -m csbench.probe OUT.json -- <console-script or -m module> [args...]``

Why in-process: the sandbox need not expose statistics, and every client we compare (httpx for
ours and the floor, requests for dlt's rest_api peer) goes through one transport method we can
wrap. The log holds method, path, query, status and timing of each request; never headers,
bodies or tokens. Requests stream to `OUT.requests.jsonl` as they happen (buffered), so the
probe holds none of them in the measured process: at `medium` a list of 70k requests would add
~20 MiB to the client's peak RSS, and the memory-flatness figure would measure the probe. OUT
itself (exit code, elapsed, the log's name) is written when the program ends, also on
SIGINT/SIGTERM, so a run cut off at a time bound (the rate-limit figure) still reports what it did.
"""

from __future__ import annotations

import json
import os
import runpy
import signal
import sys
import threading
import time
from importlib.metadata import entry_points
from typing import Any
from urllib.parse import urlsplit

_LOCK = threading.RLock()  # re-entrant: the signal handler dumps from the main thread
_LOG: list[Any] = []  # [open JSON-lines file] once main() started
_ORIGIN = time.monotonic()
COLUMNS = ["start_s", "end_s", "method", "path", "query", "status"]


def _record(start: float, method: str, url: str, status: int) -> None:
    parts = urlsplit(url)
    entry = (start - _ORIGIN, time.monotonic() - _ORIGIN, method, parts.path, parts.query, status)
    line = json.dumps(entry, separators=(",", ":")) + "\n"
    with _LOCK:
        if _LOG:
            _LOG[0].write(line)


def _patch_httpx() -> None:
    try:
        import httpx
    except ImportError:  # pragma: no cover - httpx is a project dependency
        return
    sync_send = httpx.HTTPTransport.handle_request
    async_send = httpx.AsyncHTTPTransport.handle_async_request

    def handle_request(self: Any, request: Any) -> Any:
        start = time.monotonic()
        status = 0
        try:
            response = sync_send(self, request)
            status = response.status_code
            return response
        finally:
            _record(start, request.method, str(request.url), status)

    async def handle_async_request(self: Any, request: Any) -> Any:
        start = time.monotonic()
        status = 0
        try:
            response = await async_send(self, request)
            status = response.status_code
            return response
        finally:
            _record(start, request.method, str(request.url), status)

    httpx.HTTPTransport.handle_request = handle_request  # type: ignore[method-assign]
    httpx.AsyncHTTPTransport.handle_async_request = handle_async_request  # type: ignore[method-assign]


def _patch_requests() -> None:
    try:
        from requests.adapters import HTTPAdapter
    except ImportError:  # pragma: no cover - requests comes with dlt
        return
    send = HTTPAdapter.send

    def counted_send(self: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
        start = time.monotonic()
        status = 0
        try:
            response = send(self, request, *args, **kwargs)
            status = response.status_code
            return response
        finally:
            _record(start, request.method or "GET", request.url or "", status)

    HTTPAdapter.send = counted_send  # type: ignore[method-assign]


def requests_path(path: str) -> str:
    return f"{path}.requests.jsonl"


def read_requests(path: str) -> list[list[Any]]:
    """The rows a probe wrote for OUT `path` (after its program ended)."""
    log = requests_path(path)
    if not os.path.exists(log):
        return []
    with open(log, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _dump(path: str, exit_code: int | None) -> None:
    with _LOCK:
        if _LOG:
            _LOG[0].flush()
    payload = {
        "exit_code": exit_code,
        "elapsed_s": time.monotonic() - _ORIGIN,
        "columns": COLUMNS,
        "requests_file": os.path.basename(requests_path(path)),
    }
    tmp = f"{path}.{threading.get_ident()}.tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(payload, handle)
    os.replace(tmp, path)


_OUT: list[str] = []


def _interrupt(signum: int, frame: Any) -> None:
    """Write the log first: the program may take long to unwind, and may be killed meanwhile."""
    if _OUT:
        _dump(_OUT[0], 128 + signum)
    raise KeyboardInterrupt(f"signal {signum}")


def _start_flusher(path: str, every_s: float) -> None:
    """For runs cut off at a time bound: keep the log on disk even if the program's own
    signal handling delays or swallows our SIGTERM and the harness has to kill it."""

    def loop() -> None:
        while True:
            time.sleep(every_s)
            _dump(path, None)

    threading.Thread(target=loop, name="csbench-probe-flush", daemon=True).start()


def _run_target(argv: list[str]) -> None:
    if argv[0] == "-m":
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return
    if os.path.sep in argv[0]:
        sys.argv = argv
        runpy.run_path(argv[0], run_name="__main__")
        return
    matches = [ep for ep in entry_points(group="console_scripts") if ep.name == argv[0]]
    if not matches:
        raise SystemExit(f"probe: no console script named {argv[0]!r}")
    sys.argv = argv
    result = matches[0].load()()
    if isinstance(result, int):
        raise SystemExit(result)


def main() -> None:
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        raise SystemExit("usage: python -m csbench.probe OUT.json -- <script|-m module> [args]")
    out, target = sys.argv[1], sys.argv[3:]
    _LOG.append(open(requests_path(out), "w", encoding="utf-8", buffering=1 << 16))  # noqa: SIM115
    _patch_httpx()
    _patch_requests()
    _OUT.append(out)
    signal.signal(signal.SIGTERM, _interrupt)
    flush_every = float(os.environ.get("CSBENCH_PROBE_FLUSH_S") or 0)
    if flush_every > 0:
        _start_flusher(out, flush_every)
    code = 1
    try:
        _run_target(target)
        code = 0
    except SystemExit as stop:
        if stop.code is None or isinstance(stop.code, int):
            code = stop.code or 0
        else:
            print(stop.code, file=sys.stderr)
    except KeyboardInterrupt:
        code = 130
    finally:
        _dump(out, code)
    sys.exit(code)


if __name__ == "__main__":
    main()
