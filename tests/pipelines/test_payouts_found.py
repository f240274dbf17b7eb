"""The sync finds the payouts path when `payouts_path` is not set (issue 32, point 2): against a
sandbox serving payouts under `acme` on 127.0.0.1 (no brand in the host), the word comes from
the processor its transactions name; it is remembered in the pipeline's state and the summary
says which path is read; the setting stays an override."""

from __future__ import annotations

from pathlib import Path

import httpx
from sandbox_helpers import settings

from creator_sync.common.duckdb_names import connect_warehouse
from creator_sync.pipelines.sync import format_summary, run_sync

RESOURCES = ("sites", "payouts")


def _payouts(db: Path) -> int:
    with connect_warehouse(db, read_only=True) as con:
        return con.execute("select count(*) from creator_platform.payouts").fetchone()[0]


class Recording(httpx.HTTPTransport):
    """The real transport, remembering the path of every request."""

    def __init__(self) -> None:
        super().__init__()
        self.paths: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.paths.append(request.url.path)
        return super().handle_request(request)


def sync(handle, db: Path, transport: httpx.BaseTransport | None = None, **overrides):
    return run_sync(settings(handle, db, resources=RESOURCES, **overrides), transport=transport,
                    show_progress=False)


def test_the_path_is_found_remembered_and_overridable(sandbox_factory, tmp_path: Path) -> None:
    handle = sandbox_factory(brand="acme", sites=2)
    db = tmp_path / "w.duckdb"
    first = sync(handle, db)
    assert first.failed == {}
    assert _payouts(db) > 0
    said = [n for n in first.notices if n.startswith("payouts:")]
    assert said == ["payouts: reading /acme_payments_payouts (brand word from the processor "
                    "named in transactions; remembered, set payouts_path to override)"]
    assert said[0] in format_summary(first)

    recording = Recording()
    second = sync(handle, db, recording)
    assert second.failed == {}
    assert [n for n in second.notices if n.startswith("payouts:")] == [
        "payouts: reading /acme_payments_payouts (found by an earlier sync; set payouts_path "
        "to override)"]
    # nothing looked for again: no page of transactions, no other candidate tried
    assert "/v1/transactions" not in recording.paths
    assert {p for p in recording.paths if p.endswith("_payouts")} == {"/v1/acme_payments_payouts"}

    wrong = sync(handle, db, payouts_path="/platform_payments_payouts")
    assert set(wrong.failed) == {"payouts"}  # the override wins, and says what to change
    assert "/platform_payments_payouts answered 404" in wrong.failed["payouts"]
    # it is the setting that is wrong: the line says so, and that sync finds the path without it
    assert ("your payouts_path setting (--payouts-path) names no list there; remove it and sync "
            "finds the path") in wrong.failed["payouts"]
    assert not [n for n in wrong.notices if n.startswith("payouts:")]


def test_a_remembered_path_that_went_away_is_looked_for_again(sandbox_factory, tmp_path):
    acme = sandbox_factory(brand="acme", sites=2)
    zeta = sandbox_factory(brand="zeta", sites=2)  # the same account under another word
    db = tmp_path / "w.duckdb"
    assert sync(acme, db).failed == {}
    gone = sync(zeta, db)  # the remembered /acme_payments_payouts answers 404 there
    assert set(gone.failed) == {"payouts"}
    assert "/acme_payments_payouts answered 404" in gone.failed["payouts"]
    assert "set payouts_path (--payouts-path) to the path" in gone.failed["payouts"]  # none set
    found = sync(zeta, db)
    assert found.failed == {}
    assert any(n.startswith("payouts: reading /zeta_payments_payouts (brand word from")
               for n in found.notices)
