"""The dlt source: one resource per collection, all driven by `endpoints.RESOURCES`.

`creator_platform_source` takes its settings the way dlt verified sources do: arguments
written out in its `def`, resolved from `[sources.creator_platform]` in `.dlt/config.toml` /
`.dlt/secrets.toml` or `SOURCES__CREATOR_PLATFORM__<KEY>` in the environment; the CLI calls
it with the values it resolved and checked.
Each resource streams pages, normalises them and yields arrow tables (`listing.py`); a failing
resource ends alone (`_resource_rows`). The customers named by new money are re-read by a
resource of the source that waits for its feeders (`refresh.customer_refresh`); what the
platform deleted is flagged `_is_deleted` by another that waits for all (`deletions`); the
run's bookkeeping (`sync_resources`, `rejected_records`, `api_totals`) is written by the last,
which waits for `deletions` too (`bookkeeping`).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import logging
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import dlt
from dlt.common.schema import Schema
from dlt.common.typing import TSecretStrValue
from dlt.extract.source import DltSource
from dlt.sources import DltResource

from creator_sync.common.settings import DEFAULTS as APP_DEFAULTS
from creator_sync.common.settings import BadSetting, by_key, checked

from . import checkpoint
from .arrow_tables import rows_to_arrow
from .auth import Secret
from .bookkeeping import NAME as BOOKKEEPING
from .bookkeeping import TABLES as BOOKKEEPING_TABLES
from .bookkeeping import Bookkeeping
from .client import CreatorPlatformClient
from .config import checked_arguments
from .deletions import Deletions
from .destination import Held, current_pipeline, held
from .dlt_logs import quiet_hint_merge_warnings
from .endpoints import (
    DAY_S,
    KNOWN_SCOPES,
    RESOURCES,
    SOURCE_NAME,
    Resource,
    get_resource,
    with_paths,
)
from .errors import ApiError, BadResponseError, ConfigurationError, CreatorPlatformError
from .listing import Listing, table_item_hints
from .pagination import Page, iter_pages
from .payouts_path import forget_if_gone, path_for_run
from .ratelimit import LimiterClosed
from .refresh import TARGET as TARGET_CUSTOMERS
from .refresh import customer_refresh
from .rows import normalize_resources
from .run import HeldTables, Outcome, RunReport, Runtime, SourceOptions, SyncRun
from .unchanged import STATE_KEY, hashes
from .values import parse_timestamp

__all__ = [
    "CreatorPlatformSource", "Outcome", "RunReport", "Runtime", "SourceOptions", "SyncRun",
    "creator_platform_source", "failure_reason", "sync_run",
]

log = logging.getLogger("creator_sync.source")


def discover_sites(client: CreatorPlatformClient, page_size: int) -> list[Page]:
    """Every page of GET /v1/sites (reused by the `sites` resource: no second listing)."""
    return list(iter_pages(client, RESOURCES["sites"], {}, page_size=page_size))


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
    if report.advanced and options.stop is not None and options.stop() == "checkpoint":
        # the round went forward and commits now: this resource starts next round rather than
        # wait for its first request (a minute, behind a 429)
        order = list(sites) if resource.site_scoped else [None]
        left = checkpoint.left_of(order, dlt.current.resource_state())  # (a place kept earlier)
        report.set_outcome(resource.name, "partial", f"left: {left}")
        return
    # resource state lives at source_state["resources"][name], so refresh="drop_resources" resets it
    state = dlt.current.resource_state()
    before = copy.deepcopy(dict(state))
    try:
        resource = path_for_run(client, resource, options.payouts_path, report, sites, state)
        if resource.single:
            yield from _single_rows(client, resource, options, report)
        else:
            yield from _rows_or_fallback(client, resource, options, report, sites, state, prefetched)
    except Exception as exc:  # isolation is the point; the reason is reported
        if (isinstance(exc, LimiterClosed) and options.stop is not None
                and options.stop() is not None):
            # a read held by a 429 was dropped at a checkpoint or a stop, outside a listing's
            # pages (the payouts path, a one-object endpoint): the resource goes on next time
            state.clear()
            state.update(before)
            order = list(sites) if resource.site_scoped else [None]
            left = checkpoint.left_of(order, state)
            log.info("%s: a read held by the rate limit was dropped; left: %s", resource.name, left)
            report.set_outcome(resource.name, "partial", f"left: {left}")
            return
        if options.full_refresh:
            # all or nothing: dlt drops every selected resource's tables at the load, so a
            # refresh that cannot read one of them must not load at all (the run fails and
            # the old tables stay)
            raise
        state.clear()
        state.update(before)
        forget_if_gone(resource, exc, state)
        reason = failure_reason(resource, exc, options.payouts_path)
        log.error("%s failed, its state is kept as before the run: %s", resource.name, reason,
                  exc_info=not isinstance(exc, CreatorPlatformError))
        report.set_outcome(resource.name, "failed", reason)
        return
    if resource.name not in report.outcomes:  # a listing that stopped said "partial" already
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
        return Listing(client, fallback, options, report, resource).rows(
            sites, state.setdefault(FALLBACK_STATE, {}))

    missing = state.get(LIST_MISSING_AT)
    if fallback is not None and missing:
        age = (client.server_now - parse_timestamp(missing)).total_seconds()
        if age < LIST_RETRY_S:
            yield from via_fallback()
            return
    pages_before = client.stats.pages[resource.name]
    try:
        yield from Listing(client, resource, options, report, resource).rows(
            sites, state, prefetched)
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
    state = dlt.current.resource_state()
    seen = hashes(rows)
    if state.get(STATE_KEY) == seen and all(options.may_skip(table) for table in rows):
        return  # stored unchanged by the last run (see unchanged.py): nothing to load
    state[STATE_KEY] = seen
    report.count("rows", resource.name, len(rows.get(resource.table, ())))
    for table, tbl in rows_to_arrow(rows, pii=options.pii).items():
        client.stats.add_rows(table, tbl.num_rows)
        hints = table_item_hints(table, tbl, options.freeze_finance_schema)
        hints["write_disposition"] = "replace"  # one row: the credential's user now
        yield dlt.mark.with_hints(tbl, dlt.mark.make_hints(**hints), create_table_variant=True)


def failure_reason(resource: Resource, exc: BaseException, configured: str | None = None) -> str:
    """One line: why the resource failed, with the setting to change where there is one.
    `configured`: the path setting's value, when set (then it is the setting that is wrong)."""
    if (isinstance(exc, ApiError) and exc.status == 404 and resource.path_setting
            and exc.url and urlsplit(exc.url).path.endswith(resource.path)):
        flag = resource.path_setting.replace("_", "-")
        if configured and configured == resource.path:
            return (f"{resource.path} answered 404 at {exc.url}: your {resource.path_setting} "
                    f"setting (--{flag}) names no list there; remove it and sync finds the "
                    "path (creator-sync init shows what it finds), or set the one your "
                    "platform serves, e.g. /<brand>_payments_payouts")
        return (f"{resource.path} answered 404 at {exc.url}: set {resource.path_setting} "
                f"(--{flag}) to the path your platform serves, e.g. /<brand>_payments_payouts")
    if isinstance(exc, CreatorPlatformError):
        return " ".join(str(exc).split())
    return " ".join(f"unexpected error: {exc}".split())[:300]


def make_resource(
    client: CreatorPlatformClient,
    resource: Resource,
    options: SourceOptions,
    report: RunReport,
    sites: list[str],
    prefetched: list[Page] | None = None,
    deletions: Deletions | None = None,
) -> DltResource:
    frozen = options.freeze_finance_schema and resource.finance

    def rows() -> Iterator[Any]:
        try:
            for item in _resource_rows(client, resource, options, report, sites, prefetched):
                # (keys noted, a deleted person's fields erased, an included dimension row held)
                item = item if deletions is None else deletions.take(resource.table, item)
                if item is not None:
                    yield item
        finally:  # (also when dlt closes it early): resources that wait for it go on
            report.end(resource.name)

    # A generator function, not a generator: dlt looks a generator's module up with
    # `inspect.getmodule(frame)`, which scans every loaded module (~0.1 s a run for 22
    # resources); a function names its module. The primary table's disposition is set with
    # its first item's hints (Batches.appends).
    return dlt.resource(
        rows,
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


# ---------------------------------------------------------------- the source
class CreatorPlatformSource(DltSource):
    """The DltSource `creator_platform_source` returns: dlt's source, plus `.sync_run`, what
    the steps after the load need (`pipelines.postload.finish_sync(pipeline, source)`).

    The source function builds it itself, on the schema dlt made for the call
    (`dlt.current.source_schema()`); dlt takes a DltSource returned by a source function as
    it is."""

    def __init__(self, schema: Schema, section: str, resources: Sequence[DltResource] = (),
                 sync_run: SyncRun | None = None) -> None:
        super().__init__(schema, section, resources)
        self.sync_run = sync_run


def sync_run(source: Any) -> SyncRun:
    """The run behind a source `creator_platform_source` returned."""
    run = getattr(source, "sync_run", None)
    if not isinstance(run, SyncRun):
        raise TypeError("not a source returned by creator_platform_source()")
    return run


@dlt.source(name=SOURCE_NAME, section=SOURCE_NAME, max_table_nesting=0, root_key=False,
            _impl_cls=CreatorPlatformSource)
def creator_platform_source(
    base_url: str = dlt.config.value,
    client_id: str = dlt.config.value,
    client_secret: TSecretStrValue = dlt.secrets.value,
    site_ids: list[str] | None = None,
    resources: list[str] | None = None,
    payouts_path: str | None = None,
    concurrency: int = 4,
    detail_concurrency: int = 16,
    page_size: int = 100,
    rate_limit: float | None = None,
    adaptive_rate: bool = True,
    pii: str | None = None,
    pii_salt: TSecretStrValue | None = None,
    insecure: bool = False,
    details: bool = True,
    freeze_finance_schema: bool = False,
    full_refresh_every_days: float | None = None,
    max_attempts: int = 8,
    backoff_initial: float = 0.25,
    timeout: float = 30.0,
    full_refresh: bool = False,
    lookback_days: dict[str, float] | None = None,
    kept_tables: Sequence[str] | None = None,
    webhook_written_keys: Mapping[str, Sequence[str]] | None = None,
    deleted_people: str = APP_DEFAULTS.deleted_people,
    host: Runtime | None = None,
) -> Any:
    """Every collection of every site of a Creator Platform account.

    Each configuration argument is resolved by dlt, when not passed, from
    `[sources.creator_platform]` in `.dlt/config.toml` / `.dlt/secrets.toml` or env
    `SOURCES__CREATOR_PLATFORM__<KEY>`, and checked by its kind (`config.SOURCE_SETTINGS`, whose
    help docs/setup.md prints); a bad one raises `ConfigurationError`, the line the CLI prints.

    Args:
        base_url: API base URL, e.g. https://api.example.com (the /v1 is added).
        client_id: OAuth client id.
        client_secret: OAuth client secret (a secret: `.dlt/secrets.toml` or env).
        site_ids: only these sites; every site the credential sees when None.
        resources: the collections to read (names of `endpoints.RESOURCES`); all when None.
        payouts_path: the payouts list under /v1, /<brand>_payments_payouts; found by the run
            when None (and remembered in state).
        concurrency: list-page requests in flight.
        detail_concurrency: single-record (include=) reads in flight.
        page_size: page[size] to ask for.
        rate_limit: hard cap, requests per minute; None or 0: find the platform's limit.
        adaptive_rate: find the platform's limit and ride it; False: pace at `rate_limit`.
        pii: "hash" or "drop" personal columns; kept as sent when None.
        pii_salt: salt of `pii="hash"` (a secret).
        insecure: allow plain http:// to a non-loopback host.
        details: read per-record details (payout lines, course modules, form fields).
        freeze_finance_schema: a new column fails the finance tables instead of altering them.
        full_refresh_every_days: days between full listings of look-back resources; each
            resource's own when None.
        max_attempts: attempts per request, retries included.
        backoff_initial: seconds of the first retry's wait, doubled each time.
        timeout: seconds per request.
        full_refresh: re-list everything (pair it with `refresh="drop_resources"` to drop the
            tables).
        lookback_days: per resource, how far back a deep run re-reads
            (`[sources.creator_platform.lookback_days]` for the CLI).
        kept_tables: the tables the destination holds and keeps this run, for a host that
            read them before the run and repairs a killed append load (the CLI:
            `pipelines.warehouse_facts`, `pipelines.crash_repair`); not configuration. A table
            not in it that one resource alone writes is loaded with `append` (None: everything
            is merged). Without it the source reads itself, once, when a resource first asks,
            which tables the destination holds, for the unchanged-row skip only (`destination.
            held`): a plain `pipeline.run` leaves out the rows it read unchanged as the CLI does.
        webhook_written_keys: per table, the keys of rows another writer (the webhook loader)
            wrote last: re-read, they are loaded even when unchanged since the last run; not
            configuration. Read by the source itself with the tables when `kept_tables` is
            not passed.
        deleted_people: "erase" (the default) or "keep": whether the people the platform
            deleted lose their personal fields (`deletions.py`); the app's setting
            `[creator_sync] deleted_people`, which the CLI passes.
        host: a host program's hooks and plumbing (see `run.Runtime`); not configuration.

    Sites are discovered (and the token taken) when it is called. Resources the token's scopes
    do not cover are skipped (outcome `skipped`, or `failed` when asked for by name). Records
    the platform deleted are flagged `_is_deleted` by the source's `deletions` resource, in
    the same load; the run's bookkeeping tables (`sync_resources`, `rejected_records`,
    `api_totals`) by its `bookkeeping` resource, last.
    """
    rt = host or Runtime()
    quiet_hint_merge_warnings()  # json hints over arrow text are intended (see dlt_logs)
    # arrow items carry no `_dlt_load_id` by default: `_is_deleted` and the summaries need it
    dlt.config["normalize.parquet_normalizer.add_dlt_load_id"] = True
    given = {
        "base_url": base_url, "client_id": client_id, "client_secret": client_secret,
        "site_ids": site_ids, "resources": resources, "payouts_path": payouts_path,
        "concurrency": concurrency, "detail_concurrency": detail_concurrency,
        "page_size": page_size, "rate_limit": rate_limit, "adaptive_rate": adaptive_rate,
        "pii": pii, "pii_salt": pii_salt, "insecure": insecure, "details": details,
        "freeze_finance_schema": freeze_finance_schema,
        "full_refresh_every_days": full_refresh_every_days, "max_attempts": max_attempts,
        "backoff_initial": backoff_initial, "timeout": timeout,
    }
    if rt.checked:  # the host checked each value by its kind already (the CLI, naming the flag)
        values, lookback = given, dict(lookback_days or {})
    else:
        values, lookback = checked_arguments(given, lookback_days)
    kept = frozenset(kept_tables) if kept_tables is not None else None
    pushed = {table: frozenset(keys) for table, keys in (webhook_written_keys or {}).items()}
    opts = SourceOptions(
        site_ids=_names(values["site_ids"]), resources=_names(values["resources"]),
        payouts_path=values["payouts_path"], page_size=values["page_size"], pii=values["pii"],
        pii_salt=values["pii_salt"] or "",  # no salt: the hash is unsalted
        details=values["details"], freeze_finance_schema=values["freeze_finance_schema"],
        full_refresh_every_days=values["full_refresh_every_days"],
        full_refresh=bool(full_refresh), lookback_days=lookback,
        kept_tables=kept, webhook_written_keys=pushed,
        held=HeldTables(None if kept is None else Held(kept, pushed),
                        functools.partial(_held, current_pipeline(), rt.warehouse_lock)
                        if rt.reads_held else _unknown),
        on_page=rt.on_page, stop=rt.stop,
    )
    try:
        client = CreatorPlatformClient(
            values["base_url"], values["client_id"], Secret(values["client_secret"]),
            concurrency=values["concurrency"], detail_concurrency=values["detail_concurrency"],
            rate_limit=values["rate_limit"], adaptive_rate=values["adaptive_rate"],
            insecure=values["insecure"], max_attempts=values["max_attempts"],
            backoff_initial=values["backoff_initial"], timeout=values["timeout"],
            verify=rt.verify, stats=rt.stats, transport=rt.transport,
        )
    except ValueError as exc:
        raise ConfigurationError(str(exc)) from None
    if rt.limiter is not None:  # the host's, shared by its calls of one run
        client.limiter = rt.limiter
    try:  # the app's key, checked by its own kind (the CLI's one line)
        deleted_people = checked(by_key("deleted_people"), deleted_people,
                                 "argument=deleted_people")
    except BadSetting as exc:
        raise ConfigurationError(str(exc)) from None
    run = SyncRun(client, opts, RunReport(), extract_started=datetime.now(UTC))
    run.deletions = Deletions(run.report, run.extract_started, deleted_people, rt.warehouse_lock)
    run.bookkeeping = Bookkeeping(run.report, run.extract_started, rt.warehouse_lock)
    try:
        selected = _resources(run)
    except BaseException:
        run.close()
        raise
    return CreatorPlatformSource(dlt.current.source_schema(), SOURCE_NAME, selected, run)


def _unknown() -> Held | None:
    """The host read nothing and wants nothing read: no row is skipped."""
    return None


def _held(pipeline: Any, lock: Any) -> Held | None:
    """What the destination holds, read when a resource first asks: through the pipeline
    that was current when the source was called, else the one current now (in the extract)."""
    return held(pipeline or current_pipeline(), lock, own=BOOKKEEPING_TABLES)


def _names(value: Sequence[str] | None) -> tuple[str, ...] | None:
    """A list of names as the resources read it (a checked one is a tuple already)."""
    return tuple(value) if value is not None else None


def _customers_read_at(full_refresh: bool) -> dict[str | None, datetime]:
    """Per site, the cursor of the customers listing that completed last (source state; none
    outside a pipeline, or in a full refresh, which drops it)."""
    if full_refresh:
        return {}
    try:
        resources = dlt.current.source_state().get("resources", {})
    except Exception:  # no pipeline context (a bare source): nothing known
        return {}
    out: dict[str | None, datetime] = {}
    for site, site_state in (resources.get(TARGET_CUSTOMERS) or {}).items():
        if isinstance(site_state, dict) and site_state.get("cursor"):
            with contextlib.suppress(TypeError, ValueError):
                out[None if site == "_all" else site] = parse_timestamp(site_state["cursor"])
    return out


# read first within a run: what the finance figures are built on (a budgeted first sync of a
# large account then gives revenue and payouts after its first runs, not after its last)
FINANCE_FIRST = ("transactions", "purchases", "payouts", "offers", "products", "orders")


def _read_order(name: str) -> int:
    """Finance first (in `FINANCE_FIRST`'s order), then the rest in `RESOURCES`' order."""
    return FINANCE_FIRST.index(name) if name in FINANCE_FIRST else len(FINANCE_FIRST)


def _resources(run: SyncRun) -> list[DltResource]:
    """Discover the sites (this takes the token), check the chosen ones, and build a resource
    per selected collection the credential may read."""
    client, opts, rep = run.client, run.options, run.report
    names = sorted(opts.resources or tuple(RESOURCES), key=_read_order)
    selected = [with_paths(get_resource(n), opts.payouts_path) for n in names]
    site_pages = discover_sites(client, opts.page_size)
    listed = [str(s["id"]) for p in site_pages for s in p.data
              if isinstance(s, dict) and s.get("id") is not None]
    unknown = [s for s in opts.site_ids or () if s not in listed]
    if unknown:  # a typo would otherwise sync nothing and exit 0
        raise ConfigurationError(
            f"site {', '.join(unknown)} is not one of this account's sites "
            f"({', '.join(listed) or 'none'}): check --site-id / site_ids", resource="sites")
    sites = list(opts.site_ids) if opts.site_ids else listed
    rep.sites = sites
    opts.customers_read_at = _customers_read_at(opts.full_refresh)
    denied = unreadable(selected, client.tokens.scopes)
    for name, reason in denied.items():
        rep.set_outcome(name, "failed" if opts.resources is not None else "skipped", reason)
        log.warning("%s: %s", name, reason)
    if denied and opts.resources is None:
        rep.add_notice(f"skipped {len(denied)} resource(s) the credential's scopes do not "
                       f"cover: {', '.join(denied)}")
    readable = [res for res in selected if res.name not in denied]
    if opts.full_refresh:
        # no `deletions` in a full refresh: its tables are dropped (and dlt's `drop_resources`
        # drops every table a selected resource wrote: all it ever flagged)
        run.deletions = None
    resources = [
        make_resource(client, res, opts, rep, sites, site_pages if res.name == "sites" else None,
                      run.deletions)
        for res in readable
    ]
    if any(r.name == TARGET_CUSTOMERS for r in resources):  # customers named by new money
        resources.append(customer_refresh(run))
    if run.deletions is not None:
        # flags what the complete listings no longer list, once every other one ended
        resources.append(run.deletions.resource(
            lambda: [n for n in dlt.current.source().selected_resources if n != BOOKKEEPING]))
    # last: the run's bookkeeping, once every other one ended (`deletions` included)
    resources.append(run.bookkeeping.resource(lambda: dlt.current.source().selected_resources))
    return resources
