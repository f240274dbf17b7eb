"""Render one SQL file of `sql/` for one build, with Jinja as dbt does (no dbt needed).

The files are a dbt project (`sql/dbt_project.yml`); this module gives them the part of dbt's
context they use, so that one text serves both builders:

- `ref('m')`: the relation model `m` builds into;
- `raw('t')`: raw table `t` with every contract column (models/sources.py) in its contract type,
  typed NULL where the loader has not created it, empty when `t` is absent;
- `latest('t')`: the same, keeping only the latest extraction of each key (the one
  deduplication rule of the staging layer);
- `var(name, default)`: a build parameter under its documented dbt var name (VARS);
- `config(...)`, `target`, `adapter.dispatch(...)`, and every macro of `sql/macros/`.

Under dbt, `raw` and `latest` are macros of `sql/macros/raw.sql` reading the same contract.
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
from creator_sync.models.project import Project, ProjectError, SqlFile
from creator_sync.models.sources import SOURCE_TABLES

DEFAULT_SETTLEMENT_DELAY_DAYS = 2  # the payout rule's delay where no payout lines show one

log = logging.getLogger("creator_sync.models")

TARGET_SCHEMA = "analytics"
STAGING_SCHEMA = "analytics_staging"
MACROS_DIR = "macros"
# Macros the runner supplies itself (their dbt versions in sql/macros/ ask dbt's adapter), and
# the files that hold only those dbt versions and their contract: the runner does not compile them.
RUNNER_MACROS = ("raw", "latest")
DBT_ONLY_MACRO_FILES = ("raw.sql", "raw_contract.sql")


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
        # dbt's names (sql/dbt_project.yml documents them); None means the var's own default
        self.vars: dict[str, Any] = {
            "creator_platform_schema": params.dataset,
            "creator_platform_reporting_timezone": params.timezone,
            "creator_platform_settlement_delay_days": params.settlement_delay_days,
            "creator_platform_as_of_date": params.as_of.isoformat() if params.as_of else None,
            "creator_platform_default_settlement_delay_days": DEFAULT_SETTLEMENT_DELAY_DAYS,
            "creator_platform_amounts_include_tax": params.amounts_include_tax,
            "creator_sync_version": package_version(),
        }
        self._sources: dict[str, str] = {}
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
            ref=self._ref, var=self._var, config=_config, target=self.target,
            adapter=self._dispatcher, raw=self._raw, latest=self._latest, execute=True,
        )
        sql_dir = project.sql_dir
        if sql_dir is not None and (sql_dir / MACROS_DIR).is_dir():
            module = self._template(str(sql_dir / MACROS_DIR), _macro_text(sql_dir)).module
            macros = {
                name: getattr(module, name)
                for name in dir(module)
                if not name.startswith("_") and name not in RUNNER_MACROS
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

    def _raw(self, name: str) -> str:
        if name not in SOURCE_TABLES:
            raise ProjectError(f"{self._where()}: raw('{name}') is not in models/sources.py")
        if name not in self._sources:
            self._sources[name] = self._project_source(name)
        return f"{self._sources[name]} as {quote_ident(name)}"

    def _latest(self, name: str) -> str:
        """The latest extraction of each record (its `key`, `id` for most tables): by
        `_extracted_at`, then `_dlt_load_id`, so an append-only or replayed load never counts a
        record twice."""
        self._raw(name)
        table = SOURCE_TABLES[name]
        if not set(table.key) <= set(table.columns):
            raise ProjectError(f"{self._where()}: latest('{name}') needs the key columns {table.key}")
        cols = ", ".join(quote_ident(c) for c in table.columns)
        key = ", ".join(quote_ident(c) for c in table.key)
        return (
            f"(select {cols} from (select *, row_number() over (partition by {key} order by "
            "\"_extracted_at\" desc nulls last, \"_dlt_load_id\" desc nulls last) as row_rank "
            f"from {self._sources[name]} as raw) as ranked where row_rank = 1) as {quote_ident(name)}"
        )

    def _project_source(self, name: str) -> str:
        """Every contract column in its contract type, NULL where the loader has not created it."""
        table = SOURCE_TABLES[name]
        if self._present is None:
            self._present = self.adapter.schema_columns(self.params.dataset)
        present = self._present.get(name)
        if present is None:
            self.missing.append(name)
            log.info("source %s.%s is absent: treated as empty", self.params.dataset, name)
        cols = []
        for column, ctype in table.columns.items():
            # present columns are cast too: a loader that typed one differently (text
            # timestamps, say) still yields the contract's type, or fails loudly here
            value = quote_ident(column) if present is not None and column in present else "null"
            cols.append(f"cast({value} as {ctype}) as {quote_ident(column)}")
        body = ", ".join(cols)
        if present is None:
            return f"(select {body} where 1 = 0)"
        return f"(select {body} from {quote_ident(self.params.dataset)}.{quote_ident(name)})"

    def render(self, sql_file: SqlFile) -> str:
        self._current = sql_file
        try:
            return self._template(str(sql_file.path), sql_file.text).render()
        except jinja2.TemplateError as exc:
            raise ProjectError(f"{sql_file.path}: {exc}") from exc
        finally:
            self._current = None
