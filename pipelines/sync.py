"""`creator-sync sync`: one locked, resumable run of the source into the warehouse.

Steps: lock the pipeline -> restore state from the destination -> finish any pending load
package left by a crashed run -> extract (API) -> normalise -> load (under the warehouse lock)
-> mark deleted dimension rows, drop link markers -> revoke the token -> print a summary.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import signal
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from sources.creator_platform import (
    CreatorPlatformClient,
    CreatorPlatformError,
    RunReport,
    Secret,
    SourceOptions,
    creator_platform_source,
)
from sources.creator_platform.client import api_root
from sources.creator_platform.refresh import TARGET, customer_refresh, stale_customers
from sources.creator_platform.settings import DAY_S, RESOURCES
from sources.creator_platform.source import Outcome
from sources.creator_platform.stats import RunStats

from .config import (
    SETTINGS,
    SOURCE_SECTION,
    BadSetting,
    lookback_days,
    setting,
    warn_unknown_keys,
)
from .factory import (
    HOLD_OPEN_MAX_BYTES,
    Warehouse,
    build_pipeline,
    held_open,
    package_bytes,
    release_free_memory,
    resolve_warehouse,
)
from .locking import pipeline_lock, warehouse_lock
from .postload import (
    data_tables,
    dedupe_appended,
    drop_link_markers,
    kept_tables,
    loaded_counts,
    mark_deleted,
    row_counts,
    write_sync_resources,
)
from .progress import progress_reporter
from .terminal import (
    describe,
    reported_failures,
    setup_logging,
    signal_name,
)

log = logging.getLogger("creator_sync.sync")


@dataclass
class SyncSettings:
    """Everything one sync needs, already resolved (flags > env > .dlt files > defaults)."""

    base_url: str
    client_id: str
    client_secret: Secret
    warehouse: Warehouse
    resources: tuple[str, ...] | None = None
    site_ids: tuple[str, ...] | None = None
    full_refresh: bool = False
    concurrency: int = 4
    detail_concurrency: int = 16
    rate_limit: float | None = None
    adaptive_rate: bool = True
    page_size: int = 100
    pii: str | None = None
    pii_salt: Secret = field(default_factory=lambda: Secret(""))
    insecure: bool = False
    verify: bool = True
    lock_timeout: float = 0.0
    lookback_s: dict[str, int] = field(default_factory=dict)
    full_refresh_every_s: int | None = None
    freeze_finance_schema: bool = False
    details: bool = True
    max_attempts: int = 8
    timeout: float = 30.0
    backoff_initial: float = 0.25
    payouts_path: str | None = None  # None: the default /platform_payments_payouts

    def __repr__(self) -> str:  # secrets are Secret already; keep the repr short anyway
        return f"SyncSettings(base_url={self.base_url!r}, client_id={self.client_id!r}, warehouse={self.warehouse!r})"


@dataclass
class SyncResult:
    tables: dict[str, tuple[int, int]]  # table -> (new rows, updated rows)
    stats: RunStats
    load_ids: list[str]
    deleted: dict[str, int]
    sites: list[str]
    plans: dict[str, str]
    warehouse: Warehouse
    pending_loaded: int = 0
    outcomes: dict[str, Outcome] = field(default_factory=dict)  # resource -> how it ended
    notices: list[str] = field(default_factory=list)
    without_lines: dict[str, int] = field(default_factory=dict)  # resource -> detail reads

    @property
    def failed(self) -> dict[str, str]:
        """Resources that failed in this run -> why (the others were loaded and committed)."""
        return {n: o.reason or "failed" for n, o in self.outcomes.items() if o.status == "failed"}


def _flag_values(flags: dict[str, Any]) -> dict[str, Any]:
    """Click's parameter names -> setting keys (None: the flag was not given)."""
    out = {key: flags.get(key) for key in flags}
    out["site_ids"] = flags.get("site_id") or None
    out["details"] = False if flags.get("no_details") else None
    out["insecure"] = True if flags.get("insecure") else None
    return out


def resolve_settings(**flags: Any) -> SyncSettings:
    """Merge CLI flags (None = not given) with dlt config/secrets and defaults, each checked
    as `pipelines.config.SETTINGS` says; a bad one is a usage error naming the flag or key."""
    given = _flag_values(flags)
    fields = {f.name for f in dataclasses.fields(SyncSettings)}
    values = {
        item.key: setting(SOURCE_SECTION, item.key, given.get(item.key))
        for item in SETTINGS
        if item.section == SOURCE_SECTION and item.key in fields
    }
    if not values["base_url"]:
        raise BadSetting("no base URL: pass --base-url or set base_url", f"key={SOURCE_SECTION}.base_url")
    if not values["client_id"]:
        raise BadSetting("no client id: pass --client-id or set client_id", f"key={SOURCE_SECTION}.client_id")
    if not values["client_secret"]:
        raise BadSetting(
            "no client secret: set SOURCES__CREATOR_PLATFORM__CLIENT_SECRET or "
            "[sources.creator_platform] client_secret in .dlt/secrets.toml (or --client-secret)",
            f"key={SOURCE_SECTION}.client_secret",
        )
    try:
        api_root(values["base_url"], insecure=values["insecure"])
    except ValueError as exc:
        where = "flag=--base-url" if given.get("base_url") else f"key={SOURCE_SECTION}.base_url"
        raise BadSetting(str(exc), where) from None
    lock_timeout = float(flags.get("lock_timeout") or 0)
    if lock_timeout < 0:
        raise BadSetting(f"--lock-timeout must be at least 0, got {lock_timeout:g}", "flag=--lock-timeout")
    every_days = setting(SOURCE_SECTION, "full_refresh_every_days")
    return SyncSettings(**{
        **values,
        "client_secret": Secret(values["client_secret"]),
        "pii_salt": Secret(values["pii_salt"]),
        "rate_limit": values["rate_limit"] or None,  # 0 = no limit
        "warehouse": resolve_warehouse(
            duckdb=flags.get("duckdb"),
            dataset=flags.get("dataset"),
            destination=flags.get("destination"),
            pipelines_dir=flags.get("pipelines_dir"),
        ),
        "full_refresh": bool(flags.get("full_refresh")),
        "lock_timeout": lock_timeout,
        "lookback_s": {k: int(v * DAY_S) for k, v in lookback_days().items()},
        "full_refresh_every_s": int(every_days * DAY_S) if every_days is not None else None,
    })


KILL_ENV = "CREATOR_SYNC_KILL_AT"


def _kill_point(name: str) -> None:
    """Crash drills: `CREATOR_SYNC_KILL_AT=<step>` SIGKILLs the process at that step."""
    if os.environ.get(KILL_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)


@contextlib.contextmanager
def _warehouse_guard(warehouse: Warehouse) -> Iterator[None]:
    if warehouse.duckdb_path:
        with warehouse_lock(warehouse.duckdb_path):
            yield
    else:
        yield


def run_sync(
    settings: SyncSettings, *, show_progress: bool | None = None, transport: Any = None,
    on_locked: Callable[[], None] | None = None,
) -> SyncResult:
    """Run one sync. Raises CreatorPlatformError / LockTimeout / dlt errors on failure.

    `transport` (an httpx transport) is for tests that serve the API in memory. `on_locked`
    runs once the pipeline lock is held (the CLI opens its log there, never before).
    """
    wh = settings.warehouse
    stats = RunStats()
    quiet_dlt_hint_warnings()
    with pipeline_lock(wh.pipelines_dir, wh.pipeline_name, timeout=settings.lock_timeout):
        if on_locked is not None:
            on_locked()
        # a new warehouse (or a full refresh) is filled by appends: see build_pipeline
        fresh = settings.full_refresh or (wh.duckdb_path is not None and not Path(wh.duckdb_path).exists())
        pipeline = build_pipeline(wh, fresh_load=fresh)
        with _warehouse_guard(wh), held_open(wh):
            pipeline.sync_destination()
        pending_loaded = _finish_pending(pipeline, wh)
        kept: frozenset[str] | None = None
        if wh.destination == "duckdb":  # append loads of new tables (crash repair is DuckDB SQL)
            dropped = (settings.resources or tuple(RESOURCES)) if settings.full_refresh else ()
            with _warehouse_guard(wh):
                kept = kept_tables(pipeline, dropped)
        report = RunReport()
        options = SourceOptions(
            resources=settings.resources,
            site_ids=settings.site_ids,
            page_size=settings.page_size,
            pii=settings.pii,  # type: ignore[arg-type]
            pii_salt=settings.pii_salt.reveal(),
            full_refresh=settings.full_refresh,
            lookback_s=settings.lookback_s,
            full_refresh_every_s=settings.full_refresh_every_s,
            freeze_finance_schema=settings.freeze_finance_schema,
            details=settings.details,
            kept_tables=kept,
            payouts_path=settings.payouts_path,
        )
        client = CreatorPlatformClient(
            settings.base_url,
            settings.client_id,
            settings.client_secret,
            rate_limit=settings.rate_limit,
            adaptive_rate=settings.adaptive_rate,
            concurrency=settings.concurrency,
            detail_concurrency=settings.detail_concurrency,
            timeout=settings.timeout,
            max_attempts=settings.max_attempts,
            backoff_initial=settings.backoff_initial,
            insecure=settings.insecure,
            verify=settings.verify,
            stats=stats,
            transport=transport,
        )
        extract_started = datetime.now(UTC)  # rows pushed after this are not the listing's to judge
        with client, progress_reporter(stats, enabled=show_progress):
            source = creator_platform_source(client, options, report)
            pipeline.extract(
                source,
                refresh="drop_resources" if settings.full_refresh else None,
                workers=max(2, settings.concurrency),
            )
            _refresh_customers(pipeline, client, options, report)
        _kill_point("extracted")
        log.info("extracted: %s requests, %s retries", stats.requests, stats.retries)
        release_free_memory()  # the load's DuckDB memory must not stack on extraction's leftovers
        pipeline.normalize()
        _kill_point("normalized")
        tables = list(data_tables(pipeline))
        # a small package (a scheduled incremental run) loads through one open database
        small = not fresh and package_bytes(wh) <= HOLD_OPEN_MAX_BYTES
        with _warehouse_guard(wh), held_open(wh, enabled=small):
            before = row_counts(pipeline, tables)
            info = pipeline.load()
            _kill_point("loaded")
            load_ids = list(info.loads_ids)
            deleted = mark_deleted(pipeline, report.complete, load_ids, extract_started, report.listed)
            drop_link_markers(pipeline)
            after = row_counts(pipeline, tables)
            loaded = loaded_counts(pipeline, tables, load_ids)
            write_sync_resources(pipeline, report.outcomes, report.rows, extract_started)
    summary = {}
    for table in sorted(set(stats.rows) | set(loaded)):
        new = max(0, after.get(table, 0) - before.get(table, 0))
        summary[table] = (new, max(0, loaded.get(table, 0) - new))
    return SyncResult(
        tables=summary,
        stats=stats,
        load_ids=load_ids,
        deleted=deleted,
        sites=report.sites,
        plans=dict(report.plans),
        warehouse=wh,
        pending_loaded=pending_loaded,
        outcomes=dict(report.outcomes),
        notices=list(report.notices),
        without_lines=dict(report.without_lines),
    )


def _refresh_customers(pipeline: Any, client: Any, options: SourceOptions, report: RunReport) -> None:
    """Dependent refresh: customers named by this run's new money, re-read by id (refresh.py)."""
    outcome = report.outcomes.get(TARGET)
    if outcome is None or outcome.status != "synced":
        return  # not asked for, not permitted, or failed: its state was not advanced either
    todo = stale_customers(report)

    def failed(exc: CreatorPlatformError) -> None:
        reason = " ".join(f"re-reading customers named by new money failed: {exc}".split())
        report.set_outcome(TARGET, "failed", reason)

    if todo:
        pipeline.extract(customer_refresh(client, todo, pii=options.pii, pii_salt=options.pii_salt,
                                          on_error=failed))


def _finish_pending(pipeline: Any, wh: Warehouse) -> int:
    """Load packages a killed run left behind (they carry their state), before new work."""
    if not pipeline.has_pending_data:
        return 0
    pipeline.normalize()
    with _warehouse_guard(wh):
        info = pipeline.load()
        repaired = dedupe_appended(pipeline)  # a job re-run after the kill appended twice
        if repaired:
            log.warning("removed rows loaded twice by an interrupted run: %s", repaired)
        drop_link_markers(pipeline)
    return len(info.loads_ids)


# ------------------------------------------------------------------ CLI
def format_summary(result: SyncResult) -> str:
    s = result.stats
    lines = [f"{'table':<34}{'new':>10}{'updated':>10}"]
    for table, (new, updated) in result.tables.items():
        lines.append(f"{table:<34}{new:>10}{updated:>10}")
    deleted = sum(result.deleted.values())
    lines.append(
        f"sites: {len(result.sites)}  requests: {s.requests}  retries: {s.retries}  "
        f"429s: {s.throttled}  marked deleted: {deleted}  time: {s.elapsed:.1f}s"
    )
    if s.rate is not None:
        lines.append(s.rate.describe())
    if result.pending_loaded:
        lines.append(f"finished {result.pending_loaded} load package(s) left by an interrupted run")
    lines += result.notices
    for name, count in result.without_lines.items():
        lines.append(f"{name}: {count} detail read(s) carried no lines (no `transactions`): "
                     "their lines are not in the warehouse")
    target = result.warehouse.duckdb_path or result.warehouse.destination
    lines.append(f"warehouse: {target} (dataset {result.warehouse.dataset})")
    return "\n".join(lines)


class _DropHintMerge(logging.Filter):
    """dlt warns that our declared hints (json, precision) win over arrow's: that is the intent."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "when merging arrow schema with dlt schema" not in record.getMessage()


def quiet_dlt_hint_warnings() -> None:
    dlt_logger = logging.getLogger("dlt")
    if not any(isinstance(f, _DropHintMerge) for f in dlt_logger.filters):
        dlt_logger.addFilter(_DropHintMerge())


def one_line(exc: BaseException, verbose: bool = False) -> str:
    """The most specific message in an exception chain, on one line."""
    return describe(exc, verbose)


def pending_packages(wh: Warehouse) -> dict[str, int]:
    """Load packages of this pipeline not loaded yet, per stage folder (what a stopped run kept)."""
    root = Path(wh.pipelines_dir) / wh.pipeline_name
    out = {}
    for stage, folder in (("extracted", "normalize/extracted"), ("normalized", "load/new"),
                          ("loading", "load/normalized")):
        path = root / folder
        count = sum(1 for p in path.iterdir() if p.is_dir()) if path.is_dir() else 0
        if count:
            out[stage] = count
    return out


def interrupted_line(code: int, wh: Warehouse) -> str:
    """What an interrupted sync kept, for the one line it prints."""
    pending = pending_packages(wh)
    if pending.get("loading"):
        kept = ("part of this run's data is loaded and the rest is kept in a pending load "
                "package; the next sync finishes loading it first")
    elif pending:
        kept = ("this run's extracted data is kept in a pending load package; the next sync "
                "loads it first")
    else:
        kept = ("nothing of this run was loaded; the warehouse keeps what earlier syncs loaded "
                "and the next sync starts this one over")
    return f"interrupted by {signal_name(code)}: {kept} [pipeline={wh.pipelines_dir}]"


def log_path(wh: Warehouse) -> Path:
    return Path(wh.pipelines_dir) / "last-sync.log"


@click.command("sync")
@click.option("--base-url", help="API base URL, e.g. https://api.example.com (the /v1 is added).")
@click.option("--client-id", help="OAuth client id.")
@click.option("--client-secret", help="OAuth client secret (prefer env or .dlt/secrets.toml).")
@click.option("--duckdb", "duckdb", help="DuckDB file [creator_platform.duckdb].")
@click.option("--dataset", help="Dataset (schema) name [creator_platform].")
@click.option("--destination", help="Any dlt destination name [duckdb].")
@click.option("--resources", help="Comma-separated resources to sync [all].")
@click.option("--site-id", "site_id", multiple=True, help="Only these sites (repeatable) [discover].")
@click.option("--full-refresh", is_flag=True, help="Drop state and tables of the selected resources and start over.")
@click.option("--concurrency", type=int, help="List-page requests in flight [4].")
@click.option("--detail-concurrency", type=int,
              help="Single-record (include=) reads in flight [16]; the rate limit bounds both.")
@click.option("--rate-limit", type=float,
              help="Hard cap, requests per minute [none: find the platform's limit].")
@click.option("--adaptive-rate/--fixed-rate", "adaptive_rate", default=None,
              help="Find the platform's limit and ride it [adaptive]; fixed: pace at "
              "--rate-limit exactly, or not at all.")
@click.option("--page-size", type=int, help="page[size] to ask for [100].")
@click.option("--pii", help="hash or drop: email/phone/address columns.")
@click.option("--insecure", is_flag=True, default=None, help="Allow plain http:// to a non-loopback host.")
@click.option("--lock-timeout", type=float, default=0, show_default=True, help="Seconds to wait for a running sync of the same pipeline.")
@click.option("--payouts-path", help="Payouts path under /v1 on your platform, "
              "/<brand>_payments_payouts [/platform_payments_payouts].")
@click.option("--no-details", "no_details", is_flag=True, default=None,
              help="Skip per-record include reads (order_items, modules/lessons/media, fields).")
@click.option("--pipelines-dir", help="Where dlt keeps local pipeline state.")
@click.option("--verbose", "-v", is_flag=True, help="Debug log on stderr.")
@click.option("--progress/--no-progress", default=None, help="Progress bar [on a TTY].")
def sync_command(verbose: bool, progress: bool | None, **flags: Any) -> None:
    """Sync every collection of every site into the warehouse (incrementally).

    Exit status: 0 success, 1 failure at run time, 2 usage or configuration error,
    130 SIGINT, 143 SIGTERM.
    """
    with reported_failures(verbose):
        warn_unknown_keys()
        settings = resolve_settings(**flags)
    log_file = log_path(settings.warehouse)
    with reported_failures(verbose, log_file,
                           interrupted=lambda code: interrupted_line(code, settings.warehouse)):
        # the log is opened under the lock: a sync that loses the race must not touch the
        # winner's log
        result = run_sync(settings, show_progress=progress,
                          on_locked=lambda: setup_logging(verbose, log_file, what="sync"))
    click.echo(format_summary(result))
    if result.failed:
        click.echo(f"error: {failure_line(result)}", err=True)
        sys.exit(1)


def failure_line(result: SyncResult) -> str:
    """One line naming each failed resource and why; the others were loaded."""
    failed = result.failed
    reasons = "; ".join(f"{name}: {reason}" for name, reason in failed.items())
    return f"{len(failed)} resource(s) failed (the others were loaded and committed): {reasons}"
