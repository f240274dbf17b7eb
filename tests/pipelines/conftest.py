"""Helpers for pipeline tests: an in-memory API and settings pointing at a temp warehouse."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sources"))

from fakeapi import FakeApi, record
from pipeline_fakes import FAKE_SECRET

from creator_sync.pipelines.factory import resolve_warehouse
from creator_sync.pipelines.sync import SyncSettings, sync_settings
from creator_sync.sources.creator_platform.auth import Secret


def fake_world() -> FakeApi:
    api = FakeApi(client_secret=FAKE_SECRET)
    api.collections["sites"] = [
        {"id": "2147483650", "type": "sites", "attributes": {"name": "A", "currency": "USD"}, "relationships": {}},
        {"id": "2147483651", "type": "sites", "attributes": {"name": "B", "currency": "USD"}, "relationships": {}},
    ]
    api.collections["products"] = [record("products", 3000000100 + i, site="2147483650" if i % 2 else "2147483651", title=f"P{i}") for i in range(6)]
    contacts = []
    for i in range(30):
        c = record("contacts", 3000000200 + i, site="2147483650" if i % 2 else "2147483651",
                   email=f"c{i}@example.com", created_at=f"2025-01-{1 + i % 28:02d}T10:00:00+01:00")
        c["relationships"]["tags"] = {"data": [{"id": "3000000900", "type": "contact_tags"}]}
        contacts.append(c)
    api.collections["contacts"] = contacts
    return api


@pytest.fixture
def fake_api() -> FakeApi:
    return fake_world()


@pytest.fixture
def settings_for(tmp_path):
    def make(**overrides) -> SyncSettings:
        base = dict(
            base_url="http://127.0.0.1:9",
            client_id="cid",
            client_secret=Secret(FAKE_SECRET),
            warehouse=resolve_warehouse(duckdb=str(tmp_path / "wh.duckdb")),
            backoff_initial=0.001,
        )
        base.update(overrides)
        return sync_settings(**base)

    return make
