"""Bad input: every crafted response loads correctly or fails clearly, and the next run heals."""

from __future__ import annotations

import os

import pytest
from drillkit.badinput import catalogue
from drillkit.drills import BadInputBench
from drillkit.proxy import DrillProxy, Reply

pytestmark = pytest.mark.slow

# CI runs the `ci=True` subset (one case per kind the issue lists, and more); DRILLS_ALL=1 or
# `benchmarks/drills/run` runs every case.
CASES = {c.name: c for c in catalogue() if c.ci or os.environ.get("DRILLS_ALL") == "1"}


@pytest.fixture(scope="module")
def bench(lab):
    lab.reference  # noqa: B018
    with DrillProxy("http://127.0.0.1:9") as evil:
        evil.mutator = lambda ex, fetch: Reply(404)
        with lab.sandbox() as sb, DrillProxy(sb.base_url) as proxy:
            bench = BadInputBench(lab, proxy, evil_hits=lambda: len(evil.exchanges))
            bench.cases = {c.name: c for c in catalogue(evil.base_url)}
            yield bench


# Cases that expose open bugs (tests/drills/FINDINGS.md): strict, so a fix turns them red until
# the mark is removed.
OPEN_FINDINGS: dict[str, int] = {}  # e.g. {"attributes_missing": 7} while #7 is open


def _param(name: str) -> object:
    if name in OPEN_FINDINGS:
        reason = f"drills FINDINGS #{OPEN_FINDINGS[name]}"
        return pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=reason))
    return name


@pytest.mark.parametrize("name", [_param(n) for n in sorted(CASES)])
def test_bad_input_case(bench, name):
    out = bench.run(bench.cases[name])
    assert out.ok, out.explain()
