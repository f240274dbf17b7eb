"""Signal drills: SIGINT/SIGTERM at 10 seeded moments; no secret left anywhere, rerun heals."""

from __future__ import annotations

import pytest
from drillkit.signals import plan_signals, signal_drill

pytestmark = pytest.mark.slow

CI_SIGNALS = 10  # moments over extract, normalise and load; SIGINT and SIGTERM in turn


@pytest.fixture(scope="module")
def plan(lab):
    lab.reference  # noqa: B018 - also records how many requests a clean sync makes
    return plan_signals(CI_SIGNALS, len(lab.reference_requests))


@pytest.fixture(scope="module")
def outcomes(lab, plan, selected):
    indexes = sorted(selected("index"))
    done = signal_drill(lab, [plan[i] for i in indexes], numbers=[i + 1 for i in indexes])
    return dict(zip(indexes, done, strict=True))


def test_plan_covers_every_stage_and_both_signals(plan):
    assert {p.stage for p, _ in plan} == {"extract", "normalize", "load"}
    assert {s.name for _, s in plan} == {"SIGINT", "SIGTERM"}


@pytest.mark.parametrize("index", range(CI_SIGNALS))
def test_signal_leaves_no_secret_and_rerun_heals(outcomes, plan, index):
    out = outcomes[index]
    assert out.ok, out.explain()
