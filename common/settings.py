"""The app's settings (`[creator_sync]`), and how any setting is declared, resolved and checked.

Two tables declare every key creator-sync reads, each where it belongs: `APP_SETTINGS` here (the
warehouse, the sync's rounds, the models' zone: read by the commands, the models and the report)
and the source's own keys, `sources.creator_platform.config.SOURCE_SETTINGS` (the arguments of
`creator_platform_source`). Each entry is written once with its section, kind (type and range:
`setting_kinds.py`), default, flag, help and whether it is a secret; from it come the command's
click option (`option`), the resolved value (`Settings`), the unknown-key warnings and the rows
of docs/setup.md (tests/test_setup_doc.py).

A value is checked by its kind's one function where it enters (`checked`): a flag, the
environment or `.dlt/*.toml`; a bad one raises `BadSetting`, one line naming the key and where it
came from, a usage error (exit 2).

Values are looked up with dlt's accessors (env `CREATOR_SYNC__<KEY>` first, then
`.dlt/secrets.toml`, `.dlt/config.toml`), but outside dlt's config trace: dlt records every value
resolved through its accessors and pickles the record into the pipeline's `trace.pickle`; a
secret read with the plain config accessor would be kept there in clear text.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import os
import tomllib
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import click

from .errors import OneLineError
from .setting_kinds import (
    Check,
    boolean,
    choice,
    dataset_name,
    destination_name,
    number,
    text,
    whole,
    zone_name,
)
from .warehouse import DEPRECATED_DSN_ENV

APP_SECTION = "creator_sync"


class BadSetting(OneLineError, click.UsageError):
    """A flag or configuration value that cannot be used: a usage error (exit 2)."""

    exit_code = 2
    usage = True

    def __init__(self, what: str, where: str) -> None:
        self.where = where
        click.UsageError.__init__(self, f"{what} [{where}]")  # sets `message`, no context

    def __str__(self) -> str:
        return self.message

    def format_message(self) -> str:
        return self.message


@dataclass(frozen=True)
class Setting:
    """One key: where it lives, its kind (type and range), its default and its flag.

    `help` and `shown` (the default in words, when `default` alone would not say it) are what
    `--help` and docs/setup.md print. `required`: no default, the run cannot start without it.
    `client`: a knob of the source's API client, not of its resources. The source's table writes
    neither `default` nor `required`: its `def` does (`with_defaults`).
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


A = APP_SECTION
DEFAULT_DATASET = "creator_platform"  # the raw tables' schema; the DuckDB file is named after it
APP_SETTINGS: tuple[Setting, ...] = (
    # the warehouse and the pipeline's local state
    Setting(A, "duckdb", text, f"{DEFAULT_DATASET}.duckdb", flag="--duckdb",
            help="DuckDB file of the warehouse (when the destination is duckdb)."),
    Setting(A, "dataset", dataset_name, DEFAULT_DATASET, flag="--dataset",
            help="Dataset (schema) holding the raw tables."),
    Setting(A, "destination", destination_name, "duckdb", flag="--destination",
            help="Where the raw tables are loaded: any dlt destination name."),
    Setting(A, "postgres_dsn", text, flag="--postgres-dsn", secret=True,
            help="PostgreSQL warehouse (when the destination is postgres), "
            "postgresql://user:password@host:5432/db (a secret: prefer env or .dlt/secrets.toml).",
            shown="dlt's DESTINATION__POSTGRES__CREDENTIALS"),
    Setting(A, "pipelines_dir", text, flag="--pipelines-dir",
            help="Where dlt keeps local pipeline state.",
            shown="<folder of the DuckDB file>/.creator-sync/<its name>"),
    Setting(A, "duckdb_memory_limit", text, "1GB", help="DuckDB's memory limit while loading."),
    Setting(A, "duckdb_threads", whole(1, 1024), 1, help="DuckDB's threads while loading."),
    Setting(A, "duckdb_vacuum_tasks", whole(0, 1024), help="DuckDB's vacuum tasks while loading.",
            shown="DuckDB's own"),
    Setting(A, "load_workers", whole(1, 64), 1, help="dlt's load workers."),
    # a long sync keeps its progress (pipelines/sync.py, docs/large-accounts.md)
    Setting(A, "checkpoint_every", number(1, high=86400), 30.0, flag="--checkpoint-every",
            help="Seconds of reading between commits of what was read (resume point)."),
    Setting(A, "max_duration", number(0, strict=True), None, flag="--max-duration",
            help="Stop reading after this many seconds, commit, exit 0 (`partial`); the next "
            "sync goes on from there.", shown="none"),
    # people the platform deleted: their personal fields erased (pipelines/erasure.py)
    Setting(A, "deleted_people", choice("erase", "keep"), "erase",
            help="erase: a contact, customer or note the platform deleted keeps its keys and "
            "money, its personal fields are emptied; keep: only flagged `_is_deleted`."),
    # the salt of `forget`'s log of erasures (salted hashes only): written at the first erasure
    Setting(A, "erasure_salt", text, secret=True,
            help="Salt of the erasure log's hashes (`forget`); a secret.",
            shown="generated into .dlt/secrets.toml at the first erasure"),
    # figures whose newest record is older than this are marked stale (models, report)
    Setting(A, "stale_after_days", number(0, strict=True, high=3650), 2.0,
            flag="--stale-after-days",
            help="Mark the figures stale when the newest record is older than this many days."),
    # the reporting day and month of the models (models, demo; the report shows the build's).
    # Unset: the models' own default, the var of sql/dbt_project.yml, its one place (so for the
    # next key): the models read it there (`models.project`), dbt too
    Setting(A, "timezone", zone_name, flag="--timezone",
            help="IANA zone of the reporting day and month, e.g. America/New_York.",
            shown="the models' own: dbt var creator_platform_reporting_timezone"),
    # the models' revenue without tax (DECISIONS.md "Tax"): the platform's amounts include it
    Setting(A, "amounts_include_tax", boolean,
            help="Transaction amounts include sales tax (revenue excl. tax = amount - tax); "
                 "false for a platform whose amounts exclude it.",
            shown="the models' own: dbt var creator_platform_amounts_include_tax"),
)

# each app key's default, by name (`DEFAULTS.deleted_people`): for a function that takes the
# value too (None for a key whose default is another's: the models' zone and tax rule)
DEFAULTS = types.SimpleNamespace(**{s.key: s.default for s in APP_SETTINGS})


def signature_defaults(function: Callable[..., Any]) -> dict[str, Any]:
    """Each parameter's default as `function`'s `def` writes it; a required one (no default, or
    dlt's `dlt.config.value` / `dlt.secrets.value`, which dlt must inject) is absent."""
    import inspect

    from dlt.common.typing import ConfigValueSentinel

    return {name: param.default for name, param in inspect.signature(function).parameters.items()
            if param.default is not inspect.Parameter.empty
            and not isinstance(param.default, ConfigValueSentinel)}


def with_defaults(table: Iterable[Setting], function: Callable[..., Any]) -> tuple[Setting, ...]:
    """`table` with each key's default taken from `function`'s `def`, the one place a source
    writes them (as dlt verified sources do); a key the def leaves to dlt's injection is
    `required`."""
    defaults = signature_defaults(function)
    return tuple(dataclasses.replace(item, default=defaults.get(item.key),
                                     required=item.key not in defaults) for item in table)


def keyed(*tables: Iterable[Setting]) -> dict[str, Setting]:
    """key -> setting of `tables` (the app's when none is named); a key lives in one only."""
    out: dict[str, Setting] = {}
    for item in (s for table in (tables or (APP_SETTINGS,)) for s in table):
        assert item.key not in out, f"{item.key} is declared twice: Settings looks keys up"
        out[item.key] = item
    return out


_APP = keyed(APP_SETTINGS)


def by_key(key: str) -> Setting:
    """The app's setting `key`."""
    return _APP[key]


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


def setting(item: Setting, flag_value: Any = None) -> Any:
    """A checked value: the flag's when given, else the configured one, else the default."""
    if flag_value is not None and flag_value != ():
        return checked(item, flag_value, f"flag={item.flag}")
    return checked(item, lookup(item.path, secret=item.secret), origin(item))


def app_setting(key: str, flag_value: Any = None) -> Any:
    """The app's setting `key`, checked: the flag's value when given, else configured, else
    the default."""
    return setting(by_key(key), flag_value)


class Settings:
    """Every setting one command reads, resolved once: flag, then environment, then
    `.dlt/secrets.toml` / `.dlt/config.toml`, then the table's default.

    `Settings(dataset=flag_value, ...)`: the app's settings; `Settings(SOURCE_SETTINGS,
    APP_SETTINGS, base_url=...)`: those tables'. The flags as click hands them over (None or () =
    not given), by key. A value is checked (and a bad one raised as `BadSetting`) on first read,
    so a command is never stopped by a key it does not read. Every command builds one and
    passes it (or what it derives, such as `common.warehouse.Warehouse`) down: nothing below
    reads configuration itself.
    """

    def __init__(self, *tables: Iterable[Setting], **flags: Any) -> None:
        self._table = keyed(*tables)
        unknown = set(flags) - set(self._table)
        if unknown:
            raise TypeError(f"not settings: {', '.join(sorted(unknown))}")
        self._flags = flags
        self._values: dict[str, Any] = {}

    def __getitem__(self, key: str) -> Any:
        if key not in self._values:
            self._values[key] = setting(self._table[key], self._flags.get(key))
        return self._values[key]

    def given(self, key: str) -> bool:
        """The value came from a flag (an error then says `[flag=...]`)."""
        return self._flags.get(key) not in (None, ())

    def where(self, key: str) -> str:
        """Where the value of `key` came from, as an error's bracket says it."""
        item = self._table[key]
        return f"flag={item.flag}" if self.given(key) else origin(item)

    def __repr__(self) -> str:  # never the values: some are secrets
        return f"Settings(flags={sorted(k for k in self._flags if self.given(k))})"


def click_option(
    item: Setting, help: str | None = None, shown: str | None = None, **overrides: Any,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The click option of `item`: flag, help, and the default named in the help (the option
    itself defaults to None = not given, so that the environment and the config files are
    consulted before the default). `help` replaces the setting's text for a command that
    accepts less of it (the bracket stays); `shown` the default's words, for a command that
    reads a default this layer cannot (the models' zone, read from their package)."""
    assert item.flag, f"{item.key} has no flag"
    if shown is not None:
        item = dataclasses.replace(item, shown=shown)
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
    return click.option(item.flag, item.key, **kwargs)


def option(
    key: str, help: str | None = None, **overrides: Any,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The click option of the app's setting `key` (see `click_option`: `shown` too)."""
    return click_option(by_key(key), help, **overrides)


def setup_doc_rows(*tables: Iterable[Setting]) -> list[str]:
    """The table of docs/setup.md's "Every key", built from `tables` (the page holds it as
    written here: tests/test_setup_doc.py)."""
    rows = ["| key | environment variable | flag | default (range) | what it sets |",
            "|---|---|---|---|---|"]
    for item in keyed(*tables).values():
        span = getattr(item.check, "span", "")
        default = item.default_text + (f" ({span})" if span else "")
        flag = f"`{item.flag}`" if item.flag else ""
        cells = [f"`{item.key}`", f"`{item.env}`", flag, default, item.help]
        rows.append("| " + " | ".join(c.replace("<", "\\<") for c in cells) + " |")
    return rows


# ---------------------------------------------------------------- unknown keys
def known_keys(*tables: Iterable[Setting],
               subsections: Mapping[str, Iterable[str]] | None = None) -> dict[str, set[str]]:
    """Section -> the keys something reads there: those of `tables` (the app's when none is
    named), and `subsections` (a section of its own under one of theirs -> its keys)."""
    known: dict[str, set[str]] = {}
    for item in keyed(*tables).values():
        known.setdefault(item.section, set()).add(item.key)
    for section, keys in (subsections or {}).items():
        parent, _, name = section.rpartition(".")
        known.setdefault(parent, set()).add(name)
        known[section] = set(keys)
    return known


def _nearest(key: str, options: set[str]) -> str | None:
    close = difflib.get_close_matches(key, sorted(options), n=1, cutoff=0.5)
    return close[0] if close else None


def unknown_key_warnings(known: Mapping[str, set[str]] | None = None,
                         environ: Mapping[str, str] | None = None) -> list[str]:
    """One line per configured key nothing reads, in the sections of `known` (the app's when
    not given): in the environment and in every TOML file."""
    import dlt

    known = known_keys() if known is None else known
    lines: list[str] = []
    env = os.environ if environ is None else environ
    if DEPRECATED_DSN_ENV in env:
        lines.append(f"warning: {DEPRECATED_DSN_ENV} is deprecated (it still works): set "
                     f"{by_key('postgres_dsn').env} instead")
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


def warn_unknown_keys(known: Mapping[str, set[str]] | None = None) -> None:
    """Print the unknown-key warnings on stderr (every command that reads configuration): in
    the sections of `known`, the app's when not given."""
    for line in unknown_key_warnings(known):
        click.echo(line, err=True)
