"""`csbench.measure.compile_repo`: the benchmark measures our modules as an install has them,
with their bytecode written, also where `PYTHONDONTWRITEBYTECODE` keeps runs from writing it
(docs/performance.md#nothing-new)."""

from __future__ import annotations

import importlib.util
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

from csbench.measure import compile_repo, package_folders  # noqa: E402


def test_every_module_of_the_packages_has_current_bytecode():
    compile_repo()
    folders = package_folders(tomllib.loads((REPO / "pyproject.toml").read_text()))
    assert {f.name for f in folders} == {  # each folder of creator_sync's subpackages, and its own
        "common", "creator_sync", "models", "pipelines", "report", "sandbox", "sources", "sql"}
    modules = [p for folder in folders for p in folder.rglob("*.py")]
    assert len(modules) > 50
    stale = [str(m.relative_to(REPO)) for m in modules
             if not Path(importlib.util.cache_from_source(str(m))).is_file()
             or Path(importlib.util.cache_from_source(str(m))).stat().st_mtime < m.stat().st_mtime]
    assert stale == []
