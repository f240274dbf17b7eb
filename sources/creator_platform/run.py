"""What one run of the source is: its options, what it learnt, and what a host hands it.

- `SourceOptions`: the knobs the resources read (built by `creator_platform_source` from its
  checked arguments).
- `RunReport`: what the extract learnt, for the resources that run last (`deletions`,
  `bookkeeping`) and the steps after the load (`pipelines.postload`).
- `Runtime`: what only a host program passes (progress counters, an in-memory transport,
  a hook called per page): never configuration, never state (what earlier runs learnt is dlt
  state; what the warehouse holds, the run reads itself: `HeldTables`, unless the host passed
  it as the source's arguments `kept_tables` and `webhook_written_keys`).
- `HeldTables`: what the destination holds, read once per run when first asked.
- `SyncRun`: one call of the source: its client, options and report, until `close()`.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from .endpoints import DAY_S
from .key_sets import GatheredIds
from .pagination import DEFAULT_MAX_PAGES
from .pii import PiiMode

if TYPE_CHECKING:
    from .client import CreatorPlatformClient
    from .destination import Held
    from .ratelimit import RateLimiter
    from .stats import RunStats

PageHook = Callable[[str, int], None]  # (resource, page number)
# "checkpoint": the host wants what was read committed (a listing that can resume stops at its
# next page); "stop": the budget is spent or a signal came (every listing stops); None: read on
StopCheck = Callable[[], Literal["checkpoint", "stop"] | None]

@dataclass(kw_only=True)
class SourceOptions:
    """Knobs of one sync: the source's checked settings that its resources read (the client's
    go to `CreatorPlatformClient`), and what its call adds. Built by `creator_platform_source`
    alone, from values checked by their kinds (`config.SOURCE_SETTINGS`): no defaults here."""

    site_ids: tuple[str, ...] | None
    resources: tuple[str, ...] | None
    payouts_path: str | None
    page_size: int
    pii: PiiMode
    pii_salt: str = field(repr=False)  # "" when none: the hash is unsalted
    details: bool
    freeze_finance_schema: bool
    full_refresh_every_days: float | None
    full_refresh: bool
    lookback_days: dict[str, float]  # resource -> days
    max_pages: int = DEFAULT_MAX_PAGES
    # the source's arguments `kept_tables` and `webhook_written_keys`
    kept_tables: frozenset[str] | None = None
    webhook_written_keys: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # what the destination holds (None: unknown): the host's `kept_tables` and
    # `webhook_written_keys` when it passed them, else read once when first asked (`HeldTables`)
    held: Callable[[], Held | None] = field(default=lambda: None, repr=False)
    on_page: PageHook | None = field(default=None, repr=False)  # see `Runtime.on_page`
    stop: StopCheck | None = field(default=None, repr=False)  # see `Runtime.stop`
    # per site: the platform's clock when the customers listing that completed last began
    # (its cursor in state); money older than that is in the customers' figures (refresh.py)
    customers_read_at: dict[str | None, datetime] = field(default_factory=dict)

    def may_skip(self, table: str) -> bool:
        """May rows of `table` that the last run stored unchanged be left out of this load?
        Only when the destination holds the table (and this load does not drop it), never in
        a full refresh."""
        if self.full_refresh:
            return False
        held = self.held()
        return held is not None and table in held.tables

    def pushed_keys(self, table: str) -> frozenset[str]:
        """Keys of `table`'s rows another writer (the webhook loader) wrote last: re-read,
        they are loaded even when unchanged (the stored row may not be what this run read)."""
        held = self.held()
        read = held.pushed.get(table, frozenset()) if held is not None else frozenset()
        return read | self.webhook_written_keys.get(table, frozenset())

    @property
    def lookback_s(self) -> dict[str, int]:
        """resource -> seconds a deep run looks back (`lookback_days`)."""
        return {name: int(days * DAY_S) for name, days in self.lookback_days.items()}

    @property
    def full_refresh_every_s(self) -> int | None:
        """None = each resource's own default."""
        days = self.full_refresh_every_days
        return int(days * DAY_S) if days is not None else None


class HeldTables:
    """What the destination holds, for one run's unchanged-row skip: `given` (the host's
    `kept_tables` and `webhook_written_keys`) when it passed them, else `read()`
    (`destination.held`), called once, when a resource first asks (never on a first sync, nor
    in a full refresh: no row is then skipped), under a lock (the resources run in threads).
    None: unknown, nothing is skipped.

    Only the skip reads it: the `append` of a table new to the warehouse stays the host's
    `kept_tables` alone (it needs the host's crash repair, `Batches`)."""

    def __init__(self, given: Held | None, read: Callable[[], Held | None]) -> None:
        self._value = given
        self._read: Callable[[], Held | None] | None = None if given is not None else read
        self._lock = threading.Lock()

    def __call__(self) -> Held | None:
        if self._read is None:
            return self._value
        with self._lock:
            if self._read is not None:
                self._value, self._read = self._read(), None
        return self._value


# partial: the listing stopped at a checkpoint or the budget; the next run goes on from there
Status = Literal["synced", "failed", "skipped", "partial"]


@dataclass(frozen=True)
class Outcome:
    """How one resource ended in this run: `reason` says why it failed or was skipped."""

    status: Status
    reason: str | None = None


@dataclass(frozen=True)
class ApiTotal:
    """What a complete listing of one resource and site said of its size: the API's total
    (`meta`) at its last page and at its first (they differ when records were added or
    removed while it read), when it was read and began (the platform's clock), or why it has
    no total comparable with the rows of `table`."""

    table: str
    total: int | None
    first_total: int | None
    read_at: datetime
    listing_started_at: datetime
    reason: str | None = None


@dataclass
class RunReport:
    """What the extract step learnt, for post-load steps (thread-safe appends)."""

    complete: set[tuple[str, str | None]] = field(default_factory=set)  # (table, site_id)
    # ids of each complete listing, per (table, site_id): only a listed row is alive, even if
    # another resource's `include` wrote it this run (an archived tag a form still names)
    listed: dict[tuple[str, str | None], set[str]] = field(default_factory=dict)
    # keys of rows read unchanged and not loaded again, per (table, site_id) (unchanged.py):
    # seen by this run, so alive; an entity's id, a link or line table's parent
    seen: dict[tuple[str, str | None], set[str]] = field(default_factory=dict)
    # (table, site) -> when (local clock, as `_extracted_at`) a complete listing of people
    # began, maybe rounds or runs ago: a row not written since (nor seen) was not listed
    began: dict[tuple[str, str | None], datetime] = field(default_factory=dict)
    plans: dict[str, str] = field(default_factory=dict)  # "resource/site" -> reason
    sites: list[str] = field(default_factory=list)
    # for the dependent customers refresh (see refresh.py), per site
    # (int64 arrays: millions of customers at `large`, docs/performance.md#memory)
    customer_refs: dict[str | None, GatheredIds] = field(default_factory=dict)
    customers_listed: dict[str | None, GatheredIds] = field(default_factory=dict)
    customers_full: set[str | None] = field(default_factory=set)
    outcomes: dict[str, Outcome] = field(default_factory=dict)  # resource -> how it ended
    rows: Counter[str] = field(default_factory=Counter)  # resource -> rows of its own table
    # resource -> records whose detail read carried no lines (a payout without `transactions`)
    without_lines: Counter[str] = field(default_factory=Counter)
    notices: list[str] = field(default_factory=list)  # one line each, for the summary
    # resource -> the platform's clock (HTTP `Date`) when its listing began (earliest site):
    # every record created before it was listed, if the resource completes
    listing_started: dict[str, datetime] = field(default_factory=dict)
    # pages past a listing's place read whole in this round (any listing): once the round
    # went forward, a checkpoint ends every listing at once, waiting for nothing
    advanced: int = 0
    # resource -> site -> the records set aside now (rejects.py), for `rejected_records`
    rejected: dict[str, dict[str | None, dict[str, dict[str, Any]]]] = field(default_factory=dict)
    # (resource, site) -> the API's total a complete listing read (`api_totals`)
    totals: dict[tuple[str, str | None], ApiTotal] = field(default_factory=dict)
    # resources whose extract ended (however: done, failed, stopped, closed by dlt); a
    # resource of the source that reads after others waits for them (`until_ended`)
    ended: set[str] = field(default_factory=set)
    # table -> rows the `deletions` resource flagged `_is_deleted` / whose personal fields it
    # erased (deletions.py)
    deleted: dict[str, int] = field(default_factory=dict)
    erased: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def end(self, resource: str) -> None:
        with self._lock:
            self.ended.add(resource)

    def after(self, name: str, waits_for: Callable[[], Iterable[str]],
              rows: Callable[[], Iterator[Any]]) -> Iterator[Any]:
        """The items of resource `name`, which reads after others: `until_ended` for
        `waits_for()` (itself aside), then `rows()`; `name` ends however it stops (a resource
        waiting for it goes on)."""
        try:
            yield from self.until_ended([n for n in waits_for() if n != name])
            yield from rows()
        finally:
            self.end(name)

    def until_ended(self, names: Iterable[str]) -> Iterator[None]:
        """Yield `None` while a resource of `names` that this extract selected has not ended.

        A dlt resource that depends on others yields from it first: dlt's pipe iterator takes
        `None` as "nothing yet" and goes on with the other resources (the parallelized ones
        run in its pool meanwhile), then comes back. Only the resources the extract selected
        are waited for (`dlt.current.source().selected_resources`): one a user left out with
        `with_resources` never ends."""
        import dlt

        selected = set(dlt.current.source().selected_resources)
        wanted = set(names) & selected
        while not wanted <= self.ended:
            yield None

    def add_total(self, resource: str, table: str, site: str | None, total: int | None,
                  first: int | None, read_at: datetime, started: datetime,
                  reason: str | None = None) -> None:
        with self._lock:
            self.totals[(resource, site)] = ApiTotal(table, total, first, read_at, started, reason)

    def note_advanced(self) -> None:
        with self._lock:
            self.advanced += 1

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
        self, tables: tuple[str, ...], site: str | None, listed: tuple[str, set[str]] | None = None,
        began: datetime | None = None,
    ) -> None:
        with self._lock:
            self.complete.update((t, site) for t in tables)
            if began is not None:
                self.began.update(((t, site), began) for t in tables)
            if listed is not None:
                self.listed[(listed[0], site)] = listed[1]

    def add_seen(self, table: str, site: str | None, keys: set[str]) -> None:
        with self._lock:
            self.seen.setdefault((table, site), set()).update(keys)

    def add_listing_start(self, resource: str, at: datetime) -> None:
        with self._lock:
            known = self.listing_started.get(resource)
            if known is None or at < known:
                self.listing_started[resource] = at

    def add_rejected(self, resource: str, by_site: dict[str | None, dict[str, dict[str, Any]]]) -> None:
        """The records of `resource` set aside after its listing (every site it lists), and
        one summary line when there are any."""
        count = sum(len(entries) for entries in by_site.values())
        with self._lock:
            self.rejected[resource] = by_site
            if count:
                first = next(e for entries in by_site.values() for e in entries.values())
                self.notices.append(
                    f"{resource}: {count} record(s) set aside in rejected_records, a value that "
                    f"cannot be read ({first['field']}: {first['reason']}); the rest loaded, and "
                    "the next sync reads them again")

    def add_plan(self, key: str, reason: str) -> None:
        with self._lock:
            self.plans[key] = reason

    def add_ids(self, kind: str, site: str | None, ids: set[str]) -> None:
        """kind: "refs" (customers named by new money) or "listed" (customers read this run)."""
        target = self.customer_refs if kind == "refs" else self.customers_listed
        with self._lock:
            target.setdefault(site, GatheredIds()).update(ids)


@dataclass(frozen=True)
class Runtime:
    """A host program's hooks and plumbing for the source (never read from config, never state).

    - `stats`: counters the caller shows as progress (a fresh one otherwise);
    - `transport`: an httpx transport (tests serve the API in memory);
    - `verify`: TLS verification (tests with their own certificates);
    - `on_page(resource, page_number)`: called before each listed page is processed (the crash
      drills kill the process there);
    - `stop()`: asked after each listed page: "checkpoint" ends listings that can resume there
      (their place is kept in state, checkpoint.py), "stop" ends every listing;
    - `limiter`: one rate limiter for every source call of a run (a sync in checkpoint rounds
      keeps what it learnt of the platform's limit from round to round);
    - `checked`: the host checked every configuration argument by its kind already (the CLI
      does, naming the flag, the variable or the key): the source does not check them again;
    - `warehouse_lock()`: a context manager the `deletions` resource reads the warehouse under
      (the CLI's writer lock, which the webhook receiver takes too);
    - `reads_held`: without the host's `kept_tables`, the source reads what the destination
      holds for its unchanged-row skip (`destination.held`); False: it skips only what the host
      passed (the CLI, which reads DuckDB itself and, on PostgreSQL, loads every row read: its
      month of daily use with deliveries found an offer left with a delivery's value when the
      source skipped there, not yet explained).
    """

    stats: RunStats | None = None
    transport: Any = None
    verify: bool = True
    on_page: PageHook | None = None
    stop: StopCheck | None = None
    limiter: RateLimiter | None = None
    checked: bool = False
    warehouse_lock: Callable[[], AbstractContextManager[Any]] | None = None
    reads_held: bool = True


@dataclass
class SyncRun:
    """One call of `creator_platform_source`: what the steps after the load need.

    `extract_started` (wall clock, UTC): rows another writer (the webhook loader) pushed after
    it are not this listing's to judge.
    """

    client: CreatorPlatformClient
    options: SourceOptions
    report: RunReport
    extract_started: datetime
    closed: bool = False
    deletions: Any = field(default=None, repr=False)  # `deletions.Deletions` of this run
    bookkeeping: Any = field(default=None, repr=False)  # `bookkeeping.Bookkeeping` of this run

    def close(self) -> None:
        """Revoke the session and release connections (once; later calls do nothing)."""
        if not self.closed:
            self.closed = True
            self.client.close()

    def __repr__(self) -> str:
        return f"SyncRun(client={self.client!r}, sites={self.report.sites!r}, closed={self.closed})"
