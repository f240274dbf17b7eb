"""One function per kind of setting: it checks a raw value and returns it normalised.

A raw value comes from a flag (text), the environment (text), a TOML file or a Python caller
(typed): each kind takes all of them, and a value it returned passes it again unchanged, so the
one function serves wherever a value enters. A bad value raises `ValueError` whose text follows
the key's name: "page_size must be a whole number from 1 to 1000, got 0".

Every setting's declaration names its kind: the app's (`common.settings.APP_SETTINGS`) and the
source's (`sources.creator_platform.config.SOURCE_SETTINGS`). `metavar` (what `--help` shows),
`annotation` (the value's type) and `span` (the range in words) ride on the function.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

Check = Callable[[Any], Any]


def shown(raw: Any) -> str:
    """The value as the user wrote it: `0` from a flag and `0` from Python read alike."""
    if isinstance(raw, str):
        return raw.strip() or repr(raw)
    return repr(raw)


def _kind(check: Any, annotation: Any, metavar: str | None = None, span: str = "") -> Check:
    check.annotation = annotation
    check.metavar = metavar
    check.span = span  # the range in words, for docs/setup.md ("" when the kind has none)
    return check


def _number_text(raw: Any) -> Any:
    return raw.strip() if isinstance(raw, str) else raw


def whole(low: int, high: int | None = None) -> Check:
    """A whole number within [low, high]."""
    span = f"from {low} to {high}" if high is not None else f"of at least {low}"

    def check(raw: Any) -> int:
        value = _number_text(raw)
        if isinstance(value, bool) or not isinstance(value, int | str | float):
            value = None
        else:
            try:
                value = int(value) if not isinstance(value, float) or value.is_integer() else None
            except ValueError:
                value = None
        if value is None or not low <= value <= (high if high is not None else value):
            raise ValueError(f"must be a whole number {span}, got {shown(raw)}")
        return value

    check.low, check.high = low, high  # type: ignore[attr-defined]
    return _kind(check, int, "INTEGER", f"whole, {span}")


def number(low: float, *, strict: bool = False, high: float | None = None,
           zero_is_none: bool = False) -> Check:
    """A number >= low (> low when strict), and <= high when given; `zero_is_none`: 0 means
    "none" (a rate limit of 0 is no limit)."""
    span = f"{'greater than' if strict else 'at least'} {low:g}"
    if high is not None:
        span += f" and at most {high:g}"

    def check(raw: Any) -> float | None:
        try:
            value = float(_number_text(raw)) if not isinstance(raw, bool) else None
        except (TypeError, ValueError):
            value = None
        if (value is None or value != value or value < low or (strict and value == low)
                or (high is not None and value > high)):
            raise ValueError(f"must be a number {span}, got {shown(raw)}")
        return None if zero_is_none and value == 0 else value

    return _kind(check, float, "NUMBER", span + ("; 0: none" if zero_is_none else ""))


def _boolean(raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off"):
        return False
    raise ValueError(f"must be true or false, got {shown(raw)}")


boolean = _kind(_boolean, bool)


def choice(*options: str) -> Check:
    def check(raw: Any) -> str:
        if raw not in options:
            raise ValueError(f"must be one of {', '.join(options)}, got {shown(raw)}")
        return str(raw)

    return _kind(check, str, span=" or ".join(options))


def _text(raw: Any) -> str:
    value = str(raw).strip()
    if not value:
        raise ValueError("must not be empty")
    return value


text = _kind(_text, str)


def _names(raw: Any) -> tuple[str, ...]:
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


names = _kind(_names, list[str])


def names_among(known: Iterable[str], noun: str) -> Check:
    """Names, each one of `known` (`noun`: what they name, for the error: "resource")."""
    known = tuple(known)

    def check(raw: Any) -> tuple[str, ...]:
        out = _names(raw)
        unknown = [r for r in out if r not in known]
        if unknown:
            raise ValueError(f"names unknown {noun}(s) {', '.join(unknown)}; known: {', '.join(known)}")
        return out

    return _kind(check, list[str], "NAME[,NAME...]")


def _destination_name(raw: Any) -> str:
    """A dlt destination dlt can resolve (duckdb, postgres, motherduck, bigquery, ...): a typo is
    a usage error here, not a page of dlt's resolution attempts at load time."""
    value = _text(raw)
    from dlt.common.destination.reference import Destination  # dlt loads lazily

    try:
        Destination.from_reference(value)
    except Exception:
        raise ValueError(f"{value!r} is not a dlt destination (e.g. duckdb, postgres, motherduck, "
                         "bigquery, snowflake)") from None
    return value


destination_name = _kind(_destination_name, str)

_PLAIN_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _dataset_name(raw: Any) -> str:
    from creator_sync.common.duckdb_names import RESERVED_CATALOGS  # imports duckdb: lazy

    value = _text(raw)
    if not _PLAIN_NAME.match(value):
        raise ValueError(f"must be a plain SQL name (letters, digits, _), got {shown(raw)}")
    if value.lower() in RESERVED_CATALOGS:
        raise ValueError(f"{value!r} is a name DuckDB reserves for its own catalogs; pick another")
    return value


dataset_name = _kind(_dataset_name, str)


def _zone_name(raw: Any) -> str:
    """An IANA time zone name (`America/New_York`), checked against the zone database."""
    import zoneinfo

    value = _text(raw)
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"is not an IANA time zone (e.g. UTC, America/New_York), got {shown(raw)}") from None
    return value


zone_name = _kind(_zone_name, str)


def _api_path(raw: Any) -> str:
    """A path under /v1 as the settings take it: `/<brand>_payments_payouts`. Taken with or
    without the leading slash or `/v1` (`acme_payments_payouts`, `/v1/acme_payments_payouts/`);
    refuses what cannot be a path. The one place a configured path is normalised."""
    value = _text(raw)
    path = "/" + value.rstrip("/").lstrip("/")
    if path.startswith("/v1/"):
        path = path[3:]
    if path == "/" or any(ch in path for ch in "?#& \t") or "//" in path:
        raise ValueError(f"must be a path under /v1 such as /acme_payments_payouts, got {shown(raw)}")
    return path


api_path = _kind(_api_path, str)
