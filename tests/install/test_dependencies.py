"""The declared dependencies are exactly what the code imports, and requirements.lock pins
exactly what they need (issue 12, point 10).

Imports are read from the source with `ast` (every `import`, at any depth, so a lazy import
counts), mapped to distributions with `importlib.metadata.packages_distributions()`.
"""

from __future__ import annotations

import ast
import sys
import tomllib
from functools import cache
from importlib.metadata import PackageNotFoundError, packages_distributions, requires
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
RUNTIME_DIRS = ("sources", "common", "pipelines", "models", "sandbox", "report", "creator_sync")
# What the tests run: the tests, and the benchmark helpers tests/benchmarks imports.
TEST_DIRS = ("tests", "benchmarks")
# Declared without an import, each for a reason: pytest plugins switched on by pyproject's
# `timeout` and `-n auto`, the linter `make test` runs, pandas, which DuckDB's `.df()` hands
# results to (analysts do; `test_duckdb_results_reach_pandas` below), and dbt with its adapters,
# run as the `dbt` command.
NOT_IMPORTED = {"pytest-timeout", "pytest-xdist", "ruff", "pandas", "dbt-core", "dbt-duckdb",
                "dbt-postgres"}
# Installers: pip freeze leaves them out, but dlt needs setuptools at run time.
INSTALLERS = {"pip", "wheel"}


def _imports(folders: tuple[str, ...]) -> dict[str, str]:
    """Top-level module imported -> one file importing it, for every absolute import."""
    found: dict[str, str] = {}
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    found.setdefault(name.split(".")[0], str(path.relative_to(ROOT)))
    return found


def _registered(path: Path) -> set[str]:
    """Names a file puts in `sys.modules` itself (a conftest loading a helper under a name)."""
    return {
        target.slice.value
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Subscript)
        and ast.unparse(target.value) == "sys.modules"
        and isinstance(target.slice, ast.Constant)
    }


def _local_modules() -> set[str]:
    """Modules of this repository: packages, and helpers tests import by their bare name."""
    files = [p for p in ROOT.rglob("*.py") if not {".venv", ".git"} & set(p.parts)]
    names = {p.stem for p in files} | {p.parent.name for p in files if p.name == "__init__.py"}
    return names.union(*(_registered(p) for p in files if p.name == "conftest.py"))


def _third_party(folders: tuple[str, ...]) -> dict[str, str]:
    """Distribution -> a file importing it."""
    local, dists = _local_modules(), packages_distributions()
    out: dict[str, str] = {}
    for module, where in _imports(folders).items():
        if module in sys.stdlib_module_names or module in local or module == "__future__":
            continue
        assert module in dists, f"{where} imports {module!r}, which no installed package provides"
        for dist in dists[module]:
            out.setdefault(canonicalize_name(dist), where)
    return out


def _declared(*groups: str) -> dict[str, Requirement]:
    reqs = list(PYPROJECT["project"]["dependencies"])
    for group in groups:
        reqs += PYPROJECT["project"]["optional-dependencies"][group]
    return {canonicalize_name(r.name): r for r in map(Requirement, reqs)}


def _locked() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f"requirements.lock: {line!r} is not pinned with =="
            pins[canonicalize_name(name)] = version
    return pins


@cache
def _needs(name: str, extras: frozenset[str]) -> tuple[Requirement, ...]:
    """What an installed distribution requires on this platform, with the given extras."""
    try:
        listed = requires(name) or []
    except PackageNotFoundError:
        return ()
    out = []
    for text in listed:
        req = Requirement(text)
        if req.marker and not any(req.marker.evaluate({"extra": e}) for e in extras or {""}):
            continue
        out.append(req)
    return tuple(out)


def _closure(roots: list[Requirement]) -> set[str]:
    seen: set[tuple[str, frozenset[str]]] = set()
    stack = [(r.name, frozenset(r.extras)) for r in roots if not r.marker or r.marker.evaluate()]
    while stack:
        name, extras = stack.pop()
        if (canonicalize_name(name), extras) in seen:
            continue
        seen.add((canonicalize_name(name), extras))
        stack += [(r.name, frozenset(r.extras)) for r in _needs(name, extras)]
    return {name for name, _ in seen}


def test_the_runtime_dependencies_are_exactly_what_the_code_imports() -> None:
    imported = _third_party(RUNTIME_DIRS)
    declared = _declared()
    undeclared = {d: where for d, where in imported.items() if d not in declared}
    assert not undeclared, f"imported but not in [project] dependencies: {undeclared}"
    unused = set(declared) - set(imported) - NOT_IMPORTED
    assert not unused, f"declared in [project] dependencies but never imported: {unused}"


def test_the_tests_import_only_what_runtime_and_dev_declare() -> None:
    imported = _third_party(TEST_DIRS)
    declared = _declared("dev")
    undeclared = {d: where for d, where in imported.items() if d not in declared}
    assert not undeclared, f"imported by the tests but not declared (dev extra): {undeclared}"
    dev_only = set(_declared("dev")) - set(_declared())
    unused = dev_only - set(imported) - NOT_IMPORTED
    assert not unused, f"in the dev extra but no test imports it: {unused}"


def test_the_lock_pins_every_declared_dependency_within_its_range() -> None:
    pins = _locked()
    for name, req in _declared("dev").items():
        assert name in pins, f"{req} is declared but not pinned in requirements.lock"
        assert req.specifier.contains(pins[name], prereleases=True), (
            f"requirements.lock pins {name}=={pins[name]}, outside the declared {req}"
        )


def test_the_lock_holds_nothing_the_declared_dependencies_do_not_need() -> None:
    needed = _closure(list(_declared("dev").values()))
    pins = set(_locked())
    assert not pins - needed, f"pinned in requirements.lock but needed by nothing: {pins - needed}"
    assert not needed - pins - INSTALLERS, (
        f"needed but not pinned in requirements.lock: {needed - pins - INSTALLERS}"
    )


def test_pyproject_lists_every_package_of_the_tree() -> None:
    """The wheel holds the packages pyproject lists: a new subpackage must be listed too. They
    are all `creator_sync` or under it (issue 32, point 6): each folder of the repository is
    mapped to `creator_sync.<folder>` (`sql/` to `creator_sync.models.sql`) and stays put."""
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    mapped = PYPROJECT["tool"]["setuptools"]["package-dir"]
    folders = [top for top in RUNTIME_DIRS if top != "creator_sync"]
    assert mapped == {f"creator_sync.{top}": top for top in folders} | {
        "creator_sync.models.sql": "sql"}
    by_folder = {folder: package for package, folder in mapped.items()}

    def package_of(folder: Path) -> str:
        parts = folder.relative_to(ROOT).parts
        for n in range(len(parts), 0, -1):
            if "/".join(parts[:n]) in by_folder:
                return ".".join([by_folder["/".join(parts[:n])], *parts[n:]])
        return ".".join(parts)

    on_disk = {
        package_of(init.parent)
        for top in (*RUNTIME_DIRS, "sql")
        for init in (ROOT / top).rglob("__init__.py")
    }
    assert listed == on_disk
    assert all(p == "creator_sync" or p.startswith("creator_sync.") for p in listed)


def test_duckdb_results_reach_pandas() -> None:
    """Issue 32, point 5: `duckdb.sql(...).df()` works in the product's environment (DuckDB
    imports pandas itself; without it `.df()` raises "pandas is required"), without a warning."""
    import warnings

    import duckdb

    with warnings.catch_warnings():  # every raw table has a TIMESTAMPTZ `_extracted_at`
        warnings.simplefilter("error")
        frame = duckdb.sql("select 1250 as amount_in_cents, 'EUR' as currency, "
                           "timestamptz '2026-03-01 12:00:00+00' as paid_at").df()
    assert list(frame.columns) == ["amount_in_cents", "currency", "paid_at"]
    assert frame.to_dict("records")[0]["amount_in_cents"] == 1250
    assert frame["paid_at"].iloc[0].timestamp() == 1772366400  # 2026-03-01 12:00 UTC, any zone
