"""Helpers for end-to-end tests against the sandbox: settings, snapshots, API totals."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import httpx

from creator_sync.pipelines.factory import resolve_warehouse
from creator_sync.pipelines.sync import SyncSettings, run_sync, sync_settings
from creator_sync.sources.creator_platform import CreatorPlatformClient
from creator_sync.sources.creator_platform import api_client as source_client
from creator_sync.sources.creator_platform.auth import Secret
from creator_sync.sources.creator_platform.pagination import total_count

CLIENT_ID = "sandbox"
CLIENT_SECRET = "sandbox-secret"
VOLATILE = {"_extracted_at", "_dlt_load_id", "_dlt_id"}


def settings(sandbox: Any, db: Path, **overrides: Any) -> SyncSettings:
    values: dict[str, Any] = dict(
        base_url=sandbox.base_url,
        client_id=CLIENT_ID,
        client_secret=Secret(CLIENT_SECRET),
        warehouse=resolve_warehouse(duckdb=str(db)),
        backoff_initial=0.05,
    )
    values.update(overrides)
    # a test's extremes below what a user may set (a checkpoint after every page: 0): the
    # settings are checked with the default, then carry the test's value
    every = values.pop("checkpoint_every", None)
    built = sync_settings(**values)
    return built if every is None else dataclasses.replace(built, checkpoint_every=every)


def sync(sandbox: Any, db: Path, **overrides: Any):
    return run_sync(settings(sandbox, db, **overrides), show_progress=False)


def snapshot(db: Path | str, dataset: str = "creator_platform") -> dict[str, list[tuple]]:
    """Every data table as sorted rows, without load bookkeeping columns (nor `sync_resources`,
    which records the runs, not the data)."""
    out: dict[str, list[tuple]] = {}
    with duckdb.connect(str(db), read_only=True) as con:
        tables = [r[0] for r in con.execute(
            "select table_name from information_schema.tables where table_schema = ? "
            "and table_name not like '\\_dlt%' escape '\\' and table_name not in ('sync_resources', 'api_totals')",
            [dataset]).fetchall()]
        for table in sorted(tables):
            cols = [r[0] for r in con.execute(
                "select column_name from information_schema.columns where table_schema = ? and table_name = ? "
                "order by column_name", [dataset, table]).fetchall() if r[0] not in VOLATILE]
            select = ", ".join(f'"{c}"' for c in cols)
            rows = con.execute(f'select {select} from {dataset}."{table}"').fetchall()
            out[table] = sorted(tuple(map(repr, r)) for r in rows)
    return out


def query(db: Path | str, sql: str, *args: Any) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql, list(args)).fetchall()


def api_client(sandbox: Any) -> CreatorPlatformClient:
    return source_client(sandbox.base_url, CLIENT_ID, Secret(CLIENT_SECRET))


def api_total(client: CreatorPlatformClient, path: str, site: str | None, page_size: bool = True) -> int:
    params: dict[str, Any] = {"page[number]": 1}
    if page_size:
        params["page[size]"] = 1
    if site:
        params["filter[site_id]"] = site
    doc = client.get(path, params, exact_decimals=True)
    count = total_count(doc.get("meta"))
    assert count is not None, f"no total in meta of {path}: {doc.get('meta')}"
    return count


class PushDuringListing(httpx.BaseTransport):
    """The sandbox over HTTP; `push` runs once, when the pull first asks for customers."""

    def __init__(self, push: Callable[[], None]) -> None:
        self.inner = httpx.HTTPTransport()
        self.push = push
        self.pushed = False

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if not self.pushed and request.url.path == "/v1/customers":
            self.pushed = True
            self.push()
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()
