"""`erase_people`: a person's personal fields emptied in every raw table, keys and money kept;
the same SQL on DuckDB and PostgreSQL; flagged people or named ones; a second call erases
nothing."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path
from typing import Any

import dlt
import pytest

from creator_sync.pipelines.erasure import any_deleted, erase_people
from creator_sync.pipelines.warehouse_sql import data_tables
from creator_sync.sources.creator_platform import personal_columns

sys.path.append(str(Path(__file__).resolve().parents[1] / "models"))
from pg_helpers import postgres_dsn  # noqa: F401  (the session fixture, registered here)


def _rows() -> dict[str, list[dict[str, Any]]]:
    def person(i: int, deleted: bool) -> dict[str, Any]:
        return {"id": str(i), "site_id": "1", "name": f"Person {i}", "email": f"P{i}@example.com",
                "phone_number": "+1 555", "address_city": "Lyon", "custom_1": "vip",
                "_is_deleted": deleted}

    return {
        "contacts": [person(1, True), person(2, False)],
        "customers": [{**person(11, True), "contact_id": "1", "net_revenue": 12.5,
                       "public_bio": "hi"},
                      {**person(12, False), "contact_id": "2", "net_revenue": 3.0,
                       "public_bio": "hello"}],
        "contact_notes": [
            {"id": "21", "contact_id": "2", "body": "deleted note", "_is_deleted": True},
            {"id": "22", "contact_id": "1", "body": "a deleted contact's note",
             "_is_deleted": False},
            {"id": "23", "contact_id": "2", "body": "kept", "_is_deleted": False},
        ],
        "purchases": [
            {"id": "31", "customer_id": "11", "amount_in_cents": 1250, "cardholder_name": "P 11",
             "billing_address_zip": "69001"},
            {"id": "32", "customer_id": "12", "amount_in_cents": 300, "cardholder_name": "P 12",
             "billing_address_zip": "75001"},
        ],
        "payout_lines": [
            {"payout_id": "41", "line_number": 1, "customer_id": "11", "amount": 12.5,
             "customer_name": "Person 11", "customer_email": "p11@example.com"},
            {"payout_id": "41", "line_number": 2, "customer_id": "12", "amount": 3.0,
             "customer_name": "Person 12", "customer_email": "p12@example.com"},
        ],
        "form_submissions": [
            {"id": "51", "email": "p1@EXAMPLE.com", "name": "Person 1"},  # the deleted contact
            {"id": "52", "email": "p2@example.com", "name": "Person 2"},
        ],
    }


@pytest.fixture(params=["duckdb", "postgres"])
def warehouse(request: Any, tmp_path: Path) -> dlt.Pipeline:
    if request.param == "duckdb":
        destination = dlt.destinations.duckdb(str(tmp_path / "w.duckdb"))
    else:
        destination = dlt.destinations.postgres(request.getfixturevalue("postgres_dsn"))
    pipeline = dlt.pipeline(f"erasure_{uuid.uuid4().hex[:8]}", destination=destination,
                            dataset_name=f"raw_{uuid.uuid4().hex[:8]}",
                            pipelines_dir=str(tmp_path / "pipelines"))
    pipeline.run([dlt.resource(rows, name=table) for table, rows in _rows().items()])
    return pipeline


def _read(pipeline: dlt.Pipeline, table: str) -> dict[str, dict[str, Any]]:
    with pipeline.sql_client() as client:
        q = client.make_qualified_table_name(table)
        cursor_rows = client.execute_sql(f"SELECT * FROM {q}")
        with client.execute_query(f"SELECT * FROM {q} LIMIT 0") as cursor:
            names = [d[0] for d in cursor.description]
    key = "line_number" if table == "payout_lines" else "id"
    return {str(r[key]): r for r in (dict(zip(names, row, strict=True)) for row in cursor_rows)}


def test_flagged_people_lose_their_personal_fields_everywhere(warehouse: dlt.Pipeline) -> None:
    with warehouse.sql_client() as client:
        erased = erase_people(client, data_tables(warehouse))
    assert erased == {"form_submissions": 1, "purchases": 1, "payout_lines": 1, "contacts": 1,
                      "customers": 1, "contact_notes": 2}
    contacts, customers = _read(warehouse, "contacts"), _read(warehouse, "customers")
    for column in personal_columns("contacts") & set(contacts["1"]):
        assert contacts["1"][column] is None, column
    assert contacts["2"]["email"] == "P2@example.com" and contacts["2"]["custom_1"] == "vip"
    assert customers["11"]["name"] is None and customers["11"]["public_bio"] is None
    assert float(customers["11"]["net_revenue"]) == 12.5 and customers["11"]["contact_id"] == "1"
    assert customers["12"]["email"] == "P12@example.com"
    notes = _read(warehouse, "contact_notes")
    assert [notes[i]["body"] for i in ("21", "22", "23")] == [None, None, "kept"]
    purchases = _read(warehouse, "purchases")
    assert purchases["31"]["cardholder_name"] is None and purchases["31"]["amount_in_cents"] == 1250
    assert purchases["32"]["cardholder_name"] == "P 12"
    lines = _read(warehouse, "payout_lines")
    assert lines["1"]["customer_email"] is None and float(lines["1"]["amount"]) == 12.5
    assert lines["2"]["customer_email"] == "p12@example.com"
    forms = _read(warehouse, "form_submissions")
    assert forms["51"]["email"] is None and forms["52"]["email"] == "p2@example.com"
    with warehouse.sql_client() as client:  # idempotent: nothing left to erase
        assert erase_people(client, data_tables(warehouse)) == {}
    # a later load brings a deleted customer's purchase back with a name: erased again
    with warehouse.sql_client() as client:
        q = client.make_qualified_table_name("purchases")
        client.execute_sql(f"UPDATE {q} SET cardholder_name = %s WHERE id = %s", "P 11", "31")
        assert any_deleted(client, ["contacts", "customers"])
        assert erase_people(client, data_tables(warehouse)) == {"purchases": 1}


def test_named_people_are_erased_whatever_their_flag(warehouse: dlt.Pipeline) -> None:
    """`forget` names people by id; tables the warehouse lacks are skipped."""
    tables = data_tables(warehouse)
    with warehouse.sql_client() as client:
        erased = erase_people(client, {**tables, "missing": ["id"]},
                              {"contacts": ["2"], "customers": ["12"]})
    assert erased == {"form_submissions": 1, "purchases": 1, "payout_lines": 1, "contacts": 1,
                      "customers": 1, "contact_notes": 2}  # (contact 2's notes 21 and 23)
    assert _read(warehouse, "contacts")["2"]["email"] is None
    assert _read(warehouse, "contacts")["1"]["email"] == "P1@example.com"  # not named
    assert _read(warehouse, "contact_notes")["23"]["body"] is None
    with warehouse.sql_client() as client:
        q = client.make_qualified_table_name("contacts")
        client.execute_sql(f"UPDATE {q} SET _is_deleted = FALSE WHERE 1 = 1")
        assert not any_deleted(client, ["contacts"])
