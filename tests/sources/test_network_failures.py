"""Issue 12 point 7: failures no retry can fix are named at once; a refused connection is retried.

Before, `https://` against a plain-http server retried for 25 s and then said only
`ConnectError`; a DNS failure did the same.
"""

from __future__ import annotations

import socket
import time

import pytest

from creator_sync.sources.creator_platform import api_client
from creator_sync.sources.creator_platform.errors import CreatorPlatformError


def _fail(base_url: str, attempts: int = 4) -> tuple[CreatorPlatformError, float, int]:
    client = api_client(base_url, "sandbox", "sandbox-secret",
                        max_attempts=attempts, backoff_initial=0.2)
    started = time.monotonic()
    try:
        with pytest.raises(CreatorPlatformError) as err:
            client.get("/sites", resource="sites")
    finally:
        client._http.close()
    return err.value, time.monotonic() - started, client.stats.retries


def test_https_to_a_plain_http_server_is_a_tls_failure_at_once(sandbox):
    plain = sandbox.base_url.replace("http://", "https://")
    error, seconds, retries = _fail(plain)
    assert retries == 0 and seconds < 2, (retries, seconds)
    text = str(error)
    assert "TLS handshake" in text and "plain http" in text, text
    assert "Error" not in text.split("[")[0]  # no Python class name in the message


def test_an_unresolvable_host_is_a_dns_failure_at_once():
    error, seconds, retries = _fail("https://api.creator-sync-test.invalid")
    assert retries == 0 and seconds < 10, (retries, seconds)
    assert "cannot resolve host 'api.creator-sync-test.invalid'" in str(error), str(error)


def test_a_refused_connection_is_still_retried():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    error, seconds, retries = _fail(f"http://127.0.0.1:{port}", attempts=3)
    # nothing there has answered in the run: tried twice, as `init` does (issue 38, point 5);
    # a host that answered before is retried every attempt (tests/sources/test_client.py)
    assert retries == 1 and seconds < 2, (retries, seconds)
    assert "connection refused" in str(error) and "Error" not in str(error), str(error)
    assert "is the base URL right?" in str(error), str(error)


# ---- issue 32, point 7: a silent host is visible ---------------------------------------------

class SilentHost:
    """Accepts connections and never answers (a hung host, a firewall eating packets)."""

    def __init__(self) -> None:
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(64)
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}"

    def close(self) -> None:
        self.server.close()


@pytest.fixture
def silent():
    host = SilentHost()
    yield host
    host.close()


def test_every_retry_of_a_failure_is_one_line(silent, caplog):
    import logging

    caplog.set_level(logging.WARNING, logger="creator_sync.retries")
    client = api_client(silent.url, "sandbox", "sandbox-secret", max_attempts=3,
                        backoff_initial=0.2, timeout=0.3)
    try:
        with pytest.raises(CreatorPlatformError) as err:
            client.tokens.access_token()
    finally:
        client._http.close()
    lines = [r.getMessage() for r in caplog.records if r.name == "creator_sync.retries"]
    assert len(lines) == 2  # two retries of three attempts, one line each
    for number, line in enumerate(lines, 1):
        assert line.startswith("retrying POST /v1/oauth/token in 0.")
        # the token endpoint's patience bounds it too: the line says so (issue 38, point 5)
        assert f"s: read timeout (attempt {number} of at most 3, within 5" in line, line
        assert "sandbox-secret" not in line
    assert "read timeout" in str(err.value)


def test_the_token_endpoint_gives_up_within_its_patience(silent, monkeypatch):
    import creator_sync.sources.creator_platform.client as client_module

    # the default patience is under a minute; the same rule, scaled down for a test
    assert client_module.TOKEN_PATIENCE_S <= 60
    monkeypatch.setattr(client_module, "TOKEN_PATIENCE_S", 2.5)
    client = api_client(silent.url, "sandbox", "sandbox-secret", timeout=30.0,
                        max_attempts=8, backoff_initial=0.2)
    started = time.monotonic()
    try:
        with pytest.raises(CreatorPlatformError):
            client.tokens.access_token()
    finally:
        client._http.close()
    # one 30 s read timeout alone would be far beyond: each attempt waits only what is left
    assert time.monotonic() - started < 10


def test_a_retry_after_beyond_the_token_patience_gives_up_at_once_naming_it():
    """A platform in maintenance answers the token endpoint 503 with `Retry-After: 120`: waiting
    past the token endpoint's patience only to give up with "no answer" hid the answer (60 s of
    silence). It gives up at once, on the 503 and the wait the platform asked for."""
    import httpx

    asked: list[str] = []

    def maintenance(request: httpx.Request) -> httpx.Response:
        asked.append(request.url.path)
        return httpx.Response(503, headers={"Retry-After": "120"},
                              json={"errors": [{"status": "503", "title": "Unavailable"}]})

    client = api_client("http://127.0.0.1:9", "sandbox", "sandbox-secret",
                        transport=httpx.MockTransport(maintenance))
    started = time.monotonic()
    try:
        with pytest.raises(CreatorPlatformError) as err:
            client.tokens.access_token()
    finally:
        client._http.close()
    assert time.monotonic() - started < 5
    assert asked == ["/v1/oauth/token"]
    assert "503" in str(err.value) and "the platform asks to retry in 120 s" in str(err.value)
