"""The product's packages form layers, and no import runs back up (issue 16, point 4).

Every import of every module is read with `ast`, at any depth: a lazy import inside a function
counts as much as one at the top, and so does `importlib.import_module("...")` or a
`"module:attribute"` string naming what a lazy loader imports (the CLI's subcommands).

The wheel installs one import package, `creator_sync` (issue 32, point 6); its subpackages are
the repository's folders, mapped by pyproject's `package-dir`:

    creator_sync.common              (common/) the bottom layer: the app's settings and how any
                                     setting is declared and checked, terminal contract, locks,
                                     files, DuckDB names, warehouse paths; imports nothing of ours
    creator_sync.sources, .sandbox   (sources/, sandbox/) the API's source (with its own
                                     settings, `config.SOURCE_SETTINGS`) and its emulator
    creator_sync.pipelines           (pipelines/) the dlt pipeline: sync, webhooks
    creator_sync.models              (models/, sql/) the SQL models and the figures read from them
    creator_sync.report              (report/) the HTML report
    creator_sync                     (creator_sync/) the console script and the demo, which
                                     drive all of the above

A module may import its own package and the layers below it, never a layer above nor a package
beside it in the same layer; and no chain of imports leads from a module back to itself. The
pipelines use the source through its public surface, `creator_sync.sources.creator_platform`
(its `__init__`), never one of its modules by name. Nothing
(product, tests, benchmarks) imports a folder by its own name: `sources.x` would be a second
copy of `creator_sync.sources.x`, and absent from an installed wheel.
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Iterator
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "creator_sync"
LAYERS: tuple[tuple[str, ...], ...] = (
    ("creator_sync.common",),
    ("creator_sync.sources", "creator_sync.sandbox"),
    ("creator_sync.pipelines",),
    ("creator_sync.models",),
    ("creator_sync.report",),
    ("creator_sync",),
)
# "module:attribute", as a lazy loader or an entry point names what it imports
LOADER = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")
RANK = {package: rank for rank, group in enumerate(LAYERS) for package in group}
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
# package -> folder of the repository, where it is not the package's dotted path
FOLDERS: dict[str, str] = SETUPTOOLS.get("package-dir", {})


def folder(package: str) -> Path:
    """The folder a package is built from: its longest prefix mapped by `package-dir`."""
    parts = package.split(".")
    for n in range(len(parts), 0, -1):
        mapped = FOLDERS.get(".".join(parts[:n]))
        if mapped is not None:
            return ROOT.joinpath(mapped, *parts[n:])
    return ROOT.joinpath(*parts)


@cache
def modules() -> dict[str, Path]:
    """Every product module (dotted name -> file), from the packages pyproject ships."""
    out: dict[str, Path] = {}
    for package in SETUPTOOLS["packages"]:
        for path in sorted(folder(package).glob("*.py")):
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


def named(tree: ast.AST) -> Iterator[tuple[ast.AST, str]]:
    """(node, absolute module name) for what a parsed file imports or names as a module path:
    `import`, `from ... import` (absolute ones), `import_module("...")` and "module:attribute"."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((node, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            yield node, node.module
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant)):
            yield node, str(node.args[0].value)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and LOADER.fullmatch(
                node.value):
            yield node, node.value.split(":", 1)[0]  # "module:attribute", as entry points write


def imports(module: str) -> Iterator[tuple[str, int]]:
    """(product module imported, line) for every import in `module`, lazy ones included."""
    tree = ast.parse(modules()[module].read_text(encoding="utf-8"))
    found = [(node, [name]) for node, name in named(tree)]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            found.append((node, [_absolute(module, node)]))
    for node, targets in found:
        if isinstance(node, ast.ImportFrom):
            # `from pkg import submodule` imports the submodule; `from mod import name`, mod
            base = targets[0]
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules() else base
                       for alias in node.names]
        for target in targets:
            ours = _ours(target)
            if ours is not None and ours != module:
                yield ours, getattr(node, "lineno", 0)


def layer(module: str) -> str:
    """The layer package `module` belongs to: the longest one of LAYERS that holds it."""
    return max((p for p in RANK if module == p or module.startswith(f"{p}.")), key=len)


def test_every_shipped_package_has_a_layer() -> None:
    assert all(m == PACKAGE or m.startswith(f"{PACKAGE}.") for m in modules()), "one package"
    assert {layer(m) for m in modules()} == set(RANK)


def test_no_import_runs_up_or_sideways() -> None:
    wrong = []
    for module in modules():
        here = layer(module)
        for target, line in imports(module):
            there = layer(target)
            if there != here and RANK[there] >= RANK[here]:
                wrong.append(f"{modules()[module].relative_to(ROOT)}:{line} {module} imports "
                             f"{target} ({there} is not below {here})")
    assert not wrong, "\n".join(wrong)


SOURCE = "creator_sync.sources.creator_platform"


def test_common_is_the_bottom_layer() -> None:
    """`common` imports nothing of ours but itself (issue 33, point 5): the app's settings and the
    machinery of every setting live there (issue 41), so the source and every command stand on
    it."""
    wrong = [f"{modules()[module].relative_to(ROOT)}:{line} imports {target}"
             for module in modules() if layer(module) == "creator_sync.common"
             for target, line in imports(module) if layer(target) != "creator_sync.common"]
    assert not wrong, "\n".join(wrong)


def test_pipelines_use_the_source_through_its_public_surface() -> None:
    """`pipelines` imports what the source's `__init__` exports, not its modules: the source
    can then rename or split a module (normalize.py, say) without the pipelines noticing."""
    wrong = [f"{modules()[module].relative_to(ROOT)}:{line} imports {target}"
             for module in modules() if layer(module) == "creator_sync.pipelines"
             for target, line in imports(module) if target.startswith(f"{SOURCE}.")]
    assert not wrong, f"import these from {SOURCE}:\n" + "\n".join(wrong)


def test_the_public_surface_checker_sees_a_module_import() -> None:
    """The checker itself: `from <source> import <module>` names the module, not the package."""
    found = {target for target, _ in imports(f"{SOURCE}.source")}
    assert f"{SOURCE}.config" in found  # `from .config import ...`


def test_the_models_and_the_report_import_nothing_of_the_source() -> None:
    """The models and the report read the warehouse and the app's settings (`common.settings`),
    never the source (issue 41, point 1): not even `DEFAULT_DATASET` or `BadSetting`."""
    wrong = [f"{modules()[module].relative_to(ROOT)}:{line} imports {target}"
             for module in modules()
             if layer(module) in ("creator_sync.models", "creator_sync.report")
             for target, line in imports(module) if layer(target) == "creator_sync.sources"]
    assert not wrong, "\n".join(wrong)


def test_the_source_imports_no_cli() -> None:
    """The source is a dlt source a user's script runs (issue 41, point 1): click, the flags and
    the commands are the app's; a module of `sources/` imports no click."""
    wrong = [f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)} imports {name}"
             for module, path in modules().items() if layer(module) == "creator_sync.sources"
             for node, name in named(ast.parse(path.read_text(encoding="utf-8")))
             if name.split(".")[0] == "click"]
    assert not wrong, "\n".join(wrong)


def test_the_layer_rules_see_what_they_forbid() -> None:
    """The two checks above, on what they would catch: `report.render` stands on
    `common.settings`, and an import of click is seen as one."""
    assert "creator_sync.common.settings" in {t for t, _ in imports("creator_sync.report.render")}
    assert [n for _, n in named(ast.parse("import click\nfrom click import option"))] == [
        "click", "click"]


WEBHOOKS = "creator_sync.pipelines.webhooks"  # the push side (`creator-sync listen`, hooks)


def test_the_pull_sync_imports_nothing_of_the_webhook_side() -> None:
    """The push side stands on the pull's modules, never the other way (issue 33, point 5):
    what both need (a delivery's rows, their upsert, their re-application after a pull) lives
    beside the pull, in `pipelines`; a pull that never saw a webhook loads no webhook code."""
    wrong = [f"{modules()[module].relative_to(ROOT)}:{line} {module} imports {target}"
             for module in modules()
             if module.startswith("creator_sync.pipelines") and not module.startswith(WEBHOOKS)
             for target, line in imports(module)
             if target == WEBHOOKS or target.startswith(f"{WEBHOOKS}.")]
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
    assert {"creator_sync.pipelines.sync", "creator_sync.models.cli", "creator_sync.report.cli",
            "creator_sync.common.terminal"} <= found
    lazy = {target for target, _ in imports("creator_sync.demo")}
    assert {"creator_sync.models.runner", "creator_sync.report.render",
            "creator_sync.sandbox.testing"} <= lazy  # inside run_demo
    assert "creator_sync.common.files" in {  # `from .files`
        target for target, _ in imports("creator_sync.common.locking")}


def test_the_root_package_imports_nothing() -> None:
    """Importing any module runs `creator_sync/__init__.py` first: whatever it imported, every
    layer would import (and `creator-sync --help` would pay for)."""
    assert not list(imports(PACKAGE))
    assert not [n for n in ast.walk(ast.parse(modules()[PACKAGE].read_text()))
                if isinstance(n, (ast.Import, ast.ImportFrom))]


def _python_files() -> Iterator[Path]:
    """The product's, the tests' and the benchmarks' Python files, scripts without `.py` too."""
    for top in sorted({*FOLDERS.values(), PACKAGE, "tests", "benchmarks"}):
        for path in sorted((ROOT / top).rglob("*")):
            if path.is_file() and (path.suffix == ".py" or (
                    not path.suffix and path.read_bytes()[:64].startswith(b"#!")
                    and b"python" in path.read_bytes()[:64])):
                yield path


def test_nothing_imports_a_folder_by_its_own_name() -> None:
    """`from sources.creator_platform import x` only works from the repository's root, and
    loads a second copy of `creator_sync.sources.creator_platform` beside the first
    (/work/notes/rename_imports.py rewrites such imports)."""
    folders = {Path(f).parts[0] for f in FOLDERS.values()}
    wrong = [f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)} {name}"
             for path in _python_files()
             for node, name in named(ast.parse(path.read_text(encoding="utf-8")))
             if name.split(".")[0] in folders]
    assert not wrong, "import these as creator_sync.<folder>...:\n" + "\n".join(wrong)
