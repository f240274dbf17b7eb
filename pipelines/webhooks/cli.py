"""`creator-sync hooks ...` and `creator-sync listen`: thin click layers over hooks_api/server."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click
import orjson

from pipelines.webhooks.events import EVENTS
from pipelines.webhooks.urls import redact_target_url

SECRET_ENV = "CREATOR_SYNC_WEBHOOK_SECRET"


def _config(key: str) -> str | None:
    """Same lookup as `creator-sync sync`: env SOURCES__CREATOR_PLATFORM__<KEY>, then .dlt/*.toml."""
    from pipelines.factory import SOURCE_SECTION, config_value

    value = config_value(SOURCE_SECTION, key)
    return None if value is None else str(value)


@contextmanager
def _api(ctx: click.Context) -> Iterator[object]:
    from sources.creator_platform.client import CreatorPlatformClient
    from sources.creator_platform.errors import CreatorPlatformError

    obj = ctx.find_root().meta.get(API_FLAGS, {})
    base_url = obj.get("base_url") or _config("base_url")
    client_id = obj.get("client_id") or _config("client_id")
    client_secret = obj.get("client_secret") or _config("client_secret")
    if not base_url:
        raise click.ClickException(
            "no API base URL: pass --base-url or set sources.creator_platform.base_url"
        )
    try:
        client = CreatorPlatformClient(
            base_url,
            client_id or "",
            client_secret or "",
            insecure=bool(obj.get("insecure"))
            or str(_config("insecure")).lower() in ("true", "1", "yes"),
        )
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    try:
        with client:
            yield client
    except CreatorPlatformError as exc:  # unreachable API, refused credentials, bad answers
        _fail(str(exc))


def _fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(1)


def _remember(ctx: click.Context, param: click.Parameter, value: object) -> object:
    """API flags may sit before or after the subcommand; the innermost given value wins."""
    if value not in (None, False):
        ctx.find_root().meta.setdefault(API_FLAGS, {})[param.name] = value
    return value


API_FLAGS = "creator_sync.webhooks.api"


def api_options(command):  # type: ignore[no-untyped-def]
    for option in reversed(
        [
            click.option("--base-url", help="API base URL, e.g. https://api.example.com "
                         "[config sources.creator_platform.base_url]."),
            click.option("--client-id", help="OAuth client id [config client_id]."),
            click.option("--client-secret", help="OAuth client secret (prefer env "
                         "SOURCES__CREATOR_PLATFORM__CLIENT_SECRET or .dlt/secrets.toml)."),
            click.option("--insecure", is_flag=True, default=None,
                         help="Allow plain http:// to a non-loopback host."),
        ]
    ):
        command = option(command)
    for param in command.__click_params__[-4:]:
        param.expose_value = False
        param.callback = _remember
    return command


@click.group("hooks")
@api_options
def hooks_command() -> None:
    """Manage webhook subscriptions (create, list, delete) and print sample payloads."""


def _client_id(ctx: click.Context) -> str:
    return ctx.find_root().meta.get(API_FLAGS, {}).get("client_id") or _config("client_id") or ""


@hooks_command.command("create")
@api_options
@click.option("--event", "event", required=True, help=f"One of: {', '.join(EVENTS)}.")
@click.option("--target-url", required=True, help="Where deliveries go: https://host/hooks/<secret>.")
@click.option("--site-id", required=True, help="Site the hook belongs to.")
@click.option("--resource-id", default=None, help="Only deliver events for this resource.")
@click.pass_context
def create_command(
    ctx: click.Context, event: str, target_url: str, site_id: str, resource_id: str | None
) -> None:
    """Subscribe TARGET_URL to EVENT for a site."""
    from pipelines.webhooks.hooks_api import HookError, create_hook

    with _api(ctx) as api:
        try:
            hook, created = create_hook(
                api,
                event=event,
                target_url=target_url,
                site_id=site_id,
                resource_id=resource_id,
                client_id=_client_id(ctx),
            )
        except HookError as exc:
            _fail(str(exc))
    if _plain_http_off_loopback(target_url):
        click.echo(
            "warning: the target URL is plain http:// to a non-loopback host: the secret and the "
            "payloads travel unencrypted; put `listen` behind TLS (see the README)",
            err=True,
        )
    verb = "created hook" if created else "hook already exists:"
    click.echo(f"{verb} {hook['id']} for {event} on site {site_id}")


def _plain_http_off_loopback(url: str) -> bool:
    from urllib.parse import urlsplit

    from sources.creator_platform.client import is_loopback

    parts = urlsplit(url)
    return parts.scheme == "http" and not is_loopback(parts.hostname)


@hooks_command.command("list")
@api_options
@click.option("--site-id", default=None, help="Only hooks of this site.")
@click.option("--json", "as_json", is_flag=True, help="Print the hooks as JSON.")
@click.pass_context
def list_command(ctx: click.Context, site_id: str | None, as_json: bool) -> None:
    """List webhook subscriptions."""
    from pipelines.webhooks.hooks_api import HookError, list_hooks

    with _api(ctx) as api:
        try:
            hooks = list_hooks(api, site_id=site_id, client_id=_client_id(ctx))
        except HookError as exc:
            _fail(str(exc))
    if as_json:
        click.echo(orjson.dumps(hooks, option=orjson.OPT_INDENT_2).decode())
        return
    for hook in hooks:
        attrs = hook.get("attributes") or {}
        site = ((hook.get("relationships") or {}).get("site") or {}).get("data") or {}
        click.echo(
            f"{hook['id']}\t{attrs.get('event')}\tsite={site.get('id', '-')}\t"
            f"resource={attrs.get('resource_id') or '*'}\t{redact_target_url(attrs.get('target_url')) or '-'}"
        )
    click.echo(f"{len(hooks)} hook(s)")


@hooks_command.command("delete")
@api_options
@click.argument("hook_id")
@click.pass_context
def delete_command(ctx: click.Context, hook_id: str) -> None:
    """Delete the webhook subscription HOOK_ID."""
    from pipelines.webhooks.hooks_api import HookError, delete_hook

    with _api(ctx) as api:
        try:
            delete_hook(api, hook_id, client_id=_client_id(ctx))
        except HookError as exc:
            _fail(str(exc))
    click.echo(f"deleted hook {hook_id}")


@hooks_command.command("sample")
@api_options
@click.argument("event")
@click.pass_context
def sample_command(ctx: click.Context, event: str) -> None:
    """Print the sample payload of EVENT (what a delivery's `payload` looks like)."""
    from pipelines.webhooks.hooks_api import HookError, sample

    with _api(ctx) as api:
        try:
            doc = sample(api, event, client_id=_client_id(ctx))
        except HookError as exc:
            _fail(str(exc))
    click.echo(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode())


@click.command("listen")
@click.option("--port", default=8787, show_default=True, type=int, help="0 picks a free port.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Bind address.")
@click.option("--duckdb", "duckdb_path", type=click.Path(dir_okay=False), default=None,
              help="Warehouse DuckDB file, the one `creator-sync sync` writes "
              "[config creator_sync.duckdb, else creator_platform.duckdb].")
@click.option("--secret", envvar=SECRET_ENV, required=True,
              help=f"Secret path segment of the target URL (or env {SECRET_ENV}).")
@click.option("--dataset", default=None, help="Dataset (schema) [creator_platform], as for sync.")
@click.option("--pii", type=click.Choice(["hash", "drop"]), default=None,
              help="Hash or drop PII columns, as `sync --pii` [config sources.creator_platform.pii].")
@click.option("--journal", "journal_dir", type=click.Path(file_okay=False), default=None,
              help="Journal directory [default: <duckdb>.webhooks-journal].")
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
    duckdb_path: str | None,
    secret: str,
    dataset: str | None,
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
    from pipelines.webhooks.journal import JournalCorrupt, JournalInUse
    from pipelines.webhooks.server import ListenOptions, serve

    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    from pipelines.factory import resolve_warehouse

    warehouse = resolve_warehouse(duckdb=duckdb_path, dataset=dataset)
    if warehouse.duckdb_path is None:
        _fail(f"listen loads into DuckDB only; the configured destination is {warehouse.destination!r}")
    pii = pii or _config("pii")
    if pii not in (None, "hash", "drop"):
        _fail(f"sources.creator_platform.pii must be hash or drop, got {pii!r}")
    options = ListenOptions(
        duckdb_path=Path(warehouse.duckdb_path),
        secret=secret,
        host=host,
        port=port,
        dataset=warehouse.dataset,
        pii=pii,
        pii_salt=_config("pii_salt") or "",
        requeue_dead_letters=requeue_dead_letters,
        journal_dir=Path(journal_dir) if journal_dir else None,
        batch_size=batch_size,
        batch_interval=batch_interval,
        max_body_bytes=max_body_bytes,
        site_id=site_id,
    )
    try:
        serve(options, announce=lambda line: click.echo(line, err=False))
    except (OSError, ValueError, JournalCorrupt, JournalInUse) as exc:
        _fail(str(exc))
