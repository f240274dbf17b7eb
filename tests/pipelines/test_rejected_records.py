"""One odd value never sinks a resource (issue 40, point 4): against the sandbox, payouts with
an amount of `n/a` are set aside in `rejected_records` while the rest of payouts loads; the
next sync reads them again, and once the platform fixes them they load and leave the table.
Float noise and long rates load, rounded, with the text kept in `*_raw`."""

from __future__ import annotations

from cli_run import run_cli
from sandbox_helpers import query, sync

from creator_sync.sandbox import payout_lines
from creator_sync.sandbox.schema import PAYOUTS


def _rejected(db):
    return query(db, "select resource, site_id, record_id, field, value, reason, rejected_at "
                     "from creator_platform.rejected_records order by record_id")


def _payout_ids(db):
    return {r[0] for r in query(db, "select id from creator_platform.payouts")}


def test_unreadable_amounts_are_set_aside_then_load_once_fixed(sandbox_factory, tmp_path):
    sandbox = sandbox_factory(sites=2, unreadable_amounts=2)
    table = sandbox.store.tables[PAYOUTS]
    bad_ids = set(table.ids([0, 1]))
    db = tmp_path / "w.duckdb"

    first = sync(sandbox, db, resources=["payouts"])
    assert not first.failed and first.outcomes["payouts"].status == "synced"
    rows = _rejected(db)
    assert {r[2] for r in rows} == bad_ids
    assert all(r[0] == "payouts" and r[3] == "amount" and r[4] == "n/a" for r in rows)
    assert all("not a number" in r[5] and r[6] is not None for r in rows)
    loaded = _payout_ids(db)
    assert len(loaded) == table.n - 2 and not loaded & bad_ids  # the rest of payouts loaded
    assert any("2 record(s) set aside in rejected_records" in n for n in first.notices)

    again = sync(sandbox, db, resources=["payouts"])  # read again, still unreadable
    assert not again.failed
    assert [r[:5] for r in _rejected(db)] == [r[:5] for r in rows]
    assert [r[6] for r in _rejected(db)] == [r[6] for r in rows]  # first set aside then

    sandbox.app.options.unreadable_amounts = 0  # the platform fixes them
    sandbox.store.data_version += 1
    fixed = sync(sandbox, db, resources=["payouts"])
    assert not fixed.failed and _rejected(db) == []
    assert _payout_ids(db) == set(table.ids(range(table.n)))
    assert not any("set aside" in n for n in fixed.notices)


def test_float_noise_and_long_rates_load_with_their_text_kept(sandbox_factory, tmp_path,
                                                               monkeypatch):
    monkeypatch.setattr(payout_lines, "RATE_NOISE", "345678912")  # 1.08 -> 1.08345678912
    sandbox = sandbox_factory(sites=1, quirks=True)
    db = tmp_path / "w.duckdb"
    result = sync(sandbox, db, resources=["payouts"])
    assert not result.failed
    rates = query(db, "select distinct cast(exchange_rate as text), exchange_rate_raw "
                      "from creator_platform.payout_lines where exchange_rate_raw is not null")
    assert ("1.083456789", "1.08345678912") in rates
    noisy = query(db, "select cast(amount as text), amount_raw from creator_platform.payout_lines "
                      "where amount_raw is not null")
    assert noisy and all(raw.startswith(amount.rstrip("0")) and raw.endswith("00000000000003")
                         for amount, raw in noisy)
    tables = {r[0] for r in query(db, "select table_name from information_schema.tables")}
    assert "rejected_records" not in tables  # nothing set aside, no table


def test_the_cli_exits_0_and_names_what_it_set_aside(sandbox_factory, tmp_path):
    unreadable = 2
    sandbox = sandbox_factory(sites=1, unreadable_amounts=unreadable)
    done = run_cli(tmp_path / "work", "sync", "--base-url", sandbox.base_url, "--client-id",
                   "sandbox", "--resources", "payouts", "--no-progress")
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if "set aside" in x)
    assert line.startswith(f"payouts: {unreadable} record(s) set aside in rejected_records")
    assert "amount" in line and "Traceback" not in done.stderr
