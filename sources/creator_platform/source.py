"""The dlt source: one resource per collection, all driven by `settings.RESOURCES`.

`creator_platform_source` takes its settings the way dlt verified sources do: arguments,
resolved from `[sources.creator_platform]` in `.dlt/config.toml` / `.dlt/secrets.toml` or
`SOURCES__CREATOR_PLATFORM__<KEY>` in the environment; the CLI calls it with its flags.
Each resource streams pages, normalises them and yields arrow tables (`listing.py`); a failing
resource ends alone (`_resource_rows`). After `pipeline.run`, `pipelines.postload.finish_sync`
does what needs the loaded warehouse (`_is_deleted`, dependents, `sync_resources`).
"""

from __future__ import annotations

import contextlib
import copy
import logging
import threading
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import dlt
from dlt.common.typing import TSecretStrValue
from dlt.extract.source import DltSource
from dlt.sources import DltResource

from .auth import Secret
from .client import CreatorPlatformClient
from .dlt_logs import quiet_hint_merge_warnings
from .errors import ApiError, BadResponseError, ConfigurationError, CreatorPlatformError
from .listing import Listing, table_item_hints
from .normalize import normalize_resources, parse_timestamp, rows_to_arrow
from .pagination import Page, iter_pages
from .payouts_path import forget_if_gone, path_for_run
from .refresh import TARGET as TARGET_CUSTOMERS
from .run import Outcome, RunReport, Runtime, SourceOptions, SyncRun
from .settings import (
    ADAPTIVE_RATE,
    BACKOFF_INITIAL_S,
    CONCURRENCY,
    CONCURRENCY_RANGE,
    DAY_S,
    DETAIL_CONCURRENCY,
    DETAIL_CONCURRENCY_RANGE,
    KNOWN_SCOPES,
    MAX_ATTEMPTS,
    MAX_ATTEMPTS_RANGE,
    PAGE_SIZE,
    PAGE_SIZE_RANGE,
    PII_MODES,
    RESOURCES,
    SOURCE_NAME,
    TIMEOUT_S,
    Resource,
    get_resource,
    normalise_api_path,
    with_paths,
)
from .unchanged import STATE_KEY, hashes

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
        report.set_outcome(resource.name, "partial", "left: not started")
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
    kept = options.kept_tables
    if (state.get(STATE_KEY) == seen and not options.full_refresh and kept is not None
            and all(table in kept for table in rows)):
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
) -> DltResource:
    frozen = options.freeze_finance_schema and resource.finance

    def rows() -> Iterator[Any]:
        yield from _resource_rows(client, resource, options, report, sites, prefetched)

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
_building = threading.local()  # hands the SyncRun from the source function to its DltSource


class CreatorPlatformSource(DltSource):
    """The DltSource `creator_platform_source` returns; `.sync_run` is what the steps after
    the load need (`pipelines.postload.finish_sync`)."""

    sync_run: SyncRun | None = None

    @classmethod
    def from_data(cls, schema: Any, section: str, data: Any) -> Any:
        source = super().from_data(schema, section, data)
        source.sync_run = getattr(_building, "run", None)
        _building.run = None
        return source


def sync_run(source: Any) -> SyncRun:
    """The run behind a source `creator_platform_source` returned."""
    run = getattr(source, "sync_run", None)
    if not isinstance(run, SyncRun):
        raise TypeError("not a source returned by creator_platform_source()")
    return run


def _whole(name: str, value: Any, bounds: tuple[int, int]) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not bounds[0] <= value <= bounds[1]:
        raise ConfigurationError(f"{name} must be a whole number from {bounds[0]} to {bounds[1]}, "
                                 f"got {value!r}")
    return value


def _names(name: str, value: Sequence[str] | str | None) -> tuple[str, ...] | None:
    """A list, or comma-separated text; None means all. Naming nothing is an error."""
    if value is None:
        return None
    items = [value] if isinstance(value, str) else list(value)
    out = tuple(dict.fromkeys(v.strip() for item in items for v in str(item).split(",") if v.strip()))
    if not out:
        raise ConfigurationError(f"{name} names nothing (got {value!r}); leave it out to mean all")
    return out


def _options(
    *, resources: Sequence[str] | str | None, site_ids: Sequence[str] | str | None,
    payouts_path: str | None, page_size: int, pii: str | None, pii_salt: str | None, details: bool,
    full_refresh: bool, full_refresh_every_days: float | None,
    lookback_days: dict[str, float] | None, freeze_finance_schema: bool, host: Runtime,
) -> SourceOptions:
    """The source's arguments, checked, as the options its resources read."""
    names = _names("resources", resources)
    unknown = [r for r in names or () if r not in RESOURCES]
    if unknown:
        raise ConfigurationError(f"unknown resource(s) {', '.join(unknown)}; known: {', '.join(RESOURCES)}")
    if pii is not None and pii not in PII_MODES:
        raise ConfigurationError(f"pii must be one of {', '.join(PII_MODES)}, got {pii!r}")
    try:
        path = normalise_api_path(payouts_path) if payouts_path else None
    except ValueError as exc:
        raise ConfigurationError(f"payouts_path {exc}") from None
    lookback = {k: v for k, v in (lookback_days or {}).items()}
    bad = [k for k in lookback if k not in RESOURCES]
    if bad:
        raise ConfigurationError(f"lookback_days names unknown resource(s) {', '.join(bad)}")
    return SourceOptions(
        resources=names,
        site_ids=_names("site_ids", site_ids),
        page_size=_whole("page_size", page_size, PAGE_SIZE_RANGE),
        pii=pii,  # type: ignore[arg-type]
        pii_salt=pii_salt or "",
        full_refresh=full_refresh,
        lookback_s={k: int(float(v) * DAY_S) for k, v in lookback.items()},
        full_refresh_every_s=(int(float(full_refresh_every_days) * DAY_S)
                              if full_refresh_every_days is not None else None),
        freeze_finance_schema=freeze_finance_schema,
        details=details,
        kept_tables=host.kept_tables,
        pushed_keys=host.pushed_keys,
        payouts_path=path,
        on_page=host.on_page,
        stop=host.stop,
    )


@dlt.source(name=SOURCE_NAME, section=SOURCE_NAME, max_table_nesting=0, root_key=False,
            _impl_cls=CreatorPlatformSource)
def creator_platform_source(
    base_url: str = dlt.config.value,
    client_id: str = dlt.config.value,
    client_secret: TSecretStrValue = dlt.secrets.value,
    site_ids: list[str] | None = None,
    resources: list[str] | None = None,
    payouts_path: str | None = None,
    page_size: int = PAGE_SIZE,
    concurrency: int = CONCURRENCY,
    detail_concurrency: int = DETAIL_CONCURRENCY,
    rate_limit: float | None = None,
    adaptive_rate: bool = ADAPTIVE_RATE,
    pii: str | None = None,
    pii_salt: TSecretStrValue | None = None,
    details: bool = True,
    full_refresh: bool = False,
    full_refresh_every_days: float | None = None,
    lookback_days: dict[str, float] | None = None,
    freeze_finance_schema: bool = False,
    insecure: bool = False,
    max_attempts: int = MAX_ATTEMPTS,
    timeout: float = TIMEOUT_S,
    backoff_initial: float = BACKOFF_INITIAL_S,
    host: Runtime | None = None,
) -> Any:
    """Every collection of every site of a Creator Platform account.

    Args (each one also a key of `[sources.creator_platform]`, env
    `SOURCES__CREATOR_PLATFORM__<KEY>`; `client_secret` and `pii_salt` belong in secrets):
        base_url: `https://api.example.com` (`/v1` is added); plain http only to loopback
            unless `insecure`.
        client_id, client_secret: the OAuth client (client-credentials grant).
        site_ids: only these sites (None: every site the account has).
        resources: only these resources (None: all of `settings.RESOURCES`).
        payouts_path: where the platform serves payouts under /v1 (`/<brand>_payments_payouts`);
            None: found (`payouts_path.py`) and remembered in the payouts resource's state.
        page_size, concurrency, detail_concurrency: page[size], list pages and single-record
            reads in flight.
        rate_limit, adaptive_rate: a hard cap in requests per minute (None: none); find the
            platform's own limit and ride it.
        pii, pii_salt: `hash` or `drop` the email/phone/address columns; the hash's salt.
        details: read per-record includes (order items, course content, form fields).
        full_refresh: re-list everything (pair it with `refresh="drop_resources"` to drop the
            tables); full_refresh_every_days: how often a full listing happens anyway.
        lookback_days: per resource, how far back a deep run re-reads.
        freeze_finance_schema: a new column fails the finance tables instead of altering them.
        max_attempts, timeout, backoff_initial: per-request retries, seconds, first wait.
        host: what a host program passes (see `run.Runtime`); not configuration.

    Sites are discovered (and the token taken) when it is called. Resources the token's scopes
    do not cover are skipped (outcome `skipped`, or `failed` when asked for by name). After
    `pipeline.run(source)`, call `pipelines.postload.finish_sync(pipeline, source)`.
    """
    rt = host or Runtime()
    quiet_hint_merge_warnings()  # json hints over arrow text are intended (see dlt_logs)
    # arrow items carry no `_dlt_load_id` by default: `_is_deleted` and the summaries need it
    dlt.config["normalize.parquet_normalizer.add_dlt_load_id"] = True
    opts = _options(
        resources=resources, site_ids=site_ids, payouts_path=payouts_path, page_size=page_size,
        pii=pii, pii_salt=pii_salt, details=details, full_refresh=full_refresh,
        full_refresh_every_days=full_refresh_every_days, lookback_days=lookback_days,
        freeze_finance_schema=freeze_finance_schema, host=rt,
    )
    for name, value, bounds in (("concurrency", concurrency, CONCURRENCY_RANGE),
                                ("detail_concurrency", detail_concurrency, DETAIL_CONCURRENCY_RANGE),
                                ("max_attempts", max_attempts, MAX_ATTEMPTS_RANGE)):
        _whole(name, value, bounds)
    if rate_limit is not None and rate_limit < 0:
        raise ConfigurationError(f"rate_limit must be at least 0, got {rate_limit!r}")
    try:
        client = CreatorPlatformClient(
            base_url, client_id, Secret(client_secret), rate_limit=rate_limit or None,
            adaptive_rate=adaptive_rate, concurrency=concurrency,
            detail_concurrency=detail_concurrency, timeout=timeout, max_attempts=max_attempts,
            backoff_initial=backoff_initial, insecure=insecure, verify=rt.verify,
            stats=rt.stats, transport=rt.transport,
        )
    except ValueError as exc:
        raise ConfigurationError(str(exc)) from None
    if rt.limiter is not None:  # the host's, shared by its calls of one run
        client.limiter = rt.limiter
    run = SyncRun(client, opts, RunReport(), extract_started=datetime.now(UTC))
    try:
        selected = _resources(run)
    except BaseException:
        run.close()
        raise
    _building.run = run
    return selected


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
    return [
        make_resource(client, res, opts, rep, sites, site_pages if res.name == "sites" else None)
        for res in selected if res.name not in denied
    ]
