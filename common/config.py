"""Every setting creator-sync reads from flags, the environment and `.dlt/*.toml`, written once.

`SETTINGS` is the one list: key, section, how a raw value is checked, default, the flag that
overrides it, whether it is a secret. Everything that reads configuration goes through
`setting()`, and the unknown-key warning (`unknown_key_warnings`) compares what the user wrote
with this list, so a key cannot be read without being known, nor known without being read.

Values are looked up with dlt's accessors (env `SOURCES__CREATOR_PLATFORM__<KEY>` first, then
`.dlt/secrets.toml`, `.dlt/config.toml`), but outside dlt's config trace: dlt records every value
resolved through its accessors and pickles the record into the pipeline's `trace.pickle`; a
secret read with the plain config accessor would be kept there in clear text.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import re
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import click

from creator_sync.sources.creator_platform import settings as source_defaults
from creator_sync.sources.creator_platform.settings import RESOURCES, normalise_api_path

from .duckdb_names import RESERVED_CATALOGS

SOURCE_SECTION = f"sources.{source_defaults.SOURCE_NAME}"
SYNC_SECTION = "creator_sync"
LOOKBACK_SECTION = f"{SOURCE_SECTION}.lookback_days"


class BadSetting(click.UsageError):
    """A flag or configuration value that cannot be used: a usage error (exit 2)."""

    def __init__(self, what: str, where: str) -> None:
        super().__init__(f"{what} [{where}]")
        self.where = where


# ---------------------------------------------------------------- checks: raw value -> value
Check = Callable[[Any], Any]


def _number_text(raw: Any) -> Any:
    return raw.strip() if isinstance(raw, str) else raw


def whole(low: int, high: int | None = None) -> Check:
    """A whole number within [low, high]."""
    span = f"from {low} to {high}" if high is not None else f"of at least {low}"

    def check(raw: Any) -> int:
        raw = _number_text(raw)
        if isinstance(raw, bool) or not isinstance(raw, int | str | float):
            raise ValueError(f"must be a whole number {span}, got {raw!r}")
        try:
            value = int(raw) if not isinstance(raw, float) or raw.is_integer() else None
        except ValueError:
            value = None
        if value is None or not low <= value <= (high if high is not None else value):
            raise ValueError(f"must be a whole number {span}, got {raw!r}")
        return value

    check.metavar = "INTEGER"  # type: ignore[attr-defined]  # what --help shows
    return check


def number(low: float, *, strict: bool = False, high: float | None = None) -> Check:
    """A number >= low (> low when strict), and <= high when given."""
    span = f"{'greater than' if strict else 'at least'} {low:g}"
    if high is not None:
        span += f" and at most {high:g}"

    def check(raw: Any) -> float:
        raw = _number_text(raw)
        try:
            value = float(raw) if not isinstance(raw, bool) else None
        except (TypeError, ValueError):
            value = None
        if (value is None or value != value or value < low or (strict and value == low)
                or (high is not None and value > high)):
            raise ValueError(f"must be a number {span}, got {raw!r}")
        return value

    check.metavar = "NUMBER"  # type: ignore[attr-defined]
    return check


def boolean(raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off"):
        return False
    raise ValueError(f"must be true or false, got {raw!r}")


def choice(*options: str) -> Check:
    def check(raw: Any) -> str:
        if raw not in options:
            raise ValueError(f"must be one of {', '.join(options)}, got {raw!r}")
        return str(raw)

    return check


def text(raw: Any) -> str:
    value = str(raw).strip()
    if not value:
        raise ValueError("must not be empty")
    return value


def names(raw: Any) -> tuple[str, ...]:
    """A list, comma-separated text, or a JSON list as dlt writes one in an environment variable
    (`'["sites", "me"]'`); naming nothing is an error, not "everything"."""
    if isinstance(raw, str) and raw.strip().startswith("["):
        try:
            raw = json.loads(raw)
        except ValueError:
            raise ValueError(f"is not a list: {raw!r} (write a,b or [\"a\", \"b\"])") from None
    items = raw if isinstance(raw, list | tuple) else [raw]
    out = tuple(dict.fromkeys(v.strip() for item in items for v in str(item).split(",") if v.strip()))
    if not out:
        raise ValueError(f"names nothing (got {raw!r}); leave it out to mean all")
    return out


def resource_names(raw: Any) -> tuple[str, ...]:
    out = names(raw)
    unknown = [r for r in out if r not in RESOURCES]
    if unknown:
        raise ValueError(f"unknown resource(s) {', '.join(unknown)}; known: {', '.join(RESOURCES)}")
    return out


resource_names.metavar = "NAME[,NAME...]"  # type: ignore[attr-defined]


def destination_name(raw: Any) -> str:
    """A dlt destination dlt can resolve (duckdb, postgres, motherduck, bigquery, ...): a typo is
    a usage error here, not a page of dlt's resolution attempts at load time."""
    value = text(raw)
    from dlt.common.destination.reference import Destination  # dlt loads lazily

    try:
        Destination.from_reference(value)
    except Exception:
        raise ValueError(f"{value!r} is not a dlt destination (e.g. duckdb, postgres, motherduck, "
                         "bigquery, snowflake)") from None
    return value


_PLAIN_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def dataset_name(raw: Any) -> str:
    value = text(raw)
    if not _PLAIN_NAME.match(value):
        raise ValueError(f"must be a plain SQL name (letters, digits, _), got {raw!r}")
    if value.lower() in RESERVED_CATALOGS:
        raise ValueError(f"{value!r} is a name DuckDB reserves for its own catalogs; pick another")
    return value


def zone_name(raw: Any) -> str:
    """An IANA time zone name (`America/New_York`), checked against the zone database."""
    import zoneinfo

    value = text(raw)
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"is not an IANA time zone (e.g. UTC, America/New_York), got {raw!r}") from None
    return value


def api_path(raw: Any) -> str:
    """A path under /v1, normalised (`acme_payments_payouts`, `/v1/acme_payments_payouts/` ->
    `/acme_payments_payouts`)."""
    return normalise_api_path(text(raw))


# ---------------------------------------------------------------- the settings
@dataclass(frozen=True)
class Setting:
    """One key: where it lives, how a raw value is checked, its default and its flag.

    `help` and `shown` (the default in words, when `default` alone would not say it) are what
    `--help` prints: every command's option for the key is built from here (`option()`).
    """

    section: str
    key: str
    check: Check
    default: Any = None
    flag: str | None = None
    secret: bool = False
    help: str = ""
    shown: str | None = None

    @property
    def path(self) -> str:
        return f"{self.section}.{self.key}"

    @property
    def env(self) -> str:
        return self.path.replace(".", "__").upper()

    @property
    def default_text(self) -> str:
        if self.shown is not None:
            return self.shown
        if isinstance(self.default, bool):
            return "yes" if self.default else "no"
        return "none" if self.default is None else f"{self.default:g}" if isinstance(
            self.default, float) else str(self.default)


S, W = SOURCE_SECTION, SYNC_SECTION
DEFAULT_DATASET = "creator_platform"  # the raw tables' schema; the DuckDB file is named after it
SETTINGS: tuple[Setting, ...] = (
    # the API and how it is read: [sources.creator_platform]
    Setting(S, "base_url", text, flag="--base-url",
            help="API base URL, e.g. https://api.example.com (the /v1 is added).", shown="required"),
    Setting(S, "client_id", text, flag="--client-id", help="OAuth client id.", shown="required"),
    Setting(S, "client_secret", text, flag="--client-secret", secret=True,
            help="OAuth client secret (prefer env or .dlt/secrets.toml).", shown="required"),
    Setting(S, "site_ids", names, flag="--site-id", help="Only these sites (repeatable).",
            shown="every site the credential sees"),
    Setting(S, "resources", resource_names, flag="--resources",
            help=f"Comma-separated resources to sync, of: {', '.join(RESOURCES)}.", shown="all"),
    Setting(S, "payouts_path", api_path, flag="--payouts-path",
            help="Payouts path under /v1 on your platform, /<brand>_payments_payouts.",
            shown="found: the brand word of the host, of the processor in transactions, "
            "else platform"),
    Setting(S, "concurrency", whole(*source_defaults.CONCURRENCY_RANGE), source_defaults.CONCURRENCY, flag="--concurrency",
            help="List-page requests in flight."),
    Setting(S, "detail_concurrency", whole(*source_defaults.DETAIL_CONCURRENCY_RANGE),
            source_defaults.DETAIL_CONCURRENCY, flag="--detail-concurrency",
            help="Single-record (include=) reads in flight; the rate limit bounds both."),
    Setting(S, "page_size", whole(*source_defaults.PAGE_SIZE_RANGE),
            source_defaults.PAGE_SIZE, flag="--page-size", help="page[size] to ask for."),
    Setting(S, "rate_limit", number(0), None, flag="--rate-limit",  # 0 or none: no limit
            help="Hard cap, requests per minute.", shown="none: find the platform's limit"),
    # find the platform's unpublished limit and ride it (below --rate-limit when given)
    Setting(S, "adaptive_rate", boolean, source_defaults.ADAPTIVE_RATE, flag="--adaptive-rate/--fixed-rate",
            help="Find the platform's limit and ride it; fixed: pace at --rate-limit exactly, "
            "or not at all.", shown="adaptive"),
    Setting(S, "pii", choice(*source_defaults.PII_MODES), flag="--pii",
            help="hash or drop: email, phone, address and cardholder columns, and people's "
            "names (contacts, customers, form submissions).",
            shown="kept as sent"),
    Setting(S, "pii_salt", text, secret=True),
    Setting(S, "insecure", boolean, False, flag="--insecure",
            help="Allow plain http:// to a non-loopback host."),
    Setting(S, "details", boolean, True, flag="--no-details",
            help="Skip per-record single reads: payout details with their lines, course "
            "modules/lessons/media, form fields; order items only on a platform without their list.",
            shown="read them"),
    Setting(S, "freeze_finance_schema", boolean, False),
    Setting(S, "full_refresh_every_days", number(0)),
    Setting(S, "max_attempts", whole(*source_defaults.MAX_ATTEMPTS_RANGE),
            source_defaults.MAX_ATTEMPTS),
    Setting(S, "backoff_initial", number(0, strict=True), source_defaults.BACKOFF_INITIAL_S),
    Setting(S, "timeout", number(0, strict=True), source_defaults.TIMEOUT_S),
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
    Setting(W, "duckdb_memory_limit", text, "1GB"),
    Setting(W, "duckdb_threads", whole(1, 1024), 1),
    Setting(W, "duckdb_vacuum_tasks", whole(0, 1024)),
    Setting(W, "load_workers", whole(1, 64), 1),
    # a long sync keeps its progress (pipelines/sync.py, docs/large-accounts.md)
    Setting(W, "checkpoint_every", number(1, high=86400), 30.0, flag="--checkpoint-every",
            help="Seconds of reading between commits of what was read (resume point)."),
    Setting(W, "max_duration", number(0, strict=True), None, flag="--max-duration",
            help="Stop reading after this many seconds, commit, exit 0 (`partial`); the next "
            "sync goes on from there.", shown="none"),
    # figures whose newest record is older than this are marked stale (models, report)
    Setting(W, "stale_after_days", number(0, strict=True, high=3650), 2.0,
            flag="--stale-after-days",
            help="Mark the figures stale when the newest record is older than this many days."),
    # the reporting day and month of the models (models, demo; the report shows the build's)
    Setting(W, "timezone", zone_name, "UTC", flag="--timezone",
            help="IANA zone of the reporting day and month, e.g. America/New_York."),
)
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


def setting(section: str, key: str, flag_value: Any = None) -> Any:
    """A checked value: the flag's when given, else the configured one, else the default."""
    item = spec(section, key)
    if flag_value is not None and flag_value != ():
        raw, where = flag_value, f"flag={item.flag}"
    else:  # a bad value set in the environment names the variable: no file holds it
        raw = lookup(item.path, secret=item.secret)
        where = f"env={item.env}" if item.env in os.environ else f"key={item.path}"
    if raw is None:
        return item.default
    try:
        return item.check(raw)
    except ValueError as exc:
        name = item.flag if where.startswith("flag") else item.key
        raise BadSetting(f"{name} {exc}", where) from None


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
        """The value came from a flag (error messages name the flag, not the key)."""
        return self._flags.get(key) not in (None, ())

    def where(self, key: str) -> str:
        item = by_key(key)
        return f"flag={item.flag}" if self.given(key) else f"key={item.path}"

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
    default = "required" if item.shown == "required" else f"default {item.default_text}"
    where = f"config {item.path}; {default}"
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
    out = {}
    for name in RESOURCES:
        raw = lookup(f"{LOOKBACK_SECTION}.{name}")
        if raw is not None:
            try:
                out[name] = LOOKBACK_CHECK(raw)
            except ValueError as exc:
                raise BadSetting(f"lookback_days.{name} {exc}", f"key={LOOKBACK_SECTION}.{name}") from None
    return out


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
