"""`creator-sync status`: per resource and site, whether the warehouse holds it complete, partial
(and what is left) or failed, with the last sync time, and the API's total beside the rows
landed (completeness.py); `--json` for machines.

Read from what the syncs wrote: `sync_resources` in the warehouse (per resource), and the
places stopped listings keep in the pipeline's state (per site, checkpoint.py).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import click

from creator_sync.common.settings import BadSetting, Settings, option
from creator_sync.common.terminal import reported_failures
from creator_sync.common.warehouse import Warehouse, warehouse_of
from creator_sync.common.warehouse_db import (
    MissingWarehouseCredentials,
    WarehouseUnavailable,
    open_warehouse,
)
from creator_sync.sources.creator_platform import SOURCE_NAME, SYNC_RESOURCES, is_done, place_of

from .command_settings import warn_unknown_keys
from .completeness import resource_totals

# sync_resources.status -> what status prints
NOT_READ = "no complete listing of this site has read a total yet"
SHOWN = {"synced": "complete", "partial": "partial", "failed": "failed", "skipped": "skipped"}


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def _recorded(wh: Warehouse, where: str) -> list[dict[str, Any]]:
    """The rows of `sync_resources` (DuckDB read-only, PostgreSQL: `open_warehouse`; any other
    destination: its dlt client). `where`: where the DuckDB file's path came from."""
    columns = "resource, status, reason, last_attempt_at, last_synced_at"
    if wh.destination in ("duckdb", "postgres"):
        if wh.duckdb_path is not None and not Path(wh.duckdb_path).exists():
            raise click.ClickException(f"no warehouse at {wh.duckdb_path}: run `creator-sync "
                                       f"sync` first [{where}]")
        try:
            with open_warehouse(wh, read_only=True) as db:
                rows = (db.fetchall(f"select {columns} from {db.table(wh.dataset, SYNC_RESOURCES)}"
                                    " order by resource")
                        if db.has_table(wh.dataset, SYNC_RESOURCES) else [])
        except MissingWarehouseCredentials as exc:
            raise BadSetting(str(exc), "key=creator_sync.postgres_dsn") from None
        except WarehouseUnavailable as exc:
            raise click.ClickException(str(exc)) from None
    else:
        from .factory import build_pipeline

        with build_pipeline(wh).sql_client() as client:
            table = client.make_qualified_table_name(SYNC_RESOURCES)
            rows = client.execute_sql(f"select {columns} from {table} order by resource") or []
    return [dict(zip(("resource", "status", "reason", "last_attempt_at", "last_synced_at"), r,
                     strict=True)) for r in rows]


def _totals(wh: Warehouse, resources: list[str]) -> dict[str, dict[str, Any]]:
    """Per resource and site: the API's total beside the rows landed (completeness.py), on
    the same connection kinds as `_recorded`."""
    if not resources:
        return {}
    if wh.destination in ("duckdb", "postgres"):
        with open_warehouse(wh, read_only=True) as db:
            return resource_totals(
                lambda sql, *args: db.fetchall(sql.replace("%s", "?"), list(args)),
                lambda name: db.table(wh.dataset, name), wh.dataset, resources)
    from .factory import build_pipeline

    with build_pipeline(wh).sql_client() as client:
        return resource_totals(lambda sql, *args: client.execute_sql(sql, *args) or [],
                               client.make_qualified_table_name, client.dataset_name, resources)


def _site_states(wh: Warehouse) -> dict[str, dict[str, Any]]:
    """Resource -> its state per site, from the local pipeline state (empty without one)."""
    path = Path(wh.pipelines_dir) / wh.pipeline_name / "state.json"
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    resources = state.get("sources", {}).get(SOURCE_NAME, {}).get("resources", {})
    return resources if isinstance(resources, dict) else {}


def status_rows(wh: Warehouse, where: str = "key=creator_sync.duckdb") -> list[dict[str, Any]]:
    """One entry per resource: status, what is left (per site), why it failed, sync times.
    `where`: where the DuckDB file's path came from (`flag=--duckdb`), for the error."""
    states = _site_states(wh)
    out = []
    recorded = _recorded(wh, where)
    totals = _totals(wh, [row["resource"] for row in recorded])
    for row in recorded:
        status = SHOWN.get(row["status"], row["status"])
        sites = []
        for site, site_state in (states.get(row["resource"]) or {}).items():
            if not isinstance(site_state, dict) or site.startswith("_via"):
                continue
            place = place_of(site_state)
            if is_done(site_state) or place is not None:
                sites.append({"site": None if site == "_all" else site,
                              "status": "complete" if place is None else "partial",
                              "from_page": place.page if place else None, "since": None})
            elif status == "partial" and site_state.get("cursor"):
                # listed, then the catch-up of what changed since was cut (or a window
                # stopped): its cursor moved, the next sync reads the changes since it
                sites.append({"site": None if site == "_all" else site, "status": "catch-up",
                              "from_page": None, "since": site_state["cursor"]})
        out.append({
            "resource": row["resource"], "status": status,
            "left": (row["reason"] or "").removeprefix("left: ") if status == "partial" else None,
            "reason": row["reason"] if status in ("failed", "skipped") else None,
            "last_attempt_at": _iso(row["last_attempt_at"]),
            "last_synced_at": _iso(row["last_synced_at"]), "sites": sites,
        })
        _add_totals(out[-1], totals.get(row["resource"]))
    return out


def _add_totals(entry: dict[str, Any], totals: dict[str, Any] | None) -> None:
    """`api_total` and `rows` beside the resource (its sites summed) and each site: in the
    site entries the listing state gave, and one for every other site a total was read for."""
    totals = totals or {"api_total": None, "rows": None, "rows_since": None, "matches": None,
                        "total_read_at": None, "no_total_reason": None, "sites": []}
    entry.update({k: totals[k] for k in ("api_total", "rows", "rows_since", "matches",
                                         "total_read_at", "no_total_reason")})
    explained = [f"site {s['site'] or '(all)'}: {s['explanation']}"
                 for s in totals["sites"] if s["explanation"]]
    entry["explanation"] = "; ".join(explained) or None
    by_site = {s["site"]: s for s in entry["sites"]}
    for site in totals["sites"]:
        known = by_site.get(site["site"])
        extra = {k: v for k, v in site.items() if k != "site"}
        if known is None:
            entry["sites"].append({"site": site["site"], "status": None, "from_page": None, **extra})
        else:
            known.update(extra)
    for site in entry["sites"]:
        if "api_total" not in site:
            site.update({"api_total": None, "rows": None, "rows_since": None,
                         "total_read_at": None, "matches": None, "explanation": None,
                         "no_total_reason": NOT_READ})


def _when(value: str | None) -> str:
    """An ISO time as a reader takes it in: `2026-11-27 11:53 UTC` (`--json` keeps ISO)."""
    if not value:
        return "never"
    return dt.datetime.fromisoformat(value).astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def format_status(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "no sync recorded yet: run `creator-sync sync`"
    lines = [f"{'resource':<22}{'status':<10}{'last complete sync':<22}detail"]
    for r in rows:
        detail = f"left: {r['left']}" if r["left"] else r["reason"] or ""
        lines.append(f"{r['resource']:<22}{r['status']:<10}{_when(r['last_synced_at']):<22}"
                     f"{detail}".rstrip())
        if r["status"] == "partial":  # where each site's listing stands
            for site in r["sites"]:
                where = (f"from page {site['from_page']}" if site["status"] == "partial"
                         else f"listed; changes since {_when(site['since'])} left"
                         if site["status"] == "catch-up" else "complete")
                lines.append(f"  site {site['site'] or '(all)'}: {where}")
    lines += _total_lines(rows)
    partial = [r["resource"] for r in rows if r["status"] == "partial"]
    if partial:
        lines.append(f"partial: {', '.join(partial)}; the next `creator-sync sync` goes on "
                     "from where they stopped")
    return "\n".join(lines)


def _total_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The API's totals beside the rows landed: one line per resource, and each mismatch
    with its explanation; rows created since the total was read are said, not compared."""
    lines = ["", f"{'resource':<22}{'api total':>10}{'rows':>10}  check"]
    for r in rows:
        if r.get("api_total") is None:
            check = f"no total: {r['no_total_reason']}" if r.get("no_total_reason") else "no total"
            total = "-"
        else:
            check = ("matches" if r["matches"] else f"MISMATCH: {r['explanation']}"
                     if r["matches"] is False else f"not compared: {r['no_total_reason']}")
            if r["matches"] and r.get("rows_since"):
                check += (f" (+{r['rows_since']:,} row(s) created since it was read "
                          f"{_when(r['total_read_at'])}; the next full listing counts them)")
            total = f"{r['api_total']:,}"
        count = "-" if r.get("rows") is None else f"{r['rows']:,}"
        lines.append(f"{r['resource']:<22}{total:>10}{count:>10}  {check}")
    return lines


@click.command("status")
@option("duckdb")
@option("dataset")
@option("destination")
@option("postgres_dsn")
@option("pipelines_dir")
@click.option("--json", "as_json", is_flag=True, help="The same, as JSON.")
@click.option("--verbose", "-v", is_flag=True, help="Tracebacks on failure.")
def status_command(as_json: bool, verbose: bool, **flags: Any) -> None:
    """Per resource and site: complete, partial (and what is left) or failed, with the last
    sync time; and the API's total beside the rows landed, a mismatch explained.

    Exit status: 0 success, 1 failure at run time, 2 usage or configuration error.
    """
    with reported_failures(verbose):
        warn_unknown_keys()
        settings = Settings(**flags)
        rows = status_rows(warehouse_of(settings), settings.where("duckdb"))
    click.echo(json.dumps(rows, indent=2) if as_json else format_status(rows))
