"""Per resource and site: the API's total that the last complete listing read (`api_totals`)
beside the rows landed and not deleted, a mismatch flagged and explained where it can be
(issue 40). `creator-sync status` shows it; `analytics.data_coverage` does the same in SQL.

`query(sql, *args)` runs one statement on the warehouse (`%s` placeholders) and returns rows:
DuckDB read-only or any destination's client, whichever the caller holds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from creator_sync.sources.creator_platform import API_TOTALS, REJECTED_RECORDS, RESOURCES

Query = Callable[..., Sequence[Sequence[Any]]]
Quote = Callable[[str], str]

# resources whose rows are not one per listed record: no total compares with them
NO_LISTING = {"me": "a single record (GET /me), not a listing: no total to compare"}
NOT_YET = "no complete listing has read a total yet (the next full listing does)"

# the column that says when a table's record came to be, where it is not `created_at`; a
# DATE column tells the day only (records of the total's own day may fall either side)
CREATED_COLUMN = {"payouts": "initiated_date"}
DATE_COLUMNS = {"initiated_date"}
# the platform's clock (`read_at`) comes from a Date header: whole seconds
CLOCK_STEP = timedelta(seconds=1)


class Counts(NamedTuple):
    """A table's rows for one site, beside the moment its total was read (`read_at`)."""

    rows: int  # not deleted
    deleted: int  # flagged `_is_deleted`
    since: int  # not deleted, created after the total was read: the total cannot count them
    unsure: int  # not deleted, created so near `read_at` that either side is possible
    dated: bool  # the table has a creation column to tell rows created since by


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
        for site, tbl, total, first, read_at, _started, reason in recorded.get(resource, ()):
            counts = _rows(query, table, tbl, present.get(tbl), site, read_at)
            sites.append(_compare(site, total, first, read_at, reason, counts,
                                  rejected.get((resource, site), 0)))
        if not sites:
            res = RESOURCES.get(resource)
            counts = _rows(query, table, res.table, present.get(res.table), None, None) if res else None
            out[resource] = {"api_total": None, "rows": counts.rows if counts else None,
                             "rows_since": None, "matches": None, "total_read_at": None,
                             "no_total_reason": NO_LISTING.get(resource, NOT_YET), "sites": []}
            continue
        totals = [s["api_total"] for s in sites]
        rows = [s["rows"] for s in sites]
        since = [s["rows_since"] for s in sites if s["api_total"] is not None]
        api_total = None if None in totals else sum(totals)
        reasons = sorted({s["no_total_reason"] for s in sites if s["no_total_reason"]})
        out[resource] = {
            "api_total": api_total, "rows": None if None in rows else sum(rows),
            "rows_since": None if api_total is None or None in since else sum(since),
            "matches": _all(s["matches"] for s in sites) if api_total is not None else None,
            "total_read_at": min(s["total_read_at"] for s in sites),
            "no_total_reason": "; ".join(reasons) or None, "sites": sites,
        }
    return out


def _all(verdicts: Any) -> bool | None:
    """False when any site mismatches, None when any cannot be judged, else True."""
    seen = list(verdicts)
    return False if False in seen else None if None in seen else True


def _rows(query: Query, table: Quote, tbl: str, columns: set[str] | None, site: str | None,
          read_at: datetime | None) -> Counts | None:
    """`tbl`'s rows for `site` beside `read_at`: none while the table is not there (nothing
    landed yet); None when it has no `site_id` to count by."""
    if columns is None:
        return Counts(0, 0, 0, 0, True)
    if site is not None and "site_id" not in columns:
        return None
    deleted = "COALESCE(_is_deleted, FALSE)" if "_is_deleted" in columns else "FALSE"
    column = CREATED_COLUMN.get(tbl, "created_at")
    dated = column in columns and read_at is not None
    if not dated:
        since, unsure, args = "FALSE", "FALSE", []
    elif column in DATE_COLUMNS:  # the day only: the total's own day may fall either side
        since, unsure = f"{column} > %s", f"{column} = %s"
        args = [read_at.date(), read_at.date()]
    else:  # read_at is whole seconds: a record of that second may fall either side
        since, unsure = f"{column} >= %s", f"{column} >= %s AND {column} < %s"
        args = [read_at + CLOCK_STEP, read_at, read_at + CLOCK_STEP]
    where, site_args = ("WHERE site_id = %s", [site]) if site is not None else ("", [])
    row = query(f"SELECT COALESCE(SUM(CASE WHEN {deleted} THEN 0 ELSE 1 END), 0), "
                f"COALESCE(SUM(CASE WHEN {deleted} THEN 1 ELSE 0 END), 0), "
                f"COALESCE(SUM(CASE WHEN NOT {deleted} AND {since} THEN 1 ELSE 0 END), 0), "
                f"COALESCE(SUM(CASE WHEN NOT {deleted} AND {unsure} THEN 1 ELSE 0 END), 0) "
                f"FROM {table(tbl)} {where}", *args, *site_args)[0]
    return Counts(int(row[0]), int(row[1]), int(row[2]), int(row[3]), dated)


def _compare(site: str | None, total: int | None, first: int | None, read_at: datetime | None,
             reason: str | None, counts: Counts | None, rejected: int) -> dict[str, Any]:
    """One site's verdict. The total counts the records at `read_at`: rows created since are
    set beside it, not compared; where the table cannot tell them apart (no creation column)
    more rows than the total is no verdict, fewer still is a mismatch."""
    entry: dict[str, Any] = {
        "site": site, "api_total": total, "rows": counts.rows if counts else None,
        "rows_since": None,
        "total_read_at": read_at.isoformat() if read_at is not None else None,
        "matches": None, "explanation": None, "no_total_reason": reason,
    }
    if total is None:
        return entry
    if counts is None:
        entry["no_total_reason"] = "the table has no rows per site to count"
        entry["api_total"] = None
        return entry
    entry["rows_since"] = counts.since if counts.dated else None
    then = counts.rows - counts.since  # the rows the total can count, at most
    if then - counts.unsure <= total <= then:
        entry["matches"] = True
    elif total < counts.rows and not counts.dated:
        entry["no_total_reason"] = (
            f"total read {_when(read_at)} by the last full listing; not comparable with rows "
            "loaded since (the table has no creation time to tell them by; the next full "
            "listing compares)")
    else:
        entry["matches"] = False
        entry["explanation"] = explain(total, first, counts, rejected)
    return entry


def _when(value: datetime | None) -> str:
    return value.strftime("at %Y-%m-%d %H:%M UTC") if value is not None else "earlier"


def explain(total: int, first: int | None, counts: Counts, rejected: int) -> str:
    """Why the rows the total can count differ from it, as far as the warehouse can tell."""
    rows = counts.rows - counts.since
    short = total - rows
    why = []
    if rejected and short > 0:
        why.append(f"{rejected} record(s) set aside in rejected_records (a value that cannot "
                   "be read; the next sync reads them again)")
    if counts.deleted and short > 0:
        why.append(f"{counts.deleted} row(s) flagged deleted (`_is_deleted`) since the total "
                   "was read")
    if first is not None and first != total:
        why.append(f"the listing changed while it was read (total {first} at its first page, "
                   f"{total} at its last)")
    gap = (f"{short} fewer row(s) than the API's total" if short > 0
           else f"{-short} more row(s) than the API's total")
    if counts.since:
        gap += f" (not counting {counts.since} row(s) created since it was read)"
    return gap + ": " + ("; ".join(why) if why else "unexplained")
