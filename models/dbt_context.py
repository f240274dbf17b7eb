"""dbt's Jinja context for the runner: renders one SQL file of `sql/` for one build as dbt does
(no dbt needed).

The files are a dbt project (`sql/dbt_project.yml`); this module gives them the part of dbt's
context they use, so that one text serves both builders:

- `ref('m')`: the relation model `m` builds into; `source('creator_platform', 't')`: raw table `t`;
- `var(name)`: a build parameter under its dbt var name, defaulting to the package's own
  (`vars:` of sql/dbt_project.yml, the one place the defaults are written);
- `config(...)`, `target`, `adapter.dispatch(...)`, and every macro of `sql/macros/`, among them
  `raw('t')` and `latest('t')` (sql/macros/raw.sql, the one implementation of both). They ask
  their builder for a table's contract (models/raw_contract.py, from the package's sources YAML)
  and for the columns the warehouse holds: the two answers this module gives, where dbt's come
  from sql/macros/raw_dbt.sql.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from creator_sync.common.duckdb_names import quote_ident
from creator_sync.models.adapters import Adapter
from creator_sync.models.build_info import package_version
from creator_sync.models.project import PACKAGE_VARS, Project, ProjectError, SqlFile
from creator_sync.models.raw_contract import SOURCE, SOURCE_TABLES

log = logging.getLogger("creator_sync.models")

TARGET_SCHEMA = "analytics"
STAGING_SCHEMA = "analytics_staging"
MACROS_DIR = "macros"
# the files of macros only dbt runs: what raw.sql asks (`raw_contract_of`, `raw_columns_present`,
# which the runner answers itself) and the on-run-end hook (the runner's own: runner.py)
DBT_ONLY_MACRO_FILES = ("raw_dbt.sql", "former_names.sql")


def build_vars(params: Any) -> dict[str, Any]:
    """The package's vars (sql/dbt_project.yml) for one build's parameters; None: the var's
    default. Both builders take them: the runner here, dbt through models/dbt_route.py."""
    return {
        "creator_platform_schema": params.dataset,
        "creator_platform_reporting_timezone": params.timezone,
        "creator_platform_settlement_delay_days": params.settlement_delay_days,
        "creator_platform_as_of_date": params.as_of.isoformat() if params.as_of else None,
        "creator_platform_amounts_include_tax": params.amounts_include_tax,
    }


def schema_of(model: SqlFile) -> str:
    return TARGET_SCHEMA if model.layer == "marts" else STAGING_SCHEMA


def relation(model: SqlFile) -> str:
    return f"{quote_ident(schema_of(model))}.{quote_ident(model.name)}"


@dataclass(frozen=True)
class Target:
    """The part of dbt's `target` the SQL reads: the adapter type drives `adapter.dispatch`."""

    type: str
    schema: str = TARGET_SCHEMA
    name: str = "creator_sync"


class _Dispatcher:
    """dbt's `adapter.dispatch(name, namespace)`: `<type>__name`, else `default__name`."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.macros: dict[str, Any] = {}

    def dispatch(self, name: str, macro_namespace: str | None = None) -> Any:
        for candidate in (f"{self.target.type}__{name}", f"default__{name}"):
            if candidate in self.macros:
                return self.macros[candidate]
        raise ProjectError(f"sql/macros: no {self.target.type}__{name} nor default__{name}")

    def quote(self, name: str) -> str:
        return quote_ident(name)


def _macro_text(sql_dir: Path) -> str:
    folder = sql_dir / MACROS_DIR
    return "\n".join(
        p.read_text(encoding="utf-8")
        for p in sorted(folder.glob("*.sql"))
        if p.name not in DBT_ONLY_MACRO_FILES
    )


@functools.cache
def _bytecode_cache() -> jinja2.BytecodeCache | None:
    """Jinja's cache of compiled templates in a private folder of the temp dir, keyed by each
    file's text: a build compiles only what changed since the last one (compiling every model
    costs more than the regular expressions the runner used before Jinja)."""
    try:
        return jinja2.FileSystemBytecodeCache()
    except (OSError, RuntimeError):  # no usable temp dir: compile every time
        return None


def _config(*args: Any, **kwargs: Any) -> str:
    return ""


class Renderer:
    """Renders every file of one build (sources are projected once, macros loaded once)."""

    def __init__(self, adapter: Adapter, project: Project, params: Any) -> None:
        self.adapter = adapter
        self.project = project
        self.params = params
        # the package's defaults, then this build's parameters (None: the default)
        given = {**build_vars(params), "creator_sync_version": package_version()}
        self.vars: dict[str, Any] = {
            **PACKAGE_VARS, **{k: v for k, v in given.items() if v is not None}}
        self._present: dict[str, dict[str, str]] | None = None  # raw tables' columns, read once
        self.missing: list[str] = []
        self._current: SqlFile | None = None
        # the SQL is DuckDB's and the PostgreSQL adapter transpiles it: render the duckdb branches
        self.target = Target("duckdb")
        self._dispatcher = _Dispatcher(self.target)
        self._texts: dict[str, str] = {}
        self.env = jinja2.Environment(
            loader=jinja2.FunctionLoader(lambda name: (self._texts[name], None, lambda: True)),
            bytecode_cache=_bytecode_cache(),
            undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False,
        )
        self.env.globals.update(
            ref=self._ref, source=self._source, var=self._var, config=_config,
            target=self.target, adapter=self._dispatcher, execute=True,
            raw_contract_of=self._contract_of, raw_columns_present=self._columns_present,
        )
        sql_dir = project.sql_dir
        if sql_dir is not None and (sql_dir / MACROS_DIR).is_dir():
            module = self._template(str(sql_dir / MACROS_DIR), _macro_text(sql_dir)).module
            macros = {
                name: getattr(module, name)
                for name in dir(module)
                if not name.startswith("_")
            }
            self._dispatcher.macros.update(macros)
            self.env.globals.update(macros)

    def _template(self, name: str, text: str) -> jinja2.Template:
        self._texts[name] = text
        return self.env.get_template(name)

    def _where(self) -> str:
        return str(self._current.path) if self._current else "sql/macros"

    def _ref(self, name: str) -> str:
        if name not in self.project.models:
            raise ProjectError(f"{self._where()}: ref('{name}') names no model")
        return relation(self.project.models[name])

    def _var(self, name: str, default: Any = None) -> Any:
        if name not in self.vars:
            raise ProjectError(f"{self._where()}: var('{name}') is not a known parameter")
        value = self.vars[name]
        return default if value is None else value

    def _source(self, source: str, name: str) -> str:
        if source != SOURCE or name not in SOURCE_TABLES:
            raise ProjectError(f"{self._where()}: source('{source}', '{name}') is not a table "
                               f"of the sources YAML (python -m creator_sync.pipelines.dbt_sources)")
        return f"{quote_ident(self.params.dataset)}.{quote_ident(name)}"

    def _contract_of(self, name: str) -> dict[str, Any]:
        """raw.sql's question: the table's columns ([name, type] pairs) and key."""
        self._source(SOURCE, name)
        table = SOURCE_TABLES[name]
        return {"columns": list(table.columns.items()), "key": list(table.key)}

    def _columns_present(self, name: str) -> list[str] | None:
        """raw.sql's other question: the columns the warehouse holds, None when the table is
        absent (said once per build: `missing`)."""
        if self._present is None:
            self._present = self.adapter.schema_columns(self.params.dataset)
        present = self._present.get(name)
        if present is None:
            if name not in self.missing:
                self.missing.append(name)
                log.info("source %s.%s is absent: treated as empty", self.params.dataset, name)
            return None
        return list(present)

    def render(self, sql_file: SqlFile) -> str:
        self._current = sql_file
        try:
            return self._template(str(sql_file.path), sql_file.text).render()
        except jinja2.TemplateError as exc:
            raise ProjectError(f"{sql_file.path}: {exc}") from exc
        finally:
            self._current = None
