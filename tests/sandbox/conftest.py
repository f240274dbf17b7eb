"""Fixtures of the sandbox contract suite.

`_helpers.py` is registered under a unique module name so that other test folders may have their
own `_helpers.py` without clashing (tests folders are not packages).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_spec = importlib.util.spec_from_file_location(
    "sandbox_contract_helpers", Path(__file__).with_name("_helpers.py")
)
assert _spec and _spec.loader
helpers = importlib.util.module_from_spec(_spec)
sys.modules["sandbox_contract_helpers"] = helpers
_spec.loader.exec_module(helpers)


@pytest.fixture(scope="session")
def api(sandbox: Any) -> Iterator[Any]:
    """The full-scope client on the shared session sandbox."""
    client = helpers.Api(sandbox.base_url)
    yield client
    client.close()


@pytest.fixture(scope="session")
def site_ids(api: Any) -> list[str]:
    ids = [site["id"] for site in api.all("sites")]
    assert len(ids) == 2, "the session sandbox is documented with 2 sites"
    return ids


class Catalog:
    """Complete listings of the session sandbox, fetched once: the ground truth filters are
    recomputed from."""

    def __init__(self, api: Any) -> None:
        self.api = api
        self._cache: dict[tuple[str, str | None], list[dict[str, Any]]] = {}

    def all(self, collection: str, site_id: str | None) -> list[dict[str, Any]]:
        key = (collection, site_id)
        if key not in self._cache:
            params = {"filter[site_id]": site_id} if site_id else {}
            self._cache[key] = self.api.all(collection, params)
        return self._cache[key]

    def by_id(self, collection: str, site_id: str | None) -> dict[str, dict[str, Any]]:
        return {r["id"]: r for r in self.all(collection, site_id)}


@pytest.fixture(scope="session")
def catalog(api: Any) -> Catalog:
    return Catalog(api)


@pytest.fixture(params=[0, 1], ids=["site1", "site2"])
def each_site(request: Any, site_ids: list[str]) -> str:
    """Each of the two sites in turn."""
    return site_ids[request.param]


@pytest.fixture(scope="session")
def site_id(site_ids: list[str]) -> str:
    """The first site: most per-site checks run on it (the second is covered by scoping tests)."""
    return site_ids[0]


@pytest.fixture(scope="module")
def sandbox_factory_module() -> Iterator[Any]:
    """Like `sandbox_factory`, but the sandboxes live for the module (for shared activity state)."""
    from creator_sync.sandbox.testing import start_sandbox

    started: list[Any] = []

    def start(**options: Any) -> Any:
        options.setdefault("scale", "tiny")
        handle = start_sandbox(**options)
        started.append(handle)
        return handle

    try:
        yield start
    finally:
        for handle in started:
            handle.stop()
