"""run_sync end to end against an in-memory API: merge, deletes, link replacement, state, secrets."""

from __future__ import annotations

import duckdb
import pytest
from pipeline_fakes import FAKE_SECRET

from creator_sync.pipelines.sync import run_sync


def query(path, sql):
    with duckdb.connect(path, read_only=True) as con:
        return con.execute(sql).fetchall()


def test_full_then_incremental_with_deletes_and_link_replacement(fake_api, settings_for):
    settings = settings_for(resources=("sites", "products", "contacts"))
    db = settings.warehouse.duckdb_path
    first = run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert first.tables["contacts"] == (30, 0)
    assert first.tables["products"] == (6, 0)
    assert sorted(first.sites) == ["2147483650", "2147483651"]
    assert query(db, "select count(*), count(distinct id) from creator_platform.contacts") == [(30, 30)]
    assert query(db, "select count(*) from creator_platform.contacts_tags") == [(30,)]
    assert query(db, "select count(*) from creator_platform.sites where site_id = id") == [(2,)]

    # the platform stops listing one product (archived), and one contact loses all its tags
    gone = fake_api.collections["products"].pop(0)
    fake_api.collections["contacts"][3]["relationships"]["tags"] = {"data": []}
    second = run_sync(settings, transport=fake_api.transport(), show_progress=False)
    # nothing new; the contacts re-read in the window unchanged are not loaded again (only the
    # one whose tags changed may be), so the table may be missing from the summary
    new, updated = second.tables.get("contacts", (0, 0))
    assert new == 0 and updated <= 1
    assert second.deleted == {"products": 1}
    deleted = query(db, "select id from creator_platform.products where _is_deleted")
    assert deleted == [(gone["id"],)]
    assert query(db, "select count(*) from creator_platform.products where not _is_deleted") == [(5,)]
    cid = fake_api.collections["contacts"][3]["id"]
    assert query(db, f"select count(*) from creator_platform.contacts_tags where contact_id = '{cid}'") == [(0,)]
    assert query(db, "select count(*) from creator_platform.contacts_tags where contact_tag_id = ''") == [(0,)]

    # it comes back: live again
    fake_api.collections["products"].append(gone)
    run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert query(db, "select count(*) from creator_platform.products where _is_deleted") == [(0,)]


def test_incremental_plan_is_used_on_second_run(fake_api, settings_for):
    settings = settings_for(resources=("contacts",))
    run_sync(settings, transport=fake_api.transport(), show_progress=False)
    fake_api.requests.clear()
    result = run_sync(settings, transport=fake_api.transport(), show_progress=False)
    listed = [r for r in fake_api.requests if r.url.path == "/v1/contacts"]
    assert listed and all("filter[created_in_last]" in r.url.params for r in listed)
    assert all(r.url.params.get("sort") == "-created_at" for r in listed)  # newest first
    assert len(result.plans) == 2  # one plan per site
    assert all(reason.startswith("incremental since") for reason in result.plans.values())


def test_full_refresh_drops_state_and_tables_of_selected_resources(fake_api, settings_for):
    settings = settings_for(resources=("sites", "contacts"))
    run_sync(settings, transport=fake_api.transport(), show_progress=False)
    fake_api.collections["contacts"] = fake_api.collections["contacts"][:10]
    settings.full_refresh = True
    settings.source["resources"] = ("contacts",)
    result = run_sync(settings, transport=fake_api.transport(), show_progress=False)
    db = settings.warehouse.duckdb_path
    assert query(db, "select count(*) from creator_platform.contacts") == [(10,)]
    assert query(db, "select count(*) from creator_platform.sites") == [(2,)]  # not selected: kept
    assert all("first sync" in reason or "full" in reason for reason in result.plans.values())


def test_no_secret_or_token_anywhere(fake_api, settings_for, tmp_path, capsys):
    settings = settings_for(resources=("sites", "products", "contacts"))
    tokens: list[str] = []
    original = fake_api._token

    def spy():
        body = original()
        tokens.extend([body["access_token"], body["refresh_token"]])
        return body

    fake_api._token = spy
    run_sync(settings, transport=fake_api.transport(), show_progress=False)
    out = capsys.readouterr()
    needles = [FAKE_SECRET.encode(), *(t.encode() for t in tokens)]
    assert tokens
    scanned = 0
    for path in tmp_path.rglob("*"):
        if path.is_file():
            blob = path.read_bytes()
            scanned += 1
            for needle in needles:
                assert needle not in blob, f"secret found in {path}"
    assert scanned > 3
    for needle in needles:
        assert needle.decode() not in out.out + out.err
    assert repr(settings).count(FAKE_SECRET) == 0


def test_failure_mid_run_keeps_loaded_data_and_state(fake_api, settings_for):
    settings = settings_for(resources=("contacts",))
    run_sync(settings, transport=fake_api.transport(), show_progress=False)
    db = settings.warehouse.duckdb_path
    # a malformed record (a bad value alone is set aside: test_rejected_records.py)
    fake_api.collections["contacts"][0]["attributes"] = "not an object"
    result = run_sync(settings, transport=fake_api.transport(), show_progress=False)
    from creator_sync.pipelines.sync import failure_line

    line = failure_line(result)
    assert "attributes" in result.failed["contacts"] and "contacts" in line and "\n" not in line
    assert query(db, "select count(*) from creator_platform.contacts") == [(30,)]


def test_schema_drift_adds_a_column_unless_finance_tables_are_frozen(fake_api, settings_for, tmp_path):
    from fakeapi import record

    fake_api.collections["transactions"] = [
        record("transactions", 3000000500 + i, site="2147483650", amount_in_cents=1000 + i, created_at="2025-01-02T00:00:00Z") for i in range(4)
    ]
    settings = settings_for(resources=("transactions",))
    db = settings.warehouse.duckdb_path
    first = run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert first.tables["transactions"] == (4, 0)
    for txn in fake_api.collections["transactions"]:
        txn["attributes"]["risk_score_in_cents"] = 7
    frozen = settings_for(resources=("transactions",), freeze_finance_schema=True)
    with pytest.raises(Exception) as err:
        run_sync(frozen, transport=fake_api.transport(), show_progress=False)
    from creator_sync.pipelines.sync import one_line

    assert "risk_score_in_cents" in one_line(err.value)
    cols = {r[0] for r in query(db, "select column_name from information_schema.columns where table_name = 'transactions'")}
    assert "risk_score_in_cents" not in cols
    run_sync(settings, transport=fake_api.transport(), show_progress=False)  # not frozen: new column
    assert query(db, "select distinct risk_score_in_cents from creator_platform.transactions") == [(7,)]


def test_pii_hash_reaches_the_warehouse(fake_api, settings_for):
    settings = settings_for(resources=("contacts",), pii="hash")
    run_sync(settings, transport=fake_api.transport(), show_progress=False)
    emails = [r[0] for r in query(settings.warehouse.duckdb_path, "select email from creator_platform.contacts")]
    assert len(emails) == 30 and all(len(e) == 64 and "@" not in e for e in emails)


def test_records_moving_during_the_listing_are_not_lost(fake_api, settings_for):
    """A purchase updated mid-listing jumps to the end (sort=updated_at): the record that slid
    onto an already-read page is caught by the drift check's second pass."""
    from fakeapi import record

    fake_api.collections["purchases"] = [
        record("purchases", 3000001000 + i, site="2147483650", updated_at=f"2025-01-01T00:{i // 60:02d}:{i % 60:02d}Z")
        for i in range(250)
    ]
    moved = {"done": False}

    def hook(request):
        if request.url.path == "/v1/purchases" and request.url.params.get("page[number]") == "2" and not moved["done"]:
            moved["done"] = True
            rows = fake_api.collections["purchases"]
            first = rows.pop(0)  # record 0 (already read on page 1) is updated: goes last
            first["attributes"]["updated_at"] = "2025-02-01T00:00:00Z"
            rows.append(first)
        return None

    fake_api.hook = hook
    settings = settings_for(resources=("purchases",), concurrency=1)
    result = run_sync(settings, transport=fake_api.transport(), show_progress=False)
    ids = {r[0] for r in query(settings.warehouse.duckdb_path, "select id from creator_platform.purchases where site_id = '2147483650'")}
    assert ids == {str(3000001000 + i) for i in range(250)}
    assert result.stats.pages["purchases"] > 4  # a second pass happened


def test_bad_included_record_names_the_detail_response(fake_api, settings_for):
    from fakeapi import record

    course = record("courses", "2700000000", site="2147483650", title="C")
    fake_api.collections["courses"] = [course]
    fake_api.details[("courses", "2700000000")] = {
        "data": course, "included": [{"type": "modules", "attributes": {"title": "no id"}}]
    }
    settings = settings_for(resources=("courses",))
    result = run_sync(settings, transport=fake_api.transport(), show_progress=False)
    line = result.failed["courses"]
    assert "no usable id" in line and "/v1/courses/2700000000?include=" in line


def test_summary_reports_the_rate_and_stats_keep_it(fake_api, settings_for):
    import httpx

    from creator_sync.pipelines.sync import format_summary

    refused = {"n": 0}

    def two_429s(request):
        if request.url.path.endswith("/contacts") and refused["n"] < 2:
            refused["n"] += 1
            return httpx.Response(429, headers={"Retry-After": "0"})
        return None

    fake_api.hook = two_429s
    result = run_sync(settings_for(resources=("sites", "contacts")),
                      transport=fake_api.transport(), show_progress=False)
    rate = result.stats.rate
    assert rate is not None and rate.mode == "adaptive" and rate.throttled == 2
    assert result.stats.throttled == 2 and result.tables["contacts"] == (30, 0)
    assert rate.found_per_minute is None  # two early 429s explain no per-minute count
    summary = format_summary(result)
    # a run shorter than a minute states its requests, not a busiest minute (issue 38)
    assert rate.span_s < 60 and 0 < rate.answered < result.stats.requests  # (not the token's)
    assert f"rate: no limit found, {rate.answered} request(s) in " in summary
    assert summary.split("rate: ")[1].splitlines()[0].endswith("(adaptive; 2 x 429)")


def test_a_nothing_new_sync_says_so_in_words(fake_api, settings_for):
    """Issue 32, point 9: no empty table under a header."""
    from creator_sync.pipelines.sync import format_summary

    settings = settings_for(resources=("sites", "contacts"))
    first = format_summary(run_sync(settings, transport=fake_api.transport(), show_progress=False))
    assert first.splitlines()[0].split() == ["table", "new", "updated"]
    again = run_sync(settings, transport=fake_api.transport(), show_progress=False)
    summary = format_summary(again)
    assert summary.splitlines()[0] == (
        "nothing new: no record was added or changed since the last sync")
    assert "updated" not in summary and "sites: 2  requests:" in summary
