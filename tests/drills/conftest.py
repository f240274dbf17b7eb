"""Fixtures of the drill suite: one `Lab` (seed, scale, reference warehouse) per session.

CI runs the drills at scale `tiny` with a small page size (`--page-size 10`) so that every collection spans
several pages (mid-pagination faults and kills need page 2 to exist). `benchmarks/drills/run`
runs the same drills at a larger scale.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from drillkit.drills import Lab

CI_SANDBOX = {"scale": "tiny", "sites": 2}
CI_SYNC_ARGS = ("--page-size", "10")


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return Lab(tmp_path_factory.mktemp("drills"), sync_args=CI_SYNC_ARGS, **CI_SANDBOX)
