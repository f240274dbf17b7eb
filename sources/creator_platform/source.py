"""The dlt source: one resource per collection, all driven by `settings.RESOURCES`.

Each resource streams pages, normalises them and yields one `pyarrow.Table` per (page, table),
routed by `dlt.mark.with_hints`/`with_table_name`: the primary table, included tables and link
tables. Memory stays flat (bounded read-ahead); dlt writes parquet and DuckDB loads it.
"""

from __future__ import annotations

import copy
import functools
import logging
import os
import signal
import threading
from array import array
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal
from urllib.parse import urlsplit

import dlt
import numpy as np
import pyarrow as pa
from dlt.sources import DltResource

from .client import CreatorPlatformClient
from .details import DetailGate, detail_gate, read_detail, save_gate
from .errors import ApiError, BadResponseError, CreatorPlatformError
from .incremental import Plan, advance, plan
from .normalize import (
    PiiMode,
    declared_columns,
    is_link_table,
    link_columns,
    normalize_resources,
    parse_timestamp,
    rows_to_arrow,
    table_hints,
)
from .pagination import DEFAULT_MAX_PAGES, Page, iter_pages, iter_window, total_count
from .refresh import FEEDERS, TARGET
from .settings import (
    DAY_S,
    FINANCE_TABLES,
    KNOWN_SCOPES,
    RESOURCES,
    ChangeFeed,
    Resource,
    get_resource,
    type_info,
    with_paths,
)

log = logging.getLogger("creator_sync.source")
MAX_PASSES = 3
BATCH_ROWS = 5_000  # rows per yielded arrow table (bounded memory, few dlt items)


@functools.cache
def _included_tables() -> frozenset[str]:
    """Tables that `include=` reads write: more than one resource may write them in one run."""
    return frozenset(
        type_info(name).table
        for res in RESOURCES.values()
        for group in res.include
        for path in group
        for name in path.split(".")
    )


class SeenKeys:
    """Keys already emitted in this run: 8 bytes per integer key (a sorted array), so that
    memory stays small at a million records; other keys go to a set."""

    PENDING_MAX = 4_096  # recent integer keys, merged into the sorted array in bulk

    def __init__(self) -> None:
        self._sorted = np.empty(0, dtype=np.int64)
        self._pending: set[int] = set()
        self._other: set[str] = set()

    @staticmethod
    def _as_int(key: str) -> int | None:
        # canonical decimals only, so that "007" and "7" stay different keys
        if key.isdigit() and len(key) < 19 and (key[0] != "0" or key == "0"):
            return int(key)
        return None

    def seen(self, keys: list[str]) -> list[bool]:
        """Per key: emitted by an earlier `remember`."""
        out = [False] * len(keys)
        ints: list[int] = []
        where: list[int] = []
        for i, key in enumerate(keys):
            n = self._as_int(key)
            if n is None:
                out[i] = key in self._other
            elif n in self._pending:
                out[i] = True
            else:
                ints.append(n)
                where.append(i)
        if ints and len(self._sorted):
            arr = np.asarray(ints, dtype=np.int64)
            pos = np.minimum(np.searchsorted(self._sorted, arr), len(self._sorted) - 1)
            for i, hit in zip(where, (self._sorted[pos] == arr).tolist(), strict=True):
                out[i] = hit
        return out

    def remember(self, keys: set[str]) -> None:
        for key in keys:
            n = self._as_int(key)
            if n is None:
                self._other.add(key)
            else:
                self._pending.add(n)
        if len(self._pending) >= self.PENDING_MAX:
            new = np.fromiter(self._pending, dtype=np.int64, count=len(self._pending))
            new.sort()
            new = new[~np.isin(new, self._sorted, assume_unique=True)]
            self._sorted = np.insert(self._sorted, np.searchsorted(self._sorted, new), new)
            self._pending.clear()


class Batches:
    """Arrow tables per warehouse table, held until enough rows to yield as one item.

    A table not in `kept` did not exist in the destination before this run: if only `resource`
    writes it (its own table and link tables, and no other resource includes that type), it
    is loaded with dlt's `append`, since there is nothing to merge into and a merge would
    stage, sort and copy the whole collection (memory growing with data, finding 9). An
    append keeps duplicates a merge would collapse (a record re-read by a drift pass, the
    change feed, two groups of one page), so for those tables a record (a link table: a
    parent's links) already emitted by an earlier page is dropped here.
    """

    def __init__(self, resource: Resource | None = None, kept: frozenset[str] | None = None) -> None:
        self._parts: dict[str, list[pa.Table]] = {}
        self._rows: dict[str, int] = {}
        self._resource = resource
        self._kept = kept
        self._append: dict[str, bool] = {}
        self._seen: dict[str, SeenKeys] = {}

    def appends(self, table: str, columns: list[str]) -> bool:
        """Is `table` loaded with `append` in this run (decided once per table)?"""
        decided = self._append.get(table)
        if decided is None:
            decided = self._append[table] = self._owned_and_fresh(table, columns)
        return decided

    def _owned_and_fresh(self, table: str, columns: list[str]) -> bool:
        res = self._resource
        if res is None or self._kept is None or table in self._kept or res.table in _included_tables():
            return False
        if table == res.table:
            return True
        if not is_link_table(columns, table) or not table.startswith(f"{res.table}_"):
            return False  # an included type: another resource may write it too
        parent, _ = link_columns(table, columns)
        return parent == f"{type_info(res.jtype).singular}_id"

    def _dedupe(self, table: str, tbl: pa.Table) -> pa.Table:
        """Rows of `tbl` not emitted before (entity: by id; link table: by parent)."""
        link = "id" not in tbl.column_names
        key_col, child_col = link_columns(table, tbl.column_names) if link else ("id", "id")
        keys = [str(k) for k in tbl.column(key_col).to_pylist()]
        children = tbl.column(child_col).to_pylist() if link else keys
        seen = self._seen.setdefault(table, SeenKeys())
        earlier = seen.seen(keys)
        keep: list[bool] = []
        here: set[Any] = set()
        for key, child, old in zip(keys, children, earlier, strict=True):
            mark = (key, child) if link else key
            keep.append(not old and mark not in here)
            here.add(mark)
        seen.remember({k for k, kept in zip(keys, keep, strict=True) if kept})
        return tbl if all(keep) else tbl.filter(pa.array(keep, type=pa.bool_()))

    def add(self, table: str, tbl: pa.Table) -> None:
        if self.appends(table, tbl.column_names):
            tbl = self._dedupe(table, tbl)
            if not tbl.num_rows:
                return
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
    # tables the destination holds before this run and keeps (not dropped by a full refresh);
    # a table not in it is loaded with `append` by the resource that alone writes it (see
    # Batches). None: unknown, merge everything
    kept_tables: frozenset[str] | None = None
    # where the platform serves payouts under /v1: `/<brand>_payments_payouts` (addendum A1)
    payouts_path: str | None = None


Status = Literal["synced", "failed", "skipped"]


@dataclass(frozen=True)
class Outcome:
    """How one resource ended in this run: `reason` says why it failed or was skipped."""

    status: Status
    reason: str | None = None


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
    outcomes: dict[str, Outcome] = field(default_factory=dict)  # resource -> how it ended
    rows: Counter[str] = field(default_factory=Counter)  # resource -> rows of its own table
    # resource -> records whose detail read carried no lines (a payout without `transactions`)
    without_lines: Counter[str] = field(default_factory=Counter)
    notices: list[str] = field(default_factory=list)  # one line each, for the summary
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def set_outcome(self, resource: str, status: Status, reason: str | None = None) -> None:
        with self._lock:
            self.outcomes[resource] = Outcome(status, reason)

    def add_notice(self, text: str) -> None:
        with self._lock:
            self.notices.append(text)

    def count(self, counter: str, resource: str, amount: int) -> None:
        """counter: "rows" or "without_lines"."""
        if amount:
            with self._lock:
                getattr(self, counter)[resource] += amount

    @property
    def failed(self) -> dict[str, str]:
        return {n: o.reason or "failed" for n, o in self.outcomes.items() if o.status == "failed"}

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


def _with_details(
    client: CreatorPlatformClient,
    resource: Resource,
    page: Page,
    gate: DetailGate,
) -> tuple[list[tuple[str, list[Any]]], list[Any]]:
    """Page records, re-read with their detail where the gate says so (concurrently, order
    kept), as (url, records) groups; and the records the detail reads returned (the list
    record where the single read answered 404)."""
    records = [i for i in page.data if isinstance(i, dict) and i.get("id") is not None]
    todo = [r for r in records if gate.needs(r)]
    fetched = dict(zip(
        (str(r["id"]) for r in todo),
        client.detail_pool.map(lambda r: read_detail(client, resource, str(r["id"]), gate), todo),
        strict=True,
    ))
    gone = {rid for rid, groups in fetched.items() if groups is None}  # 404: list record stands
    # (url, records) groups, so that an error names the response the bad record came from
    out: list[tuple[str, list[Any]]] = [(page.url, [])]
    details: list[Any] = []
    for record in records:
        groups = fetched.get(str(record["id"]))
        if groups is None:
            out[0][1].append(record)
            if str(record["id"]) in gone:
                details.append(record)
        else:
            out.extend(groups)
            details.append(groups[-1][1][0])  # the record, as its own read returned it
    return out, details


def _lacking_lines(resource: Resource, records: list[Any]) -> int:
    """Detail records without their line array (a platform that does not itemise payouts)."""
    lines = type_info(resource.jtype).lines
    if lines is None:
        return 0
    return sum(
        1 for r in records
        if not isinstance(r.get("attributes"), dict) or r["attributes"].get(lines.attribute) is None
    )


def _resource_rows(
    client: CreatorPlatformClient,
    resource: Resource,
    options: SourceOptions,
    report: RunReport,
    sites: list[str],
    prefetched: list[Page] | None = None,
) -> Iterator[Any]:
    """The resource's tables, isolated from the other resources' fate.

    A failure after the client's retries (an error status, a bad body, a record that cannot be
    typed) ends this resource only: its state goes back to what it was before the run, so its
    cursors do not advance and the next run reads the same window again; what it yielded
    before the failure is valid rows merged on their keys, never a deletion (`_is_deleted`
    marks only after complete listings, and only per site that completed). The other
    resources load and commit; the outcome names it. Under `--full-refresh` a failure still
    fails the whole run, before anything is dropped.
    """
    # resource state lives at source_state["resources"][name], so refresh="drop_resources" resets it
    state = dlt.current.resource_state()
    before = copy.deepcopy(dict(state))
    try:
        if resource.single:
            yield from _single_rows(client, resource, options, report)
        else:
            yield from _rows_or_fallback(client, resource, options, report, sites, state, prefetched)
    except Exception as exc:  # isolation is the point; the reason is reported
        if options.full_refresh:
            # all or nothing: dlt drops every selected resource's tables at the load, so a
            # refresh that cannot read one of them must not load at all (the run fails and
            # the old tables stay)
            raise
        state.clear()
        state.update(before)
        reason = failure_reason(resource, exc)
        log.error("%s failed, its state is kept as before the run: %s", resource.name, reason,
                  exc_info=not isinstance(exc, CreatorPlatformError))
        report.set_outcome(resource.name, "failed", reason)
        return
    report.set_outcome(resource.name, "synced")


FALLBACK_STATE = "_via_fallback"  # state of the fallback reads, apart from the list's
LIST_MISSING_AT = "_list_missing_at"  # when the list path last answered 404
LIST_RETRY_S = 7 * DAY_S  # how often a remembered fallback tries the list again


def _rows_or_fallback(
    client: CreatorPlatformClient,
    resource: Resource,
    options: SourceOptions,
    report: RunReport,
    sites: list[str],
    state: dict[str, Any],
    prefetched: list[Page] | None,
) -> Iterator[Any]:
    """Read the list; a resource with a `fallback` whose list path answers 404 (before any
    page was read) is read through the fallback instead, and that is remembered in state
    (the list is tried again every `LIST_RETRY_S`)."""
    fallback = resource.fallback

    def via_fallback() -> Iterator[Any]:
        assert fallback is not None
        return _listing_rows(client, fallback, options, report, sites,
                             state.setdefault(FALLBACK_STATE, {}), resource)

    missing = state.get(LIST_MISSING_AT)
    if fallback is not None and missing:
        age = (client.server_now - parse_timestamp(missing)).total_seconds()
        if age < LIST_RETRY_S:
            yield from via_fallback()
            return
    pages_before = client.stats.pages[resource.name]
    try:
        yield from _listing_rows(client, resource, options, report, sites, state, resource,
                                 prefetched)
    except ApiError as exc:
        untouched = client.stats.pages[resource.name] == pages_before
        if fallback is None or exc.status != 404 or not untouched:
            raise
        log.warning("%s: %s answered 404; reading through %s instead (remembered)",
                    resource.name, resource.path, fallback.path)
        report.add_notice(f"{resource.name}: {resource.path} answered 404, read through "
                          f"{fallback.path} instead")
        for key in [k for k in state if k != FALLBACK_STATE]:
            del state[key]  # the list's per-site states (nothing was read)
        state[LIST_MISSING_AT] = client.server_now.strftime("%Y-%m-%dT%H:%M:%SZ")
        yield from via_fallback()
        return
    if LIST_MISSING_AT in state:  # the list is back: the fallback's state is history
        del state[LIST_MISSING_AT]
        state.pop(FALLBACK_STATE, None)


def _single_rows(
    client: CreatorPlatformClient, resource: Resource, options: SourceOptions, report: RunReport
) -> Iterator[Any]:
    """A one-object endpoint (`/v1/me`): its record, whatever its type, replaces the table."""
    url = client.url(resource.path)
    doc = client.get(resource.path, resource=resource.name)
    data = doc.get("data") if isinstance(doc, dict) else None
    if not isinstance(data, dict):
        raise BadResponseError("response has no `data` object", resource=resource.name, url=url)
    rows = normalize_resources(
        [{**data, "type": resource.jtype}], site_id=None, pii=options.pii,
        pii_salt=options.pii_salt, resource=resource.name, url=url,
    )
    report.count("rows", resource.name, len(rows.get(resource.table, ())))
    for table, tbl in rows_to_arrow(rows, pii=options.pii).items():
        client.stats.add_rows(table, tbl.num_rows)
        hints = _hints(table, tbl, options.freeze_finance_schema)
        hints["write_disposition"] = "replace"  # one row: the credential's user now
        yield dlt.mark.with_hints(tbl, dlt.mark.make_hints(**hints), create_table_variant=True)


def failure_reason(resource: Resource, exc: BaseException) -> str:
    """One line: why the resource failed, with the setting to change where there is one."""
    if (isinstance(exc, ApiError) and exc.status == 404 and resource.path_setting
            and exc.url and urlsplit(exc.url).path.endswith(resource.path)):
        flag = resource.path_setting.replace("_", "-")
        return (f"{resource.path} answered 404 at {exc.url}: set {resource.path_setting} "
                f"(--{flag}) to the path your platform serves, e.g. /<brand>_payments_payouts")
    if isinstance(exc, CreatorPlatformError):
        return " ".join(str(exc).split())
    return " ".join(f"unexpected error: {exc}".split())[:300]


def _listing_rows(
    client: CreatorPlatformClient,
    resource: Resource,
    options: SourceOptions,
    report: RunReport,
    sites: list[str],
    state: dict[str, Any],
    owner: Resource,
    prefetched: list[Page] | None = None,
) -> Iterator[Any]:
    """Read `resource` for every site into arrow tables, advancing `state` per site.

    `owner` is the resource the user selected: `resource` itself, or the fallback it is read
    through (then only the tables in `resource.writes` are kept)."""
    seen_tables: set[str] = set()
    batches = Batches(resource, options.kept_tables)
    site_list: list[str | None] = list(sites) if resource.site_scoped else [None]
    cursor_field = resource.incremental.cursor_field or "created_at"
    with_details = resource.reads_details and options.details
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
                groups, details = _with_details(client, resource, page, gate)
                report.count("without_lines", owner.name, _lacking_lines(resource, details))
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
            if resource.writes:  # a fallback read: only what the owner's tables need
                rows = {t: r for t, r in rows.items() if t in resource.writes}
            report.count("rows", owner.name, len(rows.get(owner.table, ())))
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
                if batches.appends(table, tbl.column_names):
                    hints["write_disposition"] = "append"  # keys stay declared for later merges
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
            if prefetched is not None and site is None:
                pages: Iterator[Page] | list[Page] = prefetched
            elif p.since is not None:  # a window: newest first where possible, may stop early
                pages = iter_window(
                    client, resource, params, order=resource.incremental.order,
                    field=cursor_field, since=p.since, page_size=options.page_size,
                    max_pages=options.max_pages, on_end=end.append,
                )
            else:
                pages = iter_pages(client, resource, params, page_size=options.page_size,
                                   max_pages=options.max_pages, on_end=end.append)
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
            save_gate(site_state, gate, started=run_started, complete=p.full or p.deep)
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
    # the primary table's disposition is set with its first item's hints (Batches.appends)
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


def unreadable(resources: list[Resource], scopes: frozenset[str] | None) -> dict[str, str]:
    """Resources the credential's scopes do not cover -> why. Nothing when the token states no
    scopes, or none we know (another vocabulary: a 403 then fails the resource instead)."""
    if scopes is None or not scopes & KNOWN_SCOPES:
        return {}
    return {
        r.name: f"the credential lacks the scope {r.scope}"
        for r in resources if r.scope and r.scope not in scopes
    }


def creator_platform_source(
    client: CreatorPlatformClient,
    options: SourceOptions | None = None,
    report: RunReport | None = None,
) -> Any:
    """Build the dlt source. Sites are discovered (or taken from options) when it is called.

    Resources the token's scopes do not cover are skipped up front (outcome `skipped`, or
    `failed` when they were asked for by name): a least-privilege credential syncs what it may.
    """
    opts = options or SourceOptions()
    rep = report if report is not None else RunReport()
    names = opts.resources or tuple(RESOURCES)
    selected = [with_paths(get_resource(n), opts.payouts_path) for n in names]

    @dlt.source(name="creator_platform", max_table_nesting=0, root_key=False)
    def creator_platform() -> Iterator[DltResource]:
        site_pages = discover_sites(client, opts.page_size)  # also takes the token
        listed = [str(s["id"]) for p in site_pages for s in p.data
                  if isinstance(s, dict) and s.get("id") is not None]
        sites = list(opts.site_ids) if opts.site_ids else listed
        rep.sites = sites
        denied = unreadable(selected, client.tokens.scopes)
        for name, reason in denied.items():
            asked = opts.resources is not None
            rep.set_outcome(name, "failed" if asked else "skipped", reason)
            log.warning("%s: %s", name, reason)
        if denied and opts.resources is None:
            rep.add_notice(f"skipped {len(denied)} resource(s) the credential's scopes do not "
                           f"cover: {', '.join(denied)}")
        for res in selected:
            if res.name in denied:
                continue
            pre = site_pages if res.name == "sites" else None
            yield make_resource(client, res, opts, rep, sites, pre)

    return creator_platform()
