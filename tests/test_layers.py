"""The product's packages form layers, and no import runs back up (issue 16, point 4).

Every import of every module is read with `ast`, at any depth: a lazy import inside a function
counts as much as one at the top, and so does `importlib.import_module("...")` or a
`"module:attribute"` string naming what a lazy loader imports (the CLI's subcommands).

    sources, sandbox    the API's source and its emulator: import nothing of ours
    common              settings, terminal contract, locks, warehouse names and paths
    pipelines           the dlt pipeline: sync, webhooks
    models              the SQL models and the figures read from them
    report              the HTML report
    creator_sync        the console script and the demo, which drive all of the above

A module may import its own package and the layers below it, never a layer above nor a package
beside it in the same layer; and no chain of imports leads from a module back to itself.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS: tuple[tuple[str, ...], ...] = (
    ("sources", "sandbox"),
    ("common",),
    ("pipelines",),
    ("models",),
    ("report",),
    ("creator_sync",),
)
RANK = {package: rank for rank, group in enumerate(LAYERS) for package in group}
# packages whose folder is not their name (pyproject `package-dir`)
FOLDERS = {"models.sql": "sql"}


def _folder(package: str) -> Path:
    return ROOT / FOLDERS.get(package, package.replace(".", "/"))


@cache
def modules() -> dict[str, Path]:
    """Every product module (dotted name -> file), from the packages pyproject ships."""
    listed = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    out: dict[str, Path] = {}
    for package in listed:
        folder = _folder(package)
        for path in sorted(folder.glob("*.py")):
            name = package if path.stem == "__init__" else f"{package}.{path.stem}"
            out[name] = path
    return out


def _absolute(module: str, node: ast.ImportFrom) -> str:
    """The absolute name of a (possibly relative) `from ... import`."""
    if not node.level:
        return node.module or ""
    is_package = modules()[module].stem == "__init__"
    parts = module.split(".")
    base = parts if is_package else parts[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _ours(name: str) -> str | None:
    """The product module `name` means (the longest known prefix), else None."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules():
            return candidate
        parts.pop()
    return None


def imports(module: str) -> Iterator[tuple[str, int]]:
    """(product module imported, line) for every import in `module`, lazy ones included."""
    tree = ast.parse(modules()[module].read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, node)
            # `from pkg import submodule` imports the submodule; `from mod import name`, mod
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules() else base
                       for alias in node.names]
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant)):
            targets = [str(node.args[0].value)]
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
              and ":" in node.value and " " not in node.value):
            targets = [node.value.split(":", 1)[0]]  # "module:attribute", as entry points write
        for target in targets:
            found = _ours(target)
            if found is not None and found != module:
                yield found, getattr(node, "lineno", 0)


def top(module: str) -> str:
    return module.split(".", 1)[0]


def test_every_shipped_package_has_a_layer() -> None:
    assert {top(m) for m in modules()} == set(RANK)


def test_no_import_runs_up_or_sideways() -> None:
    wrong = []
    for module in modules():
        here = top(module)
        for target, line in imports(module):
            there = top(target)
            if there != here and RANK[there] >= RANK[here]:
                wrong.append(f"{modules()[module].relative_to(ROOT)}:{line} {module} imports "
                             f"{target} ({there} is not below {here})")
    assert not wrong, "\n".join(wrong)


def test_no_import_cycles() -> None:
    graph = {module: sorted({target for target, _ in imports(module)}) for module in modules()}
    cycles = _cycles(graph)
    assert not cycles, "\n".join(" -> ".join([*c, c[0]]) for c in cycles)


def _cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each a cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, []):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                item = stack.pop()
                on_stack.discard(item)
                component.append(item)
                if item == node:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return out


def test_the_checker_sees_lazy_imports_and_relative_ones() -> None:
    """The checker itself: a lazy import, a relative import and a loader string are seen."""
    found = {target for target, _ in imports("creator_sync.cli")}
    assert {"pipelines.sync", "models.cli", "report.cli", "common.terminal"} <= found
    lazy = {target for target, _ in imports("creator_sync.demo")}
    assert {"models.runner", "report.render", "sandbox.testing"} <= lazy  # inside run_demo
    assert "common.files" in {target for target, _ in imports("common.locking")}  # `from .files`
