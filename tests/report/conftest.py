"""Fixtures of the report tests; the warehouse builder lives in `report_fixtures`."""

from __future__ import annotations

import os
import pathlib
import sys
from collections.abc import Iterator

import pytest
from chromium_cdp import Chromium, find_chromium
from report_fixtures import build_warehouse

# The models tests' throw-away PostgreSQL server and hand-built raw tables, shared (appended:
# this directory's own modules come first).
sys.path.append(str(pathlib.Path(__file__).resolve().parents[1] / "models"))
from pg_helpers import postgres_dsn  # noqa: F401  (the session fixture, registered here)


@pytest.fixture(scope="session")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    return build_warehouse(tmp_path_factory.mktemp("report") / "warehouse.duckdb")


@pytest.fixture(scope="session")
def chromium() -> Iterator[Chromium]:
    """One headless Chromium for every browser test (a launch costs a second or two)."""
    binary = find_chromium()
    if binary is None:
        message = (
            "headless Chromium not found; install Debian's `chromium` (.ci/run does) to run "
            "the report's browser tests"
        )
        if os.environ.get("CI"):
            pytest.fail(f"the browser test must run in CI: {message}")
        pytest.skip(f"BROWSER TEST SKIPPED: {message}")
    with Chromium(binary) as browser:
        yield browser
