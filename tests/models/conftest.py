"""Fixtures for the models tests."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from models_helpers import Rows, write_raw
from pg_helpers import postgres_dsn  # noqa: F401  (the session fixture, registered here)


@pytest.fixture
def raw_db(tmp_path: Path) -> Callable[..., str]:
    """Write hand-built raw rows into a fresh DuckDB file; returns its path."""

    def make(rows: Rows, name: str = "raw.duckdb") -> str:
        return write_raw(tmp_path / name, rows)

    return make


def _sync(base_url: str, work: Path, **warehouse: str) -> None:
    """One sync of the sandbox through the pipeline's Python entry point."""
    from creator_sync.pipelines.sync import resolve_settings, run_sync

    settings = resolve_settings(
        base_url=base_url, client_id="sandbox", client_secret="sandbox-secret",
        pipelines_dir=str(work / "pipelines"), **warehouse,
    )
    run_sync(settings, show_progress=False)


@pytest.fixture(scope="session")
def sandbox_url(sandbox: Any) -> str:
    """The shared session sandbox of tests/conftest.py: tiny, 2 sites, fixed seed and clock."""
    return str(sandbox.base_url)


@pytest.fixture(scope="session")
def sandbox_raw_duckdb(synced_sandbox: Any) -> Path:
    """The session sandbox synced into a DuckDB file once per run (raw tables only)."""
    return synced_sandbox.path


@pytest.fixture
def sandbox_duckdb(sandbox_raw_duckdb: Path, tmp_path: Path) -> str:
    """A private copy of the synced file, so that each test builds its own models."""
    copy = tmp_path / "warehouse.duckdb"
    shutil.copyfile(sandbox_raw_duckdb, copy)
    return str(copy)


@pytest.fixture
def sync_sandbox() -> Callable[..., None]:
    """Sync the sandbox at a URL into a destination (`duckdb=PATH` or `destination=NAME`)."""
    return _sync
