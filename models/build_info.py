"""What a models build ran with (`analytics.build_metadata`), read back by the headline and the
report so that they state the reporting time zone and settlement delay instead of guessing."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any

# `adapter.fetch` and the report's DuckDB reader both have this shape: sql -> (columns, rows)
Fetch = Callable[[str], tuple[list[str], list[tuple[Any, ...]]]]

BUILD_METADATA = "analytics.build_metadata"


def package_version() -> str:
    try:
        return version("creator-sync")
    except PackageNotFoundError:
        return "dev"


def as_utc(value: Any) -> dt.datetime | None:
    """A timestamp from any warehouse driver as an aware UTC datetime (naive means UTC)."""
    if value is None:
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC)


def fetch_dicts(fetch: Fetch, sql: str) -> list[dict[str, Any]]:
    names, rows = fetch(sql)
    return [dict(zip(names, row, strict=True)) for row in rows]


@dataclass(frozen=True)
class BuildInfo:
    built_at: dt.datetime
    dataset: str
    timezone: str
    settlement_delay_days: int | None
    as_of_date: dt.date | None  # the build's last reporting day, given or derived
    is_as_of_given: bool
    creator_sync_version: str

    @property
    def settlement_delay(self) -> str:
        """`2 days`; a build without a fixed delay learnt it from the payout lines."""
        delay = self.settlement_delay_days
        if delay is None:
            return "observed from payout lines"
        return f"{delay} day{'s' if delay != 1 else ''}"


def read_build_info(fetch: Fetch) -> BuildInfo:
    (row,) = fetch_dicts(fetch, f"select * from {BUILD_METADATA}")
    return BuildInfo(
        built_at=as_utc(row["built_at"]),
        dataset=str(row["dataset"]),
        timezone=str(row["timezone"]),
        settlement_delay_days=(
            int(row["settlement_delay_days"]) if row["settlement_delay_days"] is not None else None
        ),
        as_of_date=row["as_of_date"],
        is_as_of_given=bool(row["is_as_of_given"]),
        creator_sync_version=str(row["creator_sync_version"]),
    )
