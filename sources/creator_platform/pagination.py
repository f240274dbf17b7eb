"""Page iteration: all meta shapes, concurrent fetch with ordered yield, never-ending guards.

URLs are always built from the configured base URL; `links.next` is never followed (a quirky
server points it at another host).
"""

from __future__ import annotations

import itertools
import math
import re
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .client import CreatorPlatformClient
from .endpoints import ListOrder, Resource
from .errors import ApiError, BadResponseError, PaginationError
from .ratelimit import LimiterClosed
from .values import parse_timestamp

DEFAULT_MAX_PAGES = 100_000


@dataclass(frozen=True)
class Page:
    number: int
    url: str
    doc: dict[str, Any]

    @property
    def data(self) -> list[Any]:
        return self.doc["data"]

    @property
    def included(self) -> list[Any]:
        inc = self.doc.get("included")
        return inc if isinstance(inc, list) else []


def total_pages(meta: Any, *, page_size: int | None, first_page_len: int) -> int | None:
    """Pages announced by any of the three meta shapes, or by the `{"total": N}` quirk."""
    if not isinstance(meta, Mapping):
        return None
    value = meta.get("total_pages")
    if _is_count(value):
        return int(value)
    pagination = meta.get("pagination")
    if isinstance(pagination, Mapping) and _is_count(pagination.get("last")):
        return int(pagination["last"])
    count = meta.get("total_count", meta.get("total"))
    if isinstance(pagination, Mapping) and not _is_count(count):
        count = pagination.get("records")
    if _is_count(count):
        size = page_size or first_page_len
        if size <= 0:
            return 0 if int(count) == 0 else None
        return math.ceil(int(count) / size)
    return None


def pages_explicit(meta: Any) -> bool:
    """True if the meta states a page count (not only a record count, which may be a quirk)."""
    if not isinstance(meta, Mapping):
        return False
    pagination = meta.get("pagination")
    return _is_count(meta.get("total_pages")) or (
        isinstance(pagination, Mapping) and _is_count(pagination.get("last"))
    )


def total_count(meta: Any) -> int | None:
    if not isinstance(meta, Mapping):
        return None
    for key in ("total_count", "total"):
        if _is_count(meta.get(key)):
            return int(meta[key])
    pagination = meta.get("pagination")
    if isinstance(pagination, Mapping) and _is_count(pagination.get("records")):
        return int(pagination["records"])
    return None


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def fetch_page(
    client: CreatorPlatformClient,
    resource: Resource,
    params: Mapping[str, Any],
    number: int,
    page_size: int | None,
) -> Page:
    """GET one page and check the envelope (`data` must be a list).

    A 400 about `page[size]` (the server caps it lower than we asked) steps down to the size it
    announces ("at most N") or halves, and the cap is remembered for the resource.
    """
    while True:
        size = client.page_size_caps.get(resource.name, page_size) if page_size else None
        query = dict(params)
        query["page[number]"] = number
        if resource.takes_page_size and size:
            query["page[size]"] = size
        url = client.url(resource.path, query)
        try:
            doc = client.get(
                resource.path, query, resource=resource.name,
                exact_decimals=resource.exact_decimals,
            )
            break
        except ApiError as exc:
            text = f"{exc.pointer or ''} {exc.detail or ''}"
            if exc.status != 400 or not size or size <= 1 or "page[size]" not in text:
                raise
            announced = re.search(r"at most (\d+)", exc.detail or "")
            smaller = int(announced.group(1)) if announced else size // 2
            client.page_size_caps[resource.name] = max(1, min(smaller, size - 1))
    if not isinstance(doc, dict) or not isinstance(doc.get("data"), list):
        got = type(doc).__name__ if not isinstance(doc, dict) else f"keys {sorted(doc)[:6]}"
        raise BadResponseError(
            f"page has no `data` list (got {got})", resource=resource.name, url=url
        )
    return Page(number, url, doc)


HALT_POLL_S = 0.2  # how often a wait for a page or a read asks whether the run stops


class Halted(Exception):
    """The run stops (time budget, signal): a wait for a page or a read was abandoned."""


def awaited(future: Future[Any], halted: Callable[[], bool] | None) -> Any:
    """`future.result()`, abandoned (`Halted`) once `halted()` says the run stops: a request
    held back by the rate limit must not hold a stopping run for a minute. A read the rate
    limiter dropped (`LimiterClosed`: held by a 429 when a checkpoint came, or the run
    stopped) is a halt too, when `halted()` says so; it is read again next round or run."""
    if halted is None:
        return future.result()
    while True:
        try:
            return future.result(timeout=HALT_POLL_S)
        except TimeoutError:
            if halted():
                future.cancel()
                raise Halted from None
        except LimiterClosed:
            if halted():
                raise Halted from None
            raise


def iter_pages(
    client: CreatorPlatformClient,
    resource: Resource,
    params: Mapping[str, Any],
    *,
    page_size: int | None,
    concurrency: int | None = None,
    max_pages: int = DEFAULT_MAX_PAGES,
    on_end: Callable[[Page], None] | None = None,
    stop: Callable[[Page], bool] | None = None,
    first: Page | None = None,
    start: int = 1,
    halted: Callable[[], bool] | None = None,
    draining: Callable[[], bool] | None = None,
) -> Iterator[Page]:
    """Yield non-empty pages in page order (`first`: page 1, when the caller already read it),
    from page `start` (a listing going on from a checkpoint, checkpoint.py).

    `on_end` receives the final page (its meta has the freshest total). `stop(page)` true after a
    page ends the listing there (a window read newest first reached its start): `on_end` is then
    not called, since the listing is not complete.

    When the first page announces `total_pages`, pages 2..N are fetched `concurrency` at a time
    (bounded read-ahead, so memory stays flat). The listing ends at page N when the meta states
    a page count and page N is not full: nothing can sit beyond it. Otherwise (page N full,
    so records created mid-sync may have spilled over, or only a record count / no count was
    given) pages continue one by one until an empty page. Once `halted()`, the listing ends
    where it is, without `on_end` (it is not complete); once `draining()` (a checkpoint), no
    page is asked for any more, and the listing ends, incomplete, after the pages in flight.
    """
    window = max(1, concurrency or client.concurrency)
    pool = client.pool
    if first is None:
        try:
            first = awaited(pool.submit(fetch_page, client, resource, params, start, page_size), halted)
        except Halted:
            return
    if not first.data:
        if on_end is not None:
            on_end(first)
        return
    if page_size:
        page_size = client.page_size_caps.get(resource.name, page_size)
    announced = total_pages(
        first.doc.get("meta"), page_size=page_size if resource.takes_page_size else None,
        first_page_len=len(first.data),
    )
    client.stats.add_announced(resource.name, min(announced or 1, max_pages))
    explicit = pages_explicit(first.doc.get("meta"))
    # a page shorter than this is the last one (the server may cap page[size] silently)
    full_len = len(first.data) if not page_size or not resource.takes_page_size or (
        start == 1 and announced and announced > 1 and len(first.data) < page_size) else page_size

    def is_last(page: Page) -> bool:
        """The announced last page, and nothing can follow it: it is not full, or its own
        (fresh) total is already on the pages read, so no record arrived during the listing."""
        if not (explicit and announced and page.number >= announced):
            return False
        if len(page.data) < full_len:
            return True
        count = total_count(page.doc.get("meta"))
        return count is not None and (page.number - 1) * full_len + len(page.data) >= count

    previous_ids = _ids(first)
    if is_last(first):
        yield first
        if on_end is not None:
            on_end(first)
        return
    yield first
    if stop is not None and stop(first):
        return
    pending: deque[Future[Page]] = deque()
    next_number = first.number + 1
    concurrent_until = min(announced, max_pages) if announced else 1
    try:
        while True:
            drain = draining is not None and draining()
            while len(pending) < window and next_number <= concurrent_until and not drain:
                pending.append(pool.submit(fetch_page, client, resource, params, next_number, page_size))
                next_number += 1
            if pending:
                try:
                    page = awaited(pending.popleft(), halted)
                except Halted:
                    return
            else:
                if drain:
                    return
                if next_number > max_pages:
                    raise PaginationError(
                        f"more than {max_pages} pages; refusing to paginate forever "
                        "(raise max_pages if this is real)",
                        resource=resource.name, url=client.url(resource.path, params),
                    )
                try:
                    page = awaited(pool.submit(fetch_page, client, resource, params, next_number,
                                               page_size), halted)
                except Halted:
                    return
                next_number += 1
            if not page.data:
                if on_end is not None:
                    on_end(page)
                return
            ids = _ids(page)
            if ids == previous_ids:
                raise PaginationError(
                    f"page {page.number} repeats page {page.number - 1} "
                    "(the server ignores page[number]?); stopping a never-ending pagination",
                    resource=resource.name, url=page.url,
                )
            previous_ids = ids
            yield page
            if stop is not None and stop(page):
                return
            if is_last(page):
                if on_end is not None:
                    on_end(page)
                return
    finally:
        for fut in pending:
            fut.cancel()


def _keys(page: Page, field: str) -> list[datetime | None]:
    """The page's values of a timestamp attribute, in page order (None: missing or unreadable;
    normalisation reports bad values with full context)."""
    out: list[datetime | None] = []
    for item in page.data:
        attrs = item.get("attributes") if isinstance(item, dict) else None
        try:
            out.append(parse_timestamp(attrs.get(field)) if isinstance(attrs, dict) else None)
        except (ValueError, TypeError):
            out.append(None)
    return out


def _reaches_below(page: Page, field: str, since: datetime) -> bool:
    """True if the page holds a record older than `since` (a newest-first listing may stop)."""
    return any(k is not None and k < since for k in _keys(page, field))


class _NewestFirstStop:
    """Stop a newest-first listing after the first page reaching below `since`, but only while
    the pages really come newest first (each page descending, continuing the one before): a
    server that ignores the sort would otherwise end the window on its oldest records."""

    def __init__(self, field: str, since: datetime) -> None:
        self.field = field
        self.since = since
        self.previous: datetime | None = None
        self.sorted = True

    def __call__(self, page: Page) -> bool:
        keys = _keys(page, self.field)
        if self.sorted:
            self.sorted = _ascending(keys[::-1]) and (
                self.previous is None or not keys or keys[0] <= self.previous)  # type: ignore[operator]
            self.previous = keys[-1] if keys else self.previous
        return self.sorted and _reaches_below(page, self.field, self.since)


def _ascending(keys: list[datetime | None]) -> bool:
    return all(k is not None for k in keys) and all(
        a <= b for a, b in itertools.pairwise(keys)  # type: ignore[operator]
    )


def iter_window(
    client: CreatorPlatformClient,
    resource: Resource,
    params: Mapping[str, Any],
    *,
    order: ListOrder,
    field: str,
    since: datetime,
    page_size: int | None,
    max_pages: int = DEFAULT_MAX_PAGES,
    on_end: Callable[[Page], None] | None = None,
) -> Iterator[Page]:
    """Pages of an incremental window holding every record with `field` >= `since`, newest first
    where the endpoint allows it, so that a run with nothing new reads one or two pages.

    - "asc": `iter_pages` as given (a precise server filter bounds the window).
    - "desc": `sort=-<field>`; stops after the first page reaching below `since`. Records created
      during the listing go to the front and push others back: seen twice, never skipped. Pages
      not in that order (a server ignoring the sort) are read to the end instead.
    - "tail" (no sort parameter; default order oldest first): page 1 (it announces the count),
      then the last page and backwards until a page reaches below `since`. Only while every page
      is in ascending order, continues the previous one, and the total stays that of page 1:
      a record inserted mid-listing (a payment completing late) would shift one past us.
      Otherwise the window is read in full, as "asc".
    A listing that stops early does not call `on_end` (it is not complete).
    """
    if order == "asc":
        yield from iter_pages(client, resource, params, page_size=page_size,
                              max_pages=max_pages, on_end=on_end)
        return
    if order == "desc":
        yield from iter_pages(client, resource, {**params, "sort": f"-{field}"},
                              page_size=page_size, max_pages=max_pages, on_end=on_end,
                              stop=_NewestFirstStop(field, since))
        return
    # through the shared pool, so that `concurrency` bounds these requests too
    first = client.pool.submit(fetch_page, client, resource, params, 1, page_size).result()
    meta = first.doc.get("meta")
    if page_size:
        page_size = client.page_size_caps.get(resource.name, page_size)
    announced = total_pages(meta, page_size=page_size if resource.takes_page_size else None,
                            first_page_len=len(first.data))
    total = total_count(meta)
    keys = _keys(first, field)
    if not first.data or not announced or announced <= 1 or total is None or not _ascending(keys):
        yield from iter_pages(client, resource, params, page_size=page_size,
                              max_pages=max_pages, on_end=on_end, first=first)
        return
    client.stats.add_announced(resource.name, 2)  # page 1 and the last one, usually
    yield first
    floor = keys[-1]  # every later page starts at or after page 1's last record
    ceiling: datetime | None = None  # first record of the page read just before (a later one)
    for number in range(min(announced, max_pages), 1, -1):
        page = client.pool.submit(fetch_page, client, resource, params, number, page_size).result()
        keys = _keys(page, field)
        if (not page.data or total_count(page.doc.get("meta")) != total or not _ascending(keys)
                or keys[0] < floor or (ceiling is not None and keys[-1] > ceiling)):  # type: ignore[operator]
            break  # not the order we rely on, or the listing changed: read the window in full
        yield page
        if keys[0] < since:  # type: ignore[operator]
            return
        ceiling = keys[0]
    else:
        if on_end is not None:
            on_end(first)
        return
    yield from iter_pages(client, resource, params, page_size=page_size,
                          max_pages=max_pages, on_end=on_end)


def _ids(page: Page) -> tuple[Any, ...]:
    return tuple(item.get("id") if isinstance(item, dict) else None for item in page.data)
