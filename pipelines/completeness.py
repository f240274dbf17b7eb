"""Per resource and site: the API's total that the last complete listing read (`api_totals`)
beside the rows landed and not deleted, a mismatch flagged and explained where it can be
(issue 40). `creator-sync status` shows it; `analytics.data_coverage` does the same in SQL.

`query(sql, *args)` runs one statement on the warehouse (`%s` placeholders) and returns rows:
DuckDB read-only or any destination's client, whichever the caller holds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from creator_sync.sources.creator_platform import API_TOTALS, REJECTED_RECORDS, RESOURCES

Query = Callable[..., Sequence[Sequence[Any]]]
Quote = Callable[[str], str]

# resources whose rows are not one per listed record: no total compares with them
NO_LISTING = {"me": "a single record (GET /me), not a listing: no total to compare"}
NOT_YET = "no complete listing has read a total yet (the next full listing does)"


def resource_totals(query: Query, table: Quote, dataset: str,
                    resources: Sequence[str]) -> dict[str, dict[str, Any]]:
    """resource -> {api_total, rows, matches, sites: [...], no_total_reason}. `api_total` and
    `rows` of a resource sum its sites (`api_total` null when a site has none)."""
    present = {r[0]: set() for r in query(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", dataset)}
    for name, column in query("SELECT table_name, column_name FROM information_schema.columns "
                              "WHERE table_schema = %s", dataset):
        if name in present:
            present[name].add(column)
    recorded: dict[str, list[tuple[Any, ...]]] = {}
    if API_TOTALS in present:
        for row in query(f"SELECT resource, site_id, table_name, api_total, first_page_total, "
                         f"read_at, listing_started_at, no_total_reason FROM {table(API_TOTALS)} "
                         "ORDER BY resource, site_id"):
            recorded.setdefault(row[0], []).append(tuple(row[1:]))
    rejected: dict[tuple[str, str | None], int] = {}
    if REJECTED_RECORDS in present:
        for name, site, count in query(f"SELECT resource, site_id, COUNT(*) FROM "
                                       f"{table(REJECTED_RECORDS)} GROUP BY resource, site_id"):
            rejected[(name, site)] = int(count)
    out = {}
    for resource in resources:
        sites = []
        for site, tbl, total, first, read_at, started, reason in recorded.get(resource, ()):
            counts = _rows(query, table, tbl, present.get(tbl), site, started)
            sites.append(_compare(site, total, first, read_at, reason, counts,
                                  rejected.get((resource, site), 0)))
        if not sites:
            res = RESOURCES.get(resource)
            counts = _rows(query, table, res.table, present.get(res.table), None, None) if res else None
            out[resource] = {"api_total": None, "rows": counts[0] if counts else None,
                             "matches": None, "total_read_at": None,
                             "no_total_reason": NO_LISTING.get(resource, NOT_YET), "sites": []}
            continue
        totals = [s["api_total"] for s in sites]
        rows = [s["rows"] for s in sites]
        api_total = None if None in totals else sum(totals)
        reasons = sorted({s["no_total_reason"] for s in sites if s["no_total_reason"]})
        out[resource] = {
            "api_total": api_total, "rows": None if None in rows else sum(rows),
            "matches": None if api_total is None else all(s["matches"] for s in sites),
            "total_read_at": min(s["total_read_at"] for s in sites),
            "no_total_reason": "; ".join(reasons) or None, "sites": sites,
        }
    return out


def _rows(query: Query, table: Quote, tbl: str, columns: set[str] | None, site: str | None,
          started: datetime | None) -> tuple[int, int, int] | None:
    """(rows not deleted, rows flagged deleted, rows not deleted created since `started`) of
    `tbl` for `site`: none while the table is not there (nothing landed yet); None when it
    has no `site_id` to count by."""
    if columns is None:
        return 0, 0, 0
    if site is not None and "site_id" not in columns:
        return None
    deleted = "COALESCE(_is_deleted, FALSE)" if "_is_deleted" in columns else "FALSE"
    created = ("created_at > %s" if started is not None and "created_at" in columns else "FALSE")
    where, args = ("WHERE site_id = %s", [site]) if site is not None else ("", [])
    row = query(f"SELECT COALESCE(SUM(CASE WHEN {deleted} THEN 0 ELSE 1 END), 0), "
                f"COALESCE(SUM(CASE WHEN {deleted} THEN 1 ELSE 0 END), 0), "
                f"COALESCE(SUM(CASE WHEN NOT {deleted} AND {created} THEN 1 ELSE 0 END), 0) "
                f"FROM {table(tbl)} {where}", *([started] if created != "FALSE" else []), *args)[0]
    return int(row[0]), int(row[1]), int(row[2])


def _compare(site: str | None, total: int | None, first: int | None, read_at: datetime | None,
             reason: str | None, counts: tuple[int, int, int] | None, rejected: int
             ) -> dict[str, Any]:
    rows = counts[0] if counts else None
    entry: dict[str, Any] = {
        "site": site, "api_total": total, "rows": rows,
        "total_read_at": read_at.isoformat() if read_at is not None else None,
        "matches": None, "explanation": None, "no_total_reason": reason,
    }
    if total is None:
        return entry
    if counts is None:
        entry["no_total_reason"] = "the table has no rows per site to count"
        entry["api_total"] = None
        return entry
    entry["matches"] = rows == total
    if not entry["matches"]:
        entry["explanation"] = explain(total, first, counts, rejected)
    return entry


def explain(total: int, first: int | None, counts: tuple[int, int, int], rejected: int) -> str:
    """Why the rows landed differ from the API's total, as far as the warehouse can tell."""
    rows, deleted, created_since = counts
    short = total - rows
    why = []
    if rejected and short > 0:
        why.append(f"{rejected} record(s) set aside in rejected_records (a value that cannot "
                   "be read; the next sync reads them again)")
    if deleted and short > 0:
        why.append(f"{deleted} row(s) flagged deleted (`_is_deleted`) since the total was read")
    if first is not None and first != total:
        why.append(f"the listing changed while it was read (total {first} at its first page, "
                   f"{total} at its last)")
    if created_since and short < 0:
        why.append(f"{created_since} row(s) created since the listing began (incremental syncs "
                   "or webhooks since; the next full listing counts them)")
    gap = (f"{short} fewer row(s) than the API's total" if short > 0
           else f"{-short} more row(s) than the API's total")
    return gap + ": " + ("; ".join(why) if why else "unexplained")
