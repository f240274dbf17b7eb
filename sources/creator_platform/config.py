"""Every setting creator-sync reads, declared once: the one table, `SETTINGS`.

Each key is written here with its section, kind (type and range: `kinds.py`), default, flag,
help and whether it is a secret; nothing else declares it. From this table come
`creator_platform_source`'s signature (`source_signature`, the keys of
`[sources.creator_platform]`, as dlt verified sources take them), every command's click option
(`option`), the dataclasses that carry resolved values (`settings_class`), the unknown-key
warnings and the rows of docs/setup.md (tests/test_setup_doc.py). `[creator_sync]` keys (the
warehouse, the sync's rounds, the models' zone) live in the same table so that no second one
exists; the source reads only its own section.

A value is checked by its kind's one function wherever it enters (`checked`): a flag, the
environment, `.dlt/*.toml` (`Settings`, for commands) or a Python caller of the source; a bad one
raises `BadSetting`, one line naming the key and where it came from, a usage error (exit 2).

Values are looked up with dlt's accessors (env `SOURCES__CREATOR_PLATFORM__<KEY>` first, then
`.dlt/secrets.toml`, `.dlt/config.toml`), but outside dlt's config trace: dlt records every value
resolved through its accessors and pickles the record into the pipeline's `trace.pickle`; a
secret read with the plain config accessor would be kept there in clear text.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import inspect
import os
import tomllib
import types
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import click

from .errors import ConfigurationError
from .kinds import (
    Check,
    api_path,
    boolean,
    choice,
    dataset_name,
    destination_name,
    names,
    number,
    resource_names,
    text,
    whole,
    zone_name,
)
from .settings import RESOURCES, SOURCE_NAME

SOURCE_SECTION = f"sources.{SOURCE_NAME}"
SYNC_SECTION = "creator_sync"
LOOKBACK_SECTION = f"{SOURCE_SECTION}.lookback_days"


class BadSetting(ConfigurationError, click.UsageError):
    """A flag or configuration value that cannot be used: a usage error (exit 2), for the CLI
    and for a Python caller of the source alike (a `ConfigurationError`)."""

    exit_code = 2

    def __init__(self, what: str, where: str) -> None:
        self.where = where
        ConfigurationError.__init__(self, f"{what} [{where}]")

    def __str__(self) -> str:
        return self.message

    def format_message(self) -> str:
        return self.message


# ---------------------------------------------------------------- the settings
@dataclass(frozen=True)
class Setting:
    """One key: where it lives, its kind (type and range), its default and its flag.

    `help` and `shown` (the default in words, when `default` alone would not say it) are what
    `--help` and docs/setup.md print. `required`: no default, the run cannot start without it.
    `client`: a knob of the API client (`CreatorPlatformClient`), not of the resources.
    """

    section: str
    key: str
    check: Check
    default: Any = None
    flag: str | None = None
    secret: bool = False
    help: str = ""
    shown: str | None = None
    required: bool = False
    client: bool = False

    @property
    def path(self) -> str:
        return f"{self.section}.{self.key}"

    @property
    def env(self) -> str:
        return self.path.replace(".", "__").upper()

    @property
    def default_text(self) -> str:
        if self.required:
            return "required"
        if self.shown is not None:
            return self.shown
        if isinstance(self.default, bool):
            return "yes" if self.default else "no"
        return "none" if self.default is None else f"{self.default:g}" if isinstance(
            self.default, float) else str(self.default)


S, W = SOURCE_SECTION, SYNC_SECTION
DEFAULT_DATASET = "creator_platform"  # the raw tables' schema; the DuckDB file is named after it
SETTINGS: tuple[Setting, ...] = (
    # the API and how it is read: [sources.creator_platform], the source's arguments
    Setting(S, "base_url", text, flag="--base-url", required=True, client=True,
            help="API base URL, e.g. https://api.example.com (the /v1 is added)."),
    Setting(S, "client_id", text, flag="--client-id", required=True, client=True,
            help="OAuth client id."),
    Setting(S, "client_secret", text, flag="--client-secret", secret=True, required=True,
            client=True, help="OAuth client secret (prefer env or .dlt/secrets.toml)."),
    Setting(S, "site_ids", names, flag="--site-id", help="Only these sites (repeatable).",
            shown="every site the credential sees"),
    Setting(S, "resources", resource_names, flag="--resources",
            help=f"Comma-separated resources to sync, of: {', '.join(RESOURCES)}.", shown="all"),
    Setting(S, "payouts_path", api_path, flag="--payouts-path",
            help="Payouts path under /v1 on your platform, /<brand>_payments_payouts; unset: "
            "found by each sync (as `init` does), remembered in the pipeline's state and named "
            "in the summary.",
            shown="found: the brand word of the host, of the processor in transactions, "
            "else platform"),
    Setting(S, "concurrency", whole(1, 64), 4, flag="--concurrency", client=True,
            help="List-page requests in flight."),
    Setting(S, "detail_concurrency", whole(1, 256), 16, flag="--detail-concurrency", client=True,
            help="Single-record (include=) reads in flight; the rate limit bounds both."),
    Setting(S, "page_size", whole(1, 1000), 100, flag="--page-size", help="page[size] to ask for."),
    Setting(S, "rate_limit", number(0, zero_is_none=True), None, flag="--rate-limit", client=True,
            help="Hard cap, requests per minute (0: none).", shown="none: find the platform's limit"),
    Setting(S, "adaptive_rate", boolean, True, flag="--adaptive-rate/--fixed-rate", client=True,
            help="Find the platform's limit and ride it; fixed: pace at --rate-limit exactly, "
            "or not at all.", shown="adaptive"),
    Setting(S, "pii", choice("hash", "drop"), flag="--pii",
            help="hash or drop: email, phone, address and cardholder columns, and people's "
            "names (contacts, customers, form submissions).",
            shown="kept as sent"),
    Setting(S, "pii_salt", text, secret=True, help="Salt of `--pii hash` (a secret).",
            shown="none"),
    Setting(S, "insecure", boolean, False, flag="--insecure", client=True,
            help="Allow plain http:// to a non-loopback host."),
    Setting(S, "details", boolean, True, flag="--no-details",
            help="Skip per-record single reads: payout details with their lines, course "
            "modules/lessons/media, form fields; order items only on a platform without their list.",
            shown="read them"),
    Setting(S, "freeze_finance_schema", boolean, False,
            help="A new column fails the finance tables instead of altering them."),
    Setting(S, "full_refresh_every_days", number(0),
            help="Days between full listings of look-back resources.",
            shown="each resource's own (7)"),
    Setting(S, "max_attempts", whole(1, 100), 8, client=True,
            help="Attempts per request, retries included."),
    Setting(S, "backoff_initial", number(0, strict=True), 0.25, client=True,
            help="Seconds of the first retry's wait, doubled each time."),
    Setting(S, "timeout", number(0, strict=True), 30.0, client=True,
            help="Seconds per request."),
    # the warehouse and the pipeline's local state: [creator_sync]
    Setting(W, "duckdb", text, f"{DEFAULT_DATASET}.duckdb", flag="--duckdb",
            help="DuckDB file of the warehouse (when the destination is duckdb)."),
    Setting(W, "dataset", dataset_name, DEFAULT_DATASET, flag="--dataset",
            help="Dataset (schema) holding the raw tables."),
    Setting(W, "destination", destination_name, "duckdb", flag="--destination",
            help="Where the raw tables are loaded: any dlt destination name."),
    Setting(W, "pipelines_dir", text, flag="--pipelines-dir",
            help="Where dlt keeps local pipeline state.",
            shown="<folder of the DuckDB file>/.creator-sync/<its name>"),
    Setting(W, "duckdb_memory_limit", text, "1GB", help="DuckDB's memory limit while loading."),
    Setting(W, "duckdb_threads", whole(1, 1024), 1, help="DuckDB's threads while loading."),
    Setting(W, "duckdb_vacuum_tasks", whole(0, 1024), help="DuckDB's vacuum tasks while loading.",
            shown="DuckDB's own"),
    Setting(W, "load_workers", whole(1, 64), 1, help="dlt's load workers."),
    # a long sync keeps its progress (pipelines/sync.py, docs/large-accounts.md)
    Setting(W, "checkpoint_every", number(1, high=86400), 30.0, flag="--checkpoint-every",
            help="Seconds of reading between commits of what was read (resume point)."),
    Setting(W, "max_duration", number(0, strict=True), None, flag="--max-duration",
            help="Stop reading after this many seconds, commit, exit 0 (`partial`); the next "
            "sync goes on from there.", shown="none"),
    # people the platform deleted: their personal fields erased (pipelines/erasure.py)
    Setting(W, "deleted_people", choice("erase", "keep"), "erase",
            help="erase: a contact, customer or note the platform deleted keeps its keys and "
            "money, its personal fields are emptied; keep: only flagged `_is_deleted`."),
    # figures whose newest record is older than this are marked stale (models, report)
    Setting(W, "stale_after_days", number(0, strict=True, high=3650), 2.0,
            flag="--stale-after-days",
            help="Mark the figures stale when the newest record is older than this many days."),
    # the reporting day and month of the models (models, demo; the report shows the build's)
    Setting(W, "timezone", zone_name, "UTC", flag="--timezone",
            help="IANA zone of the reporting day and month, e.g. America/New_York."),
)
SOURCE_SETTINGS = tuple(s for s in SETTINGS if s.section == SOURCE_SECTION)
# each key's default, by name (`DEFAULTS.page_size`): for a function that takes the knob too
DEFAULTS = types.SimpleNamespace(**{s.key: s.default for s in SETTINGS})
# [sources.creator_platform.lookback_days]: one key per resource, days
LOOKBACK_CHECK = number(0)
_BY_PATH = {s.path: s for s in SETTINGS}
_BY_KEY = {s.key: s for s in SETTINGS}
assert len(_BY_KEY) == len(SETTINGS), "a key may live in one section only: Settings looks keys up"


def spec(section: str, key: str) -> Setting:
    return _BY_PATH[f"{section}.{key}"]


def by_key(key: str) -> Setting:
    return _BY_KEY[key]


@contextlib.contextmanager
def _untraced() -> Iterator[None]:
    """Keep our lookups out of dlt's resolved-values trace (pickled with the pipeline)."""
    from dlt.common.configuration.utils import get_resolved_traces

    traces = get_resolved_traces()
    was = traces.logging_enabled
    traces.logging_enabled = False
    try:
        yield
    finally:
        traces.logging_enabled = was


def lookup(path: str, *, secret: bool = False) -> Any:
    """The raw value at `path` (env first, then .dlt/*.toml), None when unset."""
    import dlt

    with _untraced():
        value = None if secret else dlt.config.get(path)
        if value is None:
            try:
                value = dlt.secrets.get(path)
            except Exception:  # a provider that cannot be read is the same as a missing key
                value = None
    return value


def checked(item: Setting, raw: Any, where: str) -> Any:
    """`raw` through its kind's check, wherever it came from (`where`: `flag=--page-size`,
    `env=...`, `key=sources.creator_platform.page_size`); None is the default."""
    if raw is None or raw == ():
        return item.default
    try:
        return item.check(raw)
    except ValueError as exc:
        raise BadSetting(f"{item.key} {exc}", where) from None


def origin(item: Setting) -> str:
    """Where a configured value came from: a bad value set in the environment names the
    variable (no file holds it), else the key."""
    return f"env={item.env}" if item.env in os.environ else f"key={item.path}"


def setting(section: str, key: str, flag_value: Any = None) -> Any:
    """A checked value: the flag's when given, else the configured one, else the default."""
    item = spec(section, key)
    if flag_value is not None and flag_value != ():
        return checked(item, flag_value, f"flag={item.flag}")
    return checked(item, lookup(item.path, secret=item.secret), origin(item))


class Settings:
    """Every setting one command reads, resolved once: flag, then environment, then
    `.dlt/secrets.toml` / `.dlt/config.toml`, then the default of `SETTINGS`.

    `Settings(dataset=flag_value, ...)`: the flags as click hands them over (None or () = not
    given), by key. A value is checked (and a bad one raised as `BadSetting`) on first read, so a
    command is never stopped by a key it does not read. Every command builds one and passes it
    (or what it derives, such as `common.warehouse.Warehouse`) down: nothing below reads
    configuration itself.
    """

    def __init__(self, **flags: Any) -> None:
        unknown = set(flags) - set(_BY_KEY)
        if unknown:
            raise TypeError(f"not settings: {', '.join(sorted(unknown))}")
        self._flags = flags
        self._values: dict[str, Any] = {}

    def __getitem__(self, key: str) -> Any:
        if key not in self._values:
            item = by_key(key)
            self._values[key] = setting(item.section, key, self._flags.get(key))
        return self._values[key]

    def given(self, key: str) -> bool:
        """The value came from a flag (an error then says `[flag=...]`)."""
        return self._flags.get(key) not in (None, ())

    def where(self, key: str) -> str:
        """Where the value of `key` came from, as an error's bracket says it."""
        item = by_key(key)
        return f"flag={item.flag}" if self.given(key) else origin(item)

    def __repr__(self) -> str:  # never the values: some are secrets
        return f"Settings(flags={sorted(k for k in self._flags if self.given(k))})"


def option(
    key: str, help: str | None = None, **overrides: Any,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The click option of setting `key`, built from its `SETTINGS` entry: flag, help, and the
    default named in the help (the option itself defaults to None = not given, so that the
    environment and the config files are consulted before the default). `help` replaces the
    setting's text for a command that accepts less of it (the bracket stays)."""
    item = by_key(key)
    assert item.flag, f"{key} has no flag"
    default = "required" if item.required else f"default {item.default_text}"
    span = getattr(item.check, "span", "")
    where = f"config {item.path}; {default}" + (f"; {span}" if span else "")
    kwargs: dict[str, Any] = {"default": None, "help": f"{help or item.help}  [{where}]"}
    metavar = getattr(item.check, "metavar", None)
    if metavar:  # checked by the setting, typed in --help (click would say TEXT)
        kwargs["metavar"] = metavar
    if item.flag.startswith("--no-"):  # a switch that turns a default-on setting off
        kwargs.update(is_flag=True, flag_value=False)
    elif item.check is boolean and "/" not in item.flag:
        kwargs.update(is_flag=True, flag_value=True)
    kwargs.update(overrides)
    return click.option(item.flag, key, **kwargs)


def lookback_days() -> dict[str, float]:
    """Per-resource look-back of deep runs (one lookup per resource: env cannot list keys)."""
    return checked_lookback({name: lookup(f"{LOOKBACK_SECTION}.{name}") for name in RESOURCES})


def checked_lookback(raw: dict[str, Any] | None) -> dict[str, float]:
    """`lookback_days`, resource -> days, each checked (None values: not set)."""
    out = {}
    for name, value in (raw or {}).items():
        where = f"key={LOOKBACK_SECTION}.{name}"
        if name not in RESOURCES:
            raise BadSetting(f"lookback_days names an unknown resource {name}; known: "
                             f"{', '.join(RESOURCES)}", where)
        if value is not None:
            try:
                out[name] = LOOKBACK_CHECK(value)
            except ValueError as exc:
                raise BadSetting(f"lookback_days.{name} {exc}", where) from None
    return out


# ---------------------------------------------------------------- what the table builds
def source_signature(extra: Iterable[inspect.Parameter]) -> inspect.Signature:
    """`creator_platform_source`'s signature: a parameter per key of `[sources.creator_platform]`
    in table order, as dlt verified sources write them (`dlt.config.value` for what is
    required, `dlt.secrets.value` for a required secret, else the default; dlt then resolves
    each from the section), followed by `extra` (arguments that are not configuration)."""
    import dlt
    from dlt.common.typing import TSecretStrValue

    params = []
    for item in SOURCE_SETTINGS:
        annotation: Any = TSecretStrValue if item.secret else item.check.annotation
        if item.required:
            value: Any = dlt.secrets.value if item.secret else dlt.config.value
        else:
            value = item.default
            if value is None:
                annotation = annotation | None
        params.append(inspect.Parameter(item.key, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                        default=value, annotation=annotation))
    return inspect.Signature([*params, *extra])


def source_values(arguments: dict[str, Any]) -> dict[str, Any]:
    """The source's arguments (as dlt resolved them, or as a caller passed them), each through
    its kind's check: the same function and the same one-line error as a flag's. Values the CLI
    resolved already pass unchanged (a kind's result is its own fixed point)."""
    return {item.key: checked(item, arguments.get(item.key), origin(item))
            for item in SOURCE_SETTINGS}


def settings_class(
    name: str, items: Iterable[Setting], extra: Iterable[tuple[str, Any, dataclasses.Field]] = (),
    *, doc: str = "", namespace: dict[str, Any] | None = None,
) -> type:
    """A keyword-only dataclass with a field per setting of `items` (its default the table's;
    a secret kept out of the repr) and the `extra` fields (name, type, `dataclasses.field`):
    what carries resolved values, derived from the table instead of copying it."""
    fields: list[tuple[str, Any, dataclasses.Field]] = [
        (item.key, item.check.annotation if item.default is not None else
         item.check.annotation | None,
         dataclasses.field(default=item.default, repr=not item.secret))
        for item in items
    ]
    cls = dataclasses.make_dataclass(name, [*fields, *extra], kw_only=True,
                                     namespace=namespace or {})
    cls.__doc__ = doc
    return cls


def setup_doc_rows() -> list[str]:
    """The table of docs/setup.md's "Every key", built from `SETTINGS` (the page holds it as
    written here: tests/test_setup_doc.py)."""
    rows = ["| key | environment variable | flag | default (range) | what it sets |",
            "|---|---|---|---|---|"]
    for item in SETTINGS:
        span = getattr(item.check, "span", "")
        default = item.default_text + (f" ({span})" if span else "")
        flag = f"`{item.flag}`" if item.flag else ""
        cells = [f"`{item.key}`", f"`{item.env}`", flag, default, item.help]
        rows.append("| " + " | ".join(c.replace("<", "\\<") for c in cells) + " |")
    return rows


# ---------------------------------------------------------------- unknown keys
def known_keys() -> dict[str, set[str]]:
    """Section -> the keys something reads there (derived from SETTINGS and RESOURCES)."""
    known: dict[str, set[str]] = {}
    for item in SETTINGS:
        known.setdefault(item.section, set()).add(item.key)
    known[SOURCE_SECTION].add("lookback_days")
    known[LOOKBACK_SECTION] = set(RESOURCES)
    return known


def _nearest(key: str, options: set[str]) -> str | None:
    close = difflib.get_close_matches(key, sorted(options), n=1, cutoff=0.5)
    return close[0] if close else None


def unknown_key_warnings(environ: dict[str, str] | None = None) -> list[str]:
    """One line per configured key nothing reads: in the environment and in every TOML file."""
    import dlt

    known = known_keys()
    lines: list[str] = []
    env = os.environ if environ is None else environ
    for section, keys in known.items():
        prefix = section.replace(".", "__").upper() + "__"
        for var in sorted(env):
            if not var.startswith(prefix):
                continue
            key = var[len(prefix):].lower()
            if "__" in key and f"{section}.{key.split('__', 1)[0]}" in known:
                continue  # a subsection (lookback_days): checked with its own keys
            if key not in keys:
                near = _nearest(key, keys)
                hint = f"; did you mean {prefix}{near.upper()}?" if near else ""
                lines.append(f"warning: unknown environment variable {var}{hint}")
    for provider in dlt.config.config_providers:
        to_toml = getattr(provider, "to_toml", None)
        if to_toml is None:
            continue
        try:
            doc = tomllib.loads(to_toml())
        except (tomllib.TOMLDecodeError, ValueError):
            continue
        where = ", ".join(getattr(provider, "present_locations", []) or [provider.name])
        for section, keys in known.items():
            node: Any = doc
            for part in section.split("."):
                node = node.get(part) if isinstance(node, dict) else None
            if not isinstance(node, dict):
                continue
            for key, value in node.items():
                nested = f"{section}.{key}" in known and isinstance(value, dict)
                if key not in keys or (isinstance(value, dict) and not nested):
                    near = _nearest(key, keys)
                    hint = f"; did you mean {near}?" if near else ""
                    lines.append(f"warning: unknown key {section}.{key} in {where}{hint}")
    return lines


def warn_unknown_keys() -> None:
    """Print the unknown-key warnings on stderr (every command that reads configuration)."""
    for line in unknown_key_warnings():
        click.echo(line, err=True)
