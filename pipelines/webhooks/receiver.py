"""The ASGI app that accepts deliveries: authenticate, bound, check, journal, then answer.

Order matters for durability: the answer 2xx is sent only after the group committer has fsynced
the delivery into the journal. Loading into the warehouse happens later, in the loader thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from creator_sync.pipelines.webhooks.journal import Journal
from creator_sync.pipelines.webhooks.records import (
    BadDelivery,
    dead_letter,
    encode,
    parse_delivery,
    utcnow,
)

log = logging.getLogger("creator_sync.webhooks")

DEFAULT_MAX_BODY = 1024 * 1024


class BodyTooLarge(Exception):
    pass


class GroupCommitter:
    """Collects concurrent appends and writes them with one fsync, off the event loop."""

    def __init__(self, journal: Journal, max_batch: int = 1000):
        self.journal = journal
        self.max_batch = max_batch
        self._pending: list[tuple[bytes, asyncio.Future[int]]] = []
        self._wakeup: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._wakeup = asyncio.Event()
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def append(self, body: bytes) -> int:
        assert self._wakeup is not None, "GroupCommitter.start() was not awaited"
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._pending.append((body, future))
        self._wakeup.set()
        return await future

    async def _run(self) -> None:
        assert self._wakeup is not None
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            while self._pending:
                batch = self._pending[: self.max_batch]
                del self._pending[: self.max_batch]
                try:
                    seqs = await asyncio.to_thread(self.journal.append, [b for b, _ in batch])
                except Exception as exc:  # disk full, I/O error: callers answer 503
                    log.error("journal append failed: %s", exc)
                    for _, future in batch:
                        if not future.done():
                            future.set_exception(exc)
                    continue
                for (_, future), seq in zip(batch, seqs, strict=True):
                    if not future.done():
                        future.set_result(seq)


async def _read_bounded(request: Request, limit: int) -> bytes:
    """Read the body but stop as soon as it exceeds `limit`: a huge body never sits in memory."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge
        chunks.append(chunk)
    return b"".join(chunks)


def create_app(
    journal: Journal,
    secret: str,
    *,
    max_body_bytes: int = DEFAULT_MAX_BODY,
    default_site_id: str | None = None,
) -> Starlette:
    """Build the receiver. The target URL is `<scheme>://<host>/hooks/<secret>[?site_id=S]`."""
    if not secret:
        raise ValueError("listen needs a non-empty --secret")
    committer = GroupCommitter(journal)
    expected = secret.encode()

    async def receive(request: Request) -> Response:
        given = request.path_params["secret"].encode()
        if not hmac.compare_digest(given, expected):
            return Response(status_code=404)
        received_at = utcnow()
        try:
            raw = await _read_bounded(request, max_body_bytes)
        except BodyTooLarge:
            log.warning("rejected a delivery larger than %d bytes (413)", max_body_bytes)
            return JSONResponse(
                {"error": f"body larger than {max_body_bytes} bytes"}, status_code=413
            )
        site_id = request.query_params.get("site_id") or default_site_id
        try:
            item = parse_delivery(raw, received_at, site_id)
        except BadDelivery as exc:
            log.warning("rejected a delivery (%d %s): %s", exc.status, exc.reason, exc.detail)
            try:
                await committer.append(encode(dead_letter(raw, exc, received_at)))
            except Exception:
                return JSONResponse({"error": "journal unavailable"}, status_code=503)
            return JSONResponse({"error": exc.detail}, status_code=exc.status)
        try:
            seq = await committer.append(encode(item))
        except Exception:
            return JSONResponse({"error": "journal unavailable"}, status_code=503)
        return JSONResponse({"status": "accepted", "seq": seq})

    async def not_found(request: Request) -> Response:
        return Response(status_code=404)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await committer.start()
        try:
            yield
        finally:
            await committer.stop()

    routes = [
        Route("/hooks/{secret}", receive, methods=["POST"]),
        Route("/hooks/{secret}", not_found, methods=["GET", "PUT", "PATCH", "DELETE"]),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.router.redirect_slashes = False  # `/hooks/x/` would answer 307, not the promised 404
    return app
