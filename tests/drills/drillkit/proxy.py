"""A loopback HTTP proxy between the sync and the sandbox: the drills' hands and eyes.

It forwards every request to an upstream (the sandbox) and lets a drill:
- replace or corrupt chosen responses (bad-input cases) while everything else stays real, so the
  auth, envelope and data around the bad page are exactly the API's;
- run actions at exact request counts (insert activity, revoke the token, kill the sync), which
  is deterministic where wall-clock timing is not;
- capture the tokens the sandbox issues and swap a drill's unique client secret for the sandbox's
  one, so the security scan knows every secret value it must never find.

Loopback only, threads are daemons, `close()` stops it; the `Date`, `Retry-After` and content
type of the sandbox pass through untouched (clients read the sandbox clock from `Date`).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlencode, urlsplit

import httpx
import orjson

_HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "content-length",
                "content-encoding", "server"}


@dataclass
class Reply:
    """A response to send back; `abort` closes the connection instead (a reset)."""

    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""
    abort: bool = False

    def json(self) -> object:
        return orjson.loads(self.body)

    def with_json(self, doc: object) -> Reply:
        return Reply(self.status, self.headers, orjson.dumps(doc))

    def header(self, name: str) -> str | None:
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None


@dataclass
class Exchange:
    """One request as the proxy saw it."""

    number: int
    method: str
    path: str  # without query, e.g. /v1/contacts
    query: list[tuple[str, str]]
    headers: dict[str, str]
    body: bytes

    def param(self, name: str) -> str | None:
        for k, v in self.query:
            if k == name:
                return v
        return None

    @property
    def collection(self) -> str | None:
        """`contacts` for /v1/contacts, `courses` for /v1/courses/123; None for oauth."""
        parts = [p for p in self.path.split("/") if p]
        if len(parts) >= 2 and parts[0] == "v1" and parts[1] != "oauth":
            return parts[1]
        return None

    @property
    def is_detail(self) -> bool:
        return len([p for p in self.path.split("/") if p]) >= 3

    @property
    def page(self) -> int:
        value = self.param("page[number]")
        return int(value) if value and value.isdigit() else 1

    @property
    def url(self) -> str:
        return self.path + ("?" + urlencode(self.query) if self.query else "")


class _QuietServer(ThreadingHTTPServer):
    """Clients that hang up (a killed sync, an aborted reply) are normal in drills: no noise."""

    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        return


Fetch = Callable[[], Reply]
Mutator = Callable[[Exchange, Fetch], Reply]


class DrillProxy:
    """Forwarding proxy with hooks; use as a context manager."""

    def __init__(self, upstream: str, *, secret_map: dict[str, str] | None = None,
                 tls: tuple[str, str] | None = None) -> None:
        self.upstream = upstream.rstrip("/")
        self.secret_map = dict(secret_map or {})
        self.mutator: Mutator | None = None
        self.triggers: list[Callable[[Exchange], None]] = []
        self.exchanges: list[tuple[Exchange, int]] = []
        self.tokens: set[str] = set()
        self.injected = 0  # replies a mutator changed (so a drill can prove it bit)
        self._lock = threading.Lock()
        self._count = 0
        self._local = threading.local()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # quiet
                return

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                reply = proxy.handle(self.command, self.path, dict(self.headers.items()), body)
                if reply.abort:
                    self.close_connection = True
                    with contextlib.suppress(OSError):
                        self.connection.shutdown(2)
                    return
                self.send_response_only(reply.status)
                for k, v in reply.headers:
                    if k.lower() not in _HOP_HEADERS:
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                with contextlib.suppress(OSError):
                    self.wfile.write(reply.body)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

        self.server = _QuietServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.scheme = "http"
        if tls is not None:  # serve HTTPS with the given (certfile, keyfile)
            import ssl

            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(*tls)
            self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True,
                                                 do_handshake_on_connect=False)
            self.scheme = "https"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    # ------------------------------------------------------------------ lifecycle
    @property
    def base_url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> DrillProxy:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def reset(self) -> None:
        """Back to plain pass-through, with fresh counters."""
        with self._lock:
            self.mutator = None
            self.triggers = []
            self.exchanges = []
            self.injected = 0
            self._count = 0

    @property
    def requests(self) -> int:
        return self._count

    # ------------------------------------------------------------------ forwarding
    def _client(self) -> httpx.Client:
        client = getattr(self._local, "client", None)
        if client is None:
            client = httpx.Client(timeout=60.0)
            self._local.client = client
        return client

    def _forward(self, method: str, target: str, headers: dict[str, str], body: bytes) -> Reply:
        fwd = {k: v for k, v in headers.items() if k.lower() not in _HOP_HEADERS | {"host"}}
        try:
            resp = self._client().request(method, self.upstream + target, headers=fwd, content=body)
            content = resp.content
        except httpx.HTTPError:
            return Reply(abort=True)
        return Reply(resp.status_code, list(resp.headers.items()), content)

    def _rewrite_secret(self, body: bytes) -> bytes:
        if not self.secret_map or not body:
            return body
        pairs = parse_qsl(body.decode(), keep_blank_values=True)
        return urlencode([(k, self.secret_map.get(v, v) if k == "client_secret" else v)
                          for k, v in pairs]).encode()

    def handle(self, method: str, target: str, headers: dict[str, str], body: bytes) -> Reply:
        parts = urlsplit(target)  # absolute-form when the client uses us as its HTTP proxy
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        with self._lock:
            self._count += 1
            number = self._count
        ex = Exchange(number, method, parts.path, parse_qsl(parts.query, keep_blank_values=True),
                      headers, body)
        auth = headers.get("Authorization") or headers.get("authorization") or ""
        if auth.lower().startswith("bearer "):
            self.tokens.add(auth[7:].strip())
        for trigger in list(self.triggers):
            trigger(ex)
        is_token = parts.path.endswith("/oauth/token")
        fwd_body = self._rewrite_secret(body) if is_token else body

        def fetch() -> Reply:
            return self._forward(method, target, headers, fwd_body)

        mutator = self.mutator
        reply = mutator(ex, fetch) if mutator and not is_token else fetch()
        if is_token and reply.status == 200:
            with contextlib.suppress(Exception):
                doc = reply.json()
                for key in ("access_token", "refresh_token"):
                    if isinstance(doc, dict) and doc.get(key):
                        self.tokens.add(str(doc[key]))
        with self._lock:
            self.exchanges.append((ex, reply.status if not reply.abort else -1))
        return reply

    # ------------------------------------------------------------------ drill helpers
    def revoke(self, token: str) -> int:
        """Revoke a session at the sandbox, as an admin would (POST /v1/oauth/revoke)."""
        resp = httpx.post(self.upstream + "/v1/oauth/revoke", data={"token": token},
                          headers={"Authorization": f"Bearer {token}"}, timeout=30.0)
        return resp.status_code

    def collection_requests(self, collection: str) -> list[Exchange]:
        return [ex for ex, _ in self.exchanges if ex.collection == collection]
