"""A tiny in-memory Creator Platform API for unit tests (httpx.MockTransport handler).

It implements just enough of the spec (token grant/refresh/revoke, paging, the three meta
shapes, site filter, include on details) to exercise the client and source without a server.
The real end-to-end tests run against the sandbox.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

import httpx
import jwt
import orjson

DATE = "Sun, 01 Jun 2025 12:00:00 GMT"


@dataclass
class FakeApi:
    collections: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    details: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    singles: dict[str, dict[str, Any]] = field(default_factory=dict)  # e.g. "me" -> document
    scope: str | None = None  # the token response's `scope` (None: not stated)
    date: str = DATE  # the HTTP Date header: the server clock the client plans windows with
    client_id: str = "cid"
    client_secret: str = "s3cret-value"
    token_ttl: int = 3600
    max_page_size: int = 100
    meta_shape: Callable[[str, int, int, int, int], dict[str, Any]] | None = None
    hook: Callable[[httpx.Request], httpx.Response | None] | None = None  # fault injection
    requests: list[httpx.Request] = field(default_factory=list)
    issued: int = 0
    revoked: set[str] = field(default_factory=set)
    valid: set[str] = field(default_factory=set)
    refresh_tokens: set[str] = field(default_factory=set)

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def _json(self, status: int, body: Any) -> httpx.Response:
        return httpx.Response(status, content=orjson.dumps(body), headers={"Date": self.date, "Content-Type": "application/vnd.api+json"})

    def _token(self) -> dict[str, Any]:
        self.issued += 1
        now = int(time.time())
        access = jwt.encode({"sub": "x", "n": self.issued, "exp": now + self.token_ttl}, "fake-api-signing-key-0123456789abcdef", algorithm="HS256")
        refresh = jwt.encode({"sub": "x", "r": self.issued, "exp": now + 86400}, "fake-api-signing-key-0123456789abcdef", algorithm="HS256")
        self.valid.add(access)
        self.refresh_tokens.add(refresh)
        body = {"access_token": access, "refresh_token": refresh, "token_type": "Bearer", "expires_in": self.token_ttl}
        if self.scope is not None:
            body["scope"] = self.scope
        return body

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.hook is not None:
            forced = self.hook(request)
            if forced is not None:
                return forced
        path = request.url.path.removeprefix("/v1")
        if path == "/oauth/token":
            form = {k: v[0] for k, v in parse_qs(request.content.decode()).items()}
            if form.get("grant_type") == "client_credentials":
                if form.get("client_id") == self.client_id and form.get("client_secret") == self.client_secret:
                    return self._json(200, self._token())
                return self._json(401, {"errors": [{"status": "401", "detail": "bad client"}]})
            if form.get("grant_type") == "refresh_token" and form.get("refresh_token") in self.refresh_tokens:
                self.refresh_tokens.discard(form["refresh_token"])
                return self._json(200, self._token())
            return self._json(400, {"errors": [{"status": "400", "detail": "invalid_grant"}]})
        auth = request.headers.get("authorization", "")
        token = auth.removeprefix("Bearer ")
        if token not in self.valid:
            return self._json(401, {"errors": [{"status": "401", "detail": "invalid token"}]})
        if path == "/oauth/revoke":
            self.valid.clear()
            self.refresh_tokens.clear()
            self.revoked.add(token)
            return self._json(200, {})
        q = {k: v[0] for k, v in parse_qs(request.url.query.decode()).items()}
        parts = path.strip("/").split("/")
        if parts[0] in self.singles:
            return self._json(200, self.singles[parts[0]])
        if len(parts) == 2:
            doc = self.details.get((parts[0], parts[1]))
            return self._json(200, doc) if doc else self._json(404, {"errors": [{"status": "404", "detail": "not found"}]})
        rows = self.collections.get(parts[0])
        if rows is None:
            return self._json(404, {"errors": [{"status": "404", "detail": "no such collection"}]})
        site = q.get("filter[site_id]")
        if site:
            rows = [r for r in rows if ((r.get("relationships") or {}).get("site") or {}).get("data", {}).get("id") in (site, None)]
        size = min(int(q.get("page[size]", 25)), self.max_page_size)
        number = int(q.get("page[number]", 1))
        page = rows[(number - 1) * size : number * size]
        pages = math.ceil(len(rows) / size)
        if self.meta_shape:
            meta = self.meta_shape(parts[0], number, size, len(rows), pages)
        else:
            meta = {"total_pages": pages, "total_count": len(rows), "current_page": number}
        return self._json(200, {"data": page, "meta": meta, "links": {"next": "https://evil.example/v1/x"}})


def record(jtype: str, rid: int | str, site: str = "1", **attributes: Any) -> dict[str, Any]:
    return {
        "id": str(rid),
        "type": jtype,
        "attributes": attributes,
        "relationships": {"site": {"data": {"id": site, "type": "sites"}}},
    }
