"""Rows a re-read returned unchanged are not loaded again (sources/creator_platform/unchanged.py),
and the warehouse stays what a fresh full sync writes: rows, `_is_deleted`, link tables.

Against the in-memory fake API: a dimension (`products`, listed in full every run), a dimension
read with details (`forms`: an included `contact_tags` row and the `forms_contact_tags` link
table, marked by "written or seen this run"), and `contact_tags` itself.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path

import dlt
from fakeapi import record
from sandbox_helpers import query, snapshot

from creator_sync.common.locking import pipeline_lock
from creator_sync.pipelines.factory import resolve_warehouse
from creator_sync.pipelines.sync import run_sync
from creator_sync.sources.creator_platform.unchanged import Unchanged, group_hash

SITE = "2147483650"
RESOURCES = ("products", "contact_tags", "forms")
FORM = "2800000000"


def _world(api, *, tags: list[str], title: str = "P1", products: int = 4) -> None:
    api.collections["products"] = [
        record("products", 3000000100 + i, site=SITE, title=title if i == 1 else f"P{i}")
        for i in range(products)]
    api.collections["contact_tags"] = [record("contact_tags", t, site=SITE, name=f"t{t}") for t in tags]
    form = record("forms", FORM, site=SITE, name="Signup")
    form["relationships"]["contact_tags"] = {"data": [{"id": t, "type": "contact_tags"} for t in tags]}
    api.collections["forms"] = [form]
    included = [record("contact_tags", t, site=SITE, name=f"t{t}") for t in tags]
    api.details[("forms", FORM)] = {"data": copy.deepcopy(form), "included": included}


def _run(api, settings):
    return run_sync(settings, transport=api.transport(), show_progress=False)


def _flags(db: str) -> dict[str, list[tuple]]:
    return {t: query(db, f'select id, _is_deleted from creator_platform."{t}" order by id')
            for t in ("products", "contact_tags", "forms")}


def _links(db: str) -> list[tuple]:
    return query(db, "select form_id, contact_tag_id from creator_platform.forms_contact_tags "
                     "order by 1, 2")


def _loaded(result) -> dict[str, int]:
    return {t: new + updated for t, (new, updated) in result.tables.items() if new + updated}


def _fresh(api, settings_for, tmp_path: Path, name: str) -> str:
    (tmp_path / name).mkdir()
    settings = settings_for(resources=RESOURCES,
                            warehouse=resolve_warehouse(duckdb=str(tmp_path / name / "wh.duckdb")))
    _run(api, settings)
    return settings.warehouse.duckdb_path


def test_an_unchanged_rerun_loads_nothing_and_keeps_every_row_alive(fake_api, settings_for):
    _world(fake_api, tags=["4000000001", "4000000002"])
    settings = settings_for(resources=RESOURCES)
    db = settings.warehouse.duckdb_path
    first = _run(fake_api, settings)
    assert _loaded(first).get("products") == 4
    before, flags = snapshot(db), _flags(db)

    again = _run(fake_api, settings)
    assert _loaded(again) == {}  # nothing changed: no row written again
    assert again.deleted == {}
    assert snapshot(db) == before
    assert _flags(db) == flags  # the link rows and included tags of the form were seen: alive
    assert all(not deleted for rows in flags.values() for _, deleted in rows)


def test_a_changed_and_a_deleted_row_equal_a_fresh_sync(fake_api, settings_for, tmp_path):
    _world(fake_api, tags=["4000000001", "4000000002"])
    settings = settings_for(resources=RESOURCES)
    db = settings.warehouse.duckdb_path
    _run(fake_api, settings)
    _run(fake_api, settings)  # hashes of every row in place

    # one product renamed, one gone; the form drops a tag (its link group changes) and the tag
    # is deleted upstream
    _world(fake_api, tags=["4000000001"], title="renamed", products=3)
    delta = _run(fake_api, settings)
    # the renamed one, and the gone one flagged by the source in the same load (deletions.py);
    # the unchanged one is not loaded again
    assert _loaded(delta)["products"] == 2
    assert delta.deleted.get("products") == 1
    fresh = _fresh(fake_api, settings_for, tmp_path, "fresh")
    got, want = snapshot(db), snapshot(fresh)
    assert got.keys() == want.keys()
    for table in set(want) - {"products", "contact_tags"}:  # those keep their deleted rows
        assert got[table] == want[table], table
    assert query(db, "select title from creator_platform.products where id = '3000000101'") == \
        [("renamed",)]
    assert _links(db) == _links(fresh) == [(FORM, "4000000001")]
    flags = _flags(db)
    assert ("3000000103", True) in flags["products"]  # gone upstream: marked
    assert ("4000000002", True) in flags["contact_tags"]
    alive = {t: [r for r in rows if not r[1]] for t, rows in flags.items()}
    assert alive == {t: [r for r in rows if not r[1]] for t, rows in _flags(fresh).items()}


def test_a_crash_between_extract_and_load_then_rerun_loses_no_change(fake_api, settings_for,
                                                                      tmp_path):
    """The hashes of a killed run travel in its pending package with its rows: the rerun loads
    that package first, and a change it carried is in the warehouse, not skipped as 'stored'."""
    _world(fake_api, tags=["4000000001", "4000000002"])
    settings = settings_for(resources=RESOURCES)
    db = settings.warehouse.duckdb_path
    _run(fake_api, settings)
    _run(fake_api, settings)
    _world(fake_api, tags=["4000000001", "4000000002"], title="renamed")

    pid = os.fork()
    if pid == 0:  # the child dies after extract, before normalise and load
        try:
            os.environ["CREATOR_SYNC_KILL_AT"] = "extracted"
            _run(fake_api, settings)
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == 9

    rerun = _run(fake_api, settings)
    assert rerun.pending_loaded == 1
    assert query(db, "select title from creator_platform.products where id = '3000000101'") == \
        [("renamed",)]
    fresh = _fresh(fake_api, settings_for, tmp_path, "fresh")
    assert snapshot(db) == snapshot(fresh)
    assert _flags(db) == _flags(fresh)
    wh = settings.warehouse
    with pipeline_lock(wh.pipelines_dir, wh.pipeline_name, timeout=0):
        pipeline = dlt.attach(pipeline_name=wh.pipeline_name, pipelines_dir=wh.pipelines_dir)
        assert not pipeline.has_pending_data


def test_a_full_refresh_and_a_new_table_load_every_row(fake_api, settings_for):
    _world(fake_api, tags=["4000000001"])
    settings = settings_for(resources=RESOURCES)
    _run(fake_api, settings)
    _run(fake_api, settings)
    refreshed = _run(fake_api, settings_for(resources=RESOURCES, full_refresh=True))
    assert _loaded(refreshed)["products"] == 4  # the tables were dropped: every row again


def test_link_groups_are_dropped_whole_or_loaded_whole():
    """A link table is merged per parent: dropping part of a parent's rows would delete the rest."""
    rows = [{"form_id": "1", "contact_tag_id": "a"}, {"form_id": "1", "contact_tag_id": "b"}]
    known = {"forms_contact_tags": {"1": group_hash(rows[:1])}}  # the last run had only `a`
    seen: dict[str, set[str]] = {}
    kept = Unchanged(known, lambda t: True, lambda t, k: seen.setdefault(t, set()).update(k)) \
        .filter(1, {"forms_contact_tags": rows})
    assert kept == {"forms_contact_tags": rows} and seen == {}
    same = Unchanged({"forms_contact_tags": {"1": group_hash(list(reversed(rows)))}},
                     lambda t: True, lambda t, k: seen.setdefault(t, set()).update(k))
    assert same.filter(1, {"forms_contact_tags": rows}) == {}  # order-free: unchanged
    assert seen == {"forms_contact_tags": {"1"}}


def test_hashes_leave_out_the_extraction_time_and_stay_bounded():
    from datetime import UTC, datetime, timedelta

    from creator_sync.sources.creator_platform import unchanged

    t0 = datetime(2026, 3, 1, tzinfo=UTC)
    a = {"id": "1", "title": "x", "_extracted_at": t0}
    assert group_hash([a]) == group_hash([{**a, "_extracted_at": t0 + timedelta(hours=1)}])
    assert group_hash([a]) != group_hash([{**a, "title": "y"}])
    keep = Unchanged(None, lambda t: True, lambda t, k: None, recent=("t", "created_at"))
    for n in range(1, 200):  # an old, long listing: only the edges and the recent pages stay
        at = t0 + timedelta(minutes=n)
        keep.filter(n, {"t": [{"id": str(n), "created_at": at}]})
    state: dict = {}
    keep.save(state)
    kept = set(state[unchanged.STATE_KEY]["t"])
    assert "1" in kept and "199" in kept and "198" in kept
    assert len(kept) <= unchanged.HASHED_PAGES_MAX


def test_a_day_filtered_window_keeps_the_pages_where_the_next_window_starts():
    """`date_range` windows list from midnight: the pages holding that midnight's first records
    are kept, though they are neither the first, the last nor recent pages."""
    from datetime import UTC, datetime, timedelta

    from creator_sync.sources.creator_platform import unchanged
    from creator_sync.sources.creator_platform.endpoints import RESOURCES

    started = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    anchor = unchanged.next_day_window(RESOURCES["transactions"], started)
    assert anchor == datetime(2026, 3, 1, tzinfo=UTC)
    assert unchanged.next_day_window(RESOURCES["products"], started) is None
    keep = Unchanged(None, lambda t: True, lambda t, k: None,
                     recent=("t", "created_at"), anchor=anchor)
    for n in range(1, 100):  # one record every 20 minutes, oldest first
        at = started - timedelta(minutes=20 * (100 - n))
        keep.filter(n, {"t": [{"id": str(n), "created_at": at}]})
    state: dict = {}
    keep.save(state)
    kept = {int(k) for k in state[unchanged.STATE_KEY]["t"]}
    first_today = min(n for n in range(1, 100)
                      if started - timedelta(minutes=20 * (100 - n)) >= anchor)
    assert {first_today, first_today + 1} <= kept


def test_the_newest_records_by_another_field_are_kept_wherever_listed_and_bounded():
    """A listing sorted by `created_at` keeps the records the next run reads first by
    `-updated_at`, with their link groups, however far apart; at most `count` of them."""
    from datetime import UTC, datetime, timedelta

    from creator_sync.sources.creator_platform import unchanged

    t0 = datetime(2026, 3, 1, tzinfo=UTC)
    keep = Unchanged(None, lambda t: True, lambda t, k: None, recent=("t", "created_at"),
                     newest=(("updated_at",), 3))
    for n in range(1, 200):  # updated long after creation, the newest edits on middle pages
        row = {"id": str(n), "created_at": t0 + timedelta(minutes=n),
               "updated_at": t0 + timedelta(days=1, minutes=(n * 37) % 199)}
        keep.filter(n, {"t": [row], "t_tags": [{"t_id": str(n), "tag_id": "9"}]})
    state: dict = {}
    keep.save(state)
    newest = {str(n) for n in sorted(range(1, 200), key=lambda n: (n * 37) % 199)[-3:]}
    kept = state[unchanged.STATE_KEY]
    assert newest <= set(kept["t"]) and newest <= set(kept["t_tags"])
    assert len(kept["t"]) <= unchanged.HASHED_PAGES_MAX + 3


def test_a_key_read_twice_with_different_rows_keeps_no_hash():
    """Which read the destination holds is the merge's choice: the next run loads the key."""
    from creator_sync.sources.creator_platform import unchanged

    keep = Unchanged(None, lambda t: True, lambda t, k: None)
    keep.filter(1, {"t": [{"id": "1", "title": "a"}, {"id": "2", "title": "x"}]})
    keep.filter(2, {"t": [{"id": "1", "title": "b"}]})  # moved to the last page, and changed
    state: dict = {}
    keep.save(state)
    assert set(state[unchanged.STATE_KEY]["t"]) == {"2"}


def test_a_listing_that_loads_nothing_leaves_the_hashes_it_was_given():
    """A full listing keeps the hashes of more pages than the window after it re-reads. When
    that window loads nothing, the state stays as the full listing left it (so dlt has no
    state row to load); once a row is loaded, the state is what this run kept."""
    from datetime import UTC, datetime, timedelta

    from creator_sync.sources.creator_platform import unchanged

    t0 = datetime(2026, 3, 1, tzinfo=UTC)

    def page(n: int, title: str = "x") -> dict:
        return {"t": [{"id": str(n), "created_at": t0 + timedelta(days=n), "title": title}]}

    full = Unchanged(None, lambda t: True, lambda t, k: None, recent=("t", "created_at"))
    for n in range(1, 40):
        full.filter(n, page(n))
    state: dict = {}
    full.save(state)
    after_full = copy.deepcopy(state)
    assert len(after_full[unchanged.STATE_KEY]["t"]) > 2

    seen: set[str] = set()
    window = Unchanged(state[unchanged.STATE_KEY], lambda t: True,
                       lambda t, k: seen.update(k), recent=("t", "created_at"))
    assert window.filter(1, page(39)) == {}  # the newest record, unchanged: dropped
    window.save(state)
    assert state == after_full and seen == {"39"}

    changed = Unchanged(state[unchanged.STATE_KEY], lambda t: True, lambda t, k: None,
                        recent=("t", "created_at"))
    assert changed.filter(1, page(39, title="y")) == page(39, title="y")  # loaded
    changed.save(state)
    assert state[unchanged.STATE_KEY] == {"t": {"39": group_hash(page(39, title="y")["t"])}}


def test_a_dimension_emptied_upstream_is_marked_deleted_when_nothing_else_is_read(
        fake_api, settings_for):
    """Nothing loaded and nothing seen this run: the empty complete listing still decides."""
    _world(fake_api, tags=["4000000001"])
    settings = settings_for(resources=("products",))
    db = settings.warehouse.duckdb_path
    _run(fake_api, settings)
    _run(fake_api, settings)  # hashes of every row in place

    _world(fake_api, tags=["4000000001"], products=0)
    emptied = _run(fake_api, settings)
    assert _loaded(emptied) == {}
    assert emptied.deleted.get("products") == 4
    assert [deleted for _, deleted in query(db, "select id, _is_deleted from creator_platform.products")] \
        == [True] * 4


def test_a_row_a_webhook_wrote_since_is_reloaded_even_when_the_api_did_not_change(
        fake_api, settings_for):
    """The pull heals what deliveries got wrong (docs/webhooks.md: the pull stays the source of truth):
    a row the webhook loader wrote last is loaded again when re-read, hash or no hash."""
    import duckdb

    from creator_sync.pipelines.pushed_writes import PUSHED_LOAD_ID_PREFIX

    _world(fake_api, tags=["4000000001"])
    settings = settings_for(resources=("products",))
    db = settings.warehouse.duckdb_path
    _run(fake_api, settings)
    _run(fake_api, settings)  # hashes of every row in place
    want = query(db, "select id, title from creator_platform.products order by id")

    # an out-of-order delivery wrote an older title over one product
    con = duckdb.connect(db)
    con.execute("update creator_platform.products set title = 'stale', _dlt_load_id = ? "
                "where id = '3000000101'", [f"{PUSHED_LOAD_ID_PREFIX}1700000000.000000"])
    con.close()

    healed = _run(fake_api, settings)
    assert _loaded(healed) == {"products": 1}  # that row only; the others still dropped
    assert query(db, "select id, title from creator_platform.products order by id") == want
    assert query(db, "select count(*) from creator_platform.products "
                     f"where _dlt_load_id like '{PUSHED_LOAD_ID_PREFIX}%'") == [(0,)]
    assert _loaded(_run(fake_api, settings)) == {}  # and then nothing again


def _listing(**kw):
    """An oldest-first listing whose middle pages are let go (`HASHED_PAGES_MAX`, no recent pages)."""
    return Unchanged(None, lambda t: True, lambda t, k: None, recent=("t", "created_at"), **kw)


def _kept(keep: Unchanged) -> set[str]:
    from creator_sync.sources.creator_platform import unchanged

    state: dict = {}
    keep.save(state)
    return set(state.get(unchanged.STATE_KEY, {}).get("t", {}))


def _old_page(n: int, title: str = "") -> dict:
    from datetime import UTC, datetime, timedelta

    at = datetime(2026, 3, 1, tzinfo=UTC) + timedelta(days=n)  # a day apart: none recent
    return {"t": [{"id": str(n), "created_at": at, "title": title or f"r{n}"}]}


def test_a_key_whose_first_read_was_let_go_keeps_no_hash_when_read_again():
    """docs/performance.md#nothing-new: a first load appends a key's first read (`Batches` drops
    the later
    ones) and a merge keeps either: a hash of the later read alone would let the next run drop
    the changed record as unchanged, and the warehouse would keep the first read for good."""
    from creator_sync.sources.creator_platform import unchanged

    keep = _listing()
    for n in range(1, 30):
        keep.filter(n, _old_page(n))  # record 5 on page 5, let go (not an edge, not recent)
    last = _old_page(30)
    last["t"].append({**_old_page(5)["t"][0], "title": "edited"})  # moved to the end, changed
    keep.filter(30, last)
    kept = _kept(keep)
    assert "30" in kept and "1" in kept  # the edges are still kept
    assert "5" not in kept
    assert len(kept) <= unchanged.HASHED_PAGES_MAX


def test_a_key_read_on_a_kept_page_then_on_a_page_let_go_keeps_no_hash():
    keep = _listing()
    first = _old_page(1)
    first["t"].append({**_old_page(7)["t"][0], "id": "99"})
    keep.filter(1, first)  # page 1: kept (an edge)
    for n in range(2, 30):
        page = _old_page(n)
        if n == 7:  # read again on a page let go, changed
            page["t"].append({**page["t"][0], "id": "99", "title": "edited"})
        keep.filter(n, page)
    kept = _kept(keep)
    assert "99" not in kept and "1" in kept


def test_a_key_pruned_from_the_newest_then_read_again_keeps_no_hash():
    """The first read was held by `_NewestRecordRows` only, and pruned before the second came; the
    second is held by `_NewestRecordRows` alone (its page is let go: a drift pass's middle page)."""
    from datetime import UTC, datetime, timedelta

    t0 = datetime(2026, 3, 1, tzinfo=UTC)
    keep = _listing(newest=(("updated_at",), 2))
    for n in range(1, 31):  # record n updated at t0 + n hours: each page's record is the newest
        page = _old_page(n)
        page["t"][0]["updated_at"] = t0 + timedelta(hours=n)
        keep.filter(n, page)
    edited = {**_old_page(3)["t"][0], "title": "edited", "updated_at": t0 + timedelta(hours=31)}
    keep.filter(15, {"t": [edited]})
    kept = _kept(keep)
    assert "3" not in kept
    assert {"1", "29", "30"} <= kept


def test_a_key_read_twice_identically_on_kept_pages_keeps_its_hash():
    """A change feed's page and a window's page both held: the reads are compared, and an
    identical re-read keeps its hash, so a run with nothing new still loads nothing."""
    keep = _listing()
    keep.filter(1, {"t": [{"id": "1", "title": "a"}, {"id": "2", "title": "x"}]})
    keep.filter(2, {"t": [{"id": "3", "title": "y"}]})
    keep.filter(1, {"t": [{"id": "1", "title": "a"}]})  # the feed's page 1
    keep.filter(3, {"t": [{"id": "2", "title": "x"}]})  # and its page 3
    assert _kept(keep) == {"1", "2", "3"}


def _moved(api, *, edited: str | None) -> None:
    """30 products, page size 2 (15 pages, more than `HASHED_PAGES_MAX`): product 4 on page 3; with
    `edited`, listed again on a last page of its own with that title, as a record edited while
    the listing ran and moved to its end (the final total counts it once: no drift pass)."""
    products = [record("products", 3000000100 + i, site=SITE, title=f"P{i}") for i in range(30)]
    if edited is not None:
        products.append(record("products", 3000000104, site=SITE, title=edited))
    api.collections["products"] = products
    api.meta_shape = lambda _, number, size, total, pages: {
        "total_pages": pages, "total_count": 30, "current_page": number}


def _title(db: str) -> list[tuple]:
    return query(db, "select title from creator_platform.products where id = '3000000104'")


def test_a_record_read_twice_in_a_first_load_is_loaded_again_by_the_next_run(fake_api, settings_for):
    """End to end: the first load appends the first read ('P4'); the next run lists 'moved'
    once and must store it, not drop it as unchanged (docs/performance.md#nothing-new)."""
    settings = settings_for(resources=("products",), page_size=2, concurrency=1)
    db = settings.warehouse.duckdb_path
    _moved(fake_api, edited="moved")
    _run(fake_api, settings)
    assert _title(db) == [("P4",)]  # the first read: an append keeps it
    _moved(fake_api, edited=None)
    fake_api.collections["products"][4] = record("products", 3000000104, site=SITE, title="moved")
    _run(fake_api, settings)
    assert _title(db) == [("moved",)]


def test_a_record_read_twice_in_a_merge_is_loaded_again_by_the_next_run(fake_api, settings_for):
    """The same on a table the warehouse holds: the merge stores one of the two reads."""
    settings = settings_for(resources=("products",), page_size=2, concurrency=1)
    db = settings.warehouse.duckdb_path
    _moved(fake_api, edited=None)
    _run(fake_api, settings)
    _moved(fake_api, edited="moved")
    _run(fake_api, settings)
    _moved(fake_api, edited=None)
    fake_api.collections["products"][4] = record("products", 3000000104, site=SITE, title="moved")
    _run(fake_api, settings)
    assert _title(db) == [("moved",)]
