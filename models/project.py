"""Discover the SQL models and data tests under `sql/`, and order them by their refs.

The dependency order is derived from the `{{ ref('...') }}` calls (a topological sort),
never from a hand-kept list, so adding a model is adding a file.

The repository keeps the SQL in `sql/`; pyproject.toml maps that folder to the package
`creator_sync.models.sql`, so the wheel ships it inside `creator_sync/models/` and an editable
install reads it in place.
Either way it is found through importlib.resources, never relative to this file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from graphlib import CycleError, TopologicalSorter
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml

LAYERS = ("staging", "intermediate", "marts")
MODELS_DIR = "models"  # dbt's layout: sql/models/<layer>/, singular data tests in sql/tests/
TESTS_DIR = "tests"

# what a file reads, found in its Jinja calls (the models are rendered by models/dbt_context.py)
CALL = re.compile(r"\b(raw|latest|ref)\(\s*['\"]([A-Za-z0-9_]+)['\"]\s*\)")
SEVERITY = re.compile(r"config\(\s*severity\s*=\s*['\"](\w+)['\"]\s*\)")
DIRECTIVE = re.compile(r"^--\s*([a-z_]+)\s*:\s*(.+?)\s*$")


class ProjectError(ValueError):
    """The SQL project itself is inconsistent (unknown ref, cycle, duplicate name)."""


def _installed_sql_dir() -> Path:
    """The folder of package `creator_sync.models.sql`: a real directory in a wheel or editable install."""
    root = files("creator_sync.models.sql")
    if not isinstance(root, Path):  # a zipped install: the runner reads files by path
        raise ProjectError(f"the SQL models must be installed as files, found {root!r}")
    return root


SQL_DIR = _installed_sql_dir()
# the package's vars and their defaults, written once (`vars:` of sql/dbt_project.yml): dbt reads
# them there, the runner here
PACKAGE_VARS: dict[str, Any] = yaml.safe_load(
    (SQL_DIR / "dbt_project.yml").read_text(encoding="utf-8"))["vars"]
# the payout rule's delay where no payout lines show one
DEFAULT_SETTLEMENT_DELAY_DAYS: int = PACKAGE_VARS["creator_platform_default_settlement_delay_days"]
# the app's settings left unset (`[creator_sync] timezone`, `amounts_include_tax`: None) are
# these, the package's own: the runner's builds and dbt's agree without the app writing them
ZONE_VAR = "creator_platform_reporting_timezone"
DEFAULT_TIMEZONE: str = PACKAGE_VARS[ZONE_VAR]
DEFAULT_AMOUNTS_INCLUDE_TAX: bool = PACKAGE_VARS["creator_platform_amounts_include_tax"]
# the zone's default as `--timezone`'s help says it: the value read here, and where it is written
TIMEZONE_SHOWN = f"{DEFAULT_TIMEZONE}, the models' own (dbt var {ZONE_VAR})"


@dataclass(frozen=True)
class SqlFile:
    """A model or a data test: its text, what it reads, and its header directives."""

    name: str
    layer: str
    path: Path
    text: str

    def placeholders(self, kind: str) -> list[str]:
        return [name for k, name in CALL.findall(self.text) if k == kind]

    @property
    def refs(self) -> list[str]:
        return self.placeholders("ref")

    @property
    def sources(self) -> list[str]:
        return self.placeholders("raw") + self.placeholders("latest")

    def directive(self, key: str) -> str | None:
        """Header comments such as `-- grain: site_id, date_day` declare facts about the file."""
        for line in self.text.splitlines():
            match = DIRECTIVE.match(line.strip())
            if match and match.group(1) == key:
                return match.group(2)
        return None

    @property
    def grain(self) -> list[str]:
        value = self.directive("grain")
        return [c.strip() for c in value.split(",")] if value else []

    @property
    def severity(self) -> str:
        """dbt's `{{ config(severity='warn') }}` (or a `-- severity:` header), else error."""
        match = SEVERITY.search(self.text)
        return (match.group(1) if match else self.directive("severity") or "error").lower()

    @property
    def description(self) -> str:
        return self.directive("description") or self.directive("test") or ""


@dataclass(frozen=True)
class Project:
    models: dict[str, SqlFile]
    tests: dict[str, SqlFile]
    sql_dir: Path | None = None  # where macros/ and the schema YAML live

    def order(self) -> list[SqlFile]:
        """Models in an order where every ref is built before its readers."""
        sorter: TopologicalSorter[str] = TopologicalSorter()
        for model in self.models.values():
            for ref in model.refs:
                if ref not in self.models:
                    raise ProjectError(f"{model.path}: ref('{ref}') names no model in sql/")
            sorter.add(model.name, *model.refs)
        try:
            sorter.prepare()
        except CycleError as exc:
            raise ProjectError(f"sql/: models reference each other in a cycle: {exc.args[1]}") from exc
        ordered: list[SqlFile] = []
        while sorter.is_active():
            # each ready batch in layer then name order, so builds and logs read the same each time
            ready = sorted(sorter.get_ready(), key=lambda n: (LAYERS.index(self.models[n].layer), n))
            ordered.extend(self.models[name] for name in ready)
            sorter.done(*ready)
        return ordered


def load_project(sql_dir: Path = SQL_DIR) -> Project:
    """Read every `*.sql` file of `models/<layer>/` and `tests/`; names must be unique."""
    models: dict[str, SqlFile] = {}
    tests: dict[str, SqlFile] = {}
    for layer in (*LAYERS, TESTS_DIR):
        target = tests if layer == TESTS_DIR else models
        folder = sql_dir / TESTS_DIR if layer == TESTS_DIR else sql_dir / MODELS_DIR / layer
        for path in sorted(folder.glob("*.sql")):
            name = path.stem
            if name in models or name in tests:
                raise ProjectError(f"{path}: a model or test named '{name}' already exists")
            target[name] = SqlFile(name, layer, path, path.read_text(encoding="utf-8"))
    if not models:
        raise ProjectError(f"no models found under {sql_dir}")
    return Project(models, tests, sql_dir)
