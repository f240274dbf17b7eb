"""HTTP-layer tests replaying vcrpy cassettes recorded from the sandbox (offline, fast).

Re-record with `CREATOR_SYNC_RECORD=1 pytest tests/sources/test_http_cassettes.py` (a missing
cassette is recorded automatically). Cassettes never hold a secret: the Authorization header is
dropped, token request bodies are masked and token responses carry dummy JWTs.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

import jwt
import pytest
import vcr

from creator_sync.sources.creator_platform import CreatorPlatformClient, api_client
from creator_sync.sources.creator_platform.auth import Secret
from creator_sync.sources.creator_platform.endpoints import RESOURCES
from creator_sync.sources.creator_platform.errors import ApiError
from creator_sync.sources.creator_platform.pagination import iter_pages, total_pages
from creator_sync.sources.creator_platform.rows import normalize_resources

CASSETTES = Path(__file__).parent / "cassettes"
SECRET = "sandbox-secret"
REPLAY_BASE = "http://127.0.0.1:8765"
SITE = "2200000000"  # first site of seed 42
DUMMY = {
    "access_token": jwt.encode({"sub": "cassette", "exp": 4102444800}, "cassette-dummy-key-0123456789abcdef", algorithm="HS256"),
    "refresh_token": jwt.encode({"sub": "cassette-refresh", "exp": 4102444800}, "cassette-dummy-key-0123456789abcdef", algorithm="HS256"),
}


def _scrub_request(request):
    request.headers.pop("Authorization", None)
    request.headers.pop("authorization", None)
    if request.body and "/oauth/" in request.path:
        body = request.body.decode() if isinstance(request.body, bytes) else request.body
        masked = [(k, "***" if k in ("client_secret", "token", "refresh_token", "password") else v)
                  for k, v in parse_qsl(body, keep_blank_values=True)]
        request.body = urlencode(masked).encode()
    return request


def _scrub_response(response):
    body = response["body"].get("string", b"")
    if b"access_token" in body:
        doc = json.loads(body)
        doc.update(DUMMY)
        response["body"]["string"] = json.dumps(doc).encode()
    response["headers"] = {k: v for k, v in response["headers"].items() if k.lower() != "set-cookie"}
    return response


@contextlib.contextmanager
def cassette(name: str, **sandbox_options) -> Iterator[str]:
    """Yields the base URL to use: a live sandbox while recording, a dummy one on replay."""
    path = CASSETTES / f"{name}.yaml"
    record = os.environ.get("CREATOR_SYNC_RECORD") == "1" or not path.exists()
    recorder = vcr.VCR(
        cassette_library_dir=str(CASSETTES),
        record_mode="all" if record else "none",
        match_on=("method", "path", "query"),
        before_record_request=_scrub_request,
        before_record_response=_scrub_response,
        decode_compressed_response=True,
    )
    if record:
        from creator_sync.sandbox.testing import run_sandbox

        options = {"scale": "tiny", "sites": 2, "seed": 42, "now": "2026-03-01T12:00:00Z", **sandbox_options}
        with run_sandbox(**options) as sandbox, recorder.use_cassette(path.name, allow_playback_repeats=True):
            yield sandbox.base_url
    else:
        with recorder.use_cassette(path.name, allow_playback_repeats=True):
            yield REPLAY_BASE


def client(base: str, concurrency: int = 1) -> CreatorPlatformClient:
    # concurrency 1: the request order is the same when recording and replaying
    return api_client(base, "sandbox", Secret(SECRET), concurrency=concurrency, backoff_initial=0.01)


def test_cassettes_hold_no_secret_or_live_token():
    files = list(CASSETTES.glob("*.yaml"))
    if not files:
        pytest.skip("no cassette recorded yet")
    for path in files:
        text = path.read_text()
        assert SECRET not in text, path
        assert "Bearer " not in text and "authorization" not in text.lower(), path


def test_auth_grant_bearer_and_revoke():
    with cassette("auth_grant_revoke") as base, client(base) as api:
        doc = api.get("/contacts", {"filter[site_id]": SITE, "page[size]": 5}, resource="contacts")
        assert len(doc["data"]) == 5
        assert api.tokens.grants == 1
        assert api.server_now.year == 2026  # the sandbox's frozen clock, from the Date header
    assert api.tokens.revoke()  # already revoked on exit: nothing to do


@pytest.mark.parametrize(
    "resource, size",
    [("contacts", 15), ("purchases", 10), ("payouts", None), ("transactions", 25)],
)
def test_pagination_reads_every_page_of_each_meta_shape(resource, size):
    res = RESOURCES[resource]
    with cassette(f"pages_{resource}") as base, client(base) as api:
        pages = list(iter_pages(api, res, {"filter[site_id]": SITE}, page_size=size))
        first = pages[0].doc["meta"]
        announced = total_pages(first, page_size=size if res.takes_page_size else None, first_page_len=len(pages[0].data))
    ids = [r["id"] for p in pages for r in p.data]
    assert len(ids) == len(set(ids)) > 0
    assert len(pages) == announced
    assert all(r["type"] == res.jtype for p in pages for r in p.data)


def test_quirks_total_only_meta_and_foreign_links():
    res = RESOURCES["contacts"]
    with cassette("pages_contacts_quirks", quirks=True) as base, client(base) as api:
        pages = list(iter_pages(api, res, {"filter[site_id]": SITE}, page_size=15))
    assert set(pages[0].doc["meta"]) == {"total"}
    assert "127.0.0.1" not in pages[0].doc["links"]["next"]  # links point elsewhere: never used
    assert sum(len(p.data) for p in pages) == pages[0].doc["meta"]["total"]
    rows = normalize_resources([r for p in pages for r in p.data], site_id=SITE, resource="contacts")
    assert all(r["created_at"].utcoffset().total_seconds() == 0 for r in rows["contacts"])


def test_course_detail_with_includes_normalises_to_every_table():
    with cassette("course_detail") as base, client(base) as api:
        course_id = api.get("/courses", {"filter[site_id]": SITE, "page[size]": 1})["data"][0]["id"]
        a = api.get(f"/courses/{course_id}", {"include": "modules"})
        b = api.get(f"/courses/{course_id}", {"include": "lessons.media"})
    rows = normalize_resources([a["data"], *a["included"], *b["included"]], site_id=SITE, resource="courses")
    assert {"courses", "modules", "lessons", "media", "courses_modules", "lessons_media"} <= set(rows)
    assert all(r["course_id"] == course_id for r in rows["modules"])


def test_api_error_carries_detail_and_pointer():
    with cassette("payouts_without_site") as base, client(base) as api, pytest.raises(ApiError) as err:
        api.get("/platform_payments_payouts", resource="payouts")
    assert err.value.status in (400, 422)
    assert err.value.detail and "site" in err.value.detail.lower()
    assert err.value.pointer
