"""HTTP layer against an in-memory API: auth life cycle, retries, errors, secrets, pacing."""

from __future__ import annotations

import time

import httpx
import pytest
from fakeapi import FakeApi, record

from creator_sync.sources.creator_platform import api_client
from creator_sync.sources.creator_platform.auth import Secret
from creator_sync.sources.creator_platform.client import (
    CreatorPlatformClient,
    api_root,
    parse_retry_after,
)
from creator_sync.sources.creator_platform.errors import ApiError, AuthError, BadResponseError
from creator_sync.sources.creator_platform.ratelimit import RateLimiter

SECRET = "s3cret-value"


def make(api: FakeApi, **kw) -> CreatorPlatformClient:
    kw.setdefault("backoff_initial", 0.001)
    kw.setdefault("max_attempts", 4)
    return api_client("http://127.0.0.1:9", "cid", Secret(SECRET), transport=api.transport(), **kw)


@pytest.fixture
def api() -> FakeApi:
    fake = FakeApi(client_secret=SECRET)
    fake.collections["contacts"] = [record("contacts", i) for i in range(3)]
    return fake


def test_client_credentials_bearer_and_revoke_on_close(api):
    with make(api) as client:
        doc = client.get("/contacts", resource="contacts")
        assert len(doc["data"]) == 3
        token = api.requests[-1].headers["authorization"]
    assert token.startswith("Bearer ")
    grant = api.requests[0]
    assert grant.url.path == "/v1/oauth/token"
    assert b"grant_type=client_credentials" in grant.content
    assert api.requests[-1].url.path == "/v1/oauth/revoke"
    assert token.removeprefix("Bearer ") in api.revoked


def test_revoked_token_mid_run_is_refreshed_then_regranted(api):
    with make(api) as client:
        client.get("/contacts")
        api.valid.clear()  # server-side revoke of the access token
        api.refresh_tokens.clear()  # and of the refresh token: refresh must fall back to a grant
        assert len(client.get("/contacts")["data"]) == 3
        assert client.tokens.grants == 2
        assert client.stats.retries == 1


def test_401_uses_refresh_grant_first(api):
    with make(api) as client:
        client.get("/contacts")
        api.valid.clear()  # access token revoked, refresh token still good
        client.get("/contacts")
        assert client.tokens.refreshes == 1 and client.tokens.grants == 1
        assert any(b"grant_type=refresh_token" in r.content for r in api.requests)


def test_token_refreshed_before_exp(api):
    with make(api) as client:
        client.get("/contacts")
        client.get("/contacts")
        assert client.tokens.refreshes == 0  # a fresh 1 h token is reused
        client.tokens._clock = lambda: time.time() + 3600 - 20  # 20 s before exp
        client.get("/contacts")
        assert client.tokens.refreshes == 1
        assert client.stats.retries == 0  # no 401 was needed


def test_short_lived_tokens_are_not_refreshed_on_every_call(api):
    api.token_ttl = 30  # the drills' --token-ttl 30
    with make(api) as client:
        for _ in range(5):
            client.get("/contacts")
        assert client.tokens.refreshes == 0 and client.tokens.grants == 1
        client.tokens._clock = lambda: time.time() + 25  # past 80% of the lifetime
        client.get("/contacts")
        assert client.tokens.refreshes == 1


def test_wrong_secret_fails_clearly_without_leaking(api):
    client = api_client("http://127.0.0.1:9", "cid", Secret("wrong-secret-xyz"),
                                   transport=api.transport(), backoff_initial=0.001)
    with pytest.raises(AuthError) as err:
        client.get("/contacts", resource="contacts")
    assert "wrong-secret-xyz" not in str(err.value) and "wrong-secret-xyz" not in repr(client)
    assert "401" in str(err.value)


def test_retries_5xx_and_429_honouring_retry_after(api):
    seen = {"n": 0}

    def hook(request):
        if request.url.path.endswith("/contacts") and seen["n"] < 2:
            seen["n"] += 1
            status = 503 if seen["n"] == 1 else 429
            return httpx.Response(status, headers={"Retry-After": "0.05"})
        return None

    api.hook = hook
    with make(api) as client:
        started = time.monotonic()
        assert len(client.get("/contacts")["data"]) == 3
        assert time.monotonic() - started >= 0.05
        assert client.stats.retries == 2 and client.stats.throttled == 1


def test_gives_up_after_bounded_attempts_naming_resource_url_status(api):
    api.hook = lambda r: httpx.Response(502) if r.url.path.endswith("/contacts") else None
    with make(api, max_attempts=3) as client, pytest.raises(ApiError) as err:
        client.get("/contacts", {"page[number]": 2}, resource="contacts")
    text = str(err.value)
    assert "3 attempts" in text and "502" in text and "resource=contacts" in text
    assert "page[number]=2" in text



def test_server_error_attempts_cut_only_5xx_short(api):
    """A call with a fallback gives up early on repeated 5xx, never on 429s (drills #10)."""
    calls = {"n": 0}

    def refuse(status):
        def hook(request):
            if request.url.path.endswith("/contacts"):
                calls["n"] += 1
                return httpx.Response(status, headers={"Retry-After": "0"})
            return None
        return hook

    api.hook = refuse(500)
    with make(api, max_attempts=6) as client, pytest.raises(ApiError) as err:
        client.get("/contacts", resource="contacts", server_error_attempts=2)
    assert calls["n"] == 2 and "giving up after 2 attempts" in str(err.value)

    calls["n"] = 0
    api.hook = refuse(429)
    with make(api, max_attempts=6, throttle_patience=0.3) as client, pytest.raises(ApiError) as err:
        started = time.monotonic()
        client.get("/contacts", resource="contacts", server_error_attempts=2)
    # 429s use no attempts: the request waits for the rate limiter until its patience runs out
    assert time.monotonic() - started >= 0.3
    assert calls["n"] > 6 and err.value.status == 429 and "giving up after" in str(err.value)

    storm = {"n": 0}

    def two_429_then_ok(request):
        if request.url.path.endswith("/contacts") and storm["n"] < 2:
            storm["n"] += 1
            return httpx.Response(429, headers={"Retry-After": "0"})
        return None

    api.hook = two_429_then_ok
    with make(api, max_attempts=6) as client:
        assert len(client.get("/contacts", server_error_attempts=2)["data"]) == 3

@pytest.mark.parametrize(
    "body, ctype",
    [(b"<html><body>maintenance</body></html>", "text/html"), (b'{"data": [', "application/json"),
     (b"\xff\xfe\x00bad", "application/json")],
)
def test_bad_bodies_are_retried_then_reported(api, body, ctype):
    api.hook = lambda r: httpx.Response(200, content=body, headers={"content-type": ctype}) if r.url.path.endswith("/contacts") else None
    with make(api, max_attempts=2) as client, pytest.raises(BadResponseError) as err:
        client.get("/contacts", resource="contacts")
    assert "not valid JSON" in str(err.value) and "contacts" in str(err.value)
    assert client.stats.retries == 1


def test_transient_html_200_then_good_page_succeeds(api):
    calls = {"n": 0}

    def hook(request):
        if request.url.path.endswith("/contacts") and calls["n"] == 0:
            calls["n"] += 1
            return httpx.Response(200, content=b"<html>", headers={"content-type": "text/html"})
        return None

    api.hook = hook
    with make(api) as client:
        assert len(client.get("/contacts")["data"]) == 3


def test_client_error_carries_detail_and_pointer(api):
    api.hook = lambda r: httpx.Response(400, json={"errors": [{"status": "400", "title": "Bad", "detail": "site_id is required", "source": {"pointer": "/filter/site_id"}}]}) if "payouts" in r.url.path else None
    with make(api) as client, pytest.raises(ApiError) as err:
        client.get("/platform_payments_payouts", resource="payouts")
    assert err.value.status == 400 and err.value.detail == "site_id is required"
    assert err.value.pointer == "/filter/site_id"
    assert client.stats.retries == 0  # a 400 is not retried


def test_connection_errors_are_retried(api):
    calls = {"n": 0}

    def hook(request):
        if request.url.path.endswith("/contacts") and calls["n"] == 0:
            calls["n"] += 1
            raise httpx.ReadError("connection reset")
        return None

    api.hook = hook
    with make(api) as client:
        assert len(client.get("/contacts")["data"]) == 3


def test_no_secret_or_token_in_reprs_or_errors(api):
    api.hook = lambda r: httpx.Response(500) if r.url.path.endswith("/contacts") else None
    client = make(api, max_attempts=2)
    with pytest.raises(ApiError) as err:
        client.get("/contacts")
    access = client.tokens.access_token().reveal()
    for text in (str(err.value), repr(err.value), repr(client), repr(client.tokens), repr(client.tokens.access_token()), str(Secret(SECRET))):
        assert SECRET not in text and access not in text
    client.close()


@pytest.mark.parametrize(
    "url, ok",
    [("http://127.0.0.1:8000", True), ("http://localhost", True), ("https://api.example.com", True),
     ("http://api.example.com", False), ("ftp://x", False)],
)
def test_plain_http_refused_off_loopback(url, ok):
    if ok:
        assert api_root(url).endswith("/v1")
    else:
        with pytest.raises(ValueError):
            api_root(url)
    assert api_root("http://api.example.com/", insecure=True) == "http://api.example.com/v1"
    assert api_root("https://h/v1") == "https://h/v1"


def test_retry_after_parsing():
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("junk") is None
    assert parse_retry_after("100000") == 120.0


def test_rate_limiter_spaces_requests_evenly():
    now = [0.0]
    slept = []

    def sleep(s):
        slept.append(s)
        now[0] += s

    limiter = RateLimiter(600, headroom=1.0, clock=lambda: now[0], sleep=sleep)
    for _ in range(11):
        limiter.acquire()
    assert now[0] == pytest.approx(1.0)  # 11 requests at 10/s: the 11th starts at t=1s
    with pytest.raises(ValueError):
        RateLimiter(0)


def test_certificate_errors_fail_at_once(api):
    def hook(request):
        raise httpx.ConnectError("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed certificate")

    api.hook = hook
    client = make(api, max_attempts=5)
    with pytest.raises(ApiError, match="TLS certificate verification failed"):
        client.get("/contacts", resource="contacts")
    assert client.stats.retries == 0 and client.stats.requests == 1


def _retry_lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "creator_sync.retries"]


def test_a_refused_connection_is_tried_twice_until_the_host_answers_then_every_attempt(api, caplog):
    """Issue 38, point 5: a refused connection was retried 7 times over 27 s by `sync` and
    given up in 0.7 s by `init`. Before the host answered anything it is tried twice, by every
    command; once it answered (a restart), every attempt. The lines and the error agree."""
    import logging

    from creator_sync.sources.creator_platform.errors import CreatorPlatformError

    refused = {"on": True, "n": 0}

    def hook(request):
        if refused["on"]:
            refused["n"] += 1
            raise httpx.ConnectError("All connection attempts failed") from ConnectionRefusedError(
                111, "Connection refused")
        return None

    api.hook = hook
    with caplog.at_level(logging.WARNING, logger="creator_sync.retries"):
        with make(api, max_attempts=6) as client, pytest.raises(CreatorPlatformError) as err:
            client.get("/contacts", resource="contacts")
        assert refused["n"] == 2, refused
        assert "giving up after 2 attempts in " in str(err.value)
        assert "is the base URL right?" in str(err.value)
        lines = _retry_lines(caplog)
        assert len(lines) == 1 and lines[0].endswith("(attempt 1 of at most 2, within 54 s)"), lines
        caplog.clear()
        refused["on"] = False
        with make(api, max_attempts=4) as client:
            client.get("/contacts")  # the host answers
            refused.update(on=True, n=0)  # then restarts
            with pytest.raises(CreatorPlatformError) as err:
                client.get("/contacts", resource="contacts")
            refused["on"] = False
        assert refused["n"] == 4 and "giving up after 4 attempts in " in str(err.value)
        assert "base URL" not in str(err.value)
        assert [line[-len("(attempt 3 of 4)"):] for line in _retry_lines(caplog)] == [
            f"(attempt {n} of 4)" for n in (1, 2, 3)]


def test_the_retry_lines_and_the_final_error_count_the_same_attempts(api, caplog, monkeypatch):
    """Issue 38, point 5: `(attempt 1 of 8)` then `giving up after 2 attempts` after 56 s
    against a silent host (the token endpoint's patience ended it), and 429s counted in the
    final figure but not in the lines."""
    import logging

    from creator_sync.sources.creator_platform import client as client_module
    from creator_sync.sources.creator_platform.errors import CreatorPlatformError

    monkeypatch.setattr(client_module, "TOKEN_PATIENCE_S", 2.0)

    def silent(request):
        if request.url.path.endswith("/oauth/token"):
            time.sleep(0.4)
            raise httpx.ReadTimeout("timed out")
        return None

    api.hook = silent
    with caplog.at_level(logging.WARNING, logger="creator_sync.retries"):
        with make(api, max_attempts=8) as client, pytest.raises(CreatorPlatformError) as err:
            client.get("/contacts", resource="contacts")
        lines = _retry_lines(caplog)
        assert lines and all("of at most 8, within " in line for line in lines), lines
        assert f"giving up after {len(lines) + 1} attempts in " in str(err.value), (lines, err.value)
        caplog.clear()
        answers = iter([429, 429, 500, 500, 500])

        def throttled_then_failing(request):
            if request.url.path.endswith("/contacts"):
                return httpx.Response(next(answers), headers={"Retry-After": "0"})
            return None

        api.hook = throttled_then_failing
        with make(api, max_attempts=2) as client, pytest.raises(ApiError) as err:
            client.get("/contacts", resource="contacts")
        lines = _retry_lines(caplog)
    assert lines and lines[0].endswith("(attempt 1 of 2)"), lines
    assert "giving up after 2 attempts in " in str(err.value), err.value


def test_a_request_cut_by_closing_the_session_is_not_retried(api, caplog):
    """Issue 38: a SIGTERM's stop closes the session while reads are in flight; their broken
    connections printed `retrying ... bad file descriptor (attempt 1 of 8)` after the signal."""
    import logging

    from creator_sync.sources.creator_platform.ratelimit import LimiterClosed

    holder: dict[str, CreatorPlatformClient] = {}
    cut = {"n": 0}

    def hook(request):
        if request.url.path.endswith("/contacts"):
            cut["n"] += 1
            holder["client"]._closing.set()  # the run's stop closed the session meanwhile
            raise httpx.ReadError("[Errno 9] Bad file descriptor")
        return None

    api.hook = hook
    with caplog.at_level(logging.WARNING, logger="creator_sync.retries"):
        client = holder["client"] = make(api)
        with pytest.raises(LimiterClosed):
            client.get("/contacts", resource="contacts")
        client.close()
    assert cut["n"] == 1 and _retry_lines(caplog) == []
