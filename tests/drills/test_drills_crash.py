"""Crash drills: SIGKILL the sync in extract, normalise and load; the rerun must heal it all."""

from __future__ import annotations

import pytest
from drillkit.drills import DRILL_SEED, crash_once, plan_crashes
from drillkit.proxy import DrillProxy

pytestmark = pytest.mark.slow

CI_CRASHES = 7  # the benchmark runs 20


@pytest.fixture(scope="module")
def crash_env(lab):
    ref = lab.reference  # noqa: F841 - also records how many requests a clean sync makes
    plan = plan_crashes(CI_CRASHES, len(lab.reference_requests), seed=DRILL_SEED)
    with lab.sandbox() as sb, DrillProxy(sb.base_url) as proxy:
        yield plan, proxy


def test_plan_covers_every_stage(crash_env):
    plan, _ = crash_env
    assert {p.stage for p in plan} == {"extract", "normalize", "load"}


@pytest.mark.parametrize("index", range(CI_CRASHES))
def test_sigkill_then_rerun_heals(lab, crash_env, index):
    plan, proxy = crash_env
    out = crash_once(lab, proxy, f"crash_{index + 1:02d}", plan[index])
    assert out.ok, out.explain()
