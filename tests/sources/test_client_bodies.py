"""What the client makes of bodies (issue 40): every fractional JSON number as the Decimal of
its text, never a float; the token endpoint's plain-JSON errors (`application/json`, OAuth's
`error` and `error_description`) named in the one-line error."""

from __future__ import annotations

from decimal import Decimal

import httpx
import orjson
import pytest

from creator_sync.sources.creator_platform import CreatorPlatformClient, api_client
from creator_sync.sources.creator_platform.auth import Secret
from creator_sync.sources.creator_platform.errors import AuthError

PAGE = (b'{"data": [{"id": "1", "type": "customers", "attributes": '
        b'{"net_revenue": 1234.56789012345678901}}], "meta": {"total_count": 1}}')


def _client(handler) -> CreatorPlatformClient:
    return api_client("http://127.0.0.1:9", "cid", Secret("s3cret"),
                      transport=httpx.MockTransport(handler), backoff_initial=0.001,
                      max_attempts=2)


def _token(request: httpx.Request) -> httpx.Response | None:
    if request.url.path == "/v1/oauth/token":
        return httpx.Response(200, json={"access_token": "a", "refresh_token": "r",
                                         "token_type": "Bearer", "expires_in": 7200})
    if request.url.path == "/v1/oauth/revoke":
        return httpx.Response(200, content=b"")
    return None


def test_fractional_numbers_keep_their_text():
    def handler(request: httpx.Request) -> httpx.Response:
        return _token(request) or httpx.Response(
            200, content=PAGE, headers={"content-type": "application/vnd.api+json"})

    with _client(handler) as client:
        doc = client.get("/customers", resource="customers")
    value = doc["data"][0]["attributes"]["net_revenue"]
    assert isinstance(value, Decimal) and str(value) == "1234.56789012345678901"
    assert float(orjson.loads(PAGE)["data"][0]["attributes"]["net_revenue"]) != value  # a float loses it


@pytest.mark.parametrize(("status", "body", "named"), [
    (401, {"error": "invalid_client", "error_description": "unknown client_id or wrong secret"},
     "invalid_client: unknown client_id or wrong secret"),
    (400, {"error": "unsupported_grant_type"}, "unsupported_grant_type"),
])
def test_token_endpoint_errors_in_plain_json_are_named(status, body, named):
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/oauth/token":
            return httpx.Response(status, content=orjson.dumps(body),
                                  headers={"content-type": "application/json"})
        return httpx.Response(500)

    client = _client(handler)
    try:
        with pytest.raises(AuthError) as err:
            client.get("/customers", resource="customers")
    finally:
        client.close()
    text = str(err.value)
    assert named in text and "s3cret" not in text
