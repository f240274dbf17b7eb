"""A table new to the destination is loaded with `append` (no staging, no merge), every later
load merges; the data is the same either way, with one row per key."""

from __future__ import annotations

import json

from sandbox_helpers import query, snapshot, sync

from creator_sync.sandbox.testing import start_sandbox
from creator_sync.sources.creator_platform import BOOKKEEPING_NAMES
from creator_sync.sources.creator_platform.hints import link_columns

SHARED = {"contact_tags", "modules", "lessons", "media", "fields"}


def dispositions(db) -> dict[str, str]:
    """Write disposition per data table in the schema stored by the last load (the run's
    bookkeeping tables, replaced whole each time, aside)."""
    raw = query(db, "select schema from creator_platform._dlt_version order by inserted_at desc limit 1")
    tables = json.loads(raw[0][0])["tables"]
    return {t: v.get("write_disposition") for t, v in tables.items()
            if not t.startswith("_dlt") and t not in BOOKKEEPING_NAMES}


def duplicated_keys(db) -> dict[str, int]:
    out = {}
    for table in dispositions(db):
        cols = [c for (c,) in query(db, "select column_name from information_schema.columns "
                                        "where table_schema = 'creator_platform' and table_name = ?", table)]
        # link and line tables: (parent, child) / (parent, line_number)
        key = "id" if "id" in cols else "(" + ", ".join(link_columns(table, cols)) + ")"
        extra = query(db, f"select count(*) - count(distinct {key}) from creator_platform.{table}")[0][0]
        if extra:
            out[table] = extra
    return out


def test_first_sync_appends_own_tables_then_merges(tmp_path):
    handle = start_sandbox(scale="tiny", sites=2, seed=42, now="2026-03-01T12:00:00Z")
    try:
        db = tmp_path / "wh.duckdb"
        sync(handle, db)
        first = dispositions(db)
        assert first["contacts"] == first["orders"] == first["contacts_tags"] == "append"
        assert first["order_items"] == "append"  # its own list now (C4), no other writer
        # tables that several resources can write in one run keep merge
        assert {t: first[t] for t in SHARED if t in first} == dict.fromkeys(SHARED & set(first), "merge")
        assert not duplicated_keys(db)
        reference = snapshot(db)

        second = sync(handle, db)  # the tables exist now: what is loaded merges, nothing doubles
        written = {t for t, (new, updated) in second.tables.items() if new + updated}
        # (rows re-read unchanged are not loaded again, so the run may write nothing at all)
        assert {dispositions(db)[t] for t in written - {"me"}} <= {"merge"}
        assert dispositions(db)["me"] == "replace"  # one row: the credential's user
        assert not duplicated_keys(db)
        assert snapshot(db) == reference

        before_refresh = dispositions(db)
        sync(handle, db, full_refresh=True, resources=("contacts",))  # dropped, so new again
        after = dispositions(db)
        # orders is untouched by a refresh of contacts (its stored disposition changes only
        # when rows of it are loaded, and those merge: checked above)
        assert after["contacts"] == "append" and after["orders"] == before_refresh["orders"]
        assert not duplicated_keys(db)
        assert snapshot(db) == reference
    finally:
        handle.stop()
