"""The sandbox's per-client window limiter: sliding or fixed, any window length (fake clock)."""

from __future__ import annotations

import httpx
import pytest
from click.testing import CliRunner

from creator_sync.sandbox.cli import sandbox_command
from creator_sync.sandbox.options import Options
from creator_sync.sandbox.ratelimit import RateLimiter


class Clock:
    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_sliding_window_admits_n_in_any_window_and_says_when_the_oldest_leaves():
    clock = Clock()
    limit = RateLimiter(3, 10.0, "sliding", clock=clock)
    for at in (0.0, 2.0, 4.0):
        clock.now = at
        assert limit.check("a") is None
    clock.now = 5.0
    assert limit.check("a") == 5  # the request at t=0 leaves at t=10
    assert limit.check("b") is None  # per client
    clock.now = 10.0
    assert limit.check("a") is None
    assert limit.check("a") == 2  # now the one at t=2 is the oldest: free at t=12


def test_fixed_window_resets_at_the_boundary():
    clock = Clock(61.0)
    limit = RateLimiter(2, 60.0, "fixed", clock=clock)
    assert limit.check("a") is None
    clock.now = 119.0
    assert limit.check("a") is None
    assert limit.check("a") == 1  # window [60, 120) is full until t=120
    clock.now = 120.0
    assert limit.check("a") is None and limit.check("a") is None  # a fresh window: a burst of 2
    assert limit.check("a") == 60


def test_refused_requests_do_not_count():
    clock = Clock()
    limit = RateLimiter(1, 60.0, "sliding", clock=clock)
    assert limit.check("a") is None
    for _ in range(5):
        assert limit.check("a") == 60
    clock.now = 60.0
    assert limit.check("a") is None


def test_bad_window_options_are_usage_errors():
    with pytest.raises(ValueError, match="rate_window_type"):
        Options(rate_window_type="leaky").validate()
    with pytest.raises(ValueError, match="rate_window"):
        Options(rate_window=0).validate()
    result = CliRunner().invoke(sandbox_command, ["--rate-window-type", "leaky"])
    assert result.exit_code == 2 and "--rate-window-type" in result.output


@pytest.mark.parametrize("retry_after", [True, False])
def test_app_window_options_and_retry_after(sandbox_factory, retry_after):
    handle = sandbox_factory(scale="tiny", seed=5, rate_limit=2, rate_window=30,
                             rate_window_type="fixed", retry_after=retry_after)
    token = httpx.post(f"{handle.api_url}/oauth/token", data={
        "grant_type": "client_credentials", "client_id": "sandbox",
        "client_secret": "sandbox-secret"}).json()["access_token"]
    headers = {"Authorization": f"Bearer {token}"}
    statuses = [httpx.get(f"{handle.api_url}/sites", headers=headers) for _ in range(3)]
    assert [r.status_code for r in statuses] == [200, 200, 429]
    refused = statuses[-1]
    detail = refused.json()["errors"][0]["detail"]
    assert "2 requests per 30 s (fixed window)" in detail
    if retry_after:
        assert 1 <= int(refused.headers["retry-after"]) <= 30 and "retry in" in detail
    else:  # neither the header nor the body tells when
        assert "retry-after" not in refused.headers and "retry in" not in detail
