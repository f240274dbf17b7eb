"""Build the app and serve it with uvicorn (httptools + uvloop) on a socket we bind ourselves,
so that port 0 yields a known free port before anyone connects."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import uvicorn

from creator_sync.sandbox import virtuals
from creator_sync.sandbox.app import SandboxApp
from creator_sync.sandbox.generate import generate
from creator_sync.sandbox.options import Options


def build_app(options: Options) -> SandboxApp:
    options.validate()
    store = generate(options.seed, options.scale, options.sites, options.now_epoch(),
                     options.settlement_delay_days, payout_corrections=options.quirks)
    virtuals.install(store)
    return SandboxApp(options, store)


class RunningServer:
    """A uvicorn server in a daemon thread; `stop()` shuts it down and joins."""

    def __init__(self, app: SandboxApp, host: str, port: int):
        self.app = app
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, port))
        self.host, self.port = self.sock.getsockname()[:2]
        app.base_url = f"http://{self.host}:{self.port}"
        config = uvicorn.Config(app, loop="uvloop", http="httptools", lifespan="on",
                                log_level="warning", access_log=False, date_header=False,
                                server_header=False, timeout_keep_alive=30)
        self.server = uvicorn.Server(config)
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name=f"sandbox:{self.port}",
                                       daemon=True)

    def _run(self) -> None:
        try:
            import uvloop

            loop = uvloop.new_event_loop()
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self.server.serve(sockets=[self.sock]))
            finally:
                loop.close()
        except BaseException as exc:  # surfaced by start()
            self.error = exc

    def start(self, timeout: float = 30.0) -> RunningServer:
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if self.error is not None or not self.thread.is_alive():
                raise RuntimeError(f"sandbox failed to start: {self.error!r}")
            if time.monotonic() > deadline:
                raise RuntimeError("sandbox did not start in time")
            time.sleep(0.01)
        return self

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def stop(self, timeout: float = 10.0) -> None:
        self.server.should_exit = True
        self.thread.join(timeout)
        if self.thread.is_alive():
            self.server.force_exit = True
            self.thread.join(timeout)
        self.sock.close()
