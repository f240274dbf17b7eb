"""Issue 12 point 7: failures no retry can fix are named at once; a refused connection is retried.

Before, `https://` against a plain-http server retried for 25 s and then said only
`ConnectError`; a DNS failure did the same.
"""

from __future__ import annotations

import socket
import time

import pytest

from sources.creator_platform.client import CreatorPlatformClient
from sources.creator_platform.errors import CreatorPlatformError


def _fail(base_url: str, attempts: int = 4) -> tuple[CreatorPlatformError, float, int]:
    client = CreatorPlatformClient(base_url, "sandbox", "sandbox-secret",
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
    error, _seconds, retries = _fail(f"http://127.0.0.1:{port}", attempts=3)
    assert retries == 2, retries
    assert "connection refused" in str(error) and "Error" not in str(error), str(error)
