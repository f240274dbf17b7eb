"""Every setting the pipeline's commands read: the source's (`[sources.creator_platform]`,
`SOURCE_SETTINGS`) and the app's (`[creator_sync]`, `common.settings.APP_SETTINGS`), side by side.

Each table is declared once where it belongs; this is where a command that drives the source
(`sync`, `init`, `hooks`) sees both: its flags (`option`), its resolved values (`settings`), the
unknown-key warnings of both sections and the rows of docs/setup.md. The source's keys take their
defaults from `creator_platform_source`'s def (`SOURCE_KEYS`): its table writes none.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from creator_sync.common import settings as app
from creator_sync.common.settings import (
    APP_SETTINGS,
    BadSetting,
    Setting,
    Settings,
    click_option,
    keyed,
    with_defaults,
)
from creator_sync.sources.creator_platform import (
    SOURCE_SETTINGS,
    api_root,
    creator_platform_source,
    source_known_keys,
)

# the source's table with each key's default (or `required`) as the source's def writes it
SOURCE_KEYS: tuple[Setting, ...] = with_defaults(SOURCE_SETTINGS, creator_platform_source)
SETTINGS: tuple[Setting, ...] = (*SOURCE_KEYS, *APP_SETTINGS)
_BY_KEY = keyed(SOURCE_KEYS, APP_SETTINGS)


def by_key(key: str) -> Setting:
    """The setting `key`, the source's or the app's."""
    return _BY_KEY[key]


def option(
    key: str, help: str | None = None, **overrides: Any,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The click option of setting `key`, the source's or the app's (`click_option`)."""
    return click_option(by_key(key), help, **overrides)


def settings(**flags: Any) -> Settings:
    """A command's settings of both tables, resolved on first read (`common.settings.Settings`)."""
    return Settings(SOURCE_KEYS, APP_SETTINGS, **flags)


def check_base_url(conf: Settings) -> None:
    """The base URL the API client will take (http(s)://host, plain http on loopback only or
    with `insecure`): a bad one is a usage error naming the flag, variable or key it came from."""
    try:
        api_root(conf["base_url"], insecure=conf["insecure"])
    except ValueError as exc:
        raise BadSetting(str(exc), conf.where("base_url")) from None


def known_keys() -> dict[str, set[str]]:
    """Section -> the keys something reads there: the source's sections and the app's."""
    return {**source_known_keys(), **app.known_keys(APP_SETTINGS)}


def unknown_key_warnings(environ: dict[str, str] | None = None) -> list[str]:
    """One line per configured key nothing reads, in the source's sections and the app's."""
    return app.unknown_key_warnings(known_keys(), environ)


def warn_unknown_keys() -> None:
    """The unknown-key warnings of both tables on stderr."""
    app.warn_unknown_keys(known_keys())


def setup_doc_rows() -> list[str]:
    """docs/setup.md's table of every key: the source's, then the app's."""
    return app.setup_doc_rows(SOURCE_KEYS, APP_SETTINGS)
