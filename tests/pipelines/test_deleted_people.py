"""People the platform deletes reach the warehouse (issue 40's done-when), as a user meets it:
the sandbox, `creator-sync sync`, deletes through the API, platform activity past the weekly
full listing, a plain `sync`, then `models`. Every deleted record is flagged `_is_deleted`,
and the people's personal fields are gone from the raw tables and the marts; their money stays.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import httpx
import pytest
from cli_run import SANDBOX_ID, run_cli

from creator_sync.sandbox.deletes import _platform_subscribers
from creator_sync.sandbox.testing import start_sandbox

NOW = "2026-03-01T12:00:00Z"
WEEK_AND_A_DAY = 8 * 86_400


class Api:
    def __init__(self, base_url: str) -> None:
        self.http = httpx.Client(base_url=base_url + "/v1", timeout=30)
        token = self.http.post("/oauth/token", data={
            "client_id": SANDBOX_ID, "client_secret": "sandbox-secret",
            "grant_type": "client_credentials"}).json()["access_token"]
        self.http.headers["Authorization"] = f"Bearer {token}"

    def get(self, path: str, **params: Any) -> dict:
        response = self.http.get(path, params=params)
        assert response.status_code == 200, response.text
        return response.json()

    def delete(self, path: str) -> None:
        response = self.http.delete(path)
        assert response.status_code == 200, response.text


@pytest.fixture
def sandbox():
    # activity deletes a few people too (about five times as often as accounts do)
    handle = start_sandbox(scale="tiny", seed=42, now=NOW, sites=2, delete_rate=0.05)
    try:
        yield handle
    finally:
        handle.stop()


def _people_to_delete(sandbox: Any) -> tuple[list[str], str, list[str]]:
    """(5 contact ids, one of them a customer who can be deleted, 10 note ids of others)."""
    store = sandbox.store
    contacts, customers = store.tables["contacts"], store.tables["customers"]
    held = set(_platform_subscribers(store).tolist())
    buyers = set(store.tables["purchases"].cols["customer"].tolist())
    customer = next(r for r, c in enumerate(customers.cols["contact"].tolist())
                    if c >= 0 and r in buyers and r not in held)
    customer_contact = int(customers.cols["contact"][customer])
    plain = [r for r in range(contacts.n)
             if contacts.cols["customer"][r] < 0 and r != customer_contact][:4]
    rows = [customer_contact, *plain]
    note_contacts = store.tables["contact_notes"].cols["contact"]
    notes = [r for r in range(store.tables["contact_notes"].n)
             if int(note_contacts[r]) not in rows][:10]
    return ([contacts.id_of(r) for r in rows], customers.id_of(customer),
            [store.tables["contact_notes"].id_of(r) for r in notes])


def _flags(db: Path, table: str, ids: list[str]) -> dict[str, Any]:
    marks = ", ".join(f"'{i}'" for i in ids)
    with duckdb.connect(str(db), read_only=True) as con:
        return dict(con.execute(f"select id, _is_deleted from {db.stem}.creator_platform.{table} "
                                f"where id in ({marks})").fetchall())


def _text_hits(db: Path, needles: set[str]) -> list[tuple[str, str, str]]:
    """(schema.table, column, value) of every text cell of every table holding a needle."""
    hits = []
    with duckdb.connect(str(db), read_only=True) as con:
        columns = con.execute(
            "select table_schema, table_name, column_name from information_schema.columns "
            "where data_type in ('VARCHAR', 'JSON') and table_catalog = 'creator_platform'"
        ).fetchall()
        for schema, table, column in columns:
            rows = con.execute(f'select distinct cast("{column}" as varchar) '
                               f'from creator_platform."{schema}"."{table}" where "{column}" is not null').fetchall()
            hits += [(f"{schema}.{table}", column, v) for (v,) in rows
                     if any(n in v.lower() for n in needles)]
    return hits


def test_deleted_people_are_flagged_and_erased_by_a_plain_sync(sandbox: Any, tmp_path: Path) -> None:
    work = tmp_path / "work"
    args = ("--base-url", sandbox.base_url, "--client-id", SANDBOX_ID, "--no-progress")
    first = run_cli(work, "sync", *args)
    assert first.returncode == 0, first.stderr
    db = work / "creator_platform.duckdb"

    api = Api(sandbox.base_url)
    contact_ids, customer_id, note_ids = _people_to_delete(sandbox)
    people = [api.get(f"/contacts/{c}")["data"]["attributes"] for c in contact_ids]
    emails = {p["email"].lower() for p in people}
    customer = api.get(f"/customers/{customer_id}")["data"]["attributes"]
    assert customer["email"].lower() in emails
    net_revenue = customer["net_revenue"]
    for contact in contact_ids:
        api.delete(f"/contacts/{contact}")
    for note in note_ids:
        api.delete(f"/contact_notes/{note}")
    # the platform goes on past the weekly full listing (and deletes a few people itself)
    response = httpx.post(f"{sandbox.base_url}/_sandbox/activity",
                          json={"count": 30, "advance_seconds": WEEK_AND_A_DAY}, timeout=120)
    assert response.status_code == 200, response.text

    second = run_cli(work, "sync", *args)
    assert second.returncode == 0, second.stderr
    models = run_cli(work, "models")
    assert models.returncode == 0, models.stderr

    store = sandbox.store
    deleted = {t: [store.tables[t].id_of(r) for r in rows] for t, rows in store.deleted.items()}
    assert set(contact_ids) <= set(deleted["contacts"])
    assert customer_id in deleted["customers"] and set(note_ids) <= set(deleted["contact_notes"])
    # every record the platform deleted, by the API or by activity, is flagged
    for table in ("contacts", "customers", "contact_notes"):
        flags = _flags(db, table, deleted[table])
        loaded = [i for i in deleted[table] if i in flags]
        assert set(contact_ids if table == "contacts" else note_ids if table == "contact_notes"
                   else [customer_id]) <= set(loaded)
        assert all(flags[i] is True for i in loaded), (table, flags)
    with duckdb.connect(str(db), read_only=True) as con:
        alive = con.execute("select count(*), count(email) from creator_platform.creator_platform.contacts "
                            "where not _is_deleted").fetchone()
        assert alive[0] > 0 and alive[1] == alive[0], "a living contact lost its email"
        marks = ", ".join(f"'{i}'" for i in deleted["contacts"])
        erased = con.execute(
            "select count(*) from creator_platform.creator_platform.contacts where id in (" + marks + ") and "
            "coalesce(name, email, phone_number, address_line_1, address_city) is not null"
        ).fetchone()[0]
        assert erased == 0
        notes = ", ".join(f"'{i}'" for i in deleted["contact_notes"])
        assert con.execute("select count(*) from creator_platform.creator_platform.contact_notes where id in ("
                           + notes + ") and body is not null").fetchone() == (0,)
        # keys and money stay: the customer's row, purchases and revenue
        row = con.execute("select name, email, cast(net_revenue as varchar), _is_deleted "
                          "from creator_platform.creator_platform.customers where id = ?", [customer_id]).fetchone()
        assert row[0] is None and row[1] is None and row[3] is True
        assert float(row[2]) == float(net_revenue)
        purchases = con.execute("select count(*), count(cardholder_name), sum(amount_in_cents) "
                                "from creator_platform.creator_platform.purchases where customer_id = ?",
                                [customer_id]).fetchone()
        assert purchases[0] > 0 and purchases[1] == 0 and purchases[2] is not None
        mart = con.execute("select customer_name, email, is_deleted, lifetime_net_revenue_in_cents "
                           "from creator_platform.analytics.dim_customers where customer_id = ?",
                           [customer_id]).fetchone()
        assert mart[:3] == (None, None, True) and mart[3] != 0
        # people counts leave them out, their money stays: the offers' customers
        per_offer = con.execute(
            "with mart as (select offer_id, sum(customers_count) as n "
            "  from creator_platform.analytics.offer_performance group by offer_id), "
            "alive as (select p.offer_id, count(distinct p.customer_id) as n "
            "  from creator_platform.analytics_staging.stg_purchases p "
            "  join creator_platform.analytics_staging.stg_customers c using (customer_id) "
            "  where not c.is_deleted group by p.offer_id) "
            "select mart.offer_id, mart.n, coalesce(alive.n, 0) from mart left join alive "
            "using (offer_id) where offer_id in (select offer_id from "
            "creator_platform.analytics_staging.stg_purchases where customer_id = ?)",
            [customer_id]).fetchall()
        assert per_offer and all(mart == alive for _, mart, alive in per_offer), per_offer
    # no deleted person's email is left in any table, raw or mart
    assert _text_hits(db, emails) == []


@pytest.mark.parametrize("deleted_people", ["erase", "keep"])
def test_a_full_listing_stopped_at_every_page_still_flags_the_deleted(
        sandbox: Any, tmp_path: Path, deleted_people: str) -> None:
    """The weekly full listing of people spans rounds (a checkpoint after every page, as on a
    large account): its completion flags what it did not list. `keep` only flags."""
    from sandbox_helpers import sync

    db = tmp_path / "w.duckdb"
    sync(sandbox, db, page_size=10)
    api = Api(sandbox.base_url)
    contact_ids, customer_id, note_ids = _people_to_delete(sandbox)
    for contact in contact_ids:
        api.delete(f"/contacts/{contact}")
    for note in note_ids[:3]:
        api.delete(f"/contact_notes/{note}")
    httpx.post(f"{sandbox.base_url}/_sandbox/activity",
               json={"count": 5, "advance_seconds": WEEK_AND_A_DAY}, timeout=120)
    result = sync(sandbox, db, page_size=10, checkpoint_every=0.0, deleted_people=deleted_people,
                  resources=("contacts", "customers", "contact_notes"))
    assert len(result.load_ids) >= 3 and not result.partial  # rounds, each a page or so
    for table, ids in (("contacts", contact_ids), ("customers", [customer_id]),
                       ("contact_notes", note_ids[:3])):
        assert set(_flags(db, table, ids).values()) == {True}, table
    with duckdb.connect(str(db), read_only=True) as con:
        emails = con.execute("select count(email) from w.creator_platform.contacts "
                             "where _is_deleted").fetchone()[0]
        living = con.execute("select count(*) from w.creator_platform.contacts "
                             "where not _is_deleted").fetchone()[0]
    assert emails == (0 if deleted_people == "erase" else len(contact_ids))
    assert living == sandbox.store.alive("contacts").sum()
