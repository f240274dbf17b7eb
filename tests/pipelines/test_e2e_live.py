"""End to end against the sandbox with the live platform's shapes (issue 13, done-when):
payouts under a brand word, payout lines, order items from their list, least privilege."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from sandbox_helpers import CLIENT_SECRET, api_client, api_total, query, snapshot, sync

from creator_sync.sandbox.testing import start_sandbox
from creator_sync.sources.creator_platform.auth import Secret
from creator_sync.sources.creator_platform.endpoints import RESOURCES

SEED = 42  # the session sandbox's seed and clock (tests/conftest.py): compared with its sync
NOW = "2026-03-01T12:00:00Z"
ACME = "/acme_payments_payouts"


@pytest.fixture(scope="module")
def acme(tmp_path_factory):
    """A sandbox serving payouts under the brand word `acme` (tiny, 2 sites)."""
    handle = start_sandbox(scale="tiny", sites=2, seed=SEED, now=NOW, brand="acme")
    try:
        yield handle, tmp_path_factory.mktemp("acme")
    finally:
        handle.stop()


def test_brand_sandbox_with_the_path_set_equals_the_default_word(acme, synced_sandbox, tmp_path):
    sandbox, _ = acme
    branded = sync(sandbox, tmp_path / "acme.duckdb", payouts_path=ACME)
    assert branded.failed == {}
    # the plain sandbox of the same seed and clock: the session's, synced once per run
    assert synced_sandbox.failed == {}
    got, want = snapshot(tmp_path / "acme.duckdb"), snapshot(synced_sandbox.path)
    assert got.keys() == want.keys()
    # the one value of transactions that names the brand: the platform's own processor is named
    # after it, as the transactions write it (issue 32)
    ours, theirs = repr("acme_payments"), repr("platform_payments")  # as `snapshot` holds them
    (provider,) = [n for n, (name, *_rest) in enumerate(_columns(tmp_path / "acme.duckdb",
                                                                  "transactions"))
                   if name == "provider"]
    branded = [r[provider] for r in got["transactions"]]
    assert ours in branded and theirs not in branded
    got["transactions"] = sorted(
        tuple(theirs if i == provider and v == ours else v for i, v in enumerate(row))
        for row in got["transactions"])
    for table in want:
        if table != "payout_lines":
            assert got[table] == want[table], f"{table} differs under the brand word"
    assert want["payouts"] and want["payout_lines"]
    # the lines name the processor for people, under the brand word (A8): only that differs
    lines = ("select * exclude (provider, _extracted_at, _dlt_load_id) "
             "from creator_platform.payout_lines order by all")
    providers = "select distinct provider from creator_platform.payout_lines"
    assert query(tmp_path / "acme.duckdb", lines) == query(synced_sandbox.path, lines)
    assert query(tmp_path / "acme.duckdb", providers) == [("Acme Payments",)]
    assert query(synced_sandbox.path, providers) == [("Platform Payments",)]


def _columns(db: Path, table: str) -> list[tuple]:
    """A table's compared columns in `snapshot`'s order."""
    volatile = {"_extracted_at", "_dlt_load_id", "_dlt_id"}
    rows = query(db, "select column_name from information_schema.columns where table_schema = "
                     f"'creator_platform' and table_name = '{table}' order by column_name")
    return [r for r in rows if r[0] not in volatile]


def test_without_the_setting_the_path_is_found_and_every_table_lands(acme):
    """Issue 32 (done when): with neither init nor payouts_path, `sync --base-url ...
    --client-id ... --client-secret ...` loads payouts from a brand-word sandbox on 127.0.0.1."""
    sandbox, tmp = acme
    db = tmp / "cli.duckdb"
    exe = str(Path(sys.executable).with_name("creator-sync"))
    run = subprocess.run(
        [exe, "sync", "--base-url", sandbox.base_url, "--client-id", "sandbox", "--duckdb", str(db),
         "--no-progress"],
        capture_output=True, text=True, timeout=300,
        env={"PATH": "/usr/bin:/bin", "SOURCES__CREATOR_PLATFORM__CLIENT_SECRET": CLIENT_SECRET},
        cwd=tmp,
    )
    assert run.returncode == 0, run.stderr
    assert run.stderr == "", run.stderr
    assert ("payouts: reading /acme_payments_payouts (brand word from the processor named in "
            "transactions; remembered, set payouts_path to override)") in run.stdout
    # every other table landed complete
    tables = {r[0] for r in query(db, "select table_name from information_schema.tables")}
    with api_client(sandbox) as api:
        sites = [r[0] for r in query(db, "select id from creator_platform.sites")]
        for res in RESOURCES.values():
            if res.single:
                continue
            for site in sites if res.site_scoped else [None]:
                where = "" if site is None else f"where site_id = '{site}'"
                (got,) = query(db, f"select count(*) from creator_platform.{res.table} {where}")[0] \
                    if res.table in tables else (0,)  # an empty collection makes no table
                assert got == api_total(api, ACME if res.name == "payouts" else res.path, site, res.takes_page_size), f"{res.name} {site}"
    assert query(db, "select status from creator_platform.sync_resources "
                     "where resource = 'payouts'") == [("synced",)]
    assert "payouts" in tables and "payout_lines" in tables


@pytest.mark.parametrize("quirks", [False, True], ids=["plain", "quirks"])
def test_payout_lines_sum_to_each_payout_amount(sandbox_factory, tmp_path, quirks):
    sandbox = sandbox_factory(sites=2, quirks=quirks, brand="acme")
    db = tmp_path / "lines.duckdb"
    result = sync(sandbox, db, payouts_path=ACME, resources=("payouts",))
    assert result.failed == {} and result.without_lines == {}
    (payouts, lined) = query(db, "select count(*), count(l.payout_id) from creator_platform.payouts p "
                                 "left join (select distinct payout_id from creator_platform.payout_lines) l "
                                 "on l.payout_id = p.id")[0]
    assert payouts > 0 and lined == payouts
    off = query(db, "select p.id, p.amount, sum(l.net) from creator_platform.payouts p join "
                    "creator_platform.payout_lines l on l.payout_id = p.id group by 1, 2 "
                    "having sum(l.net) <> p.amount")
    assert off == []
    kinds = {r[0] for r in query(db, "select distinct transaction_type from creator_platform.payout_lines")}
    assert kinds >= {"Refund"} and kinds & {"Sale", "Sales"} == ({"Sales"} if quirks else {"Sale"})


def test_a_least_privilege_credential_syncs_what_it_may_and_exits_0(acme):
    sandbox, tmp = acme
    db = tmp / "limited.duckdb"
    result = sync(sandbox, db, client_id="limited", client_secret=Secret("limited-secret"))
    assert result.failed == {}, result.failed
    synced = {n for n, o in result.outcomes.items() if o.status == "synced"}
    assert {"sites", "contacts", "contact_tags", "hooks"} <= synced
    assert "payouts" not in synced and "transactions" not in synced
    assert query(db, "select count(*) > 0 from creator_platform.contacts") == [(True,)]
