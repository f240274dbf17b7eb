"""Shared sandbox fixtures: a session sandbox (tiny, 2 sites, seed 42, fixed clock), one sync of
it for the whole run, and a factory for sandboxes with custom options. Sandbox-only; areas keep
their fixtures local.

Also how the suite runs in parallel (pytest-xdist, `-n auto` in pyproject): how many workers,
and which tests must share a worker."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import xdist_units
from shared_build import built_once

from creator_sync.sandbox.options import DEFAULT_NOW
from creator_sync.sandbox.testing import SandboxHandle, start_sandbox

SANDBOX_CLIENT_ID = "sandbox"
SANDBOX_CLIENT_SECRET = "sandbox-secret"
LIMITED_CLIENT_ID = "limited"
LIMITED_CLIENT_SECRET = "limited-secret"
OWNER_USERNAME = "owner@example.com"
OWNER_PASSWORD = "sandbox-password"
SANDBOX_SEED = 42
SANDBOX_NOW = DEFAULT_NOW  # 2026-03-01T12:00:00Z
_GROUPS_FILE = pytest.StashKey[str]()


@pytest.fixture(scope="session")
def sandbox() -> Iterator[SandboxHandle]:
    """The shared read-mostly sandbox. Do not run activity on it: use `sandbox_factory`."""
    handle = start_sandbox(scale="tiny", sites=2, seed=SANDBOX_SEED, now=SANDBOX_NOW)
    try:
        yield handle
    finally:
        handle.stop()


@dataclass(frozen=True)
class SyncedSandbox:
    """A full sync of the session sandbox: the DuckDB file (read it, never write it: copy it
    first), the site ids in the order the sync listed them, the resources that failed."""

    path: Path
    sites: list[str]
    failed: dict[str, str]


@pytest.fixture(scope="session")
def synced_sandbox(sandbox: SandboxHandle, tmp_path_factory: pytest.TempPathFactory) -> SyncedSandbox:
    """The session sandbox synced once per run, through the pipeline's Python entry point on
    its defaults, and shared by every xdist worker: each worker's session sandbox serves the
    same data (same seed and clock), so one sync stands for all."""

    def sync(folder: Path) -> None:
        from creator_sync.pipelines.sync import resolve_settings, run_sync

        settings = resolve_settings(
            base_url=sandbox.base_url, client_id=SANDBOX_CLIENT_ID,
            client_secret=SANDBOX_CLIENT_SECRET, duckdb=str(folder / "warehouse.duckdb"),
        )
        result = run_sync(settings, show_progress=False)
        outcome = {"sites": result.sites, "failed": result.failed}
        (folder / "result.json").write_text(json.dumps(outcome))

    folder = built_once(tmp_path_factory, "synced-sandbox", sync)
    outcome = json.loads((folder / "result.json").read_text())
    return SyncedSandbox(folder / "warehouse.duckdb", **outcome)


@pytest.fixture
def sandbox_factory() -> Iterator[Callable[..., SandboxHandle]]:
    """`start(**options)` -> a fresh in-process sandbox (tiny unless given); all are stopped at
    teardown."""
    started: list[SandboxHandle] = []

    def start(**options: object) -> SandboxHandle:
        options.setdefault("scale", "tiny")
        options.setdefault("seed", SANDBOX_SEED)
        options.setdefault("now", SANDBOX_NOW)
        handle = start_sandbox(**options)
        started.append(handle)
        return handle

    try:
        yield start
    finally:
        for handle in started:
            handle.stop()



# ---------------------------------------------------------------------- parallel runs (xdist)
# Workers for a run of folders (the whole suite, `make test`). More than the CI machine's 2
# cores pays: most tests wait on a sandbox, a sync subprocess or a server (CONTRIBUTING.md).
WORKERS = 4


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto`: WORKERS for folders; in-process for named files or tests, where starting
    workers would cost more than it saves. `-n N` or PYTEST_XDIST_AUTO_NUM_WORKERS overrides."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own hook reads it
    named = [Path(config.invocation_params.dir, arg.split("::")[0]) for arg in config.args]
    return 0 if named and all(path.is_file() for path in named) else WORKERS


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """Controller: name the file where workers write their groups (tests/xdist_units.py)."""
    config = node.config
    if _GROUPS_FILE not in config.stash:
        handle, path = tempfile.mkstemp(prefix="creator-sync-test-groups-", suffix=".json")
        os.close(handle)
        config.stash[_GROUPS_FILE] = path
    node.workerinput[xdist_units.GROUPS_FILE] = config.stash[_GROUPS_FILE]


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getoption("dist") == "loadscope" and _GROUPS_FILE in config.stash:
        return xdist_units.SharedFixtureScheduling(config, log, config.stash[_GROUPS_FILE])
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Worker: order the tests and write the groups for the controller's scheduler."""
    path = getattr(config, "workerinput", {}).get(xdist_units.GROUPS_FILE)
    if path:
        xdist_units.order(items)
        xdist_units.write_groups(path, items)


def pytest_unconfigure(config: pytest.Config) -> None:
    if _GROUPS_FILE in config.stash:
        Path(config.stash[_GROUPS_FILE]).unlink(missing_ok=True)
