"""The dlt source: one resource per collection, all driven by `settings.RESOURCES`.

Each resource streams pages, normalises them and yields one `pyarrow.Table` per (page, table),
routed by `dlt.mark.with_hints`/`with_table_name`: the primary table, included tables and link
tables. Memory stays flat (bounded read-ahead); dlt writes parquet and DuckDB loads it.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import dlt
import numpy as np
import pyarrow as pa
from dlt.sources import DltResource

from .client import CreatorPlatformClient
from .details import DetailGate, detail_gate, save_gate
from .errors import BadResponseError
from .incremental import Plan, advance, plan
from .normalize import (
    PiiMode,
    declared_columns,
    normalize_resources,
    parse_timestamp,
    rows_to_arrow,
    table_hints,
)
from .pagination import DEFAULT_MAX_PAGES, Page, iter_pages, total_count
from .refresh import FEEDERS, TARGET
from .settings import FINANCE_TABLES, RESOURCES, ChangeFeed, Resource, get_resource

log = logging.getLogger("creator_sync.source")
MAX_PASSES = 3
BATCH_ROWS = 5_000  # rows per yielded arrow table (bounded memory, few dlt items)


class Batches:
    """Arrow tables per warehouse table, held until enough rows to yield as one item."""

    def __init__(self) -> None:
        self._parts: dict[str, list[pa.Table]] = {}
        self._rows: dict[str, int] = {}

    def add(self, table: str, tbl: pa.Table) -> None:
        self._parts.setdefault(table, []).append(tbl)
        self._rows[table] = self._rows.get(table, 0) + tbl.num_rows

    def rows(self, table: str) -> int:
        return self._rows.get(table, 0)

    def tables(self) -> list[str]:
        return [t for t, parts in self._parts.items() if parts]

    def take(self, table: str) -> pa.Table | None:
        parts = self._parts.pop(table, [])
        self._rows.pop(table, None)
        if not parts:
            return None
        if len(parts) == 1:
            return parts[0]
        # pages may differ in columns (drift): missing ones become nulls
        return pa.concat_tables(parts, promote_options="permissive")


class IdTally:
    """Distinct record ids of one listing, 8 bytes each (ids are integers in practice)."""

    def __init__(self) -> None:
        self._ints = array("q")
        self._other: set[str] = set()

    def add(self, records: list[Any]) -> None:
        for item in records:
            rid = item.get("id") if isinstance(item, dict) else None
            text = str(rid)
            if text.isdigit() and len(text) < 19:
                self._ints.append(int(text))
            else:
                self._other.add(text)

    def distinct(self) -> int:
        ints = np.unique(np.frombuffer(self._ints, dtype=np.int64)) if self._ints else ()
        return len(ints) + len(self._other)


@dataclass
class SourceOptions:
    """Knobs of one sync (resolved from config + CLI by pipelines.factory)."""

    resources: tuple[str, ...] | None = None  # None = all
    site_ids: tuple[str, ...] | None = None  # None = discover with GET /v1/sites
    page_size: int = 100
    max_pages: int = DEFAULT_MAX_PAGES
    pii: PiiMode = None
    pii_salt: str = ""
    full_refresh: bool = False
    lookback_s: dict[str, int] = field(default_factory=dict)  # resource -> seconds
    full_refresh_every_s: int | None = None  # None = per-resource default
    freeze_finance_schema: bool = False
    # per-record include reads (order_items, course modules/lessons/media, form fields): one
    # request per record; False skips them (faster, those tables stay empty)
    details: bool = True


@dataclass
class RunReport:
    """What the extract step learnt, for post-load steps (thread-safe appends)."""

    complete: set[tuple[str, str | None]] = field(default_factory=set)  # (table, site_id)
    # ids of each complete listing, per (table, site_id): only a listed row is alive, even if
    # another resource's `include` wrote it this run (an archived tag a form still names)
    listed: dict[tuple[str, str | None], set[str]] = field(default_factory=dict)
    plans: dict[str, str] = field(default_factory=dict)  # "resource/site" -> reason
    sites: list[str] = field(default_factory=list)
    # for the dependent customers refresh (see refresh.py), per site
    customer_refs: dict[str | None, set[str]] = field(default_factory=dict)
    customers_listed: dict[str | None, set[str]] = field(default_factory=dict)
    customers_full: set[str | None] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add_complete(
        self, tables: tuple[str, ...], site: str | None, listed: tuple[str, set[str]] | None = None
    ) -> None:
        with self._lock:
            self.complete.update((t, site) for t in tables)
            if listed is not None:
                self.listed[(listed[0], site)] = listed[1]

    def add_plan(self, key: str, reason: str) -> None:
        with self._lock:
            self.plans[key] = reason

    def add_ids(self, kind: str, site: str | None, ids: set[str]) -> None:
        """kind: "refs" (customers named by new money) or "listed" (customers read this run)."""
        target = self.customer_refs if kind == "refs" else self.customers_listed
        with self._lock:
            target.setdefault(site, set()).update(ids)


def discover_sites(client: CreatorPlatformClient, page_size: int) -> list[Page]:
    """Every page of GET /v1/sites (reused by the `sites` resource: no second listing)."""
    return list(iter_pages(client, RESOURCES["sites"], {}, page_size=page_size))


def _hints(table: str, tbl: pa.Table, freeze: bool) -> dict[str, Any]:
    cols = declared_columns(table, tbl.column_names)
    hints = table_hints(table, {c: cols[c] for c in tbl.column_names})
    if freeze and table in FINANCE_TABLES:
        hints["schema_contract"] = {"columns": "freeze", "data_type": "freeze"}
    return hints


def _max_cursor(rows: list[dict[str, Any]], cursor_field: str | None) -> datetime | None:
    if not cursor_field:
        return None
    values = [r[cursor_field] for r in rows if r.get(cursor_field) is not None]
    return max(values) if values else None


def _detail_docs(
    client: CreatorPlatformClient, resource: Resource, rid: str
) -> list[tuple[str, list[Any]]]:
    """One record re-read with every include group: [(url, [record?, *included]), ...]."""
    record: Any = None
    groups: list[tuple[str, list[Any]]] = []
    for group in resource.include:
        params = {"include": ",".join(group)}
        url = client.url(f"{resource.path}/{rid}", params)
        doc = client.get(f"{resource.path}/{rid}", params, resource=resource.name)
        data = doc.get("data") if isinstance(doc, dict) else None
        if not isinstance(data, dict):
            raise BadResponseError("detail response has no `data` object", resource=resource.name, url=url)
        found = doc.get("included")
        if not isinstance(found, list):
            # quirk: some records carry `included` inside the resource object
            found = data.pop("included", None)
        data.pop("included", None)
        groups.append((url, list(found) if isinstance(found, list) else []))
        record = data
    if groups:  # the record itself, in its freshest form, with the last response
        url, items = groups[-1]
        groups[-1] = (url, [record, *items])
    return groups


def _with_details(
    client: CreatorPlatformClient,
    resource: Resource,
    page: Page,
    gate: DetailGate,
) -> list[Any]:
    """Page records, re-read with `include=` where the gate says so (concurrently, order kept)."""
    records = [i for i in page.data if isinstance(i, dict) and i.get("id") is not None]
    todo = [r for r in records if gate.needs(r)]
    fetched = dict(zip(
        (str(r["id"]) for r in todo),
        client.detail_pool.map(lambda r: _detail_docs(client, resource, str(r["id"])), todo),
        strict=True,
    ))
    # (url, records) groups, so that an error names the response the bad record came from
    out: list[tuple[str, list[Any]]] = [(page.url, [])]
    for record in records:
        groups = fetched.get(str(record["id"]))
        if groups is None:
            out[0][1].append(record)
        else:
            out.extend(groups)
    return out


def _resource_rows(
    client: CreatorPlatformClient,
    resource: Resource,
    options: SourceOptions,
    report: RunReport,
    sites: list[str],
    prefetched: list[Page] | None = None,
) -> Iterator[Any]:
    # resource state lives at source_state["resources"][name], so refresh="drop_resources" resets it
    state = dlt.current.resource_state()
    seen_tables: set[str] = set()
    batches = Batches()
    site_list: list[str | None] = list(sites) if resource.site_scoped else [None]
    cursor_field = resource.incremental.cursor_field or "created_at"
    with_details = bool(resource.include and resource.include_via == "detail" and options.details)
    for site in site_list:
        site_state = state.setdefault(site or "_all", {})
        p: Plan = plan(
            resource,
            site_state,
            now=client.server_now,
            lookback_s=options.lookback_s.get(resource.name),
            full_refresh_every_s=options.full_refresh_every_s,
            force_full=options.full_refresh,
        )
        report.add_plan(f"{resource.name}/{site or '*'}", p.reason)
        log.info("%s site=%s: %s %s", resource.name, site or "*", p.reason, p.params or "")
        params: dict[str, Any] = dict(p.params)
        if site is not None:
            params["filter[site_id]"] = site
        if resource.sort:
            params["sort"] = resource.sort
        if resource.include and resource.include_via == "list":
            params["include"] = ",".join(name for group in resource.include for name in group)
        run_started = client.server_now
        prev_cursor = parse_timestamp(site_state["cursor"]) if site_state.get("cursor") else None
        gate = detail_gate(
            resource, site_state, full_listing=p.full and resource.incremental.strategy != "full",
            force=options.full_refresh, now=client.server_now, started=run_started,
            refresh_every_s=options.full_refresh_every_s,
        )
        max_cursor = None
        feed = resource.change_feed
        old_feed = site_state.get("feed_cursor")
        feed_cursor: list[datetime | None] = [parse_timestamp(old_feed) if old_feed else None]

        def emit(
            page: Page,
            site: str | None = site,
            gate: DetailGate = gate,
            prev_cursor: datetime | None = prev_cursor,
            feed: ChangeFeed | None = feed,
            feed_cursor: list[datetime | None] = feed_cursor,
        ) -> Iterator[Any]:
            """Normalise one page (plus details) and yield its arrow tables."""
            nonlocal max_cursor
            client.stats.add_page(resource.name)
            if os.environ.get("CREATOR_SYNC_KILL_AT") == f"page:{resource.name}:{page.number}":
                os.kill(os.getpid(), signal.SIGKILL)  # crash drills: die mid-extract
            if with_details:
                groups = _with_details(client, resource, page, gate)
            else:
                groups = [(page.url, page.data + page.included)]
            rows: dict[str, list[dict[str, Any]]] = {}
            extracted_at = datetime.now(UTC)
            for url, records in groups:
                part = normalize_resources(
                    records,
                    site_id=site,
                    extracted_at=extracted_at,
                    pii=options.pii,
                    pii_salt=options.pii_salt,
                    resource=resource.name,
                    url=url,
                )
                for table, table_rows in part.items():
                    rows.setdefault(table, []).extend(table_rows)
            primary = rows.get(resource.table, [])
            if resource.name in FEEDERS:  # only money newer than the last run (not the look-back)
                new = [r for r in primary if prev_cursor is None or (r.get(cursor_field) or prev_cursor) > prev_cursor]
                report.add_ids("refs", site, {str(r["customer_id"]) for r in new if r.get("customer_id")})
            elif resource.name == TARGET:
                report.add_ids("listed", site, {str(r["id"]) for r in primary})
            cursor = _max_cursor(rows.get(resource.table, []), resource.incremental.cursor_field)
            if cursor is not None and (max_cursor is None or cursor > max_cursor):
                max_cursor = cursor
            if feed is not None:
                feed_max = _max_cursor(rows.get(resource.table, []), feed.field)
                if feed_max is not None and (feed_cursor[0] is None or feed_max > feed_cursor[0]):
                    feed_cursor[0] = feed_max
            for table, tbl in rows_to_arrow(rows, pii=options.pii).items():
                client.stats.add_rows(table, tbl.num_rows)
                batches.add(table, tbl)
                if batches.rows(table) >= BATCH_ROWS:
                    yield from flush(table)

        def flush(table: str) -> Iterator[Any]:
            """One arrow table per ~BATCH_ROWS rows: dlt's per-item work is not per page."""
            tbl = batches.take(table)
            if tbl is None:
                return
            if table not in seen_tables:
                seen_tables.add(table)
                hints = _hints(table, tbl, options.freeze_finance_schema)
                yield dlt.mark.with_hints(tbl, dlt.mark.make_hints(**hints), create_table_variant=True)
            else:
                yield dlt.mark.with_table_name(tbl, table)

        # a complete listing of a dimension: its ids decide `_is_deleted` after the load
        listed_ids: set[str] | None = (
            set() if p.full and resource.table in resource.complete_tables else None
        )
        passes = 0
        while True:
            passes += 1
            seen = IdTally()
            end: list[Page] = []
            pages = prefetched if prefetched is not None and site is None else iter_pages(
                client, resource, params, page_size=options.page_size,
                max_pages=options.max_pages, on_end=end.append,
            )
            for page in pages:
                seen.add(page.data)
                if listed_ids is not None:
                    listed_ids.update(str(i["id"]) for i in page.data
                                      if isinstance(i, dict) and i.get("id") is not None)
                yield from emit(page)
            # drift check: records that moved pages during the listing (a sort key changed)
            # can push an unread record onto a page already read; the final total tells
            total = total_count(end[0].doc.get("meta")) if end else None
            distinct = seen.distinct()
            if total is None or distinct >= total or passes >= MAX_PASSES:
                if total is not None and distinct < total:
                    log.warning("%s site=%s: %s of %s records after %s passes", resource.name,
                                site or "*", distinct, total, passes)
                break
            log.info("%s site=%s: %s of %s records listed, re-reading (records moved)",
                     resource.name, site or "*", distinct, total)
        if feed is not None and not p.full and old_feed:
            # changes of a mutable field since the last run, newest first, until older
            since = parse_timestamp(old_feed) - timedelta(seconds=feed.lookback_s)
            feed_params = dict(feed.params, sort=feed.sort)
            if site is not None:
                feed_params["filter[site_id]"] = site
            for page in iter_pages(client, resource, feed_params, page_size=options.page_size,
                                   concurrency=1, max_pages=options.max_pages):
                yield from emit(page)
                values = [parse_timestamp(r["attributes"].get(feed.field)) for r in page.data
                          if isinstance(r, dict) and isinstance(r.get("attributes"), dict)]
                values = [v for v in values if v is not None]
                if not values or min(values) < since:
                    break
        for table in batches.tables():
            yield from flush(table)
        if feed is not None:
            if feed_cursor[0] is not None:
                site_state["feed_cursor"] = feed_cursor[0].strftime("%Y-%m-%dT%H:%M:%SZ")
            elif not old_feed:
                site_state["feed_cursor"] = client.server_now.strftime("%Y-%m-%dT%H:%M:%SZ")
        advance(site_state, p, max_cursor, now=client.server_now, started=run_started)
        log.info("%s site=%s: done, cursor %s", resource.name, site or "*", site_state.get("cursor"))
        if with_details:
            save_gate(site_state, gate, started=run_started)
        if p.full and resource.name == TARGET:
            report.customers_full.add(site)
        if p.full and resource.complete_tables:
            complete = resource.complete_tables
            if resource.include_via == "detail" and (not with_details or gate.skipped):
                # included tables were not re-read for every record: only the list is complete
                complete = tuple(t for t in complete if t == resource.table)
            report.add_complete(
                complete, site, (resource.table, listed_ids) if listed_ids is not None else None
            )


def make_resource(
    client: CreatorPlatformClient,
    resource: Resource,
    options: SourceOptions,
    report: RunReport,
    sites: list[str],
    prefetched: list[Page] | None = None,
) -> DltResource:
    frozen = options.freeze_finance_schema and resource.finance
    return dlt.resource(
        _resource_rows(client, resource, options, report, sites, prefetched),
        name=resource.name,
        table_name=resource.table,
        write_disposition="merge",
        primary_key="id",
        parallelized=True,
        # finance tables may be frozen: a new column then fails the run instead of altering them
        schema_contract={"columns": "freeze", "data_type": "freeze"} if frozen else None,
    )


def creator_platform_source(
    client: CreatorPlatformClient,
    options: SourceOptions | None = None,
    report: RunReport | None = None,
) -> Any:
    """Build the dlt source. Sites are discovered (or taken from options) when it is called."""
    opts = options or SourceOptions()
    rep = report if report is not None else RunReport()
    names = opts.resources or tuple(RESOURCES)
    selected = [get_resource(n) for n in names]

    @dlt.source(name="creator_platform", max_table_nesting=0, root_key=False)
    def creator_platform() -> Iterator[DltResource]:
        site_pages = discover_sites(client, opts.page_size)
        listed = [str(s["id"]) for p in site_pages for s in p.data
                  if isinstance(s, dict) and s.get("id") is not None]
        sites = list(opts.site_ids) if opts.site_ids else listed
        rep.sites = sites
        for res in selected:
            pre = site_pages if res.name == "sites" else None
            yield make_resource(client, res, opts, rep, sites, pre)

    return creator_platform()
