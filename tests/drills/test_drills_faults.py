"""Fault drills: a misbehaving API must still yield exactly the reference warehouse."""

from __future__ import annotations

import pytest
from drillkit.drills import activity_drill, fault_drill, revoke_drill

pytestmark = pytest.mark.slow


def test_fault_rate_all_kinds_mixed(lab):
    out = fault_drill(lab, "fault_rate_0.1", "fault_rate=0.1, all kinds", fault_rate=0.1)
    assert out.ok, out.explain()


def test_429_storm(lab):
    # A limit well under what the sync would use unthrottled: most bursts bounce off with 429.
    out = fault_drill(lab, "429_storm", "rate_limit=300/min", rate_limit=300)
    assert out.ok, out.explain()


def test_short_token_ttl(lab):
    # CI uses a 3 s token (the benchmark uses 30 s) with latency so the run outlives it.
    out = fault_drill(lab, "token_ttl_3s", "token_ttl=3s, 10 ms latency", token_ttl=3, latency_ms=10)
    assert out.ok, out.explain()


def test_token_revoked_mid_run(lab):
    out = revoke_drill(lab)
    assert out.ok, out.explain()


def test_activity_while_paging(lab):
    out = activity_drill(lab)
    assert out.ok, out.explain()
