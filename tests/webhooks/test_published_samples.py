"""Issue 29 / addendum A8: a delivery of each of the six events, built from the platform's own
published sample payloads (the `<event>_sample` descriptions of platform-openapi.yaml), sent to
`creator-sync listen`: each answers 2xx and every record of its payload lands in its table. The
payloads carry only what the platform publishes (a purchase without its transaction, a form
submission without its contact), so the receiver cannot rely on records they do not carry."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import duckdb
import httpx
import pytest
import yaml

from creator_sync.common.locking import warehouse_lock
from creator_sync.pipelines.webhooks.events import EVENTS
from creator_sync.pipelines.webhooks.journal import journal_status
from creator_sync.pipelines.webhooks.testing import ListenProcess
from creator_sync.sources.creator_platform.endpoints import type_info

SPEC = Path(__file__).resolve().parents[3] / "shared" / "spec" / "platform-openapi.yaml"
SECRET = "published-samples-secret-0123"
SITE = "2"  # the samples' own site
# A8: the types each published payload holds, in order
PUBLISHED = {
    "purchase": ["purchases", "offers", "customers"],
    "payment_succeeded": ["transactions", "customers"],
    "order_created": ["transactions", "customers", "orders", "order_items"],
    "form_submission": ["form_submissions", "forms"],
    "tag_added": ["contacts", "contact_tags"],
    "tag_removed": ["contacts", "contact_tags"],
}
FENCE = re.compile(r"```\s*\n(\[.*?\])\s*\n\s*```", re.S)


def published_samples() -> dict[str, list[dict]]:
    if not SPEC.exists():
        pytest.skip(f"{SPEC} is not beside the checkout")
    paths = yaml.safe_load(SPEC.read_text(encoding="utf-8"))["paths"]
    out = {}
    for event in EVENTS:
        description = paths[f"/v1/hooks/{event}_sample"]["get"]["description"]
        match = FENCE.search(description)
        assert match, f"no sample payload in the description of {event}_sample"
        out[event] = json.loads(match.group(1))
    return out


def test_the_published_samples_have_the_shapes_a8_lists() -> None:
    samples = published_samples()
    assert {event: [r["type"] for r in payload] for event, payload in samples.items()} == PUBLISHED


def wait_loaded(journal_dir: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        last, loaded = journal_status(journal_dir)
        if last and loaded >= last:
            return
        time.sleep(0.1)
    raise AssertionError("the loader did not catch up with the journal")


def test_each_published_payload_lands_whole(tmp_path: Path) -> None:
    samples = published_samples()
    db = tmp_path / "warehouse.duckdb"
    with ListenProcess(db, SECRET, "--batch-interval", "0.1") as receiver:
        for event, payload in samples.items():
            body = {"id": f"{event}-0", "event": event, "payload": payload}
            response = httpx.post(receiver.url, params={"site_id": SITE}, json=body, timeout=10)
            assert 200 <= response.status_code < 300, (event, response.status_code, response.text)
        wait_loaded(Path(f"{db}.webhooks-journal"))
        with warehouse_lock(db), duckdb.connect(str(db), read_only=True) as con:
            dead = con.execute("select count(*) from creator_platform.webhook_dead_letters").fetchone()
            events = {e for (e,) in con.execute(
                "select event from creator_platform.webhook_events").fetchall()}
            landed = {}
            for event, payload in samples.items():
                for record in payload:
                    table = type_info(record["type"]).table
                    if table not in landed:
                        landed[table] = {r for (r,) in con.execute(
                            f'select id from creator_platform."{table}"').fetchall()}
                    assert record["id"] in landed[table], f"{event}: {record['type']} {record['id']}"
        assert receiver.terminate() == 143
    assert events == set(EVENTS)
    assert dead in (None, (0,)), "a published payload was dead-lettered"
