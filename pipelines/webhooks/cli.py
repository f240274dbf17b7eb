"""`creator-sync hooks ...` and `creator-sync listen`: thin click layers over hooks_api/server."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click
import orjson

from creator_sync.common.settings import BadSetting, Settings
from creator_sync.common.terminal import (
    EXIT_FAILURE,
    fail,
    interrupt_code,
    note_signal,
    show_retries,
)
from creator_sync.common.warehouse import warehouse_of
from creator_sync.pipelines.webhooks.events import EVENTS
from creator_sync.pipelines.webhooks.urls import (
    MIN_SECRET_CHARS,
    redact_target_url,
    target_secret,
    weak_secret,
)

from ..command_settings import check_base_url, option, warn_unknown_keys
from ..command_settings import settings as command_settings

SECRET_ENV = "CREATOR_SYNC_WEBHOOK_SECRET"


def _settings(ctx: click.Context) -> Settings:
    """Same settings as `creator-sync sync` (flag, env, .dlt/*.toml, default), checked the same
    way: a bad one is a usage error naming flag or key. API flags may sit on the group or the
    subcommand (`_remember` collects them)."""
    return command_settings(**ctx.find_root().meta.get(API_FLAGS, {}))


@contextmanager
def _api(ctx: click.Context) -> Iterator[object]:
    from creator_sync.sources.creator_platform import CreatorPlatformError, api_client

    warn_unknown_keys()
    settings = _settings(ctx)
    base_url = settings["base_url"]
    client_id = settings["client_id"]
    client_secret = settings["client_secret"]
    insecure = settings["insecure"]
    if not base_url:
        raise click.UsageError(
            "no API base URL: run `creator-sync init` once, or pass --base-url or set "
            "sources.creator_platform.base_url"
        )
    check_base_url(settings)  # naming the flag, variable or key
    try:  # the retry settings as `sync` reads them; each retry of a failure is a line on stderr
        client = api_client(
            base_url, client_id or "", client_secret or "", insecure=insecure,
            max_attempts=settings["max_attempts"], backoff_initial=settings["backoff_initial"],
            timeout=settings["timeout"])
    except ValueError as exc:  # no credentials, plain http off loopback
        raise click.UsageError(str(exc)) from None
    show_retries()
    try:
        with client:
            yield client
    except CreatorPlatformError as exc:  # unreachable API, refused credentials, bad answers
        _fail(str(exc))


def _fail(message: str) -> None:
    fail(message, EXIT_FAILURE)


def _remember(ctx: click.Context, param: click.Parameter, value: object) -> object:
    """API flags may sit before or after the subcommand; the innermost given value wins."""
    if value not in (None, False):
        ctx.find_root().meta.setdefault(API_FLAGS, {})[param.name] = value
    return value


API_FLAGS = "creator_sync.webhooks.api"


API_KEYS = ("base_url", "client_id", "client_secret", "insecure")


def api_options(command):  # type: ignore[no-untyped-def]
    for key in reversed(API_KEYS):
        command = option(key, expose_value=False, callback=_remember)(command)
    return command


@click.group("hooks")
@api_options
def hooks_command() -> None:
    """Manage webhook subscriptions (create, list, delete) and print sample payloads."""


def _client_id(ctx: click.Context) -> str:
    return str(_settings(ctx)["client_id"] or "")


ALL_EVENTS = "all"


def _events(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[str]:
    """`--event a,b` (repeatable), or `all`: known events, in the table's order, once each."""
    named = [v.strip() for value in values for v in value.split(",") if v.strip()]
    if not named:
        raise click.BadParameter("names no event", ctx=ctx, param=param)
    if ALL_EVENTS in named:
        return list(EVENTS)
    for name in named:
        if name not in EVENTS:
            known = ", ".join(repr(e) for e in (*EVENTS, ALL_EVENTS))
            raise click.BadParameter(f"{name!r} is not one of {known}", ctx=ctx, param=param)
    return list(dict.fromkeys(named))


def _target(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """`listen`'s secret rule, applied before any hook exists: a hook whose secret `listen`
    refuses would fail every delivery."""
    secret = target_secret(value)
    problem = weak_secret(secret) if secret is not None else None
    if problem:
        raise click.BadParameter(f"its secret path segment (/hooks/<secret>) {problem}",
                                 ctx=ctx, param=param)
    return value


@hooks_command.command("create")
@api_options
@click.option("--event", "events", required=True, multiple=True, callback=_events,
              metavar="EVENT[,EVENT...]",
              help=f"One or more of: {', '.join(EVENTS)}; or {ALL_EVENTS} (repeatable).")
@click.option("--target-url", required=True, callback=_target,
              help="Where deliveries go: https://host/hooks/<secret> (the secret: at least "
                   f"{MIN_SECRET_CHARS} characters, as `listen` requires).")
@option("site_ids", multiple=True,
        help="Only this site (repeatable); a pin set by init (site_ids) holds here too.")
@click.option("--resource-id", default=None, help="Only deliver events for this resource.")
@click.pass_context
def create_command(
    ctx: click.Context, events: list[str], target_url: str, site_ids: tuple[str, ...],
    resource_id: str | None,
) -> None:
    """Subscribe TARGET_URL to each EVENT on each site; a hook already there is kept."""
    from creator_sync.pipelines.webhooks import hooks_api

    def said(hook: dict, created: bool, event: str, site: str) -> None:
        verb = "created hook" if created else "hook already exists:"
        click.echo(f"{verb} {hook['id']} for {event} on site {site}")

    with _api(ctx) as api:
        try:
            # the flag, else the sites sync is pinned to, else every site the credential sees
            pinned = command_settings(site_ids=site_ids)["site_ids"]
            sites = list(pinned or ()) or hooks_api.site_ids(api, client_id=_client_id(ctx))
            done = hooks_api.create_hooks(
                api, events=events, target_url=target_url, sites=sites,
                resource_id=resource_id, client_id=_client_id(ctx), on_hook=said)
        except hooks_api.HookError as exc:
            _fail(str(exc))
    if _plain_http_off_loopback(target_url):
        click.echo(
            "warning: the target URL is plain http:// to a non-loopback host: the secret and the "
            "payloads travel unencrypted; put `listen` behind TLS (see docs/webhooks.md)",
            err=True,
        )
    if len(done) > 1:
        made = sum(1 for _, created, _, _ in done if created)
        click.echo(f"{made} hook(s) created, {len(done) - made} already there "
                   f"({len(events)} event(s) x {len(sites)} site(s))")


def _plain_http_off_loopback(url: str) -> bool:
    from urllib.parse import urlsplit

    from creator_sync.sources.creator_platform import is_loopback

    parts = urlsplit(url)
    return parts.scheme == "http" and not is_loopback(parts.hostname)


@hooks_command.command("list")
@api_options
@click.option("--site-id", default=None, help="Only hooks of this site.")
@click.option("--json", "as_json", is_flag=True, help="Print the hooks as JSON.")
@click.pass_context
def list_command(ctx: click.Context, site_id: str | None, as_json: bool) -> None:
    """List webhook subscriptions."""
    from creator_sync.pipelines.webhooks.hooks_api import HookError, list_hooks

    with _api(ctx) as api:
        try:
            hooks = list_hooks(api, site_id=site_id, client_id=_client_id(ctx))
        except HookError as exc:
            _fail(str(exc))
    if as_json:  # the secret path segment masked, as in the text output
        click.echo(orjson.dumps([masked(hook) for hook in hooks], option=orjson.OPT_INDENT_2).decode())
        return
    for hook in hooks:
        attrs = hook.get("attributes") or {}
        site = ((hook.get("relationships") or {}).get("site") or {}).get("data") or {}
        click.echo(
            f"{hook['id']}\t{attrs.get('event')}\tsite={site.get('id', '-')}\t"
            f"resource={attrs.get('resource_id') or '*'}\t{redact_target_url(attrs.get('target_url')) or '-'}"
        )
    click.echo(f"{len(hooks)} hook(s)")


def masked(hook: dict) -> dict:
    """`hook` with its target URL's secret path segment shown as ***."""
    attrs = hook.get("attributes")
    if not isinstance(attrs, dict) or not attrs.get("target_url"):
        return hook
    return {**hook, "attributes": {**attrs, "target_url": redact_target_url(attrs["target_url"])}}


@hooks_command.command("delete")
@api_options
@click.argument("hook_id")
@click.pass_context
def delete_command(ctx: click.Context, hook_id: str) -> None:
    """Delete the webhook subscription HOOK_ID."""
    from creator_sync.pipelines.webhooks.hooks_api import HookError, delete_hook

    with _api(ctx) as api:
        try:
            delete_hook(api, hook_id, client_id=_client_id(ctx))
        except HookError as exc:
            _fail(str(exc))
    click.echo(f"deleted hook {hook_id}")


@hooks_command.command("sample")
@api_options
@click.argument("event", type=click.Choice(list(EVENTS)), metavar="EVENT")
@click.pass_context
def sample_command(ctx: click.Context, event: str) -> None:
    """Print the sample payload of EVENT (what a delivery's `payload` looks like)."""
    from creator_sync.pipelines.webhooks.hooks_api import HookError, sample

    with _api(ctx) as api:
        try:
            doc = sample(api, event, client_id=_client_id(ctx))
        except HookError as exc:
            _fail(str(exc))
    click.echo(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode())


@click.command("listen")
@click.option("--port", default=8787, show_default=True, type=int, help="0 picks a free port.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Bind address.")
@option("duckdb", type=click.Path(dir_okay=False))
@click.option("--secret", envvar=SECRET_ENV, required=True,
              help=f"Secret path segment of the target URL (or env {SECRET_ENV}).")
@option("dataset")
@option("destination", help="Warehouse to load into: duckdb or postgres.")
@option("postgres_dsn")
@option("pipelines_dir")
@option("pii")
@click.option("--journal", "journal_dir", type=click.Path(file_okay=False), default=None,
              help="Journal directory [default: <duckdb>.webhooks-journal; on postgres "
              "<pipelines dir>/webhooks-journal]. One per listen process.")
@click.option("--batch-size", default=500, show_default=True, type=click.IntRange(1))
@click.option("--batch-interval", default=1.0, show_default=True, type=click.FloatRange(0.01),
              help="Seconds a micro-batch may wait to fill up.")
@click.option("--max-body-bytes", default=1024 * 1024, show_default=True, type=click.IntRange(1))
@click.option("--site-id", default=None,
              help="Site of deliveries whose payload names none (else ?site_id= on the URL).")
@click.option("--requeue-dead-letters", is_flag=True,
              help="First put dead letters that were valid but failed to load (e.g. before a "
              "fix) back into the journal.")
@click.option("-v", "--verbose", is_flag=True, help="Log every micro-batch.")
def listen_command(
    port: int,
    host: str,
    duckdb: str | None,
    secret: str,
    dataset: str | None,
    destination: str | None,
    postgres_dsn: str | None,
    pipelines_dir: str | None,
    pii: str | None,
    journal_dir: str | None,
    batch_size: int,
    batch_interval: float,
    max_body_bytes: int,
    site_id: str | None,
    requeue_dead_letters: bool,
    verbose: bool,
) -> None:
    """Receive webhook deliveries and land them in the warehouse in near real time."""
    from creator_sync.common.terminal import setup_logging
    from creator_sync.pipelines.webhooks.journal import JournalCorrupt, JournalInUse
    from creator_sync.pipelines.webhooks.server import ListenOptions, serve

    problem = weak_secret(secret)
    if problem:
        raise click.BadParameter(problem, param_hint=f"--secret / {SECRET_ENV}")
    warn_unknown_keys()
    settings = command_settings(duckdb=duckdb, dataset=dataset, pii=pii, destination=destination,
                        postgres_dsn=postgres_dsn, pipelines_dir=pipelines_dir)
    warehouse = warehouse_of(settings)
    if warehouse.destination not in ("duckdb", "postgres"):
        raise BadSetting(f"listen loads into duckdb or postgres, not {warehouse.destination!r}",
                         settings.where("destination"))
    if warehouse.destination == "postgres":
        from creator_sync.common.warehouse_db import MissingWarehouseCredentials
        from creator_sync.common.warehouse_db import postgres_dsn as resolve_dsn

        try:
            resolve_dsn(warehouse)  # no credentials anywhere: a usage error now, not retries
        except MissingWarehouseCredentials as exc:
            raise BadSetting(str(exc), settings.where("postgres_dsn")) from None
    setup_logging(True, None)  # a server: its warnings go to stderr (every batch with -v)
    logging.getLogger("creator_sync").setLevel(logging.INFO if verbose else logging.WARNING)
    options = ListenOptions(
        duckdb_path=Path(warehouse.duckdb_path) if warehouse.duckdb_path else None,
        warehouse=warehouse,
        secret=secret,
        host=host,
        port=port,
        dataset=warehouse.dataset,
        pii=settings["pii"],
        pii_salt=str(settings["pii_salt"] or ""),
        requeue_dead_letters=requeue_dead_letters,
        erasure_salt=str(settings["erasure_salt"] or ""),
        journal_dir=Path(journal_dir) if journal_dir else None,
        batch_size=batch_size,
        batch_interval=batch_interval,
        max_body_bytes=max_body_bytes,
        site_id=site_id,
    )
    try:
        serve(options, announce=lambda line: click.echo(line, err=False), on_signal=note_signal)
    except (OSError, ValueError, JournalCorrupt, JournalInUse) as exc:
        _fail(str(exc))
    from creator_sync.common.terminal import exit_now, received_signal

    if received_signal() is not None:  # stopped by a signal after draining: say which
        exit_now(interrupt_code())
