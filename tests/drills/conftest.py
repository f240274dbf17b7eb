"""Fixtures of the drill suite: one `Lab` (seed, scale, reference warehouse) per session.

CI runs the drills at scale `tiny` with a small page size (`--page-size 10`) so that every collection spans
several pages (mid-pagination faults and kills need page 2 to exist). `benchmarks/drills/run`
runs the same drills at a larger scale.
"""

from __future__ import annotations

import pickle
import sys
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import Any

import pytest
from shared_build import built_once

sys.path.insert(0, str(Path(__file__).parent))

from drillkit.drills import Lab

CI_SANDBOX = {"scale": "tiny", "sites": 2}
CI_SYNC_ARGS = ("--page-size", "10")


class SharedLab(Lab):
    """A `Lab` whose reference warehouse is built once per run, by whichever xdist worker asks
    first, and read by all (drills only read it; the seed fixes its data)."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory, **options: Any) -> None:
        super().__init__(tmp_path_factory.mktemp("drills"), **options)
        self._factory = tmp_path_factory

    def _build(self, folder: Path) -> None:
        builder = Lab(folder, sync_args=self.sync_args, **self.options)
        builder.reference  # noqa: B018 - the clean sync, in folder/reference
        runs = (builder.reference_requests, builder.reference_run)
        (folder / "reference.pickle").write_bytes(pickle.dumps(runs))

    @cached_property
    def reference(self) -> Path:
        folder = built_once(self._factory, "drills-reference", self._build)
        runs = pickle.loads((folder / "reference.pickle").read_bytes())
        self.reference_requests, self.reference_run = runs
        return folder / "reference" / "warehouse.duckdb"


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return SharedLab(tmp_path_factory, sync_args=CI_SYNC_ARGS, **CI_SANDBOX)


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
