"""Drive headless Chromium over the DevTools protocol with `websockets` (already installed via
uvicorn[standard]): enough to load a page, watch its console and network, evaluate a script and
take a full-page screenshot, without adding a browser-automation dependency.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import pathlib
import shutil
import subprocess
import tempfile
import time
from typing import Any

from websockets.sync.client import connect

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--mute-audio",
    "--no-default-browser-check",
)
CANDIDATES = ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome")


def find_chromium() -> str | None:
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


class CdpError(RuntimeError):
    pass


class Chromium:
    """One headless browser with one page; use as a context manager (it always cleans up)."""

    def __init__(self, binary: str, *, width: int = 1200, height: int = 900, timeout: float = 30.0):
        self.binary, self.width, self.height, self.timeout = binary, width, height, timeout
        self.events: list[dict[str, Any]] = []
        self._ids = itertools.count(1)

    def __enter__(self) -> Chromium:
        self._stack = contextlib.ExitStack()
        self._profile = tempfile.mkdtemp(prefix="creator-sync-chromium-")
        self._proc = subprocess.Popen(
            [
                self.binary,
                *FLAGS,
                f"--user-data-dir={self._profile}",
                "--remote-debugging-port=0",
                f"--window-size={self.width},{self.height}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            port, path = self._devtools_address()
            self._ws = self._stack.enter_context(
                connect(f"ws://127.0.0.1:{port}{path}", max_size=None, open_timeout=self.timeout)
            )
            target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            self._session = self.call(
                "Target.attachToTarget", {"targetId": target, "flatten": True}
            )["sessionId"]
            for domain in ("Page", "Runtime", "Log", "Network"):
                self.call(f"{domain}.enable", session=True)
            self.call(
                "Emulation.setDeviceMetricsOverride",
                {
                    "width": self.width,
                    "height": self.height,
                    "deviceScaleFactor": 1,
                    "mobile": False,
                },
                session=True,
            )
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        ws = getattr(self, "_ws", None)
        if ws is not None:
            # The browser may already be gone; the process wait below is what must succeed.
            with contextlib.suppress(Exception):
                self.call("Browser.close")
        self._stack.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(timeout=10)
        shutil.rmtree(self._profile, ignore_errors=True)

    def _devtools_address(self) -> tuple[int, str]:
        """Chromium writes its chosen port to DevToolsActivePort in the profile directory."""
        marker = pathlib.Path(self._profile) / "DevToolsActivePort"
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise CdpError(f"{self.binary} exited with status {self._proc.returncode}")
            if marker.exists():
                lines = marker.read_text().split()
                if len(lines) >= 2:
                    return int(lines[0]), lines[1]
            time.sleep(0.05)
        raise CdpError(f"{self.binary} did not open its DevTools port within {self.timeout}s")

    def call(
        self, method: str, params: dict[str, Any] | None = None, *, session: bool = False
    ) -> dict:
        """Send one command and wait for its reply, keeping every event seen meanwhile."""
        message_id = next(self._ids)
        message: dict[str, Any] = {"id": message_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self._session
        self._ws.send(json.dumps(message))
        deadline = time.monotonic() + self.timeout
        while True:
            reply = json.loads(self._ws.recv(timeout=max(0.01, deadline - time.monotonic())))
            if reply.get("id") == message_id:
                if "error" in reply:
                    raise CdpError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def wait_for_event(self, method: str) -> dict[str, Any]:
        for event in self.events:
            if event["method"] == method:
                return event
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            event = json.loads(self._ws.recv(timeout=max(0.01, deadline - time.monotonic())))
            if "method" in event:
                self.events.append(event)
                if event["method"] == method:
                    return event
        raise CdpError(f"no {method} within {self.timeout}s")

    def open(self, path: pathlib.Path) -> str:
        url = path.resolve().as_uri()
        self.events.clear()
        self.call("Page.navigate", {"url": url}, session=True)
        self.wait_for_event("Page.loadEventFired")
        # Let late console messages and requests arrive (DevTools evaluation is exempt from CSP).
        self.evaluate("new Promise(done => setTimeout(done, 150))")
        return url

    def evaluate(self, expression: str) -> Any:
        result = self.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            session=True,
        )
        if "exceptionDetails" in result:
            raise CdpError(f"script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, out: pathlib.Path, max_height: int | None = None) -> pathlib.Path:
        """Full-page PNG (the viewport is grown to the content height first), optionally cut
        at `max_height` CSS pixels."""
        metrics = self.call("Page.getLayoutMetrics", session=True)
        height = int(metrics["cssContentSize"]["height"]) + 1
        if max_height is not None:
            height = min(height, max_height)
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": self.width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            session=True,
        )
        shot = self.call(
            "Page.captureScreenshot",
            {
                "format": "png",
                "captureBeyondViewport": True,
                "clip": {"x": 0, "y": 0, "width": self.width, "height": height, "scale": 1},
            },
            session=True,
        )
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(base64.b64decode(shot["data"]))
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False},
            session=True,
        )
        return out

    # ---- what the page did ----------------------------------------------------------------

    def console_errors(self) -> list[str]:
        errors = []
        for event in self.events:
            method, params = event["method"], event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                errors.append(
                    " ".join(str(a.get("value", a.get("description"))) for a in params["args"])
                )
            elif method == "Runtime.exceptionThrown":
                errors.append(str(params["exceptionDetails"].get("text")))
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                errors.append(f"{params['entry'].get('source')}: {params['entry'].get('text')}")
        return errors

    def requested_urls(self) -> list[str]:
        return [
            e["params"]["request"]["url"]
            for e in self.events
            if e["method"] == "Network.requestWillBeSent"
        ]

    def blocked_urls(self) -> dict[str, str]:
        """URL -> reason for requests the browser refused to send (CSP, mixed content...)."""
        urls = {
            e["params"]["requestId"]: e["params"]["request"]["url"]
            for e in self.events
            if e["method"] == "Network.requestWillBeSent"
        }
        return {
            urls.get(e["params"]["requestId"], "?"): e["params"]["blockedReason"]
            for e in self.events
            if e["method"] == "Network.loadingFailed" and e["params"].get("blockedReason")
        }
