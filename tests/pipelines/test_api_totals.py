"""Proof of completeness (issue 40, point 6): a complete listing records the API's total per
resource and site (`api_totals`, read from the pages it fetched); `creator-sync status --json`
sets it beside the rows landed and not deleted, equal after a full sync of the sandbox, and a
mismatch is flagged with its explanation; the totals cost no request of their own."""

from __future__ import annotations

import json

from cli_run import SANDBOX_ID, run_cli
from sandbox_helpers import query, sync

from creator_sync.sources.creator_platform import RESOURCES, listing


def _status(work):
    done = run_cli(work, "status", "--json")
    assert done.returncode == 0, done.stderr
    return {r["resource"]: r for r in json.loads(done.stdout)}


def _sync(work, sandbox, *args):
    done = run_cli(work, "sync", "--base-url", sandbox.base_url, "--client-id", SANDBOX_ID,
                   "--no-progress", *args)
    assert done.returncode == 0, done.stderr
    return done


def test_a_full_sync_of_the_sandbox_matches_every_resource_and_site(sandbox_factory, tmp_path):
    sandbox = sandbox_factory(sites=2)
    work = tmp_path / "work"
    _sync(work, sandbox)
    rows = _status(work)
    assert set(rows) >= {r for r in RESOURCES if r != "me"}
    for name, r in rows.items():
        if name == "me":  # a single record, not a listing: said, not faked
            assert r["api_total"] is None and "not a listing" in r["no_total_reason"]
            continue
        assert r["api_total"] is not None, (name, r)
        assert r["api_total"] == r["rows"] and r["matches"] is True, (name, r)
        assert r["explanation"] is None and r["total_read_at"]
        with_totals = [s for s in r["sites"] if s["api_total"] is not None]
        expected_sites = 1 if not RESOURCES[name].site_scoped else 2
        assert len(with_totals) == expected_sites, (name, r["sites"])
        assert all(s["api_total"] == s["rows"] and s["matches"] for s in with_totals)
    assert rows["contacts"]["api_total"] > 0 and rows["payouts"]["api_total"] > 0
    text = run_cli(work, "status")
    assert text.returncode == 0 and "MISMATCH" not in text.stdout
    assert any(line.split()[:1] == ["contacts"] and line.endswith("matches")
               for line in text.stdout.splitlines())


def test_a_record_set_aside_is_flagged_with_its_explanation(sandbox_factory, tmp_path):
    sandbox = sandbox_factory(sites=2, unreadable_amounts=2)
    work = tmp_path / "work"
    _sync(work, sandbox, "--resources", "payouts")
    payouts = _status(work)["payouts"]
    assert payouts["api_total"] == payouts["rows"] + 2 and payouts["matches"] is False
    flagged = [s for s in payouts["sites"] if s["matches"] is False]
    assert flagged and all("set aside in rejected_records" in s["explanation"] for s in flagged)
    assert sum(int(s["explanation"].split()[0]) for s in flagged) == 2  # "N fewer row(s)..."
    assert "set aside in rejected_records" in payouts["explanation"]
    text = run_cli(work, "status").stdout
    line = next(x for x in text.splitlines() if x.startswith("payouts") and "MISMATCH" in x)
    assert "2 record(s) set aside" in line or "1 record(s) set aside" in line


def test_a_contact_deleted_after_the_listing_is_explained(sandbox_factory, tmp_path):
    """A contact flagged deleted after the total was read (as a later listing or erasure
    flags it, set here directly): the rows fall short of the total, and status says why."""
    sandbox = sandbox_factory(sites=1)
    db = tmp_path / "w.duckdb"
    assert not sync(sandbox, db, resources=["contacts"]).failed
    import duckdb

    with duckdb.connect(str(db)) as con:
        con.execute("update creator_platform.contacts set _is_deleted = true where id = "
                    "(select min(id) from creator_platform.contacts)")
    from creator_sync.common.warehouse import Warehouse
    from creator_sync.pipelines.status import status_rows

    wh = Warehouse(destination="duckdb", duckdb_path=str(db), dataset="creator_platform",
                   pipelines_dir=str(tmp_path / "p"), pipeline_name="x")
    contacts = next(r for r in status_rows(wh) if r["resource"] == "contacts")
    assert contacts["api_total"] == contacts["rows"] + 1 and contacts["matches"] is False
    assert "1 row(s) flagged deleted" in contacts["explanation"]


def _requests(sandbox, db):
    """Requests of a first sync and of the incremental sync after it (nothing new)."""
    first = sync(sandbox, db)
    again = sync(sandbox, db)
    assert not first.failed and not again.failed
    return first.stats.requests, again.stats.requests


def test_totals_cost_no_request_on_first_and_incremental_syncs(sandbox_factory, tmp_path,
                                                               monkeypatch):
    """Side by side on one sandbox: the same runs with the totals recorded and with them
    switched off send the same requests (totals come from pages already read); the
    incremental run keeps the total the full listing read."""
    sandbox = sandbox_factory(sites=2)
    with monkeypatch.context() as off:
        off.setattr(listing.Listing, "_report_total", lambda self, run, now: None)
        without = _requests(sandbox, tmp_path / "off.duckdb")
        assert "api_totals" not in {r[0] for r in query(
            tmp_path / "off.duckdb", "select table_name from information_schema.tables")}
    db = tmp_path / "on.duckdb"
    first = sync(sandbox, db)
    totals = "select resource, site_id, api_total, read_at from creator_platform.api_totals " \
             "where resource = 'transactions' order by 1, 2"
    before = query(db, totals)
    again = sync(sandbox, db)
    assert (first.stats.requests, again.stats.requests) == without
    assert again.stats.requests < first.stats.requests  # a window, not a full listing
    assert len(before) == 2 and query(db, totals) == before


def _status_rows(db, tmp_path):
    from creator_sync.common.warehouse import Warehouse
    from creator_sync.pipelines.status import format_status, status_rows

    wh = Warehouse(destination="duckdb", duckdb_path=str(db), dataset="creator_platform",
                   pipelines_dir=str(tmp_path / "p"), pipeline_name="x")
    rows = status_rows(wh)
    return {r["resource"]: r for r in rows}, format_status(rows)


def test_an_incremental_sync_after_new_activity_is_no_mismatch(sandbox_factory, tmp_path):
    """Records created after the full listing read its totals (sandbox activity, then an
    ordinary incremental sync) are set beside the total, not counted against it: no resource
    mismatches, payouts (no `created_at`, its day in `initiated_date`) included. A row the
    API counts that the warehouse lost, or a duplicate, still mismatches; in a table with no
    creation time, more rows than the total is no verdict, fewer still a mismatch."""
    import duckdb
    import httpx

    sandbox = sandbox_factory(sites=2)
    db = tmp_path / "w.duckdb"
    assert not sync(sandbox, db).failed
    response = httpx.post(sandbox.base_url + "/_sandbox/activity", json={"count": 24},
                          timeout=30)
    assert response.status_code == 200, response.text
    assert not sync(sandbox, db).failed
    rows, text = _status_rows(db, tmp_path)
    assert "MISMATCH" not in text, text
    assert all(r["matches"] is not False for r in rows.values()), rows
    grown = {name for name, r in rows.items() if r["rows_since"]}
    assert {"transactions", "payouts"} <= grown, grown  # the activity added to both
    for name in grown:
        r = rows[name]
        assert r["matches"] is True and r["rows"] == r["api_total"] + r["rows_since"], r
    assert "row(s) created since it was read" in text

    with duckdb.connect(str(db)) as con:  # lost rows the API counted, duplicates
        con.execute("delete from creator_platform.transactions where id = "
                    "(select min(id) from creator_platform.transactions)")
        con.execute("delete from creator_platform.custom_fields where id = "
                    "(select min(id) from creator_platform.custom_fields)")
        con.execute("insert into creator_platform.payouts select * replace (id || '-copy' as id)"
                    " from creator_platform.payouts where initiated_date < (select min(read_at)"
                    "::date from creator_platform.api_totals) and site_id = (select min(site_id) "
                    "from creator_platform.payouts) order by id limit 2")  # (the total's own day
        # may fall either side of it: 2 older rows, to be beyond what that day can explain)
    rows, text = _status_rows(db, tmp_path)
    transactions, custom_fields, payouts = (rows[n] for n in
                                            ("transactions", "custom_fields", "payouts"))
    assert transactions["matches"] is False
    assert "1 fewer row(s) than the API's total (not counting" in transactions["explanation"]
    assert custom_fields["matches"] is False and "1 fewer row(s)" in custom_fields["explanation"]
    assert payouts["matches"] is False and "2 more row(s)" in payouts["explanation"]
    assert "unexplained" in payouts["explanation"]
    assert sum("MISMATCH" in line for line in text.splitlines()) == 3, text

    with duckdb.connect(str(db)) as con:  # no creation time: more rows cannot be judged
        con.execute("insert into creator_platform.custom_fields select * replace "
                    "(id || '-new' as id) from creator_platform.custom_fields limit 2")
    custom_fields = _status_rows(db, tmp_path)[0]["custom_fields"]
    assert custom_fields["matches"] is None and custom_fields["explanation"] is None
    assert "not comparable with rows loaded since" in custom_fields["no_total_reason"]


def test_status_names_the_flag_that_gave_a_missing_warehouse(tmp_path):
    done = run_cli(tmp_path / "work", "status", "--duckdb", "nope.duckdb")
    assert done.returncode == 1
    assert done.stderr.strip().endswith("[flag=--duckdb]"), done.stderr
    assert "nope.duckdb" in done.stderr and "Traceback" not in done.stderr
    default = run_cli(tmp_path / "work", "status")
    assert default.returncode == 1 and "[key=creator_sync.duckdb]" in default.stderr
