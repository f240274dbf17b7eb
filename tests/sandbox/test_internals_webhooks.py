"""Webhook delivery policy: retries after a failure, gives up after the limit, logs attempts."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

FORM = {"client_id": "sandbox", "client_secret": "sandbox-secret",
        "grant_type": "client_credentials"}


class Flaky:
    """Loopback receiver answering each delivery's attempts with the given statuses in turn
    (then 200)."""

    def __init__(self, statuses: list[int]):
        self.statuses = list(statuses)
        self.bodies: list[tuple[str, dict]] = []  # (delivery, body) of every attempt
        self.seen: dict[str, int] = {}
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                delivery = self.headers["x-sandbox-delivery"]
                outer.bodies.append((delivery, json.loads(body)))
                attempt = outer.seen.get(delivery, 0)
                outer.seen[delivery] = attempt + 1
                status = outer.statuses[attempt] if attempt < len(outer.statuses) else 200
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _hook_everything(handle, url: str) -> None:
    client = httpx.Client(base_url=handle.api_url)
    try:
        token = client.post("/oauth/token", data=FORM).json()["access_token"]
        headers = {"Authorization": f"Bearer {token}",
                   "Content-Type": "application/vnd.api+json"}
        site = client.get("/sites", headers=headers).json()["data"][0]["id"]
        body = {"data": {"type": "hooks", "attributes": {"event": "tag_added", "target_url": url},
                         "relationships": {"site": {"data": {"id": site, "type": "sites"}}}}}
        assert client.post("/hooks", content=json.dumps(body), headers=headers).status_code == 201
    finally:
        client.close()


def _log(handle) -> list[dict]:
    return httpx.get(handle.base_url + "/_sandbox/deliveries").json()


@pytest.mark.parametrize(("statuses", "delivered", "attempts"), [
    ([500], True, 2),
    ([503, 502], True, 3),
    ([500, 500, 500], False, 3),
])
def test_retry_policy(sandbox_factory, statuses, delivered, attempts):
    receiver = Flaky(statuses)
    try:
        handle = sandbox_factory(seed=40, webhook_retries=2, webhook_backoff=0.05)
        _hook_everything(handle, receiver.url)
        handle.activity(30)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            log = _log(handle)
            if log and all(e["finished"] for e in log):
                break
            time.sleep(0.05)
        first = log[0]
        assert first["event"] == "tag_added"
        assert first["delivered"] is delivered
        assert first["attempts"] == attempts
        # the attempts of one delivery (the same record may have another tag_added delivery)
        same = [b for d, b in receiver.bodies if d == str(first["delivery"])]
        assert len(same) == attempts
        assert len({json.dumps(b, sort_keys=True) for b in same}) == 1, "a retry resends the body"
    finally:
        receiver.close()
