"""Checkpoint drills, the suite's small version (issue 30): a first `demo` sync, SIGTERM and
SIGKILL at two moments (early and late: enough to see the later leave less); each rerun exits 0, reads less than a whole sync and equals an
uninterrupted sync table by table. `benchmarks/` holds the full table (10 moments, `small`)."""

from __future__ import annotations

import signal

import pytest
from drillkit.checkpoints import Interruption, checkpoint_drill
from drillkit.drills import Lab

pytestmark = pytest.mark.slow

MOMENTS = (0.3, 0.8)  # shares of an uninterrupted sync's requests
PLAN = [Interruption(share, signum) for share in MOMENTS for signum in (signal.SIGTERM, signal.SIGKILL)]


@pytest.fixture(scope="module")
def demo_lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    # a few ms a request: the drill's sync lasts long enough for checkpoints to commit; one
    # site (a site's listings are what checkpoints keep, each on its own): half the CPU of two
    return Lab(tmp_path_factory.mktemp("checkpoint-drills"), scale="demo", sites=1, latency_ms=4)


@pytest.fixture(scope="module")
def outcomes(demo_lab):
    return checkpoint_drill(demo_lab, PLAN)


@pytest.mark.parametrize("index", range(len(PLAN)))
def test_interrupted_first_sync_keeps_its_checkpoints(outcomes, index):
    out = outcomes[index]
    assert out.ok, out.explain()


def test_later_moments_leave_less_to_read(outcomes):
    """What a rerun reads shrinks as the interruption comes later (checkpoints accumulate)."""
    by_signal = {}
    for drill, out in zip(PLAN, outcomes, strict=True):
        by_signal.setdefault(drill.signum, []).append((drill.share, out.rerun_ratio))
    for signum, ratios in by_signal.items():
        assert ratios[0][1] > ratios[-1][1], f"{signum.name}: {ratios}"
