"""`_is_deleted` after complete listings: rows the platform no longer lists are marked, rows
listed again are unmarked (per table and site; the listings' ids come from the run's report)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

import dlt

from creator_sync.sources.creator_platform import link_columns

from .warehouse_sql import data_tables, existing_tables


def mark_deleted(
    pipeline: dlt.Pipeline,
    complete: Iterable[tuple[str, str | None]],
    load_ids: list[str],
    extract_started: datetime | None = None,
    listed: Mapping[tuple[str, str | None], set[str]] | None = None,
    seen: Mapping[tuple[str, str | None], set[str]] | None = None,
    began: Mapping[tuple[str, str | None], datetime] | None = None,
) -> dict[str, int]:
    """After complete listings, set `_is_deleted` for each (table, site) they cover.

    Where the listing's ids are known (`listed`: a dimension's own listing), a row is alive iff
    it was listed: a row another resource's `include` wrote this run (an archived tag a form
    still names) is not. Otherwise (tables filled by detail reads) a row is alive iff this run
    wrote it or read it unchanged (`seen`: keys per (table, site) of rows the run read but did
    not load again, see `sources.creator_platform.unchanged`). Either way a row someone else
    wrote after the extract started (the webhook loader) is spared: the listing could not have
    seen it. A deleted row that is listed again gets `_is_deleted = false` back.

    People (`began`: when their complete listing began, maybe rounds or runs ago; it writes
    every row it lists): a row is alive iff written since (`_extracted_at`) or seen.
    """
    marked: dict[str, int] = {}
    listed = listed or {}
    seen = seen or {}
    began = began or {}
    if not load_ids and not seen and not listed and not began:
        return marked  # a listing that read nothing still decides (every record gone)
    columns = data_tables(pipeline)  # once: each read of the schema costs ~45 ms
    with pipeline.sql_client() as client:
        pairs = list(complete)
        existing = existing_tables(client, {t for t, _ in pairs})
        for table, site in pairs:
            if table not in existing:
                continue
            if (table, site) in began:
                count = _mark_unwritten(client, table, site, [], began[(table, site)],
                                        seen.get((table, site)))
            elif (table, site) in listed:
                count = _mark_unlisted(client, table, site, listed[(table, site)], load_ids, extract_started)
            else:
                count = _mark_unwritten(client, table, site, load_ids, extract_started,
                                        seen.get((table, site)), key_column(table, columns.get(table, [])))
            if count:
                marked[table] = marked.get(table, 0) + count
    return marked


def key_column(table: str, columns: list[str]) -> str:
    """The column `unchanged.keyed` keys a table's rows by: `id`, or a link table's parent."""
    return "id" if "id" in columns else link_columns(table, columns)[0]


def _mark_unwritten(
    client: Any, table: str, site: str | None, load_ids: list[str],
    extract_started: datetime | None, seen: set[str] | None = None, key: str = "id",
) -> int:
    q = client.make_qualified_table_name(table)
    where = "" if site is None else " AND site_id = %s"
    # a row is gone unless this run wrote it or read it unchanged (`seen`)
    gone = "TRUE"
    args: list[Any] = []
    if load_ids:
        gone += f" AND _dlt_load_id NOT IN ({', '.join(['%s'] * len(load_ids))})"
        args += load_ids
    if seen:
        keys = sorted(seen)
        gone += (f" AND CAST({client.escape_column_name(key)} AS VARCHAR) NOT IN "
                 f"({', '.join(['%s'] * len(keys))})")
        args += keys
    if extract_started is not None:
        gone += " AND (_extracted_at IS NULL OR _extracted_at < %s)"
        args.append(extract_started)
    args += [] if site is None else [site]
    before = client.execute_sql(
        f"SELECT COUNT(*) FROM {q} WHERE _is_deleted IS NOT TRUE AND {gone}{where}", *args,
    )
    client.execute_sql(f"UPDATE {q} SET _is_deleted = ({gone}) WHERE 1 = 1{where}", *args)
    return int(before[0][0])


def _mark_unlisted(
    client: Any, table: str, site: str | None, ids: set[str], load_ids: list[str],
    extract_started: datetime | None,
) -> int:
    """Diff the stored rows against the listed ids in Python, then flip only what changed.

    Dimension listings are small (hundreds to a few thousand ids), and the diff keeps the SQL
    portable (no temp tables, no parameter-count limits).
    """
    q = client.make_qualified_table_name(table)
    where, args = ("", []) if site is None else (" WHERE site_id = %s", [site])
    rows = client.execute_sql(
        f"SELECT id, _is_deleted, _dlt_load_id, _extracted_at FROM {q}{where}", *args
    ) or []
    ours = set(load_ids)
    to_delete: list[str] = []
    to_restore: list[str] = []
    for rid, deleted, load_id, extracted_at in rows:
        if str(rid) in ids:
            if deleted is not False:
                to_restore.append(rid)
        elif deleted is not True:
            pushed_later = (
                load_id not in ours and extract_started is not None
                and extracted_at is not None and _aware(extracted_at) >= extract_started
            )
            if not pushed_later:
                to_delete.append(rid)
    for flag, todo in ((True, to_delete), (False, to_restore)):
        for start in range(0, len(todo), 1000):
            chunk = todo[start:start + 1000]
            marks = ", ".join(["%s"] * len(chunk))
            extra = "" if site is None else " AND site_id = %s"
            client.execute_sql(
                f"UPDATE {q} SET _is_deleted = %s WHERE id IN ({marks}){extra}",
                flag, *chunk, *([] if site is None else [site]),
            )
    return len(to_delete)


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
