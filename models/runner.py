"""Build the models: render each SQL file, run it in dependency order, then run the data tests.

Staging and intermediate models land in `analytics_staging`, marts in `analytics`. The whole
build is one transaction: if any model fails, the previous build stays as it was. Data tests run
after the models; a failing `error` test raises `DataTestError` (the models stay built so the
failing rows can be inspected), a failing `warn` test is reported.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from creator_sync.common.duckdb_names import quote_ident
from creator_sync.common.settings import DEFAULT_DATASET, by_key
from creator_sync.models.adapters import Adapter, DuckDBAdapter
from creator_sync.models.build_info import BUILD_METADATA
from creator_sync.models.dbt_context import (
    STAGING_SCHEMA,
    TARGET_SCHEMA,
    Renderer,
    relation,
    schema_of,
)
from creator_sync.models.headline import headline_figures
from creator_sync.models.project import (
    DEFAULT_AMOUNTS_INCLUDE_TAX,
    DEFAULT_SETTLEMENT_DELAY_DAYS,
    DEFAULT_TIMEZONE,
    Project,
    load_project,
)
from creator_sync.models.raw_contract import SOURCE_TABLES
from creator_sync.models.schema import ModelDoc, load_schema

log = logging.getLogger("creator_sync.models")


class ModelsError(RuntimeError):
    """A build could not run: missing raw data, bad parameter, or a model's SQL failed."""


@dataclass(frozen=True)
class Params:
    """One build's parameters. `settlement_delay_days` is an override: None (the default) lets
    each site's payout lines show its delay, falling back to DEFAULT_SETTLEMENT_DELAY_DAYS.
    `timezone` and `amounts_include_tax` given as None (their app settings left unset) are the
    package's own defaults (`vars:` of sql/dbt_project.yml, where they are written)."""

    dataset: str = DEFAULT_DATASET
    timezone: str = DEFAULT_TIMEZONE
    settlement_delay_days: int | None = None
    as_of: dt.date | None = None
    amounts_include_tax: bool = DEFAULT_AMOUNTS_INCLUDE_TAX

    def __post_init__(self) -> None:
        if self.timezone is None:
            object.__setattr__(self, "timezone", DEFAULT_TIMEZONE)
        if self.amounts_include_tax is None:
            object.__setattr__(self, "amounts_include_tax", DEFAULT_AMOUNTS_INCLUDE_TAX)

    def validate(self) -> None:
        for key in ("dataset", "timezone"):  # each by its setting's kind
            try:
                by_key(key).check(getattr(self, key))
            except ValueError as exc:
                raise ModelsError(f"--{key}: {exc}") from exc
        if self.settlement_delay_days is not None and not 0 <= self.settlement_delay_days <= 365:
            raise ModelsError(
                f"--settlement-delay-days must be between 0 and 365, got {self.settlement_delay_days}"
            )


@dataclass
class ModelRun:
    name: str
    layer: str
    relation: str
    rows: int
    seconds: float


@dataclass
class TestRun:
    name: str
    severity: str
    description: str
    failures: int
    sample: list[dict[str, Any]]
    seconds: float

    @property
    def passed(self) -> bool:
        return self.failures == 0


@dataclass
class BuildResult:
    target: str
    params: Params
    models: list[ModelRun] = field(default_factory=list)
    tests: list[TestRun] = field(default_factory=list)
    missing_sources: list[str] = field(default_factory=list)
    seconds: float = 0.0
    previous_timezone: str | None = None  # the zone of the build this one replaced

    @property
    def zone_change(self) -> str | None:
        """One line when this build's reporting zone is not the previous build's: every day and
        month figure moved with it (issue 32: a plain `models` after a New York build)."""
        before, now = self.previous_timezone, self.params.timezone
        if before is None or before == now:
            return None
        return (f"note: reporting time zone {now}, the previous build used {before}: daily and "
                f"monthly figures now count {now} days (set [creator_sync] timezone to keep one)")

    @property
    def row_counts(self) -> dict[str, int]:
        return {m.name: m.rows for m in self.models}

    @property
    def failed_tests(self) -> list[TestRun]:
        return [t for t in self.tests if not t.passed and t.severity == "error"]

    @property
    def warnings(self) -> list[TestRun]:
        return [t for t in self.tests if not t.passed and t.severity != "error"]


class DataTestError(ModelsError):
    def __init__(self, result: BuildResult) -> None:
        self.result = result
        lines = [f"{len(result.failed_tests)} data test(s) failed on {result.target}:"]
        for test in result.failed_tests:
            lines.append(f"  {test.name}: {test.failures} failing row(s): {test.description}")
            lines.extend(f"    {row}" for row in test.sample[:3])
        super().__init__("\n".join(lines))


def _schema_tests(project: Project, docs: dict[str, ModelDoc]) -> list[tuple[str, str, str, str]]:
    """The generic tests of the schema YAML (named as dbt names them), and for a model the YAML
    does not document, unique and not-null tests from its `-- grain:` header."""
    tests = []
    for doc in docs.values():
        if doc.name not in project.models:
            raise ModelsError(f"sql/models: the schema YAML documents {doc.name}, which no SQL file builds")
        for test in doc.tests:
            sql = test.sql(lambda name: relation(project.models[name]))
            tests.append((test.name, sql, "error", test.description))
    for model in project.models.values():
        if not model.grain or model.name in docs:
            continue
        cols = ", ".join(quote_ident(c) for c in model.grain)
        nulls = " or ".join(f"{quote_ident(c)} is null" for c in model.grain)
        rel = relation(model)
        tests.append((
            f"unique_{model.name}",
            f"select {cols}, count(*) as n from {rel} group by {cols} having count(*) > 1",
            "error",
            f"{model.name} has one row per ({', '.join(model.grain)})",
        ))
        tests.append((
            f"not_null_{model.name}",
            f"select * from {rel} where {nulls}",
            "error",
            f"{model.name} grain columns are never null",
        ))
    return tests


def _comments(project: Project, docs: dict[str, ModelDoc]) -> list[tuple[str, str, str | None, str]]:
    """Every description of the schema YAML, as (schema, table, column or None, text)."""
    out: list[tuple[str, str, str | None, str]] = []
    for doc in docs.values():
        schema = schema_of(project.models[doc.name])
        if doc.description:
            out.append((schema, doc.name, None, doc.description))
        out.extend((schema, doc.name, column, text) for column, text in doc.columns.items() if text)
    return out


def _run_test(adapter: Adapter, name: str, sql: str, severity: str, description: str) -> TestRun:
    start = time.perf_counter()
    body = sql.strip().rstrip(";")
    try:
        _, count = adapter.fetch(f"select count(*) from ({body}) as failing")
        failures = int(count[0][0])
        sample: list[dict[str, Any]] = []
        if failures:
            names, rows = adapter.fetch(f"select * from ({body}) as failing limit 5")
            sample = [dict(zip(names, row, strict=True)) for row in rows]
    except Exception as exc:
        raise ModelsError(f"data test {name} could not run on {adapter.label}: {exc}") from exc
    return TestRun(name, severity, description, failures, sample, time.perf_counter() - start)


def previous_timezone(adapter: Adapter) -> str | None:
    """The reporting zone of the last build on `adapter` (None: none yet)."""
    if "timezone" not in (adapter.columns(*BUILD_METADATA.split(".")) or {}):
        return None
    _, rows = adapter.fetch(f"select timezone from {BUILD_METADATA}")
    return str(rows[0][0]) if rows and rows[0][0] is not None else None


def build(
    adapter: Adapter,
    params: Params,
    *,
    project: Project | None = None,
    run_tests: bool = True,
    strict: bool = False,
) -> BuildResult:
    """Build every model on `adapter` in one transaction, then run the data tests."""
    params.validate()
    project = project or load_project()
    ordered = project.order()
    if not adapter.schema_exists(params.dataset):
        raise ModelsError(
            f"dataset (schema) {params.dataset!r} not found on {adapter.label}: "
            "run `creator-sync sync` first, or pass the --dataset the pipeline loaded"
        )
    if not set(adapter.schema_columns(params.dataset)) & set(SOURCE_TABLES):
        raise ModelsError(
            f"dataset (schema) {params.dataset!r} on {adapter.label} holds none of the raw tables "
            "the models read: run `creator-sync sync` first, or pass the --dataset the pipeline "
            "loaded"
        )
    renderer = Renderer(adapter, project, params)
    docs = load_schema(project.sql_dir) if project.sql_dir else {}
    result = BuildResult(adapter.label, params, previous_timezone=previous_timezone(adapter))
    started = time.perf_counter()
    adapter.begin()
    try:
        adapter.ensure_schema(STAGING_SCHEMA)
        adapter.ensure_schema(TARGET_SCHEMA)
        for model in ordered:
            t0 = time.perf_counter()
            sql = renderer.render(model)
            schema = schema_of(model)
            try:
                adapter.replace_table(schema, model.name, sql)
                _, rows = adapter.fetch(f"select count(*) from {relation(model)}")
            except Exception as exc:
                raise ModelsError(
                    f"model {model.name} ({model.path.relative_to(model.path.parents[3])}) "
                    f"failed on {adapter.label}: {exc}"
                ) from exc
            run = ModelRun(model.name, model.layer, f"{schema}.{model.name}", int(rows[0][0]),
                           time.perf_counter() - t0)
            log.info("built %s: %d rows in %.2fs", run.relation, run.rows, run.seconds)
            result.models.append(run)
        adapter.comment(_comments(project, docs))
        _former_name_views(adapter, docs)
        if run_tests:
            # inside the build's transaction: the tests read the snapshot the models were built
            # from, not raw rows a sync commits meanwhile (PostgreSQL, where one may)
            declared = _schema_tests(project, docs) + [
                (t.name, renderer.render(t), t.severity, t.description)
                for t in project.tests.values()
            ]
            for name, sql, severity, description in declared:
                severity = "error" if strict else severity
                test = _run_test(adapter, name, sql, severity, description)
                if not test.passed:
                    log.info("data test %s (%s): %d failing row(s)", name, severity,
                             test.failures)
                result.tests.append(test)
        adapter.commit()  # failing tests keep the build: it is what they describe
    except BaseException:
        adapter.rollback()
        raise
    result.missing_sources = list(renderer.missing)
    result.seconds = time.perf_counter() - started
    if result.failed_tests:
        raise DataTestError(result)
    return result


def _former_name_views(adapter: Adapter, docs: dict[str, ModelDoc]) -> None:
    """A renamed mart's former name, kept for one release as a view of it (CHANGELOG.md): a
    table of that name from an earlier build gives way to the view. dbt does the same in its
    on-run-end hook (sql/macros/former_names.sql)."""
    for doc in docs.values():
        if doc.former_name is None or doc.layer != "marts":
            continue
        old = f"{quote_ident(TARGET_SCHEMA)}.{quote_ident(doc.former_name)}"
        _, kind = adapter.fetch(
            "select table_type from information_schema.tables where table_schema = "
            f"'{TARGET_SCHEMA}' and table_name = '{doc.former_name}'")
        if kind:
            adapter.execute(f"drop {'view' if kind[0][0] == 'VIEW' else 'table'} {old}")
        adapter.execute(f"create view {old} as select * from "
                        f"{quote_ident(TARGET_SCHEMA)}.{quote_ident(doc.name)}")


def run_models(
    duckdb_path: str,
    dataset: str = DEFAULT_DATASET,
    timezone: str | None = None,
    settlement_delay_days: int | None = None,
    as_of: dt.date | None = None,
    run_tests: bool = True,
    strict: bool = False,
    lock_timeout: float | None = 600.0,
    amounts_include_tax: bool | None = None,
) -> BuildResult:
    """Build the models inside the DuckDB file the pipeline loaded.

    `settlement_delay_days` overrides the delay the payout lines show (None: observed per site,
    else DEFAULT_SETTLEMENT_DELAY_DAYS). `amounts_include_tax`: the platform's amounts include
    sales tax (the package's default, as its orders show), so revenue excl. tax is amount - tax.
    `timezone` and `amounts_include_tax` None: the package's defaults (`Params`).

    Holds the warehouse lock of `common.locking` while it writes, so a running sync or webhook
    loader finishes its load first (up to `lock_timeout` seconds) instead of colliding with
    DuckDB's single writer.
    """
    from creator_sync.common.locking import warehouse_lock

    if not Path(duckdb_path).is_file():
        raise ModelsError(f"{duckdb_path}: no such DuckDB file; run `creator-sync sync` first")
    params = Params(dataset, timezone, settlement_delay_days, as_of, amounts_include_tax)
    with warehouse_lock(duckdb_path, timeout=lock_timeout):
        adapter = DuckDBAdapter(duckdb_path)
        try:
            return build(adapter, params, run_tests=run_tests, strict=strict)
        finally:
            adapter.close()


__all__ = ["DEFAULT_SETTLEMENT_DELAY_DAYS", "BuildResult", "DataTestError", "ModelsError", "build", "headline_figures", "run_models"]
