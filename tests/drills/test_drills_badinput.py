"""Bad input: every crafted response loads correctly or fails clearly, and the next run heals."""

from __future__ import annotations

import os

import pytest
from drillkit.badinput import catalogue
from drillkit.drills import bad_input_drills

pytestmark = pytest.mark.slow

# CI runs the `ci=True` subset (one case per kind the issue lists, and more); DRILLS_ALL=1 or
# `benchmarks/drills/run` runs every case.
CASES = {c.name: c for c in catalogue() if c.ci or os.environ.get("DRILLS_ALL") == "1"}


@pytest.fixture(scope="module")
def outcomes(lab, selected):
    # The selected cases, two benches side by side (DRILLS_WORKERS), each baseline synced once.
    done = bad_input_drills(lab, sorted(selected("name")))
    return {out.drill.removeprefix("bad_input:"): out for out in done}


# Cases that expose open bugs (tests/drills/FINDINGS.md): strict, so a fix turns them red until
# the mark is removed.
OPEN_FINDINGS: dict[str, int] = {}  # e.g. {"attributes_missing": 7} while #7 is open


def _param(name: str) -> object:
    if name in OPEN_FINDINGS:
        reason = f"drills FINDINGS #{OPEN_FINDINGS[name]}"
        return pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=reason))
    return name


@pytest.mark.parametrize("name", [_param(n) for n in sorted(CASES)])
def test_bad_input_case(outcomes, name):
    out = outcomes[name]
    assert out.ok, out.explain()
