"""Webhooks: hook creation and deletion, event payloads (also served as `_sample`), delivery.

Payload shapes: the platform's own published samples (addendum A8), which are also what a
delivery's `payload` holds:
- purchase: the purchase, its offer, then its customer (no transaction);
- payment_succeeded: the transaction (spec attribute subset), then its customer;
- order_created: the payment transaction, the customer, the order (with payment_transactions),
  then its order items;
- form_submission: the submission, then its form;
- tag_added / tag_removed: the contact, then the tag.
A hook's `resource_id` is an integer or null (A8); it matches the event's subject resource (purchase: the offer;
payment_succeeded: the offer or the transaction; order_created: the order; form_submission: the
form; tag events: the tag) or the id in the delivery body.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace
from urllib.parse import urlsplit

import httpx
import numpy as np
import orjson

from creator_sync.sandbox import vocab as V
from creator_sync.sandbox.auth import Principal
from creator_sync.sandbox.dataset import Store
from creator_sync.sandbox.errors import ApiError
from creator_sync.sandbox.jsonapi import RenderContext, render
from creator_sync.sandbox.schema import ORDER_PAYMENTS
from creator_sync.sandbox.store import NULL

PAYMENT_FIELDS = {
    "action", "state", "payment_type", "amount_in_cents", "sales_tax_in_cents", "currency",
    "currency_symbol", "formatted_amount", "created_at", "customer", "offer",
}
# event -> (type of the triggering resource)
EVENT_SUBJECT = {
    "purchase": "purchases", "payment_succeeded": "transactions", "order_created": "orders",
    "form_submission": "form_submissions", "tag_added": "contacts", "tag_removed": "contacts",
}


def _unprocessable(pointer: str, detail: str) -> ApiError:
    return ApiError(422, detail, pointer=pointer, title="Unprocessable Entity")


def create_hook(store: Store, principal: Principal, req, ctx: RenderContext) -> dict:
    ctype = req.headers.get("content-type", "")
    if "json" not in ctype:
        raise ApiError(415, "Content-Type must be application/vnd.api+json",
                       pointer="/headers/Content-Type")
    try:
        doc = orjson.loads(req.body or b"null")
    except orjson.JSONDecodeError as exc:
        raise ApiError(400, f"body is not valid JSON: {exc}", pointer="/") from None
    data = doc.get("data") if isinstance(doc, dict) else None
    if not isinstance(data, dict):
        raise _unprocessable("/data", "data must be an object")
    if data.get("type") != "hooks":
        raise _unprocessable("/data/type", "data.type must be 'hooks'")
    attrs = data.get("attributes")
    if not isinstance(attrs, dict):
        raise _unprocessable("/data/attributes", "data.attributes must be an object")
    event = attrs.get("event")
    if event not in V.EVENTS:
        raise _unprocessable("/data/attributes/event",
                             f"event must be one of {', '.join(V.EVENTS)}, got {event!r}")
    target = attrs.get("target_url")
    parts = urlsplit(target) if isinstance(target, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
        raise _unprocessable("/data/attributes/target_url",
                             "target_url must be an absolute http(s) URL")
    resource_id = attrs.get("resource_id")
    if resource_id is not None and not (
            (isinstance(resource_id, int) and not isinstance(resource_id, bool))
            or (isinstance(resource_id, str) and resource_id.isdigit())):
        raise _unprocessable("/data/attributes/resource_id",
                             "resource_id must be an integer or a string of digits")
    unknown = sorted(set(attrs) - {"event", "target_url", "resource_id"})
    if unknown:
        raise _unprocessable(f"/data/attributes/{unknown[0]}",
                             f"unknown attribute {unknown[0]!r}")
    site_data = ((data.get("relationships") or {}).get("site") or {}).get("data")
    if not isinstance(site_data, dict) or site_data.get("type") != "sites":
        raise _unprocessable("/data/relationships/site/data",
                             "relationships.site.data must be {id, type: 'sites'}")
    site = store.tables["sites"].row_of(str(site_data.get("id", "")))
    if site is None:
        raise _unprocessable("/data/relationships/site/data/id",
                             f"unknown site id {site_data.get('id')!r}")
    missing = [s for s in V.EVENT_SCOPES[event] if s not in principal.scopes]
    if missing:
        raise ApiError(403, f"creating a {event} hook needs the scope(s) {', '.join(missing)}",
                       pointer="/data/attributes/event", title="Forbidden")
    hooks = store.tables["hooks"]
    with store.lock:
        rows = hooks.append({
            "site": [site], "event": [V.EVENTS.index(event)], "target_url": [target],
            "resource_id": [None if resource_id is None else int(resource_id)], "created_at": [store.now], "updated_at": [store.now],
            "deleted": [False],
        })
        store.data_version += 1
    return {"data": render(ctx, "hooks", rows)[0]}


def delete_hook(store: Store, row: int) -> None:
    with store.lock:
        store.tables["hooks"].cols["deleted"][row] = True
        store.tables["hooks"].touch()
        store.data_version += 1


# ---- payloads --------------------------------------------------------------------------------

def _r(ctx: RenderContext, type_name: str, rows, fields: set[str] | None = None,
       extra=()) -> list[dict]:
    sub = replace(ctx, fields={type_name: fields} if fields is not None else {}, in_list=False)
    return render(sub, type_name, np.asarray(rows, dtype=np.int64).reshape(-1), extra)


def payload(store: Store, event: str, row: int, ctx: RenderContext,
            extra_row: int = NULL) -> list[dict]:
    t = store.tables
    if event == "purchase":
        customer = int(t["purchases"].cols["customer"][row])
        offer = int(t["purchases"].cols["offer"][row])
        return [*_r(ctx, "purchases", [row]), *_r(ctx, "offers", [offer]),
                *_r(ctx, "customers", [customer])]
    if event == "payment_succeeded":
        customer = int(t["transactions"].cols["customer"][row])
        return [*_r(ctx, "transactions", [row], PAYMENT_FIELDS), *_r(ctx, "customers", [customer])]
    if event == "order_created":
        customer = int(t["orders"].cols["customer"][row])
        pays = store.fk_children("transactions", "order", row)
        items = store.fk_children("order_items", "order", row)
        order_items = _r(ctx, "order_items", items)
        for item in order_items:  # payload shape as before the list gained `site` (A2)
            item["relationships"].pop("site", None)
        return [*_r(ctx, "transactions", pays, PAYMENT_FIELDS), *_r(ctx, "customers", [customer]),
                *_r(ctx, "orders", [row], extra=(ORDER_PAYMENTS,)), *order_items]
    if event == "form_submission":
        form = int(t["form_submissions"].cols["form"][row])
        return [*_r(ctx, "form_submissions", [row]), *_r(ctx, "forms", [form])]
    if event in ("tag_added", "tag_removed"):
        return [*_r(ctx, "contacts", [row]), *_r(ctx, "contact_tags", [extra_row])]
    raise ApiError(404, f"unknown event {event!r}; events: {', '.join(V.EVENTS)}")


def sample(store: Store, event: str, ctx: RenderContext) -> list[dict]:
    """The payload of the most recent occurrence of `event` in the data."""
    t = store.tables
    if event not in V.EVENTS:
        raise ApiError(404, f"no sample for {event!r}; events: {', '.join(V.EVENTS)}",
                       pointer=f"/v1/hooks/{event}_sample")
    if event == "payment_succeeded":
        listed = np.flatnonzero(t["transactions"].cols["listed"]
                                & (t["transactions"].cols["amount_in_cents"] > 0))
        return payload(store, event, int(listed[-1]), ctx)
    if event in ("tag_added", "tag_removed"):
        links = store.link("contacts.tags")
        return payload(store, event, int(links.parent[-1]), ctx, int(links.child[-1]))
    return payload(store, event, t[EVENT_SUBJECT[event]].n - 1, ctx)


def deliveries(store: Store, events: list[tuple[str, int, int]],
               ctx: RenderContext) -> list[tuple[str, bytes, str, str]]:
    """(target_url, body, event, id) for every hook matching an activity event."""
    out = []
    hooks = store.tables["hooks"]
    for event, row, extra in events:
        matches = matching_hooks(store, event, event_site(store, event, row),
                                 _subject_ids(store, event, row, extra))
        if not matches:
            continue
        body_id = store.tables[EVENT_SUBJECT[event]].id_of(row)
        body = orjson.dumps({"id": body_id, "event": event,
                             "payload": payload(store, event, row, ctx, extra)})
        out.extend((str(hooks.cols["target_url"][h]), body, event, body_id) for h in matches)
    return out


def _subject_ids(store: Store, event: str, row: int, extra: int) -> set[str]:
    t = store.tables
    ids = {t[EVENT_SUBJECT[event]].id_of(row)}
    if event == "purchase":
        ids.add(t["offers"].id_of(int(t["purchases"].cols["offer"][row])))
    elif event == "payment_succeeded":
        offer = int(t["transactions"].cols["offer"][row])
        if offer != NULL:
            ids.add(t["offers"].id_of(offer))
    elif event == "form_submission":
        ids.add(t["forms"].id_of(int(t["form_submissions"].cols["form"][row])))
    elif event in ("tag_added", "tag_removed"):
        ids = {t["contact_tags"].id_of(extra)}
    return ids


def event_site(store: Store, event: str, row: int) -> int:
    t = store.tables
    subject = EVENT_SUBJECT[event]
    if subject == "transactions":
        return int(t["customers"].cols["site"][t["transactions"].cols["customer"][row]])
    return int(t[subject].cols["site"][row])


def matching_hooks(store: Store, event: str, site: int, subject_ids: set[str]) -> list[int]:
    hooks = store.tables["hooks"]
    cols = hooks.cols
    live = np.flatnonzero(~cols["deleted"] & (cols["event"] == V.EVENTS.index(event))
                          & (cols["site"] == site))
    out = []
    for h in live.tolist():
        rid = cols["resource_id"][h]
        if rid is None or str(rid) in subject_ids:
            out.append(h)
    return out


# ---- delivery --------------------------------------------------------------------------------

class Dispatcher:
    """POSTs deliveries in the background; retries failures (non-2xx or connection errors)
    `retries` times with exponential backoff (`backoff` * 2^attempt seconds)."""

    def __init__(self, retries: int = 3, backoff: float = 0.5, timeout: float = 5.0):
        self.retries = retries
        self.backoff = backoff
        self.timeout = timeout
        self.log: list[dict] = []
        self._tasks: set[asyncio.Task] = set()
        self._client: httpx.AsyncClient | None = None
        self._counter = 0

    def submit(self, target: str, body: bytes, event: str, resource_id: str) -> asyncio.Event:
        """Queue a delivery; the returned event is set once its first attempt has finished."""
        self._counter += 1
        entry = {"delivery": self._counter, "event": event, "id": resource_id,
                 "target_url": target, "attempts": 0, "status": None, "delivered": False,
                 "finished": False}
        self.log.append(entry)
        first = asyncio.Event()
        task = asyncio.get_running_loop().create_task(self._deliver(target, body, entry, first))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return first

    async def _deliver(self, target: str, body: bytes, entry: dict, first: asyncio.Event) -> None:
        try:
            await self._attempts(target, body, entry, first)
        finally:
            entry["finished"] = True  # delivered, or retries exhausted: the log entry is final
            first.set()

    async def _attempts(self, target: str, body: bytes, entry: dict, first: asyncio.Event) -> None:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self.timeout)
        for attempt in range(self.retries + 1):
            if attempt:
                first.set()
            entry["attempts"] = attempt + 1
            try:
                response = await self._client.post(target, content=body, headers={
                    "content-type": "application/json",
                    "x-sandbox-delivery": str(entry["delivery"]),
                    "x-sandbox-attempt": str(attempt + 1),
                    "x-sandbox-event": entry["event"]})
                entry["status"] = response.status_code
                if 200 <= response.status_code < 300:
                    entry["delivered"] = True
                    return
            except httpx.HTTPError as exc:
                entry["status"] = type(exc).__name__
            if attempt < self.retries:
                await asyncio.sleep(self.backoff * 2**attempt)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task
        if self._client is not None:
            await self._client.aclose()
