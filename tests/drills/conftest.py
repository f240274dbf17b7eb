"""Fixtures of the drill suite: one `Lab` (seed, scale, reference warehouse) per session.

CI runs the drills at scale `tiny` with a small page size (`--page-size 10`) so that every collection spans
several pages (mid-pagination faults and kills need page 2 to exist). `benchmarks/drills/run`
runs the same drills at a larger scale.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from drillkit.drills import Lab

CI_SANDBOX = {"scale": "tiny", "sites": 2}
CI_SYNC_ARGS = ("--page-size", "10")


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return Lab(tmp_path_factory.mktemp("drills"), sync_args=CI_SYNC_ARGS, **CI_SANDBOX)


@pytest.fixture(scope="module")
def selected(request: pytest.FixtureRequest) -> Callable[[str | None], set[object]]:
    """What the session will run of the requesting module: test names, or one parameter's values.

    Modules that run their drills side by side in one fixture use it to run only the drills of
    the tests selected (`-k`, a node id), not the whole module.
    """
    items = [i for i in request.session.items if i.module is request.module]

    def pick(argname: str | None = None) -> set[object]:
        if argname is None:
            return {getattr(i, "originalname", i.name) for i in items}
        return {i.callspec.params[argname] for i in items
                if hasattr(i, "callspec") and argname in i.callspec.params}

    return pick
