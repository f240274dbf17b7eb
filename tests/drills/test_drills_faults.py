"""Fault drills: a misbehaving API must still yield exactly the reference warehouse."""

from __future__ import annotations

import pytest
from drillkit.drills import activity_drill, fault_drill, revoke_drill, storm_drill, token_ttl_drill

pytestmark = pytest.mark.slow


def test_fault_rate_all_kinds_mixed(lab):
    # Slow responses last 2 s in CI (15 s in the benchmark): still a fault, not a wait.
    out = fault_drill(lab, "fault_rate_0.1", "fault_rate=0.1, all kinds", fault_rate=0.1,
                      fault_slow_seconds=2)
    assert out.ok, out.explain()


def test_429_storm(lab):
    # Served by the proxy in CI (seconds); the benchmark also runs the sandbox's real limiter,
    # whose 60 s sliding window makes every drill against it last over a minute.
    out = storm_drill(lab)
    assert out.ok, out.explain()


def test_short_token_ttl(lab):
    # CI uses a 3 s token (the benchmark uses 30 s) with latency so the run outlives it.
    out = token_ttl_drill(lab, ttl=3, latency_ms=10)
    assert out.ok, out.explain()


def test_token_revoked_mid_run(lab):
    out = revoke_drill(lab)
    assert out.ok, out.explain()


def test_activity_while_paging(lab):
    out = activity_drill(lab)
    assert out.ok, out.explain()
