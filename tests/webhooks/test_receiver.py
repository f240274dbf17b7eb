"""Receiver: secret-path authentication, bounded bodies, bad deliveries, journal before 2xx."""

from __future__ import annotations

import orjson
import pytest
from starlette.testclient import TestClient
from webhook_payloads import payment_succeeded

from creator_sync.pipelines.webhooks.journal import Journal, JournalReader
from creator_sync.pipelines.webhooks.receiver import create_app
from creator_sync.pipelines.webhooks.records import DeadLetter, Delivery, decode, payload_hash

SECRET = "s3cr3t-path-token"


@pytest.fixture
def journal(tmp_path):
    journal = Journal(tmp_path / "journal")
    yield journal
    journal.close()


@pytest.fixture
def client(journal):
    app = create_app(journal, SECRET, max_body_bytes=4096, default_site_id="2200000009")
    with TestClient(app, follow_redirects=False) as client:
        yield client


def journaled(journal: Journal) -> list[Delivery | DeadLetter]:
    return [decode(r.body) for r in JournalReader(journal, 0).read(1000)]


def test_accepted_delivery_is_journaled_before_the_answer(client, journal):
    response = client.post(f"/hooks/{SECRET}", json=payment_succeeded())
    assert response.status_code == 200
    assert response.json()["seq"] == journal.durable_seq == 1
    [item] = journaled(journal)
    assert isinstance(item, Delivery)
    assert item.event == "payment_succeeded"
    assert item.resource_id == "3300000001"
    assert item.payload_hash == payload_hash(payment_succeeded()["payload"])
    assert item.received_at.tzinfo is not None
    assert item.site_id == "2200000009"


@pytest.mark.parametrize(
    "path",
    [
        "/hooks/wrong",
        f"/hooks/{SECRET}x",
        f"/hooks/{SECRET[:-1]}",
        "/",
        f"/{SECRET}",
        "/hooks/",
        "/hooks/wrong/",
        f"/hooks/{SECRET}/",
        f"/hooks/{SECRET}/more",
        f"/HOOKS/{SECRET}",
    ],
)
def test_anything_but_the_secret_path_is_404_and_not_journaled(client, journal, path):
    assert client.post(path, json=payment_succeeded()).status_code == 404
    assert journal.durable_seq == 0


def test_wrong_method_on_secret_path_is_404(client):
    assert client.get(f"/hooks/{SECRET}").status_code == 404


def test_site_id_query_parameter_is_kept_as_site_hint(client, journal):
    client.post(f"/hooks/{SECRET}?site_id=2200000042", json=payment_succeeded())
    assert journaled(journal)[0].site_id == "2200000042"


def test_malformed_json_is_400_and_dead_lettered(client, journal):
    response = client.post(f"/hooks/{SECRET}", content=b'{"event": "purchase", ')
    assert response.status_code == 400
    assert "not valid JSON" in response.json()["error"]
    [item] = journaled(journal)
    assert isinstance(item, DeadLetter)
    assert item.reason == "malformed_json"
    assert item.body == '{"event": "purchase", '


def test_unknown_event_is_422_and_dead_lettered(client, journal):
    body = {"id": "1", "event": "refund_issued", "payload": []}
    response = client.post(f"/hooks/{SECRET}", json=body)
    assert response.status_code == 422
    assert "refund_issued" in response.json()["error"]
    [item] = journaled(journal)
    assert isinstance(item, DeadLetter)
    assert (item.reason, item.event) == ("unknown_event", "refund_issued")
    assert orjson.loads(item.body) == body


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"event": "purchase", "payload": []}, "'id'"),
        ({"event": "purchase", "id": "1", "payload": {}}, "'payload'"),
        ({"event": "purchase", "id": "1", "payload": [{"type": "purchases"}]}, "payload[0]"),
    ],
)
def test_bad_shape_is_422_naming_the_field(client, journal, body, field):
    response = client.post(f"/hooks/{SECRET}", json=body)
    assert response.status_code == 422
    assert field in response.json()["error"]
    assert isinstance(journaled(journal)[0], DeadLetter)


def test_oversized_body_is_413_by_header_and_by_stream(client, journal):
    big = b'{"pad": "' + b"x" * 5000 + b'"}'
    assert client.post(f"/hooks/{SECRET}", content=big).status_code == 413

    def chunks():  # no Content-Length: the limit must hold while streaming
        for _ in range(10):
            yield b"x" * 1000

    assert client.post(f"/hooks/{SECRET}", content=chunks()).status_code == 413
    assert journal.durable_seq == 0
    # the receiver keeps working after every kind of rejection
    assert client.post(f"/hooks/{SECRET}", json=payment_succeeded()).status_code == 200


def test_journal_failure_answers_503_never_200(journal, tmp_path):
    app = create_app(journal, SECRET)
    journal.close()

    def broken(_bodies):
        raise OSError("disk full")

    journal.append = broken
    with TestClient(app) as client:
        assert client.post(f"/hooks/{SECRET}", json=payment_succeeded()).status_code == 503


def test_empty_secret_is_refused(journal):
    with pytest.raises(ValueError, match="secret"):
        create_app(journal, "")


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://h.example/hooks/abc123?site_id=9", "https://h.example/hooks/***?site_id=9"),
        ("http://127.0.0.1:8787/hooks/abc", "http://127.0.0.1:8787/hooks/***"),
        ("https://h.example/other/path", "https://h.example/other/path"),
        (None, None),
    ],
)
def test_target_urls_are_shown_without_their_secret(url, shown):
    from creator_sync.pipelines.webhooks.urls import redact_target_url

    assert redact_target_url(url) == shown


def test_listen_options_repr_hides_the_secret_and_salt():
    from pathlib import Path

    from creator_sync.pipelines.webhooks.server import ListenOptions

    options = ListenOptions(Path("w.duckdb"), SECRET, pii="hash", pii_salt="pepper-salt")
    assert SECRET not in repr(options) and "pepper-salt" not in repr(options)
    assert options.journal_path == Path("w.duckdb.webhooks-journal")
