"""Fill the placeholders of one SQL file for one build.

- `{{ source('t') }}`: raw table `t` with every contract column (models/sources.py) in its
  contract type, typed NULL where the loader has not created it, empty when `t` is absent;
- `{{ latest('t') }}`: the same, keeping only the latest extraction of each `id` (the one
  deduplication rule of the staging layer);
- `{{ ref('m') }}`: the relation model `m` builds into;
- `{{ var('v') }}`: a build parameter as a SQL literal.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from common.duckdb_names import quote_ident
from models.adapters import Adapter
from models.build_info import package_version
from models.project import PLACEHOLDER, Project, ProjectError, SqlFile
from models.sources import SOURCE_TABLES

DEFAULT_SETTLEMENT_DELAY_DAYS = 2  # the payout rule's delay where no payout lines show one

log = logging.getLogger("creator_sync.models")

TARGET_SCHEMA = "analytics"
STAGING_SCHEMA = "analytics_staging"


def schema_of(model: SqlFile) -> str:
    return TARGET_SCHEMA if model.layer == "marts" else STAGING_SCHEMA


def relation(model: SqlFile) -> str:
    return f"{quote_ident(schema_of(model))}.{quote_ident(model.name)}"


def _literal(value: Any, null_type: str) -> str:
    if value is None:
        return f"cast(null as {null_type})"
    if isinstance(value, dt.date):
        return f"cast('{value.isoformat()}' as date)"
    if isinstance(value, int):
        return str(value)
    return "'" + str(value).replace("'", "''") + "'"


class Renderer:
    """Fills the placeholders of every file of one build (sources are projected once)."""

    def __init__(self, adapter: Adapter, project: Project, params: Any) -> None:
        self.adapter = adapter
        self.project = project
        self.params = params
        # name -> (value, the SQL type of its NULL)
        self.vars: dict[str, tuple[Any, str]] = {
            "timezone": (params.timezone, "text"),
            "settlement_delay_override_days": (params.settlement_delay_days, "integer"),
            "default_settlement_delay_days": (DEFAULT_SETTLEMENT_DELAY_DAYS, "integer"),
            "as_of_date": (params.as_of, "date"),
            "dataset": (params.dataset, "text"),
            "creator_sync_version": (package_version(), "text"),
        }
        self._sources: dict[str, str] = {}
        self.missing: list[str] = []

    def source(self, name: str, where: SqlFile) -> str:
        if name not in SOURCE_TABLES:
            raise ProjectError(f"{where.path}: source('{name}') is not in models/sources.py")
        if name not in self._sources:
            self._sources[name] = self._project_source(name)
        return f"{self._sources[name]} as {quote_ident(name)}"

    def latest(self, name: str, where: SqlFile) -> str:
        """The latest extraction of each record (its `key`, `id` for most tables): by
        `_extracted_at`, then `_dlt_load_id`, so an append-only or replayed load never counts a
        record twice."""
        self.source(name, where)
        table = SOURCE_TABLES[name]
        if not set(table.key) <= set(table.columns):
            raise ProjectError(f"{where.path}: latest('{name}') needs the key columns {table.key}")
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
        present = self.adapter.columns(self.params.dataset, name)
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
        def substitute(match: Any) -> str:
            kind, name = match.group(1), match.group(2)
            if kind == "source":
                return self.source(name, sql_file)
            if kind == "latest":
                return self.latest(name, sql_file)
            if kind == "ref":
                if name not in self.project.models:
                    raise ProjectError(f"{sql_file.path}: ref('{name}') names no model")
                return relation(self.project.models[name])
            if name not in self.vars:
                raise ProjectError(f"{sql_file.path}: var('{name}') is not a known parameter")
            return _literal(*self.vars[name])

        return PLACEHOLDER.sub(substitute, sql_file.text)
