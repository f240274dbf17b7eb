"""`creator-sync init`: set up once, then run every command with no flag.

Checks the credentials (a token, then `/v1/me`), discovers the sites, finds the payouts path
and sets the reporting zone, then writes `.dlt/config.toml` and `.dlt/secrets.toml` in the
working directory (the secret goes to the secrets file only, mode 0600). Nothing is written
unless every check passed. Run again, it shows what is set and updates it in place
(`common.dlt_files`: one copy of each key, the user's other keys and comments kept).
Interactive on a terminal; driven by flags otherwise (or with `--yes`).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from creator_sync.common import dlt_files
from creator_sync.common.settings import APP_SECTION, BadSetting, Settings
from creator_sync.common.terminal import fail
from creator_sync.common.warehouse import Warehouse, warehouse_of
from creator_sync.common.warehouse_db import (
    MissingWarehouseCredentials,
    WarehouseUnavailable,
    connect_postgres,
    warehouse_label,
)
from creator_sync.common.warehouse_db import (
    postgres_dsn as warehouse_dsn,
)
from creator_sync.models.project import DEFAULT_TIMEZONE, TIMEZONE_SHOWN
from creator_sync.pipelines.command_settings import by_key, option
from creator_sync.pipelines.command_settings import settings as command_settings
from creator_sync.sources.creator_platform import DEFAULTS, SOURCE_SECTION, api_client
from creator_sync.sources.creator_platform.client import api_root
from creator_sync.sources.creator_platform.endpoints import RESOURCES
from creator_sync.sources.creator_platform.errors import AuthError, CreatorPlatformError
from creator_sync.sources.creator_platform.payouts_path import Candidate, find_payouts_path
from creator_sync.sources.creator_platform.source import discover_sites, unreadable

# a set-up check, not a sync: a host that does not answer is reported in seconds
CHECK_ATTEMPTS = 2
CHECK_TIMEOUT_S = 10.0
NEXT_COMMAND = "creator-sync sync"


@dataclass
class Found:
    """What the checks learnt from the platform."""

    user: str
    sites: list[tuple[str, str]]  # (id, title)
    payouts_path: str | None
    payouts_source: str
    tried: tuple[str, ...] = ()
    zones: list[str] = field(default_factory=list)  # the sites' own zones, where they say
    payouts_unreadable: str | None = None  # why the credential may not read payouts at all


def _ask(interactive: bool, prompt: str, current: Any, *, secret: bool = False) -> Any:
    if not interactive:
        return current
    if secret:
        answer = click.prompt(f"{prompt}{' [keep the current one]' if current else ''}",
                              default="" if current else None, hide_input=True,
                              show_default=False)
        return answer or current
    return click.prompt(prompt, default=current or None)


def _required(value: Any, what: str, key: str) -> Any:
    if not value:
        item = by_key(key)
        raise BadSetting(f"no {what}: pass {item.flag} (or run init on a terminal, to be asked)",
                         f"flag={item.flag}")
    return value


def _checked(key: str, raw: Any) -> Any:
    item = by_key(key)
    try:
        return item.check(raw)
    except ValueError as exc:
        raise BadSetting(f"{item.flag} {exc}", f"flag={item.flag}") from None


def _zone_answer(raw: str) -> str:
    """A typed zone, checked; a wrong one is asked again (click re-prompts on UsageError)."""
    try:
        return by_key("timezone").check(raw)
    except ValueError as exc:
        raise click.UsageError(f"the zone {exc}") from None


def discover(base_url: str, client_id: str, secret: str, *, insecure: bool,
             configured_path: str | None, transport: Any = None) -> Found:
    """The checks, in order: token, `/v1/me`, sites, payouts path. Raises CreatorPlatformError."""
    with api_client(base_url, client_id, secret, insecure=insecure,
                    max_attempts=CHECK_ATTEMPTS, timeout=CHECK_TIMEOUT_S,
                    transport=transport) as client:
        client.tokens.access_token()
        me = (client.get("/me", resource="me") or {}).get("data") or {}
        attrs = me.get("attributes") or {}
        who = " ".join(str(attrs[k]) for k in ("name",) if attrs.get(k)) or "the credential's user"
        if attrs.get("email"):
            who += f" <{attrs['email']}>"
        if attrs.get("role_level"):
            who += f", {attrs['role_level']}"
        listed = [s for page in discover_sites(client, DEFAULTS.page_size) for s in page.data
                  if isinstance(s, dict) and s.get("id") is not None]
        sites = [(str(s["id"]), str((s.get("attributes") or {}).get("title")
                                    or (s.get("attributes") or {}).get("name") or ""))
                 for s in listed]
        zones = sorted({z for s in listed if (z := (s.get("attributes") or {}).get("timezone"))})
        if not sites:
            return Found(who, [], None, "", zones=zones)
        # a credential without the payouts scope: sync skips payouts, so nothing to look for
        # (and a 404 of a wrong word is not told from a 403 of the right one)
        denied = unreadable([RESOURCES["payouts"]], client.tokens.scopes).get("payouts")
        if denied:
            return Found(who, sites, None, "", zones=zones, payouts_unreadable=denied)
        first = [Candidate(configured_path, "your payouts_path setting")] if configured_path else []
        found = find_payouts_path(client, sites[0][0], first=first)
        return Found(who, sites, found.path, found.source, found.tried, zones)


def _change(key: str, old: Any, new: Any, *, secret: bool = False) -> str:
    shown = "***" if secret else ", ".join(new) if isinstance(new, list | tuple) else new
    if old is None:
        note = "new"
    elif list(old) == list(new) if isinstance(new, list | tuple) else old == new:
        note = "unchanged"
    else:
        note = "changed" if secret else f"was {', '.join(old) if isinstance(old, list) else old}"
    return f"  {key} = {shown}  ({note})"


def _check_warehouse(current: Settings) -> Warehouse:
    """The warehouse the settings name; PostgreSQL is connected to once (a wrong DSN is found
    now, not at the first sync). Says where it is."""
    warehouse = warehouse_of(current)
    if warehouse.destination == "postgres":
        try:
            dsn = warehouse_dsn(warehouse)
        except MissingWarehouseCredentials as exc:
            raise BadSetting(f"{exc}; nothing was written", current.where("postgres_dsn")) from None
        try:
            connect_postgres(dsn).close()
        except WarehouseUnavailable as exc:
            fail(f"{exc}; nothing was written [{current.where('postgres_dsn')}]")
    click.echo(f"warehouse: {warehouse_label(warehouse)}")
    return warehouse


def write_settings(folder: Path, config: dict[str, dict[str, Any]],
                   secrets: dict[str, dict[str, Any]]) -> list[str]:
    """Update the two files; one line per key written (old value named, the secret never)."""
    config_path, secrets_path = (folder / dlt_files.CONFIG_FILE, folder / dlt_files.SECRETS_FILE)
    config_doc, secrets_doc = dlt_files.read(config_path), dlt_files.read(secrets_path)
    lines = []
    for doc, other, values, secret in ((config_doc, secrets_doc, config, False),
                                       (secrets_doc, config_doc, secrets, True)):
        for section, keys in values.items():
            for key, value in keys.items():
                old = dlt_files.get(doc, section, key)
                if old is None:
                    old = dlt_files.get(other, section, key)
                lines.append(_change(f"{section}.{key}", old, value, secret=secret))
            dlt_files.set_keys(doc, section, keys)
            dlt_files.remove_keys(other, section, keys)  # one copy of each key, in its file
    dlt_files.write(config_path, config_doc)
    if secrets or secrets_path.exists():
        dlt_files.write(secrets_path, secrets_doc, private=True)
        dlt_files.ignore_secrets(folder)
    return lines


@click.command("init")
@option("base_url")
@option("client_id")
@option("client_secret", help="OAuth client secret (written to .dlt/secrets.toml only).")
@option("timezone", help="IANA zone of the reporting day and month, e.g. America/New_York "
        "(asked on a terminal).", shown=TIMEZONE_SHOWN)
@option("site_ids", multiple=True,
        help="Pin these sites (repeatable); without it every site the credential sees is synced.")
@option("insecure")
@option("destination", help="Where sync loads and every command reads: duckdb, or postgres "
        "(a database the team shares; checked before anything is written).")
@option("postgres_dsn", help="The PostgreSQL warehouse, postgresql://user:password@host:5432/db "
        "(written to .dlt/secrets.toml only).")
@click.option("--yes", "-y", is_flag=True,
              help="Ask nothing: take the flags, the current settings and what is found.")
def init_command(base_url: str | None, client_id: str | None, client_secret: str | None,
                 timezone: str | None, site_ids: tuple[str, ...], insecure: bool | None,
                 destination: str | None, postgres_dsn: str | None, yes: bool) -> None:
    """Set up this directory: check the credentials, find the sites and the payouts path, and
    write .dlt/config.toml and .dlt/secrets.toml so that every command runs with no flag."""
    interactive = not yes and sys.stdin.isatty()
    current = command_settings(base_url=base_url, client_id=client_id, client_secret=client_secret,
                       timezone=timezone, site_ids=site_ids, insecure=insecure,
                       destination=destination, postgres_dsn=postgres_dsn)
    base = _checked("base_url", _required(
        _ask(interactive, "API base URL", current["base_url"]), "API base URL", "base_url"))
    cid = _checked("client_id", _required(
        _ask(interactive, "Client id", current["client_id"]), "client id", "client_id"))
    secret = _checked("client_secret", _required(
        _ask(interactive, "Client secret", current["client_secret"], secret=True),
        "client secret", "client_secret"))
    try:
        api_root(base, insecure=current["insecure"])
    except ValueError as exc:
        raise BadSetting(str(exc), "flag=--base-url") from None
    # checked before the platform is asked anything; unset: the models' own default, written down
    zone = current["timezone"] or DEFAULT_TIMEZONE
    click.echo(f"checking {base} ...")
    try:
        found = discover(base, cid, secret, insecure=current["insecure"],
                         configured_path=current["payouts_path"])
    except AuthError as exc:
        fail(f"the platform refused client {cid!r}: check the client id and secret ({exc}); "
             "nothing was written")
    except CreatorPlatformError as exc:
        fail(f"{exc}; nothing was written")
    pinned = list(current["site_ids"] or ())  # the flag's, else a pin set before
    known = [sid for sid, _ in found.sites]
    unknown = [s for s in pinned or () if s not in known]
    if unknown:
        raise BadSetting(f"site {', '.join(unknown)} is not one of this account's sites "
                         f"({', '.join(known) or 'none'}); nothing was written", "flag=--site-id")
    if interactive and not timezone:
        hint = f" (the sites say {', '.join(found.zones)})" if found.zones else ""
        zone = click.prompt(f"Reporting time zone{hint}", default=zone, value_proc=_zone_answer)

    click.echo(f"credentials: ok ({found.user})")
    titles = ", ".join(f"{sid} {title}".strip() for sid, title in found.sites)
    scope = (f"pinned to {', '.join(pinned)}" + ("" if site_ids else " (site_ids, set before)")
             if pinned else "every site is synced")
    click.echo(f"sites: {len(found.sites)} ({titles or 'none'}); {scope}")
    if found.payouts_path:
        click.echo(f"payouts: {found.payouts_path} (from {found.payouts_source})")
    elif found.payouts_unreadable:
        click.echo(f"payouts: not read ({found.payouts_unreadable}; sync skips them)")
    elif found.sites:
        click.echo(f"warning: no payouts path answered (tried {', '.join(found.tried)}): payouts "
                   "will fail until you set payouts_path in .dlt/config.toml", err=True)
    click.echo(f"reporting time zone: {zone}")
    warehouse = _check_warehouse(current)

    source: dict[str, Any] = {"base_url": base, "client_id": cid}
    if found.payouts_path:
        source["payouts_path"] = found.payouts_path
    if site_ids:
        source["site_ids"] = pinned
    if current.given("insecure"):  # every later command needs it too
        source["insecure"] = True
    folder = Path.cwd() / dlt_files.DLT_DIR
    # a secret kept in the environment (CI, a secrets manager) stays there: not copied to disk
    from_env = (not client_secret and os.environ.get(by_key("client_secret").env) == secret)
    secrets: dict[str, dict[str, Any]] = ({} if from_env else
                                          {SOURCE_SECTION: {"client_secret": secret}})
    sync_keys: dict[str, Any] = {"timezone": zone}
    if current.given("destination"):
        sync_keys["destination"] = warehouse.destination
    if current.given("postgres_dsn"):  # a DSN kept in the environment stays there
        secrets[APP_SECTION] = {"postgres_dsn": warehouse.postgres_dsn}
    try:
        lines = write_settings(folder, {SOURCE_SECTION: source, APP_SECTION: sync_keys},
                               secrets)
    except (OSError, dlt_files.UnreadableToml) as exc:
        fail(f"cannot write the settings: {exc}")
    written = f"{dlt_files.DLT_DIR}/{dlt_files.CONFIG_FILE}"
    if not from_env:
        written += f" and {dlt_files.DLT_DIR}/{dlt_files.SECRETS_FILE} (mode 0600, the secret only)"
    click.echo(f"wrote {written}:")
    for line in lines:
        click.echo(line)
    if from_env:
        click.echo(f"  client_secret: from {by_key('client_secret').env} (kept there, not written)")
    click.echo(f"next: {NEXT_COMMAND}")
