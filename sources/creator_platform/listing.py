"""One resource's listing, in named steps: pages -> normalising -> cursor -> batching.

`Listing.rows(sites, state)` reads a resource for every site and yields arrow tables for dlt.
Per site (`SiteListing`, the explicit state of one listing):

1. `_start`: plan the window from state, build the request parameters and the detail gate;
2. `_listed_pages`: the pages of the listing, read again while records moved between pages
   (the drift pass, up to `MAX_PASSES`); then `_feed_pages`, a mutable field's change feed;
3. `_page_rows`: each page, with its detail reads, normalised into rows per table (a streamed
   line array, a payout's, in parts of its own: `StreamedLines`);
4. `_note`: what the page tells the run: the cursor, the feed cursor, customer references;
5. `_batch` / `_flush`: rows into arrow tables, one dlt item per `BATCH_ROWS` rows;
6. `_finish`: advance the cursors in state, keep the detail hashes, report complete listings.
"""

from __future__ import annotations

import dataclasses
import logging
from collections import deque
from collections.abc import Callable, Generator, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import dlt

from . import checkpoint
from .arrow_tables import rows_to_arrow
from .batches import Batches
from .client import CreatorPlatformClient
from .details import DetailGate, detail_gate, keep_read_hashes, read_detail, save_gate
from .endpoints import FINANCE_TABLES, Resource, type_info
from .errors import ApiError, UnreadableValue
from .hints import EMPTY_PARENT, declared_columns, table_hints
from .incremental import Plan, RefusedFilter, advance, full_listing_due, plan
from .key_sets import DistinctIdCount
from .linestream import LineStream
from .pagination import Halted, Page, awaited, iter_pages, iter_window, total_count
from .ratelimit import LimiterClosed
from .refresh import FEEDERS, TARGET
from .rejects import Rejects
from .rows import Rejected, StreamedLines, normalize_resources
from .run import RunReport, SourceOptions
from .tuning import BATCH_ROWS, DETAIL_RECENT_WEIGHT, DETAIL_ROWS_AHEAD, PAGE_PART_ROWS
from .unchanged import STATE_KEY, Unchanged, next_day_window
from .values import parse_timestamp

if TYPE_CHECKING:
    import pyarrow as pa

log = logging.getLogger("creator_sync.source")
MAX_PASSES = 3
# a part of a page's rows: 0, whole groups; 1, the first part of one parent's lines that
# come in several parts (a streamed payout's); 2, a later part of them
Piece = int
Rows = dict[str, list[dict[str, Any]]]


def table_item_hints(table: str, tbl: pa.Table, freeze: bool) -> dict[str, Any]:
    """dlt hints of `table` for the columns `tbl` has (finance tables may be frozen)."""
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


def _later(a: datetime | None, b: datetime | None) -> datetime | None:
    return b if a is None or (b is not None and b > a) else a


class DetailWindow:
    """How many of one resource's detail reads run ahead of the record being normalised: as
    many as the pool takes, fewer when each read carries many rows (a payout's lines: ~1,700 on
    average and up to 14,401 at `large`), so that the reads held at once stay near
    `DETAIL_ROWS_AHEAD` rows whatever the data size (docs/performance.md#memory). A read's
    rows are counted when it is taken (`carried`: its records and lines), before it is
    normalised, and no read is started while the reads done ahead carry the whole budget
    (`_with_details`).

    Rows per read are estimated by the larger of the mean and a moving average that follows
    the recent reads (weight `RECENT_WEIGHT`): a listing in date order reads ever bigger
    payouts at `large`, and the mean of all reads so far lagged behind them
    (docs/performance.md#memory)."""

    RECENT_WEIGHT = DETAIL_RECENT_WEIGHT

    def __init__(self, most: int) -> None:
        self.most = most
        self.rows = 0
        self.reads = 0
        self.recent = 0.0  # moving average of rows per read

    def size(self) -> int:
        if not self.reads:
            return 1  # nothing known yet: the first read alone tells how big they are
        per_read = max(self.rows / self.reads, self.recent, 1.0)
        return max(1, min(self.most, int(DETAIL_ROWS_AHEAD / per_read)))

    def note(self, rows: int) -> None:
        """One detail read that carried `rows` rows."""
        self.rows += rows
        self.reads += 1
        self.recent = rows if self.reads == 1 else self.recent + self.RECENT_WEIGHT * (rows - self.recent)


def _with_details(
    client: CreatorPlatformClient,
    resource: Resource,
    page: Page,
    gate: DetailGate,
    window: DetailWindow,
    site: str | None,
    halted: Callable[[], bool] = lambda: False,
    handed: set[str] | None = None,
) -> Iterator[tuple[list[tuple[str, list[Any]]], Any]]:
    """Page records, re-read with their detail where the gate says so (concurrently, at most
    `window.size()` ahead, order kept), as (url, records) groups per record, each with the
    record its detail read returned (the list record where the single read answered 404; None
    when not re-read). The records not re-read come first, as one group; then one record's
    reads at a time, so that a page whose details carry thousands of lines each is never held
    whole (docs/performance.md#memory). Once `halted()` (a checkpoint is due, the budget is
    spent, a signal came), no read starts and none is waited for: the page's records not
    re-read yet are left out (a payout is never handed on without its lines), and the stopped
    listing reads them again when it goes on (checkpoint.py). `handed` gains the id of each
    record handed on, so the listing's place names exactly those."""
    handed = set() if handed is None else handed
    records = [i for i in page.data if isinstance(i, dict) and i.get("id") is not None]
    todo = [r for r in records if gate.needs(r)]
    wanted = {id(r) for r in todo}
    # (url, records) groups, so that an error names the response the bad record came from
    first = [r for r in records if id(r) not in wanted]
    handed.update(str(r["id"]) for r in first)
    yield [(page.url, first)], None
    waiting = iter(todo)
    ahead: deque[tuple[dict[str, Any], Future[Any]]] = deque()
    try:
        while True:
            while (len(ahead) < window.size() and _done_carry(ahead) < DETAIL_ROWS_AHEAD
                   and not halted() and (record := next(waiting, None)) is not None):
                ahead.append((record, client.detail_pool.submit(
                    read_detail, client, resource, str(record["id"]), gate, site)))
            if not ahead:
                return
            record, read = ahead.popleft()
            try:
                groups = awaited(read, halted)
            except Halted:  # the run stops: this page's remaining reads are left out
                return
            window.note(carried(groups) if groups is not None else 1)
            handed.add(str(record["id"]))
            if groups is None:  # 404: the list record stands
                yield [(page.url, [record])], record
            else:
                yield groups, groups[-1][1][0]  # the record, as its own read returned it
    finally:  # a failed page: reads not started yet are not needed
        for _, read in ahead:
            read.cancel()


PEOPLE_BEGAN_KEY = "people_listing_began"  # in a site's resource state


def _people_listing_began(res: Resource, p: Plan, resumed: checkpoint.Place | None,
                          site_state: dict[str, Any]) -> datetime | None:
    """When (local clock) the complete listing of people this run reads began: now for a new
    one, the stored time for one resumed from a checkpoint (None: not such a listing, or one
    resumed from a checkpoint that kept no time). Its completion marks `_is_deleted` on the
    rows not written since (deletions.py), however many rounds or runs it spanned."""
    if not (p.full and type_info(res.jtype).deletable):
        site_state.pop(PEOPLE_BEGAN_KEY, None)
        return None
    if resumed is None:
        began = datetime.now(UTC)
        site_state[PEOPLE_BEGAN_KEY] = began.isoformat()
        return began
    stored = site_state.get(PEOPLE_BEGAN_KEY)
    try:
        return datetime.fromisoformat(stored) if isinstance(stored, str) else None
    except ValueError:
        return None


def _without(page: Page, loaded: set[str]) -> Page:
    """The page without the records a stopped listing loaded already (its place's ids)."""
    if not loaded:
        return page
    data = [r for r in page.data if not (isinstance(r, dict) and str(r.get("id")) in loaded)]
    return Page(page.number, page.url, {**page.doc, "data": data})


def carried(groups: list[tuple[str, list[Any]]]) -> int:
    """Rows a detail read carries, about: its records, and the lines of line arrays (a
    streamed one counted by the check that read it, `LineStream.count`)."""
    rows = 0
    for _, records in groups:
        rows += len(records)
        for record in records:
            attributes = record.get("attributes") if isinstance(record, dict) else None
            if isinstance(attributes, dict):
                rows += sum(len(v) for v in attributes.values() if isinstance(v, LineStream | list))
    return rows


def _done_carry(ahead: deque[tuple[dict[str, Any], Future[Any]]]) -> int:
    """Rows the reads ahead that are done carry (a read that failed: none)."""
    return sum(carried(read.result()) for _, read in ahead
               if read.done() and read.exception() is None and read.result() is not None)


def _streamed_reject(exc: UnreadableValue, parent: str, records: list[Any], part: Rows,
                     table: str) -> Rejected:
    """A streamed line array whose value cannot be read: its parent's row leaves the batch
    (lines of it handed on in earlier pieces stay: docs/sync.md), and is set aside."""
    part[table] = [r for r in part.get(table, ()) if r.get("id") != parent]
    record = next((r for r in records if isinstance(r, dict) and str(r.get("id")) == parent), {})
    return Rejected(parent, record.get("type"), exc.field, exc.value, exc.message, record)


def _lacking_lines(resource: Resource, records: list[Any]) -> int:
    """Detail records without their line array (a platform that does not itemise payouts)."""
    lines = type_info(resource.jtype).lines
    if lines is None:
        return 0
    return sum(
        1 for r in records
        if not isinstance(r.get("attributes"), dict) or r["attributes"].get(lines.attribute) is None
    )


def _note_total(run: SiteListing, page: Page) -> None:
    """The page's total (`meta`), kept as the listing's first and latest: read from pages
    already fetched, never a request of its own."""
    total = total_count(page.doc.get("meta")) if isinstance(page.doc, dict) else None
    if total is None:
        return
    if run.first_total is None:
        run.first_total = total
    run.last_total = total


@dataclass
class SiteListing:
    """The explicit state of one (resource, site) listing while it runs."""

    site: str | None
    state: dict[str, Any]  # the site's part of the resource state (written by `_finish`)
    plan: Plan
    params: dict[str, Any]
    started: datetime  # the platform's clock when the listing began
    prev_cursor: datetime | None  # the cursor the last run left
    gate: DetailGate
    old_feed: str | None  # the change feed's cursor the last run left
    cursor: datetime | None = None  # newest cursor value read
    feed_cursor: datetime | None = None  # newest value of the change feed's field read
    # ids of a complete listing of a dimension: they decide `_is_deleted` after the load
    listed_ids: set[str] | None = field(default=None, repr=False)
    # a complete listing of people (`TypeInfo.deletable`): when it began on the local clock,
    # maybe rounds or runs ago (`PEOPLE_BEGAN_KEY`); rows not written since are not listed
    began_local: datetime | None = None
    # drops rows the last run stored unchanged, keeps hashes for the next (unchanged.py)
    unchanged: Unchanged | None = field(default=None, repr=False)
    resumed: checkpoint.Place | None = None  # where an earlier round or run stopped it
    stopped_at: int | None = None  # the last page read when the host stopped the listing
    last_page: int = 1  # the last page read (the resumed page before any)
    last_ids: tuple[str, ...] = ()  # ids of the records of the last page read
    # ids of the last page's records handed on, with their detail reads (a page a checkpoint
    # or a stop cut short holds fewer than `last_ids`): they are what the place skips
    handed: set[str] = field(default_factory=set)
    advanced: int = 0  # pages past the place read whole this run (progress)
    before_last: int = 0  # records listed (this run and before a resume) before the last page
    # the lowest sort-field value on the last page read, where a listing sorted by a field
    # updates change goes on from (`checkpoint.Place.since`)
    last_floor: datetime | None = None
    # records set aside (a value that cannot be read), kept in state and read again (rejects.py)
    rejects: Rejects = field(default_factory=lambda: Rejects({}))
    # the API's total of the listing (`meta`), at the first page this run read and at the
    # last: the freshest is what a complete listing is compared with (`api_totals`)
    first_total: int | None = None
    last_total: int | None = None

    @property
    def resume_page(self) -> int:
        """The page a resumed listing reads first: its place's, or page 1 of the listing
        filtered from the place's `since`."""
        if self.resumed is None or self.resumed.since is not None:
            return 1
        return self.resumed.page


class Listing:
    """Reads `resource` for every site; `owner` is the resource the user selected (itself, or
    the one whose fallback `resource` is: then only the tables in `resource.writes` are kept)."""

    def __init__(
        self,
        client: CreatorPlatformClient,
        resource: Resource,
        options: SourceOptions,
        report: RunReport,
        owner: Resource,
    ) -> None:
        self.client = client
        self.resource = resource
        self.options = options
        self.report = report
        self.owner = owner
        self.batches = Batches(resource, options.kept_tables)
        self.hinted: set[str] = set()  # tables whose first item carried the table hints
        self.cursor_field = resource.incremental.cursor_field or "created_at"
        self.with_details = resource.reads_details and options.details
        self.window = DetailWindow(client.detail_concurrency)
        self.refused = RefusedFilter(resource, {})  # the resource state's, once `rows` runs

    def rows(
        self, sites: list[str], state: dict[str, Any], prefetched: list[Page] | None = None
    ) -> Iterator[Any]:
        """Every site's listing, advancing `state` per site as each one completes; a listing
        the host stops (`options.stop`) keeps its place (checkpoint.py) and the resource ends
        `partial`, naming what is left."""
        order: list[str | None] = list(sites) if self.resource.site_scoped else [None]
        self.refused = RefusedFilter(self.resource, state)
        states = [state.setdefault(site or "_all", {}) for site in order]
        stopped = False
        done_before: list[tuple[str | None, dict[str, Any]]] = []
        for site, site_state in zip(order, states, strict=True):
            if checkpoint.is_done(site_state):  # completed in an earlier round or run
                if self.resource.name == TARGET and checkpoint.was_full(site_state):
                    self.report.customers_full.add(site)  # no customer of it to re-read
                done_before.append((site, site_state))
                continue
            if stopped or self._stop(resumable=True) == "stop" or self._round_done():
                stopped = True
                continue
            run = self._start(site, site_state)
            full = run.plan.full
            run = yield from self._read_or_full(
                run, prefetched if prefetched is not None and site is None else None)
            if run.stopped_at is None and run.resumed is not None:
                # a listing resumed across rounds or runs spans time: what changed behind its
                # place meanwhile is read now, as the next incremental run would read it (a
                # small collection read whole every run: whole again)
                self._finish(run)
                site_state.pop(checkpoint.RESUME_KEY, None)
                run = self._start(site, site_state, catch_up=True)
                run = yield from self._read_or_full(run, None)
            if run.stopped_at is not None:
                self._keep_place(run)
                stopped = True
                continue
            self._finish(run)
            if len(order) > 1:
                checkpoint.mark_done(site_state, full)
        if not stopped:
            stopped = yield from self._catch_up(done_before)
        self.report.add_rejected(self.owner.name, {
            site: Rejects(site_state).entries for site, site_state in zip(order, states, strict=True)})
        if stopped:
            left = checkpoint.left_of(order, state)
            log.info("%s: stopped, left: %s", self.owner.name, left)
            self.report.set_outcome(self.owner.name, "partial", f"left: {left}")
        else:
            checkpoint.clear(states)

    def _catch_up(self, done: list[tuple[str | None, dict[str, Any]]]) -> Iterator[Any]:
        """The resource completes now: its sites completed in an earlier round or run are read
        again as the next incremental run would read them (what changed there since), so the
        warehouse holds the platform as of this run. Returns whether the host stopped it (a
        site not caught up is then read by its plan next run: its cursor has advanced)."""
        for site, site_state in done:
            site_state.pop(checkpoint.RESUME_KEY, None)
            if self._stop(resumable=True) == "stop":
                return True
            run = self._start(site, site_state, catch_up=True)
            run = yield from self._read_or_full(run, None)
            if run.stopped_at is not None:
                self._keep_place(run)
                return True
            self._finish(run)
        return False

    def _read_or_full(self, run: SiteListing, prefetched: list[Page] | None
                      ) -> Generator[Any, None, SiteListing]:
        """`_read`; a window the platform answers with a 400 while it carries the incremental
        filter (a filter it does not take) is read again as a full listing, and the resource
        is listed in full from then on (`RefusedFilter`). Returns the listing that completed."""
        try:
            yield from self._read(run, prefetched)
        except ApiError as exc:
            if not self.refused.refuses(exc, run.params):
                raise
            self.refused.remember(self.client.server_now, exc, self.report)
            run = self._start(run.site, run.state)
            yield from self._read(run, None)
        return run

    def _read(self, run: SiteListing, prefetched: list[Page] | None) -> Iterator[Any]:
        """One listing's pages (and its change feed), batched; `run.stopped_at` is set when the
        host stopped it (see `_draining`, `_halted`), or when a read of it held by a 429 was
        dropped at a checkpoint or a stop (`LimiterClosed`): it then stops at its last page
        read, a complete listing keeping its place there (`_keep_place`), a window none."""
        try:
            for page in self._listed_pages(run, prefetched):
                run.last_page = page.number
                yield from self._page_items(run, page)
                cut = not run.handed.issuperset(run.last_ids)  # detail reads were left out
                # a page past the place, read whole: the round went forward
                if not cut and (run.resumed is None or page.number > run.resume_page):
                    run.advanced += 1
                    self.report.note_advanced()
                if self._halted() or cut:
                    run.stopped_at = page.number
                    break
            if run.stopped_at is None and self._halted():  # the pages may have ended for it
                run.stopped_at = run.last_page
            if run.stopped_at is None:
                for page in self._feed_pages(run):
                    yield from self._page_items(run, page)
        except LimiterClosed:
            if self._stop(resumable=True) is None:  # no checkpoint, no stop: not ours
                raise
            log.info("%s site=%s: a read held by the rate limit was dropped; stopping at page %s",
                     self.resource.name, run.site or "*", run.last_page)
            run.stopped_at = run.last_page
        for table in self.batches.tables():
            yield from self._flush(table)

    def _stop(self, *, resumable: bool) -> str | None:
        """What the host says after a page: "checkpoint" stops a listing that can resume,
        "stop" any listing; None reads on."""
        if self.options.stop is None:
            return None
        verdict = self.options.stop()
        if verdict == "checkpoint" and not resumable:
            return None
        return verdict

    def _draining(self, run: SiteListing) -> bool:
        """Should this listing end now? Its waits for pages and detail reads are then abandoned
        (the pages and records not handed on are read next time). At a checkpoint, once it
        read a page past its place whole, or another listing of the round did (each round goes
        forward), if it can resume; always when the run stops."""
        verdict = self._stop(resumable=self._resumable(run))
        if verdict == "checkpoint":
            return run.advanced > 0 or self.report.advanced > 0
        return verdict == "stop"

    def _round_done(self) -> bool:
        """A checkpoint is due and the round went forward: no listing starts any more (it
        would wait for its first page, perhaps a minute behind a 429)."""
        return self.report.advanced > 0 and self._stop(resumable=True) == "checkpoint"

    def _resumable(self, run: SiteListing) -> bool:
        """Can a stopped listing go on from its page? A complete listing (not a window)."""
        return run.plan.since is None

    def _halted(self) -> bool:
        """The run stops (budget, signal): every listing ends at once."""
        return self._stop(resumable=True) == "stop"

    def _keep_place(self, run: SiteListing) -> None:
        """A listing stopped at a page: a complete one keeps its place; a window does not (the
        next run reads it again from its unmoved cursor)."""
        if not self._resumable(run) or run.stopped_at is None or (
                run.resumed is None and run.last_page <= 1 and not run.handed):
            run.state.pop(checkpoint.RESUME_KEY, None)  # (or nothing read: it starts over)
            return
        if self.with_details:
            keep_read_hashes(run.state, run.gate, set(run.last_ids) - run.handed)
        checkpoint.keep_place(run.state, checkpoint.Place(
            page=run.stopped_at, before=run.before_last, started=run.started,
            cursor=run.cursor, reason=run.plan.reason,
            ids=tuple(i for i in run.last_ids if i in run.handed),
            since=run.last_floor if self._sorted_by_changes() else None))

    def _sorted_by_changes(self) -> bool:
        """Is the listing sorted (oldest first) by the field updates change, with a server
        filter on it? A stopped one then goes on from a value of it, not a page number (see
        `checkpoint.Place.since`)."""
        inc = self.resource.incremental
        return (inc.strategy == "updated_since" and inc.filter_param is not None
                and self.resource.sort == self.cursor_field)

    # ------------------------------------------------------------------ 1. plan
    def _start(self, site: str | None, site_state: dict[str, Any], *,
               catch_up: bool = False) -> SiteListing:
        """`catch_up`: the site's listing completed across rounds or runs (see `plan`)."""
        res, opts, now = self.resource, self.options, self.client.server_now
        resumed = None if opts.full_refresh else checkpoint.place_of(site_state)
        if resumed is not None and res.incremental.edits_only_in_full and full_listing_due(
                res, resumed.started, now=now, full_refresh_every_s=opts.full_refresh_every_s):
            # what it read before the stop may have been edited since, which only a full
            # listing finds, and one is due: it starts over as that (the rows read stay)
            log.info("%s site=%s: starting over from page 1: a full listing fell due since "
                     "the stop at page %s", res.name, site or "*", resumed.page)
            resumed = None
        if resumed is not None:  # a complete listing stopped earlier: the same plan, page on
            p = Plan({}, True, resumed.reason)
            log.info("%s site=%s: going on from page %s", res.name, site or "*", resumed.page)
        else:
            site_state.pop(checkpoint.RESUME_KEY, None)
            retry = Rejects(site_state)  # records set aside: the window reaches them again
            p = plan(res, site_state, now=now, lookback_s=opts.lookback_s.get(res.name),
                     full_refresh_every_s=opts.full_refresh_every_s, force_full=opts.full_refresh,
                     catch_up=catch_up, retry_since=retry.oldest(), retry_full=retry.undated(),
                     refused=self.refused.active(now))
        self.report.add_plan(f"{res.name}/{site or '*'}", p.reason)
        log.info("%s site=%s: %s %s", res.name, site or "*", p.reason, p.params or "")
        params: dict[str, Any] = dict(p.params)
        if site is not None:
            params["filter[site_id]"] = site
        if res.sort:
            params["sort"] = res.sort
        if (resumed is not None and resumed.since is not None and self._sorted_by_changes()
                and not self.refused.active(now)):
            params[res.incremental.filter_param] = resumed.since.strftime("%Y-%m-%dT%H:%M:%SZ")
        elif resumed is not None and resumed.since is not None:  # settings changed: by page
            resumed = dataclasses.replace(resumed, since=None)
        if res.include and res.include_via == "list":
            params["include"] = ",".join(name for group in res.include for name in group)
        started = resumed.started if resumed is not None else self.client.server_now
        self.report.add_listing_start(self.owner.name, started)
        began_local = _people_listing_began(res, p, resumed, site_state)
        old_feed = site_state.get("feed_cursor")
        return SiteListing(
            site=site,
            state=site_state,
            plan=p,
            params=params,
            started=started,
            prev_cursor=parse_timestamp(site_state["cursor"]) if site_state.get("cursor") else None,
            gate=detail_gate(
                res, site_state, full_listing=p.full and res.incremental.strategy != "full",
                force=opts.full_refresh, now=self.client.server_now, started=started,
                refresh_every_s=opts.full_refresh_every_s,
            ),
            old_feed=old_feed,
            feed_cursor=parse_timestamp(old_feed) if old_feed else None,
            # a listing resumed across rounds is no snapshot: it proves no row deleted
            listed_ids=(set() if p.full and resumed is None and res.table in res.complete_tables
                        and began_local is None else None),
            began_local=began_local,
            resumed=resumed,
            cursor=resumed.cursor if resumed is not None else None,
            last_page=resumed.page if resumed is not None and resumed.since is None else 1,
            last_floor=resumed.since if resumed is not None else None,
            # no page read yet: the place stays as it was
            last_ids=resumed.ids if resumed is not None else (),
            handed=set(resumed.ids) if resumed is not None else set(),
            before_last=resumed.before if resumed is not None else 0,
            rejects=Rejects(site_state),
            unchanged=Unchanged(
                # every row of a listing of people is written: `_extracted_at` proves it listed
                site_state.get(STATE_KEY),
                self._may_skip if began_local is None else
                (lambda table: table != res.table and self._may_skip(table)),
                lambda table, keys: self.report.add_seen(table, site, keys),
                recent=(res.table, self.cursor_field),
                keep_all=res.incremental.strategy == "full",
                anchor=next_day_window(res, started),
                webhook_written=self.options.pushed_keys,
                newest=(self._newest_first(), 2 * opts.page_size)),
        )

    def _newest_first(self) -> tuple[str, ...]:
        """Fields the next run lists newest first by: a newest-first window's cursor, a change
        feed's field (unchanged.py keeps the newest records by each, wherever listed)."""
        res = self.resource
        fields = [self.cursor_field] if res.incremental.order == "desc" else []
        if res.change_feed is not None:
            fields.append(res.change_feed.field)
        return tuple(fields)

    def _may_skip(self, table: str) -> bool:
        """May rows of `table` the last run stored unchanged be dropped? Only from a table the
        destination holds, never in a full refresh (`SourceOptions.may_skip`)."""
        return self.options.may_skip(table)

    # ------------------------------------------------------------------ 2. pages
    def _listed_pages(self, run: SiteListing, prefetched: list[Page] | None) -> Iterator[Page]:
        """The listing's pages; read again while the final total says records moved pages
        during the listing (a sort key changed and pushed an unread record onto a page already
        read), at most `MAX_PASSES` times."""
        res = self.resource
        passes = 0
        while True:
            passes += 1
            distinct_ids = DistinctIdCount()
            end: list[Page] = []
            # a resumed listing's first pass starts at its place: the records before it count
            start = run.resume_page if passes == 1 else 1
            before = run.resumed.before if start > 1 and run.resumed is not None else 0
            for page in prefetched if prefetched is not None else self._one_pass(run, end, start):
                run.before_last = before + distinct_ids.distinct()
                distinct_ids.add(page.data)
                if run.listed_ids is not None:
                    run.listed_ids.update(str(i["id"]) for i in page.data
                                          if isinstance(i, dict) and i.get("id") is not None)
                run.last_ids = tuple(str(i["id"]) for i in page.data
                                     if isinstance(i, dict) and i.get("id") is not None)
                if self._sorted_by_changes():
                    run.last_floor = self._floor(page) or run.last_floor
                run.handed = set()
                _note_total(run, page)
                if passes == 1 and page.number == start and run.resumed is not None:
                    loaded = set(run.resumed.ids)  # handed on before the stop
                    run.handed = loaded.intersection(run.last_ids)
                    page = _without(page, loaded)
                yield page
            if not end and prefetched is None and self._draining(run):
                run.stopped_at = run.last_page  # a checkpoint ended the pass: not complete
                return
            if end:  # (an empty listing yields no page: its total is on the one it read)
                _note_total(run, end[0])
            total = total_count(end[0].doc.get("meta")) if end else None
            distinct = before + distinct_ids.distinct()
            if total is None or distinct >= total or passes >= MAX_PASSES:
                if total is not None and distinct < total:
                    log.warning("%s site=%s: %s of %s records after %s passes", res.name,
                                run.site or "*", distinct, total, passes)
                return
            log.info("%s site=%s: %s of %s records listed, re-reading (records moved)",
                     res.name, run.site or "*", distinct, total)

    def _floor(self, page: Page) -> datetime | None:
        """The lowest value of the cursor field on `page` (None without any)."""
        values = [parse_timestamp(r["attributes"].get(self.cursor_field)) for r in page.data
                  if isinstance(r, dict) and isinstance(r.get("attributes"), dict)
                  and r["attributes"].get(self.cursor_field)]
        return min((v for v in values if v is not None), default=None)

    def _one_pass(self, run: SiteListing, end: list[Page], start: int = 1) -> Iterator[Page]:
        """One pass over the listing, from page `start` (a complete listing going on from its
        place); its last page is appended to `end` (for the total)."""
        res, opts = self.resource, self.options
        if run.plan.since is not None:  # a window: newest first where possible, may stop early
            return iter_window(
                self.client, res, run.params, order=res.incremental.order,
                field=self.cursor_field, since=run.plan.since, page_size=opts.page_size,
                max_pages=opts.max_pages, on_end=end.append,
            )
        if opts.stop is None:
            return iter_pages(self.client, res, run.params, page_size=opts.page_size,
                              max_pages=opts.max_pages, on_end=end.append, start=start)
        return iter_pages(self.client, res, run.params, page_size=opts.page_size,
                          max_pages=opts.max_pages, on_end=end.append, start=start,
                          halted=lambda: self._draining(run), draining=lambda: self._draining(run))

    def _feed_pages(self, run: SiteListing) -> Iterator[Page]:
        """Changes of a mutable field since the last run, newest first, until older (windowed
        runs that have a feed cursor only)."""
        feed = self.resource.change_feed
        if feed is None or run.plan.full or not run.old_feed:
            return
        since = parse_timestamp(run.old_feed) - timedelta(seconds=feed.lookback_s)
        params = dict(feed.params, sort=feed.sort)
        if run.site is not None:
            params["filter[site_id]"] = run.site
        for page in iter_pages(self.client, self.resource, params, page_size=self.options.page_size,
                               concurrency=1, max_pages=self.options.max_pages):
            yield page
            values = [parse_timestamp(r["attributes"].get(feed.field)) for r in page.data
                      if isinstance(r, dict) and isinstance(r.get("attributes"), dict)]
            values = [v for v in values if v is not None]
            if not values or min(values) < since:
                return

    # ------------------------------------------------------------------ 3. normalising
    def _page_items(self, run: SiteListing, page: Page) -> Iterator[Any]:
        """One page: normalised, noted, batched; yields the batches that filled up."""
        self.client.stats.add_page(self.resource.name)
        if self.options.on_page is not None:
            self.options.on_page(self.resource.name, page.number)
        for rows, piece in self._page_rows(run, page):
            self._note(run, rows)
            if self.resource.writes:  # a fallback read: only what the owner's tables need
                rows = {t: r for t, r in rows.items() if t in self.resource.writes}
            if run.unchanged is not None:  # a piece of a group is not the group a hash is of
                rows = run.unchanged.filter(page.number, rows) if not piece else run.unchanged.passed(rows)
            self.report.count("rows", self.owner.name, len(rows.get(self.owner.table, ())))
            yield from self._batch(rows, piece)

    def _page_rows(self, run: SiteListing, page: Page) -> Iterator[tuple[Rows, Piece]]:
        """The page's records (re-read with their details where the gate says) as rows per
        table: in one part, or in parts of whole records once they pass `PAGE_PART_ROWS`; a
        streamed line array longer than that in pieces of its own (`Piece` 1, then 2s), each
        parsed only when the one before has been handed on."""
        if self.with_details:
            reads: Iterator[tuple[list[tuple[str, list[Any]]], Any]] = _with_details(
                self.client, self.resource, page, run.gate, self.window, run.site,
                lambda: self._draining(run), run.handed)
        else:
            reads = iter([([(page.url, page.data + page.included)], None)])
            run.handed.update(str(i["id"]) for i in page.data
                              if isinstance(i, dict) and i.get("id") is not None)
        rows: Rows = {}
        held = parts = lacking = 0
        extracted_at = datetime.now(UTC)
        for groups, detail in reads:
            for url, records in groups:
                streamed: list[StreamedLines] = []
                rejected: list[Rejected] = []
                part = normalize_resources(
                    records, site_id=run.site, extracted_at=extracted_at, pii=self.options.pii,
                    pii_salt=self.options.pii_salt, resource=self.resource.name, url=url,
                    streamed=streamed, rejected=rejected,
                )
                for lines in streamed:
                    pieces = lines.parts(PAGE_PART_ROWS, self.options.pii, self.options.pii_salt)
                    try:
                        if lines.items.count <= PAGE_PART_ROWS:  # one piece: with the rest
                            part.setdefault(lines.lines.table, []).extend(next(pieces))
                            continue
                        for number, piece in enumerate(pieces, start=1):
                            yield {lines.lines.table: piece}, min(number, 2)
                            parts += 1
                    except UnreadableValue as exc:  # a line's value: its parent is set aside
                        rejected.append(_streamed_reject(exc, lines.parent, records, part,
                                                         self.resource.table))
                if rejected or run.rejects.entries:
                    run.rejects.note(part, rejected, self.cursor_field, run.gate)
                for table, table_rows in part.items():
                    rows.setdefault(table, []).extend(table_rows)
                    held += len(table_rows)
            if detail is not None:
                lacking += _lacking_lines(self.resource, [detail])
            if held >= PAGE_PART_ROWS:
                yield rows, 0
                rows, held, parts = {}, 0, parts + 1
        self.report.count("without_lines", self.owner.name, lacking)
        if rows or not parts:  # an empty page still counts (its number, for unchanged.py)
            yield rows, 0

    # ------------------------------------------------------------------ 4. cursor
    def _note(self, run: SiteListing, rows: Rows) -> None:
        """The cursors the page moves, and the customers it names or lists (refresh.py)."""
        res = self.resource
        primary = rows.get(res.table, [])
        if res.name in FEEDERS:  # only money newer than the last run (not the look-back)
            # nor money older than the customers listing that completed last (its figures
            # hold it: a first sync in rounds or runs re-reads no customer for it)
            prev = _later(run.prev_cursor, self.options.customers_read_at.get(run.site))
            new = [r for r in primary if prev is None or (r.get(self.cursor_field) or prev) > prev]
            self.report.add_ids("refs", run.site,
                                {str(r["customer_id"]) for r in new if r.get("customer_id")})
        elif res.name == TARGET:
            self.report.add_ids("listed", run.site, {str(r["id"]) for r in primary})
        run.cursor = _later(run.cursor, _max_cursor(primary, res.incremental.cursor_field))
        if res.change_feed is not None:
            run.feed_cursor = _later(run.feed_cursor, _max_cursor(primary, res.change_feed.field))

    # ------------------------------------------------------------------ 5. batching
    def _batch(self, rows: Rows, piece: Piece = 0) -> Iterator[Any]:
        for table, tbl in rows_to_arrow(rows, pii=self.options.pii).items():
            self.client.stats.add_rows(table, tbl.num_rows)
            self.batches.add(table, tbl, piece)
            if self.batches.rows(table) >= BATCH_ROWS:
                yield from self._flush(table)

    def _flush(self, table: str) -> Iterator[Any]:
        """One arrow table per ~BATCH_ROWS rows: dlt's per-item work is not per page. The
        first item of a table carries its hints."""
        tbl = self.batches.take(table)
        if tbl is None:
            return
        if table in self.hinted:
            yield dlt.mark.with_table_name(tbl, table)
            return
        self.hinted.add(table)
        hints = table_item_hints(table, tbl, self.options.freeze_finance_schema)
        if self.batches.appends(table, tbl.column_names):
            hints["write_disposition"] = "append"  # keys stay declared for later merges
            marker = hints["columns"].get(EMPTY_PARENT)
            if marker is not None:  # (dlt warns of `hard_delete` on an append; it has no marker)
                hints["columns"][EMPTY_PARENT] = {k: v for k, v in marker.items() if k != "hard_delete"}
        yield dlt.mark.with_hints(tbl, dlt.mark.make_hints(**hints), create_table_variant=True)

    # ------------------------------------------------------------------ 6. state
    def _report_total(self, run: SiteListing, now: datetime) -> None:
        """A complete listing read the collection whole: its API total (the last page's),
        or why it has none comparable with the rows of the owner's table."""
        res, owner = self.resource, self.owner
        if res is not owner:
            reason = (f"read through {res.path} (a fallback): its total counts {res.table}, "
                      f"not {owner.table}")
            self.report.add_total(owner.name, owner.table, run.site, None, None, now, run.started,
                                  reason)
        elif run.last_total is None:
            self.report.add_total(res.name, res.table, run.site, None, None, now, run.started,
                                  "the listing's pages state no total (meta)")
        else:
            self.report.add_total(res.name, res.table, run.site, run.last_total,
                                  run.first_total, now, run.started)

    def _finish(self, run: SiteListing) -> None:
        """The listing completed: advance its cursors and report what it proves complete."""
        res, site, now = self.resource, run.site, self.client.server_now
        if res.change_feed is not None:
            feed = run.feed_cursor
            if feed is not None and run.resumed is not None and feed > run.started:
                # a listing across rounds or runs: records read before its stop may have
                # changed since; the changes are read from its first start on
                feed = run.started
            if feed is not None:
                run.state["feed_cursor"] = feed.strftime("%Y-%m-%dT%H:%M:%SZ")
            elif not run.old_feed:
                run.state["feed_cursor"] = now.strftime("%Y-%m-%dT%H:%M:%SZ")
        # a listing across rounds or runs holds the platform as of its first start, not now:
        # the next full listing is due a period after that start
        advance(run.state, run.plan, run.cursor, now=now if run.resumed is None else run.started,
                started=run.started)
        # a complete listing read every record: one set aside that it did not list is gone
        run.rejects.finish(complete=run.plan.full and run.resumed is None)
        if run.unchanged is not None:
            run.unchanged.save(run.state)
        log.info("%s site=%s: done, cursor %s", res.name, site or "*", run.state.get("cursor"))
        if self.with_details:
            # the listing covered every record the hashes are kept for: a full one, or a deep
            # window where only records recent enough keep one (`detail_if_changed`). Not one
            # resumed across rounds or runs (its earlier part's hashes stay, `keep_read_hashes`)
            # nor a deep window of payouts (older payouts keep theirs, else the next full listing
            # re-read every payout's detail)
            covered = run.plan.full or (run.plan.deep and bool(res.detail_if_changed))
            complete = covered and run.resumed is None
            save_gate(run.state, run.gate, started=run.started, complete=complete)
        if run.plan.full and res.name == TARGET:
            self.report.customers_full.add(site)
        if run.plan.full and run.plan.since is None:
            self._report_total(run, now)
        run.state.pop(PEOPLE_BEGAN_KEY, None)
        if run.plan.full and res.complete_tables and (run.resumed is None
                                                      or run.began_local is not None):
            # (a listing resumed from a checkpoint spans time: it is no snapshot to judge by,
            # but one of people judges by what it wrote since it began: `_people_listing_began`)
            complete = res.complete_tables
            if res.include_via == "detail" and (not self.with_details or run.gate.skipped):
                # included tables were not re-read for every record: only the list is complete
                complete = tuple(t for t in complete if t == res.table)
            listed = (res.table, run.listed_ids) if run.listed_ids is not None else None
            self.report.add_complete(complete, site, listed, began=run.began_local)
