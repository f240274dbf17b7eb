"""Faults are deterministic per (seed, request, sighting) and each kind really happens."""

from __future__ import annotations

import json
import time
from collections import Counter

import httpx
import pytest

from creator_sync.sandbox.faults import KINDS, FaultPlan

TOKEN_FORM = {"client_id": "sandbox", "client_secret": "sandbox-secret",
              "grant_type": "client_credentials"}


def test_same_seed_same_faults_and_a_retry_can_succeed():
    a, b = FaultPlan(7, 0.5), FaultPlan(7, 0.5)
    keys = [("GET", "/v1/contacts", [("page[number]", str(n))]) for n in range(200)]
    first = [a.decide(*k) for k in keys]
    assert first == [b.decide(*k) for k in keys]
    second = [a.decide(*k) for k in keys]
    assert first != second, "a repeated request must get a fresh draw"
    assert any(f is not None and s is None for f, s in zip(first, second, strict=True))
    other = FaultPlan(8, 0.5)
    assert first != [other.decide(*k) for k in keys]


def test_rate_and_kinds():
    plan = FaultPlan(3, 0.2)
    draws = [plan.draw(f"GET /v1/x?page={n}", 0) for n in range(5000)]
    rate = sum(d is not None for d in draws) / len(draws)
    assert 0.17 < rate < 0.23
    assert set(Counter(d for d in draws if d)) == set(KINDS)
    assert FaultPlan(3, 0.0).draw("GET /v1/x", 0) is None


def _query_for(plan: FaultPlan, kind: str) -> str:
    """A page number whose first sighting of GET /v1/sites draws `kind`."""
    for n in range(1, 5000):
        key = plan.request_key("GET", "/v1/sites", [("page[number]", str(n))])
        if plan.draw(key, 0) == kind:
            return str(n)
    raise AssertionError(f"no request draws {kind}")


@pytest.fixture(scope="module")
def faulty():
    from creator_sync.sandbox.testing import run_sandbox

    with run_sandbox(seed=11, fault_rate=0.5, fault_slow_seconds=0.6) as handle:
        plan = FaultPlan(11, 0.5)
        for _attempt in range(50):  # the token request itself may be faulted: retry it
            try:
                response = httpx.post(handle.api_url + "/oauth/token", data=TOKEN_FORM)
                if response.status_code == 200 and "json" in response.headers["content-type"]:
                    token = response.json()["access_token"]
                    break
            except (httpx.HTTPError, json.JSONDecodeError):
                pass
        else:
            raise AssertionError("no token after 50 attempts")
        yield handle, plan, {"Authorization": f"Bearer {token}"}


@pytest.mark.parametrize("kind", KINDS)
def test_each_fault_kind_happens_over_http(faulty, kind):
    handle, plan, headers = faulty
    number = _query_for(plan, kind)
    url = f"{handle.api_url}/sites?page[number]={number}"
    started = time.monotonic()
    with httpx.Client(timeout=10) as client:
        if kind == "reset":
            with pytest.raises(httpx.TransportError):
                client.get(url, headers=headers)
        else:
            response = client.get(url, headers=headers)
            if kind in ("500", "502", "503"):
                assert response.status_code == int(kind)
                assert response.json()["errors"][0]["status"] == kind
            elif kind == "truncated":
                assert response.status_code == 200
                with pytest.raises(json.JSONDecodeError):
                    json.loads(response.content)
            elif kind == "html":
                assert response.status_code == 200
                assert response.headers["content-type"].startswith("text/html")
                assert b"<html" in response.content
            else:  # slow: answers correctly, but only after the stall
                assert response.status_code == 200
                assert time.monotonic() - started >= 0.6
                assert response.json()["data"] is not None
