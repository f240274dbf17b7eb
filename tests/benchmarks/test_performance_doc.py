"""docs/performance.md states what the code does (issue 33, point 4): every figure the
benchmark judges has its row with the same target, and every tuning constant in the doc has
the value the code has. A target or a constant changed in the code without the doc fails here."""

from __future__ import annotations

import ast
import fnmatch
import importlib
import re
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "creator_sync"
DOC = (ROOT / "docs" / "performance.md").read_text()
sys.path.insert(0, str(ROOT / "benchmarks"))

from csbench import figures  # noqa: E402
from csbench.suite import Options, Results  # noqa: E402

UNJUDGED = ("info", "reported")


def _section(title: str) -> str:
    return DOC.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def _rows(section: str) -> list[list[str]]:
    lines = [line for line in section.splitlines() if line.startswith("| `")]
    return [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in lines]


def _every_figure(tmp_path: Path) -> list[figures.Figure]:
    options = Options(scale="small", runs=1, seed=42, sites=2, latency_ms=50, rate_limit=600,
                      rate_window_s=45, concurrency=None, peer_parallelized=False,
                      workdir=tmp_path, client_timeout_s=60,
                      phases=("wall", "cpu", "baseline", "rate", "large"),
                      adaptive_limits=(100, 300, 1200))
    return figures.compute(Results(), options)


def test_every_judged_figure_has_its_row_with_the_harness_target(tmp_path) -> None:
    documented = {row[0].strip("`"): row[2] for row in _rows(_section("Figures"))}
    judged = [f for f in _every_figure(tmp_path) if not f.target.startswith(UNJUDGED)]
    assert judged, "the harness judged nothing"
    for figure in judged:
        keys = [key for key in documented if fnmatch.fnmatchcase(figure.key, key)]
        assert keys, f"docs/performance.md has no row for {figure.key} ({figure.name})"
        assert documented[keys[0]] == figure.target, (figure.key, documented[keys[0]], figure.target)
    keys = {f.key for f in judged}
    stale = [k for k in documented if not any(fnmatch.fnmatchcase(key, k) for key in keys)]
    assert not stale, f"rows for figures the harness no longer judges: {stale}"


# the source's knobs and the pipeline's (load, process)
TUNING = ("sources/creator_platform/tuning.py", "pipelines/tuning.py")


def _module(path: str) -> ModuleType:
    """The installed module of a repository file (`sources/x.py` is `creator_sync.sources.x`)."""
    return importlib.import_module(f"{PACKAGE}.{re.sub(r'[.]py$', '', path).replace('/', '.')}")


def test_every_tuning_constant_has_the_value_the_code_has() -> None:
    rows = _rows(_section("Tuning"))
    assert len(rows) >= 20
    for name, module, value, _why in rows:
        path = module.strip("`")
        target: object = _module(path)
        for part in name.strip("`").split("."):
            target = getattr(target, part)
        assert target == ast.literal_eval(value.strip("`")), (name, path, value, target)


def test_every_constant_of_the_tuning_module_has_its_row_with_a_reason() -> None:
    """Tuning in one place per layer (issue 33, point 3; issue 41): what each tuning.py holds,
    the doc explains."""
    rows = {row[0].strip("`"): row for row in _rows(_section("Tuning"))}
    for module in TUNING:
        tree = ast.parse((ROOT / module).read_text())
        constants = {target.id for node in tree.body if isinstance(node, ast.Assign | ast.AnnAssign)
                     for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
                     if isinstance(target, ast.Name) and target.id.isupper()}
        assert len(constants) >= 8, constants
        missing = sorted(constants - set(rows))
        assert not missing, f"docs/performance.md's tuning table lacks {missing}"
        for name in constants:
            _, where, _, why = rows[name]
            assert where == f"`{module}`", (name, where)
            assert len(why) > 20, (name, why)
