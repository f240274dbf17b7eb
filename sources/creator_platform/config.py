"""The source's own settings, `[sources.creator_platform]`: the one table, `SOURCE_SETTINGS`.

Each key of `creator_platform_source` is declared here once, with its kind (type and range:
`common.setting_kinds`), flag, help and whether it is a secret. Its default is not: the source's
`def` writes its parameters out with their defaults, as dlt verified sources do, and is the one
place a default is written (dlt's `dlt.config.value` / `dlt.secrets.value`: required). Whatever
else needs a default reads it from the def's signature: the CLI's flags, resolved values and
docs/setup.md's rows (`common.settings.with_defaults`, in `pipelines.command_settings`), and a
client built outside the source (`defaults.py`). tests/pipelines/test_source_signature.py holds
the table and the def in step (every key a parameter and every parameter a key, each kind
accepting the def's default). The app's keys (`[creator_sync]`: the warehouse, the models'
zone) are not the source's: they live in `common.settings`.

A value is checked once, by its kind, where it enters: the CLI checks what it resolves (a flag,
the environment, `.dlt/*.toml`; `common.settings.Settings`) and hands the source checked values;
a Python caller's arguments (or what dlt resolved for it) are checked by the source itself
(`checked_arguments`), a bad one raising `ConfigurationError`, the line the CLI prints.
"""

from __future__ import annotations

from typing import Any

from creator_sync.common.setting_kinds import (
    api_path,
    boolean,
    choice,
    names,
    names_among,
    number,
    text,
    whole,
)
from creator_sync.common.settings import (
    BadSetting,
    Setting,
    checked,
    known_keys,
    lookup,
    origin,
)

from .endpoints import RESOURCES, SOURCE_NAME
from .errors import ConfigurationError

SOURCE_SECTION = f"sources.{SOURCE_NAME}"
LOOKBACK_SECTION = f"{SOURCE_SECTION}.lookback_days"
resource_names = names_among(RESOURCES, "resource")

S = SOURCE_SECTION
SOURCE_SETTINGS: tuple[Setting, ...] = (
    # the API and how it is read: the source's arguments
    Setting(S, "base_url", text, flag="--base-url", client=True,
            help="API base URL, e.g. https://api.example.com (the /v1 is added)."),
    Setting(S, "client_id", text, flag="--client-id", client=True,
            help="OAuth client id."),
    Setting(S, "client_secret", text, flag="--client-secret", secret=True, client=True,
            help="OAuth client secret (prefer env or .dlt/secrets.toml)."),
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
    Setting(S, "concurrency", whole(1, 64), flag="--concurrency", client=True,
            help="List-page requests in flight."),
    Setting(S, "detail_concurrency", whole(1, 256), flag="--detail-concurrency", client=True,
            help="Single-record (include=) reads in flight; the rate limit bounds both."),
    Setting(S, "page_size", whole(1, 1000), flag="--page-size", help="page[size] to ask for."),
    Setting(S, "rate_limit", number(0, zero_is_none=True), flag="--rate-limit", client=True,
            help="Hard cap, requests per minute (0: none).", shown="none: find the platform's limit"),
    Setting(S, "adaptive_rate", boolean, flag="--adaptive-rate/--fixed-rate", client=True,
            help="Find the platform's limit and ride it; fixed: pace at --rate-limit exactly, "
            "or not at all.", shown="adaptive"),
    Setting(S, "pii", choice("hash", "drop"), flag="--pii",
            help="hash or drop: email, phone, address and cardholder columns, and people's "
            "names (contacts, customers, form submissions).",
            shown="kept as sent"),
    Setting(S, "pii_salt", text, secret=True, help="Salt of `--pii hash` (a secret).",
            shown="none"),
    Setting(S, "insecure", boolean, flag="--insecure", client=True,
            help="Allow plain http:// to a non-loopback host."),
    Setting(S, "details", boolean, flag="--no-details",
            help="Skip per-record single reads: payout details with their lines, course "
            "modules/lessons/media, form fields; order items only on a platform without their list.",
            shown="read them"),
    Setting(S, "freeze_finance_schema", boolean,
            help="A new column fails the finance tables instead of altering them."),
    Setting(S, "full_refresh_every_days", number(0),
            help="Days between full listings of look-back resources.",
            shown="each resource's own (7)"),
    Setting(S, "max_attempts", whole(1, 100), client=True,
            help="Attempts per request, retries included."),
    Setting(S, "backoff_initial", number(0, strict=True), client=True,
            help="Seconds of the first retry's wait, doubled each time."),
    Setting(S, "timeout", number(0, strict=True), client=True,
            help="Seconds per request."),
)
# [sources.creator_platform.lookback_days]: one key per resource, days
LOOKBACK_CHECK = number(0)
_BY_KEY = {s.key: s for s in SOURCE_SETTINGS}


def by_key(key: str) -> Setting:
    """The source's setting `key`."""
    return _BY_KEY[key]


def source_known_keys() -> dict[str, set[str]]:
    """Section -> the keys the source reads there (its table, and a look-back per resource)."""
    return known_keys(SOURCE_SETTINGS, subsections={LOOKBACK_SECTION: RESOURCES})


def checked_arguments(arguments: dict[str, Any], lookback: dict[str, Any] | None,
                      ) -> tuple[dict[str, Any], dict[str, float]]:
    """A Python caller's arguments (as dlt resolved them, or as passed) and its look-back days,
    each through its kind's check: the same function and the same one line as a flag's, raised
    as the source's `ConfigurationError`. Every argument is there (dlt filled in the def's
    defaults), so a None is the def's None: the table has no defaults to add."""
    try:
        return ({item.key: checked(item, arguments.get(item.key), origin(item))
                 for item in SOURCE_SETTINGS}, checked_lookback(lookback))
    except BadSetting as exc:
        raise ConfigurationError(str(exc)) from None


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
