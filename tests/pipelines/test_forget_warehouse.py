"""`forget` in the warehouse, on DuckDB and PostgreSQL: found by email or contact id (and by a
delivery alone), erased from the raw tables, the event log's JSON, the dead letters and dlt's
merge staging, with a last sweep for their email; other people and the money untouched. And the
pure parts: a delivery's payload, a journal rewritten without them, the erasure log."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path
from typing import Any

import dlt
import orjson
import pytest

from creator_sync.pipelines import erasure_log
from creator_sync.pipelines.forget_scrub import ERASED, Person, erase_in_body, erase_in_payload
from creator_sync.pipelines.forget_warehouse import Request, erase, find, remaining
from creator_sync.pipelines.warehouse_sql import data_tables
from creator_sync.pipelines.webhooks.journal import Journal, JournalReader

sys.path.append(str(Path(__file__).resolve().parents[1] / "models"))
from pg_helpers import postgres_dsn  # noqa: F401  (the session fixture, registered here)

ANA = {"email": "ana.lima@example.com", "name": "Ana Lima"}


def _payload(customer_id: str, email: str, name: str) -> list[dict[str, Any]]:
    return [
        {"id": "90", "type": "purchases", "attributes": {"amount_in_cents": 500,
                                                         "cardholder_name": name},
         "relationships": {"customer": {"data": {"id": customer_id, "type": "customers"}}}},
        {"id": customer_id, "type": "customers", "attributes": {"email": email, "name": name}},
    ]


@pytest.fixture(params=["duckdb", "postgres"])
def warehouse(request: Any, tmp_path: Path) -> dlt.Pipeline:
    if request.param == "duckdb":
        destination = dlt.destinations.duckdb(str(tmp_path / "w.duckdb"))
    else:
        destination = dlt.destinations.postgres(request.getfixturevalue("postgres_dsn"))
    pipeline = dlt.pipeline(f"forget_{uuid.uuid4().hex[:8]}", destination=destination,
                            dataset_name=f"raw_{uuid.uuid4().hex[:8]}",
                            pipelines_dir=str(tmp_path / "pipelines"))
    rows = {
        "contacts": [{"id": "1", "email": ANA["email"], "name": ANA["name"]},
                     {"id": "2", "email": "bo@example.com", "name": "Bo Berg"}],
        "customers": [{"id": "11", "contact_id": "1", "email": ANA["email"], "name": ANA["name"],
                       "net_revenue": 5.0},
                      {"id": "12", "contact_id": "2", "email": "bo@example.com",
                       "name": "Bo Berg", "net_revenue": 7.0}],
        "contact_notes": [{"id": "21", "contact_id": "1", "body": "called Ana about a refund"}],
        "purchases": [{"id": "31", "customer_id": "11", "amount_in_cents": 500,
                       "cardholder_name": ANA["name"]},
                      {"id": "32", "customer_id": "12", "amount_in_cents": 700,
                       "cardholder_name": "Bo Berg"}],
        "orders": [{"id": "41", "billing_email": ANA["email"].upper(), "total_in_cents": 500}],
    }
    pipeline.run([dlt.resource(r, name=t) for t, r in rows.items()])
    json_type = "JSON" if request.param == "duckdb" else "JSONB"
    with pipeline.sql_client() as client:
        events = client.make_qualified_table_name("webhook_events")
        dead = client.make_qualified_table_name("webhook_dead_letters")
        client.execute_sql(f"CREATE TABLE {events} (event VARCHAR, resource_id VARCHAR, "
                           f"payload {json_type}, journal_seq BIGINT)")
        client.execute_sql(f"CREATE TABLE {dead} (reason VARCHAR, body VARCHAR, "
                           "journal_seq BIGINT)")
        for seq, (cid, email, name) in enumerate([("11", ANA["email"], ANA["name"]),
                                                  ("12", "bo@example.com", "Bo Berg"),
                                                  ("13", "new@example.com", "Nia New")], 1):
            client.execute_sql(f"INSERT INTO {events} VALUES ('purchase', '90', "
                               f"CAST(%s AS {json_type}), %s)",
                               orjson.dumps(_payload(cid, email, name)).decode(), seq)
        client.execute_sql(f"INSERT INTO {dead} VALUES ('malformed_json', %s, 9)",
                           '{"id": 1, "payload": [{"email": "ana.lima@example.com"')
    return pipeline


def _everything(pipeline: dlt.Pipeline) -> str:
    """Every text value of the dataset, as one string."""
    out = []
    with pipeline.sql_client() as client:
        for table in [*data_tables(pipeline), "webhook_events", "webhook_dead_letters"]:
            out.append(repr(client.execute_sql(
                f"SELECT * FROM {client.make_qualified_table_name(table)}")))
    return "\n".join(out)


def test_a_person_is_found_and_erased_everywhere(warehouse: dlt.Pipeline) -> None:
    tables = data_tables(warehouse)
    with warehouse.sql_client() as client:
        found = find(client, tables, Request(email=" Ana.Lima@example.com"), None, "")
        assert found.contact_ids == {"1"} and found.customer_ids == {"11"}
        assert found.texts == {ANA["email"], ANA["name"]}
        by_id = find(client, tables, Request(contact_id="1"), None, "")
        assert (by_id.contact_ids, by_id.customer_ids) == ({"1"}, {"11"})
        # a person only a delivery brought (not synced yet) is found in the event log
        only_pushed = find(client, tables, Request(email="new@example.com"), None, "")
        assert only_pushed.customer_ids == {"13"} and "Nia New" in only_pushed.texts
        assert find(client, tables, Request(email="nobody@example.com"), None, "").empty

        erased = erase(client, tables, found.person)
        assert erased["contacts"] == 1 and erased["customers"] == 1
        assert erased["contact_notes"] == 1 and erased["webhook_events"] == 1
        assert erased["webhook_dead_letters"] == 1 and erased["orders"] == 1
        assert remaining(client, client.dataset_name, found.person) == {}
        again = erase(client, tables, found.person)
        assert not again  # nothing left to erase
    text = _everything(warehouse)
    assert "ana.lima" not in text.lower() and ANA["name"] not in text
    assert "Bo Berg" in text and "bo@example.com" in text and "Nia New" in text
    with warehouse.sql_client() as client:  # money and keys stay
        q = client.make_qualified_table_name("purchases")
        assert sorted(client.execute_sql(f"SELECT id, customer_id, amount_in_cents FROM {q}")) == [
            ("31", "11", 500), ("32", "12", 700)]


def test_a_delivery_loses_the_person_and_keeps_the_rest() -> None:
    ana = Person(frozenset({"1"}), frozenset({"11"}), frozenset(ANA.values()))
    payload = erase_in_payload(_payload("11", ANA["email"], ANA["name"]), ana)
    assert payload[1]["attributes"] == {"email": None, "name": None}
    assert payload[0]["attributes"] == {"amount_in_cents": 500, "cardholder_name": None}
    other = _payload("12", "bo@example.com", "Bo Berg")
    body = orjson.dumps({"id": "90", "event": "purchase", "payload": other})
    assert erase_in_body(body, ana) is None  # not theirs: kept byte for byte
    garbled = erase_in_body(b'{"payload": [{"email": "ANA.LIMA@example.com"', ana)
    assert garbled == f'{{"payload": [{{"email": "{ERASED}"'.encode()


def test_the_journal_is_rewritten_without_the_person(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal", segment_bytes=300)
    bodies = [orjson.dumps({"id": "90", "event": "purchase", "payload": _payload(c, e, n)})
              for c, e, n in [("11", ANA["email"], ANA["name"]), ("12", "bo@example.com", "B"),
                              ("11", ANA["email"], ANA["name"])]]
    for body in bodies:
        journal.append([body])
    ana = Person(frozenset({"1"}), frozenset({"11"}), frozenset(ANA.values()))
    assert journal.scrub(lambda body: erase_in_body(body, ana)) == 2
    journal.append([b'{"after": "the scrub"}'])
    journal.close()
    reopened = Journal(tmp_path / "journal")  # recovery reads every record: checksums hold
    records = JournalReader(reopened, 0).read(10)
    reopened.close()
    assert [r.seq for r in records] == [1, 2, 3, 4]
    assert records[1].body == bodies[1] and records[3].body == b'{"after": "the scrub"}'
    for path in (tmp_path / "journal").iterdir():
        assert b"ana.lima" not in path.read_bytes().lower()


def test_the_erasure_log_holds_hashes_and_recognises_the_person(tmp_path: Path) -> None:
    erasure_log.record(tmp_path, "salt-1", [ANA["email"]], ["1", "11"], {"warehouse": {}})
    text = erasure_log.log_path(tmp_path).read_text()
    assert "ana" not in text.lower() and '"1"' not in text
    assert erasure_log.erased_before(tmp_path, "salt-1", " ANA.LIMA@example.com ") is not None
    assert erasure_log.erased_before(tmp_path, "salt-2", ANA["email"]) is None
    seen = erasure_log.ErasedPeople(tmp_path, "salt-1")
    person = seen.named_in(_payload("11", ANA["email"], ANA["name"]))
    assert person is not None and person.customer_ids == {"11"}
    assert seen.named_in(_payload("12", "bo@example.com", "Bo")) is None
