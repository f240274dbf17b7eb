"""How the suite spreads over pytest-xdist workers (`-n auto --dist loadscope`, pyproject).

xdist's scheduler runs in the controller, which sees test ids only; what tests share is known
to the workers, which collect. So each worker writes the groups it computes to a file the
controller named (passed in `workerinput`), and the controller's scheduler reads it:

- tests that use a fixture wider than a test and narrower than the session (a module's synced
  warehouse, the drills of a module run side by side) share a unit of work, so that fixture is
  built once;
- so do the tests of the Chromium fixture (one browser for all, it is large); PostgreSQL is
  not grouped: each worker that needs it starts its own throw-away server (a second or two),
  so the PostgreSQL tests (the month's leg, listen, dbt, models, report) spread over workers
  instead of queueing on one;
- every other test is a unit of its own, free to run on any worker.

Workers also order the collection `slow` first, so that the longest units start first and the
short ones fill the gaps at the end (the scheduler keeps that order).

xdist's own `loadgroup` would do the grouping from an `xdist_group` mark, but it renames node
ids in a way pytest 9 ignores.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from xdist.scheduler import LoadScopeScheduling

# Session fixtures that start a server their tests must share: they run on one worker.
SERVER_FIXTURES = ("chromium",)
GROUPS_FILE = "creator_sync_groups_file"  # the key in `workerinput`


def _shared_keys(item: pytest.Item) -> list[str]:
    """What an item shares with others: its module, if it uses a class, module or package
    fixture; each server fixture it uses."""
    keys = []
    info = getattr(item, "_fixtureinfo", None)
    for name, defs in (info.name2fixturedefs.items() if info else ()):
        scope = defs[-1].scope
        if scope in ("class", "module", "package"):
            keys.append(item.nodeid.split("::")[0])
        elif scope == "session" and name in SERVER_FIXTURES:
            keys.append(name)
    return keys


def groups(items: list[pytest.Item]) -> dict[str, str]:
    """Node id -> group, for the items that share something (transitively: union-find)."""
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.setdefault(key, key) != key:
            key = parent[key]
        return key

    keyed = [(item.nodeid, _shared_keys(item)) for item in items]
    for _, keys in keyed:
        for key in keys[1:]:
            parent[root(key)] = root(keys[0])
    return {nodeid: root(keys[0]) for nodeid, keys in keyed if keys}


def order(items: list[pytest.Item]) -> None:
    """`slow` tests first (a stable sort: each group stays in collection order)."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def write_groups(path: str, items: list[pytest.Item]) -> None:
    """Every worker writes the same groups; each replaces the file whole, atomically."""
    part = f"{path}.{os.environ.get('PYTEST_XDIST_WORKER', 'main')}"
    Path(part).write_text(json.dumps(groups(items)))
    os.replace(part, path)


class SharedFixtureScheduling(LoadScopeScheduling):
    """xdist's `loadscope`, with the units of `groups` and the workers' order of the tests."""

    def __init__(self, config: pytest.Config, log: object, groups_file: str) -> None:
        super().__init__(config, log)
        config.option.loadscopereorder = False  # keep the workers' order: slow first
        self._groups_file = groups_file
        self._groups: dict[str, str] | None = None

    def _split_scope(self, nodeid: str) -> str:
        if self._groups is None:  # read once all workers collected (schedule() runs then)
            self._groups = json.loads(Path(self._groups_file).read_text())
        return self._groups.get(nodeid, nodeid)
