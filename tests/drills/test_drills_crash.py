"""Crash drills: SIGKILL the sync in extract, normalise and load; the rerun must heal it all."""

from __future__ import annotations

import pytest
from drillkit.drills import DRILL_SEED, crash_drill, plan_crashes

pytestmark = pytest.mark.slow

CI_CRASHES = 7  # the benchmark runs 20


@pytest.fixture(scope="module")
def plan(lab):
    lab.reference  # noqa: B018 - also records how many requests a clean sync makes
    return plan_crashes(CI_CRASHES, len(lab.reference_requests), seed=DRILL_SEED)


@pytest.fixture(scope="module")
def outcomes(lab, plan, selected):
    # The selected points, two at a time (DRILLS_WORKERS), each with its own sandbox and proxy.
    indexes = sorted(selected("index"))
    done = crash_drill(lab, [plan[i] for i in indexes], numbers=[i + 1 for i in indexes])
    return dict(zip(indexes, done, strict=True))


def test_plan_covers_every_stage(plan):
    assert {p.stage for p in plan} == {"extract", "normalize", "load"}


@pytest.mark.parametrize("index", range(CI_CRASHES))
def test_sigkill_then_rerun_heals(outcomes, plan, index):
    out = outcomes[index]
    assert out.drill == f"crash_{index + 1:02d}" and out.faults == f"SIGKILL {plan[index]}"
    assert out.ok, out.explain()
