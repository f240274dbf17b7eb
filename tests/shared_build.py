"""Build a costly test artifact once per test run, however many pytest-xdist workers run it.

Each xdist worker is a process of its own with its own session fixtures, so a warehouse synced
in a session fixture would be synced once per worker. `built_once` builds it in a folder every
worker of the run shares (the parent of the workers' temp roots), under a file lock; later
callers, in any worker, get the same folder. Callers only read it: copy a file before writing.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

DONE = ".built"  # written last: a folder without it is a build that failed half-way


def run_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The temp folder of this run: the workers' common parent under xdist, else the base."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str,
               build: Callable[[Path], None]) -> Path:
    """The folder `name`, filled by `build(folder)` the first time any worker asks for it."""
    folder = run_root(tmp_path_factory) / name
    with _locked(folder.with_name(f"{name}.lock")):
        if not (folder / DONE).exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            build(folder)
            (folder / DONE).touch()
    return folder
