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

from csbench.measure import compile_repo  # noqa: E402


def test_every_module_of_the_packages_has_current_bytecode():
    compile_repo()
    packages = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    modules = [p for pkg in packages if "." not in pkg for p in (REPO / pkg).rglob("*.py")]
    assert len(modules) > 50  # common, creator_sync, models, pipelines, report, sandbox, sources
    stale = [str(m.relative_to(REPO)) for m in modules
             if not Path(importlib.util.cache_from_source(str(m))).is_file()
             or Path(importlib.util.cache_from_source(str(m))).stat().st_mtime < m.stat().st_mtime]
    assert stale == []
