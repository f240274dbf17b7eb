"""The lean ASGI app: routing, auth, scopes, rate limit, latency, faults, JSON responses.

Raw ASGI (no framework) keeps the per-request overhead small; every response carries the
sandbox clock in its `Date` header.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import sys
import traceback
from collections import OrderedDict
from urllib.parse import parse_qsl

import numpy as np
import orjson

from creator_sync.sandbox import account, deletes, webhooks
from creator_sync.sandbox.activity import Activity
from creator_sync.sandbox.auth import Auth, Principal
from creator_sync.sandbox.collections import COLLECTIONS, Collection, routes
from creator_sync.sandbox.dataset import Store
from creator_sync.sandbox.errors import ApiError, bad_param
from creator_sync.sandbox.faults import FaultPlan
from creator_sync.sandbox.jsonapi import RenderContext, http_date, render, resolve_includes
from creator_sync.sandbox.options import Options
from creator_sync.sandbox.payout_lines import payout_lines
from creator_sync.sandbox.query import (
    check_fields,
    check_includes,
    included_types,
    internal_fields,
    page_links,
    page_meta,
    parse_params,
    require_site,
    run_list,
)
from creator_sync.sandbox.ratelimit import RateLimiter
from creator_sync.sandbox.relations import related
from creator_sync.sandbox.schema import PAYOUTS, REL_INDEX, Rel
from creator_sync.sandbox.store import NULL

JSON_API = b"application/vnd.api+json"
QUIRK_HOST = "https://api.creator-platform.example/api/v1"
LARGE_COURSE_LESSONS = 30
# the live document's deletes: (type, *path after the id)
DELETE_ROUTES = {("contacts",), ("contact_notes",), ("contacts", "relationships", "tags"),
                 ("contacts", "relationships", "offers"), ("customers", "relationships", "offers")}


class ResponseCache:
    """Bytes of successful GET responses keyed by (path, query, data version), bounded by size:
    repeated reads (benchmarks replaying the same pages, retries) cost no rendering."""

    def __init__(self, budget: int):
        self.budget = budget
        self.used = 0
        self._items: OrderedDict[tuple, bytes] = OrderedDict()

    def get(self, key: tuple) -> bytes | None:
        body = self._items.get(key)
        if body is not None:
            self._items.move_to_end(key)
        return body

    def put(self, key: tuple, body: bytes) -> None:
        if len(body) > self.budget:
            return
        stale = [k for k in self._items if k[2] != key[2]] if self._items and \
            next(iter(self._items))[2] != key[2] else []
        for k in stale:
            self.used -= len(self._items.pop(k))
        self._items[key] = body
        self.used += len(body)
        while self.used > self.budget:
            _, old = self._items.popitem(last=False)
            self.used -= len(old)


class Request:
    __slots__ = ("body", "headers", "method", "path", "query", "query_string")

    def __init__(self, scope: dict, body: bytes):
        self.method: str = scope["method"]
        self.path: str = scope["path"]
        self.query_string: str = scope.get("query_string", b"").decode("latin-1")
        self.query = parse_qsl(self.query_string, keep_blank_values=True)
        self.headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                        for k, v in scope.get("headers", [])}
        self.body = body

    def form(self) -> dict[str, str]:
        ctype = self.headers.get("content-type", "")
        if self.body.strip() and "application/x-www-form-urlencoded" not in ctype:
            raise ApiError(400, "the body must be application/x-www-form-urlencoded",
                           pointer="/headers/Content-Type", oauth_error="invalid_request")
        return dict(parse_qsl(self.body.decode("utf-8", "replace"), keep_blank_values=True))


class SandboxApp:
    def __init__(self, options: Options, store: Store):
        self.options = options
        self.store = store
        self.auth = Auth(options.token_ttl, options.refresh_token_ttl)
        self.limiter = RateLimiter(options.rate_limit, options.rate_window,
                                   options.rate_window_type)
        self.faults = FaultPlan(options.seed, options.fault_rate)
        self.base_url = ""  # set once the port is known
        self.routes = routes(options.brand)
        self.maintenance = options.maintenance
        self.dispatcher = webhooks.Dispatcher(options.webhook_retries, options.webhook_backoff)
        self.activity = Activity(store, options.seed, options.seconds_per_event,
                                 options.delete_rate, options.customer_on_contact_delete)
        self._background: asyncio.Task | None = None
        self.responses = ResponseCache(options.response_cache_mb * 2**20)

    @property
    def api_url(self) -> str:
        return self.base_url + "/v1"

    # -- ASGI --------------------------------------------------------------------------------
    async def __call__(self, scope: dict, receive, send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        request = Request(scope, body)
        if not self.base_url:
            server = scope.get("server") or ("127.0.0.1", 0)
            self.base_url = f"http://{server[0]}:{server[1]}"
        fault = None
        if request.path.startswith("/v1"):
            fault = self.faults.decide(request.method, request.path, request.query)
        if self.options.latency_ms:
            await asyncio.sleep(self.options.latency_ms / 1000)
        if self.maintenance and request.path.startswith("/v1"):
            err = ApiError(503, "the service is unavailable (sandbox maintenance mode)",
                           pointer=request.path,
                           headers={"retry-after": "60"} if self.options.retry_after else {})
            await self._send(send, 503, err.body(), err.headers)
            return
        if fault == "reset":
            _reset(send)
            return
        if fault in ("500", "502", "503"):
            status = int(fault)
            err = ApiError(status, "injected fault (sandbox --fault-rate)", pointer=request.path)
            await self._send(send, status, err.body())
            return
        if fault == "html":
            page = (b"<!DOCTYPE html><html><head><title>Bad gateway</title></head><body>"
                    b"<h1>502 Bad Gateway</h1><p>The upstream server is temporarily "
                    b"unavailable.</p></body></html>")
            await self._send(send, 200, page, content_type=b"text/html; charset=utf-8")
            return
        if fault == "slow":
            await asyncio.sleep(self.options.fault_slow_seconds)
        try:
            status, payload, extra = await self._route(request)
        except ApiError as err:
            status, payload, extra = err.status, err.body(), err.headers
        except Exception:  # a sandbox bug: still answer with the error object, and say so
            traceback.print_exc(file=sys.stderr)
            err = ApiError(500, "unexpected sandbox error (see the sandbox's stderr)",
                           pointer=request.path)
            status, payload, extra = err.status, err.body(), err.headers
        if fault == "truncated" and status == 200:
            payload = payload[: max(1, len(payload) // 2)]
        await self._send(send, status, payload, extra)

    async def _lifespan(self, receive, send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                if self.options.activity_interval > 0:
                    self._background = asyncio.get_running_loop().create_task(self._ticker())
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self._background:
                    self._background.cancel()
                await self.dispatcher.close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _ticker(self) -> None:
        while True:
            await asyncio.sleep(self.options.activity_interval)
            try:
                await self.run_activity(self.options.activity_count)
            except Exception:  # keep ticking: one bad tick must not stop a live demo
                traceback.print_exc(file=sys.stderr)

    async def _send(self, send, status: int, body: bytes, extra: dict | None = None,
                    content_type: bytes = JSON_API) -> None:
        extra = dict(extra or {})
        content_type = str(extra.pop("content-type", "")).encode() or content_type
        headers = [
            (b"content-type", content_type),
            (b"content-length", str(len(body)).encode()),
            (b"date", http_date(self.store.now).encode()),
        ]
        for key, value in (extra or {}).items():
            headers.append((key.encode(), str(value).encode()))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    # -- routing -----------------------------------------------------------------------------
    async def _route(self, req: Request) -> tuple[int, bytes, dict]:
        parts = [p for p in req.path.split("/") if p]
        if parts[:1] == ["_sandbox"]:
            return await self._sandbox_route(req, parts[1:])
        if parts[:1] != ["v1"] or len(parts) < 2:
            raise ApiError(404, f"no route for {req.path}; the API is under /v1",
                           pointer=req.path)
        parts = parts[1:]
        if parts[0] == "oauth" and len(parts) == 2:
            return self._oauth(req, parts[1])
        if parts == ["version"]:  # no authentication: a health check (addendum A4)
            _only_get(req)
            return 200, orjson.dumps(account.version()), {}
        principal = self.auth.authenticate(req.headers.get("authorization"))
        limited = self.limiter.check(principal.client_id)
        if limited is not None:
            raise self._too_many(limited, "/headers/Authorization")
        if parts[0] == "hooks":
            return self._hooks(req, principal, parts[1:])
        if parts == ["me"]:
            _only_get(req)
            return 200, orjson.dumps(account.me(principal.client_id, self.api_url)), {}
        collection = self.routes.get(parts[0])
        if collection is None:
            raise ApiError(404, f"unknown collection {parts[0]!r}", pointer=req.path)
        if req.method == "DELETE" and (len(parts) == 2 or parts[2:3] == ["relationships"]):
            _require_scope(principal, collection.scope, req.path)
            return await self._delete(req, collection, parts)
        _only_get(req)
        _require_scope(principal, collection.scope, req.path)
        if len(parts) > 4 or (len(parts) >= 2 and not collection.single) or (
                len(parts) == 4 and parts[2] != "relationships"):
            raise ApiError(404, f"no route for {req.path}", pointer=req.path)
        if len(parts) >= 3:  # the relationship links of contacts/customers point here
            rel_name = parts[-1]
            rel = REL_INDEX[collection.type].get(rel_name)
            if rel is None:
                raise ApiError(404, f"{collection.path} has no relationship {rel_name!r}",
                               pointer=req.path)
            if len(parts) == 3:
                target = next((c for c in COLLECTIONS.values() if c.type == rel.type), None)
                _require_scope(principal, target.scope if target else None, req.path)
        key = (req.path, req.query_string, self.store.data_version)
        body = self.responses.get(key)
        if body is None:
            if len(parts) == 1:
                body = self._list(req, collection)
            elif len(parts) == 2:
                body = self._single(req, collection, parts[1])
            else:
                body = self._relationship(req, collection, parts[1], rel, linkage=len(parts) == 4)
            self.responses.put(key, body)
        return 200, body, {}

    async def _delete(self, req: Request, collection: Collection,
                      parts: list[str]) -> tuple[int, bytes, dict]:
        """The live document's deletes (deletes.py holds what they do to the account)."""
        route = (collection.type, *parts[2:])
        if route not in DELETE_ROUTES:
            raise ApiError(405, f"DELETE is not allowed on {req.path}", pointer=req.path,
                           headers={"allow": "GET"})
        store = self.store
        with store.lock:
            row = self._find(collection, parts[1], None)
            events: list = []
            if route == ("contacts",):
                deletes.delete_contact(store, row, self.options.customer_on_contact_delete)
            elif route == ("contact_notes",):
                deletes.delete_note(store, row)
            else:
                rel = REL_INDEX[collection.type][parts[3]]
                targets = self._identifiers(req, rel.type)
                if rel.type == "contact_tags":
                    events = deletes.remove_tags(store, row, targets)
                else:
                    customer = (row if collection.type == "customers"
                                else int(store.tables["contacts"].cols["customer"][row]))
                    deletes.revoke_offers(store, customer, targets)
            deletes.finish(store)
            if len(parts) == 2:
                return 200, orjson.dumps({"data": {}}), {}
            body = self._relationship(req, collection, parts[1], rel, linkage=True)
        for target, payload, event, resource_id in webhooks.deliveries(store, events,
                                                                       self._context()):
            self.dispatcher.submit(target, payload, event, resource_id)
        return 200, body, {}

    def _identifiers(self, req: Request, type_name: str) -> list[int]:
        """Rows named by a body `{"data": [{"type": ..., "id": ...}]}` (400 or 404 otherwise)."""
        try:
            doc = orjson.loads(req.body or b"null")
        except orjson.JSONDecodeError:
            doc = None
        items = doc.get("data") if isinstance(doc, dict) else None
        if not isinstance(items, list) or not all(
                isinstance(i, dict) and i.get("type") == type_name
                and isinstance(i.get("id"), str | int) for i in items):
            raise ApiError(400, f'the body must be {{"data": [{{"type": "{type_name}", '
                                f'"id": "..."}}]}}', pointer="/data")
        table = self.store.tables[type_name]
        rows = []
        for k, item in enumerate(items):
            row = table.row_of(str(item["id"]))
            if row is None:
                raise ApiError(404, f"{type_name} {item['id']!r} not found",
                               pointer=f"/data/{k}/id", title="Not Found")
            rows.append(row)
        return rows

    def _relationship(self, req: Request, collection: Collection, id_text: str, rel: Rel,
                      linkage: bool) -> bytes:
        """`/{id}/relationships/{rel}` (resource identifiers) or `/{id}/{rel}` (the related
        resources), so that the relationship links in responses lead somewhere."""
        params = parse_params(req.query, default_size=1, max_size=1, allow_sort=False,
                              allow_page=False)
        if params.filters:
            key = f"filter[{sorted(params.filters)[0]}]"
            raise ApiError(400, f"{key} is not accepted here", parameter=key)
        self._check_fields(params, {rel.type})
        row = self._find(collection, id_text, None)
        rows = np.asarray(related(self.store, collection.type, rel, row), dtype=np.int64)
        target = self.store.tables[rel.type]
        if linkage:
            data: object = [{"id": i, "type": rel.type} for i in target.ids(rows)]
        else:
            data = render(self._context(params.fields), rel.type, rows)
        if not rel.many:
            data = data[0] if data else None  # type: ignore[index]
        return orjson.dumps({"data": data, "links": {"self": f"{self.api_url}/{req.path[4:]}"}})

    def _oauth(self, req: Request, action: str) -> tuple[int, bytes, dict]:
        if req.method != "POST":
            raise ApiError(405, f"use POST for {req.path}", pointer=req.path,
                           headers={"allow": "POST"})
        no_store = {"cache-control": "no-store"}
        if action == "token":
            # A8 and the live document: the token endpoint answers plain JSON, not the JSON:API
            # media type, its errors (400, 401, 429) included
            plain = {**no_store, "content-type": "application/json"}
            try:
                limited = self.limiter.check("token:" + req.headers.get("x-forwarded-for", "local"))
                if limited is not None:
                    raise self._too_many(limited, req.path)
                return 200, orjson.dumps(self.auth.token(req.form())), plain
            except ApiError as err:
                err.headers = {**err.headers, **plain}
                raise
        if action == "revoke":
            principal = self.auth.authenticate(req.headers.get("authorization"))
            self.auth.revoke(principal, req.form())
            return 200, b"{}", no_store
        raise ApiError(404, f"no route for {req.path}", pointer=req.path)

    def _too_many(self, seconds: int, pointer: str) -> ApiError:
        """A 429; with --no-retry-after, neither the header nor the body says when to retry."""
        opts = self.options
        window = "minute" if opts.rate_window == 60 else f"{opts.rate_window:g} s"
        detail = (f"rate limit of {opts.rate_limit} requests per {window} "
                  f"({opts.rate_window_type} window) exceeded")
        if not opts.retry_after:
            return ApiError(429, detail, pointer=pointer)
        return ApiError(429, f"{detail}; retry in {seconds} s", pointer=pointer,
                        headers={"retry-after": str(seconds)})

    def _context(self, fields: dict[str, set[str]] | None = None, in_list: bool = False):
        return RenderContext(self.store, self.api_url, self.options.quirks, fields or {},
                             in_list, self.options.brand, self.options.unreadable_amounts)

    def _check_fields(self, params, types: set[str], detail: bool = False) -> None:
        internal_fields(params, self.options.brand)
        check_fields(params, types, self.options.brand, detail)

    def _list(self, req: Request, collection: Collection) -> bytes:
        opts = self.options
        params = parse_params(req.query,
                              default_size=collection.default_page_size or opts.page_size_default,
                              max_size=opts.page_size_max, page_size_allowed=collection.page_size,
                              allow_sort=True)
        self._check_fields(params, {collection.type})
        refused = opts.refused_filters()
        for name in sorted(params.filters):
            if (collection.path.strip("/"), name) in refused:  # --refuse-filters
                raise bad_param(f"filter[{name}]", f"filter[{name}] is not a permitted filter")
        store = self.store
        page = run_list(store, collection, params, store.tables["sites"].n)
        data = render(self._context(params.fields, in_list=True), collection.type, page.rows)
        if opts.quirks:
            links = page_links(QUIRK_HOST, collection.path, params, page)
            meta = {"total": page.total}
        else:
            links = page_links(self.api_url, collection.path, params, page)
            meta = page_meta(collection.meta, page, len(page.rows))
        return orjson.dumps({"data": data, "links": links, "meta": meta})

    def _single(self, req: Request, collection: Collection, id_text: str) -> bytes:
        store = self.store
        params = parse_params(req.query, default_size=1, max_size=1, allow_sort=False,
                              allow_include=True, allow_page=False)
        check_includes(params, collection.includes)
        self._check_fields(params, included_types(collection.type, params.include), detail=True)
        extra_filters = set(params.filters) - (
            {"site_id"} if collection.type in ("forms", PAYOUTS) else set())
        if extra_filters:
            key = f"filter[{sorted(extra_filters)[0]}]"
            raise ApiError(400, f"{key} is not accepted on a single read", parameter=key)
        if collection.type == PAYOUTS:
            require_site(collection, params, store.tables["sites"].n)
        row = self._find(collection, id_text, params.filters.get("site_id"))
        if (self.options.quirks and collection.type == "courses" and "lessons.media"
                in params.include and len(params.include) > 1
                and len(store.fk_children("lessons", "course", row)) > LARGE_COURSE_LESSONS):
            raise ApiError(500, "the server could not build this include; split it "
                                "(quirk: large course with lessons.media and another path)",
                           pointer="include", parameter="include")
        ctx = self._context(params.fields)
        resource = render(ctx, collection.type, np.asarray([row]))[0]
        doc: dict = {"data": resource, "links": {"self": f"{self.api_url}/{req.path[4:]}"}}
        if params.include:
            included = []
            for type_name, rows in resolve_includes(store, collection.type, row, params.include):
                included.extend(render(ctx, type_name, rows))
            if self.options.quirks and collection.type == "courses":
                resource["included"] = included
            else:
                doc["included"] = included
        sparse = params.fields.get(collection.type)
        if collection.type == PAYOUTS and (sparse is None or "transactions" in sparse):
            resource["attributes"]["transactions"] = payout_lines(ctx, row)
        return orjson.dumps(doc)

    def _find(self, collection: Collection, id_text: str, site_id: str | None) -> int:
        store = self.store
        table = store.tables[collection.type]
        if collection.type == "forms" and id_text == "default":
            defaults = np.flatnonzero(table.cols["default"])
            if site_id is not None:
                site = store.tables["sites"].row_of(site_id)
                defaults = defaults[table.cols["site"][defaults] == (NULL if site is None
                                                                     else site)]
            if not len(defaults):
                raise ApiError(404, "no default form", pointer="/v1/forms/default")
            return int(defaults[0])
        row = table.row_of(id_text)
        if (row is not None and collection.listed is not None and not collection.read_unlisted
                and not collection.listed(store)[row]):
            row = None
        if row is not None and site_id is not None and "site" in table.cols:
            site = store.tables["sites"].row_of(site_id)
            row = row if table.cols["site"][row] == (NULL if site is None else site) else None
        if row is None:
            raise ApiError(404, f"{collection.path} {id_text!r} not found",
                           pointer=f"/v1/{collection.path}/{id_text}", title="Not Found")
        return row

    def _hooks(self, req: Request, principal: Principal, rest: list[str]) -> tuple[int, bytes, dict]:
        store = self.store
        if len(rest) == 1 and rest[0].endswith("_sample"):
            if req.method != "GET":
                raise ApiError(405, "use GET for sample payloads", pointer=req.path)
            event = rest[0][: -len("_sample")]
            return 200, orjson.dumps(webhooks.sample(store, event, self._context())), {}
        if not rest:
            if req.method == "POST":
                doc = webhooks.create_hook(store, principal, req, self._context())
                return 201, orjson.dumps(doc), {}
            if req.method == "GET":
                return 200, self._list(req, COLLECTIONS["hooks"]), {}
            raise ApiError(405, f"{req.method} is not allowed on {req.path}", pointer=req.path)
        if len(rest) == 1:
            if req.method == "GET":
                return 200, self._single(req, COLLECTIONS["hooks"], rest[0]), {}
            if req.method == "DELETE":
                row = self._find(COLLECTIONS["hooks"], rest[0], None)
                webhooks.delete_hook(store, row)
                return 204, b"", {}
            raise ApiError(405, f"{req.method} is not allowed on {req.path}", pointer=req.path)
        raise ApiError(404, f"no route for {req.path}", pointer=req.path)

    async def _sandbox_route(self, req: Request, rest: list[str]) -> tuple[int, bytes, dict]:
        if rest == ["activity"] and req.method == "POST":
            count, advance = 1, 0
            if req.body.strip():
                try:
                    body = orjson.loads(req.body)
                except orjson.JSONDecodeError:
                    raise ApiError(400, "body must be JSON like {\"count\": 10}",
                                   pointer="/") from None
                if not isinstance(body, dict):
                    raise ApiError(422, "body must be a JSON object", pointer="/")
                count = body.get("count", 1)
                advance = body.get("advance_seconds", 0)
                for name, value, top in (("count", count, 100_000),
                                         ("advance_seconds", advance, 10 * 365 * 86400)):
                    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= top:
                        raise ApiError(422, f"{name} must be an integer between 0 and {top}",
                                       pointer=f"/{name}")
            return 200, orjson.dumps(await self.run_activity(count, advance)), {}
        if rest == ["maintenance"] and req.method == "POST":
            try:
                body = orjson.loads(req.body or b"{}")
            except orjson.JSONDecodeError:
                raise ApiError(400, "body must be JSON like {\"on\": true}", pointer="/") from None
            on = body.get("on") if isinstance(body, dict) else None
            if not isinstance(on, bool):
                raise ApiError(422, "on must be true or false", pointer="/on")
            self.maintenance = on
            return 200, orjson.dumps({"maintenance": on}), {}
        if rest == ["health"]:
            return 200, orjson.dumps({"status": "ok", "now": http_date(self.store.now),
                                      "records": self.store.total_records()}), {}
        if rest == ["deliveries"]:
            return 200, orjson.dumps(self.dispatcher.log), {}
        raise ApiError(404, f"no route for {req.path}", pointer=req.path)

    async def run_activity(self, count: int, advance_seconds: int = 0) -> dict:
        summary, events = self.activity.run(count, advance_seconds)
        sent = webhooks.deliveries(self.store, events, self._context())
        firsts = [self.dispatcher.submit(target, body, event, resource_id)
                  for target, body, event, resource_id in sent]
        if firsts:  # answer once every delivery had its first attempt (retries go on after)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*(f.wait() for f in firsts)),
                                       self.dispatcher.timeout + 1)
        summary["deliveries"] = len(sent)
        return summary


def _only_get(req: Request) -> None:
    if req.method != "GET":
        raise ApiError(405, f"{req.method} is not allowed on {req.path}", pointer=req.path,
                       headers={"allow": "GET"})


def _require_scope(principal: Principal, scope: str | None, path: str) -> None:
    if scope and scope not in principal.scopes:
        raise ApiError(403, f"this token lacks the scope {scope} needed for {path}",
                       pointer="/headers/Authorization", title="Forbidden")


def _reset(send) -> None:
    """Abort the TCP connection with RST (SO_LINGER 0); uvicorn exposes the transport on the
    bound `send` method of its request cycle."""
    transport = getattr(getattr(send, "__self__", None), "transport", None)
    if transport is None:
        raise ConnectionResetError("injected fault: connection reset")
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()
