"""`creator-sync models`: build the warehouse models and print what was built and tested."""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
from pathlib import Path

import click

from creator_sync.common.locking import LockTimeout, warehouse_lock
from creator_sync.common.settings import BadSetting, Settings, option, warn_unknown_keys
from creator_sync.common.warehouse import Warehouse, warehouse_of
from creator_sync.models.adapters import (
    DESTINATIONS,
    Adapter,
    MissingWarehouseCredentials,
    WarehouseUnavailable,
    open_adapter,
)
from creator_sync.models.coverage import stale_after, stale_after_option
from creator_sync.models.dbt_context import TARGET_SCHEMA
from creator_sync.models.headline import format_headline, headline_figures_from
from creator_sync.models.project import SQL_DIR, TIMEZONE_SHOWN
from creator_sync.models.raw_contract import SOURCE_TABLES
from creator_sync.models.runner import (
    DEFAULT_SETTLEMENT_DELAY_DAYS,
    BuildResult,
    DataTestError,
    ModelsError,
    Params,
    build,
)


def _parse_date(ctx: click.Context, param: click.Parameter, value: str | None) -> dt.date | None:
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError as exc:
        raise click.BadParameter(f"expected YYYY-MM-DD, got {value!r}") from exc


def _connect(destination: str, duckdb_path: str, postgres_dsn: str | None) -> Adapter:
    try:
        return open_adapter(destination, duckdb_path, postgres_dsn)
    except MissingWarehouseCredentials as exc:
        raise BadSetting(str(exc), "flag=--postgres-dsn") from None
    except WarehouseUnavailable as exc:
        raise click.ClickException(str(exc)) from None


def _print_result(result: BuildResult) -> None:
    marts = sorted((m for m in result.models if m.layer == "marts"), key=lambda m: m.name)
    override = result.params.settlement_delay_days
    delay = (f"settlement delay {override} days (override)" if override is not None else
             "settlement delay observed from payout lines, else "
             f"{DEFAULT_SETTLEMENT_DELAY_DAYS} days")
    click.echo(f"Built {len(result.models)} models on {result.target} in {result.seconds:.1f}s "
               f"(timezone {result.params.timezone}, {delay})")
    width = max(len(m.name) for m in marts) if marts else 10
    for mart in marts:
        click.echo(f"  analytics.{mart.name:<{width}}  {mart.rows:>9,} rows  {mart.seconds:6.2f}s")
    unexpected = [t for t in result.missing_sources if SOURCE_TABLES[t].absent_when is None]
    if unexpected:
        click.echo(f"  raw tables not loaded (treated as empty): {', '.join(unexpected)}")
    if result.tests:
        passed = sum(1 for t in result.tests if t.passed)
        click.echo(f"Data tests: {passed}/{len(result.tests)} passed")
        for test in result.warnings:
            click.echo(f"  WARN {test.name}: {test.failures} row(s): {test.description}", err=True)
            for row in test.sample[:3]:
                click.echo(f"       {row}", err=True)


def _print_dbt_package(ctx: click.Context) -> None:
    """The installed package, for a `local:` entry of the user's own dbt project: dbt then
    writes its target/ and logs/ there, never into the install (docs/dbt.md)."""
    click.echo(f"dbt package creator_platform: {SQL_DIR}\n"
               "in your dbt project's packages.yml:\n"
               f"packages:\n  - local: {SQL_DIR}")
    ctx.exit(0)


def _build_with_dbt(warehouse: Warehouse, params: Params, run_tests: bool, where: str) -> None:
    """A destination the runner does not build: the package through dlt's dbt runner."""
    from creator_sync.models.dbt_route import DbtRouteError, run_with_dbt

    try:
        params.validate()
        results = run_with_dbt(warehouse, params, run_tests=run_tests)
    except (DbtRouteError, ModelsError) as exc:
        raise BadSetting(str(exc), where) from None
    except Exception as exc:  # dbt's own failure, already logged by dlt
        raise click.ClickException(
            f"dbt build of the models on {warehouse.destination} failed: {str(exc).splitlines()[0]}"
        ) from None
    click.echo(f"Built the models with dbt on {warehouse.destination}: {len(results)} nodes "
               f"(marts in `{TARGET_SCHEMA}`)")


@click.command("models")
@option("duckdb")
@option("dataset")
@option("timezone", shown=TIMEZONE_SHOWN)
@click.option("--settlement-delay-days", type=click.IntRange(0, 365), default=None,
              help="Days from a transaction (UTC) to when it is payable, for every site "
                   "[each site's delay observed in its payout lines, else "
                   f"{DEFAULT_SETTLEMENT_DELAY_DAYS}].")
@click.option("--as-of", callback=_parse_date,
              help="Last reporting day (YYYY-MM-DD) [the latest transaction's day].")
@option("destination", help="Warehouse the models build in (beside the raw tables): duckdb or postgres.")
@option("postgres_dsn")
@click.option("--tests/--no-tests", "run_tests", default=True, show_default=True,
              help="Run the data tests after building.")
@click.option("--strict", is_flag=True, help="Treat warning-level data tests as errors.")
@click.option("--lock-timeout", type=float, default=600, show_default=True,
              help="Seconds to wait for a sync/webhook load writing the same DuckDB file.")
@stale_after_option
@click.option("--verbose", "-v", is_flag=True, help="Log each model as it builds.")
@click.option("--dbt-package", is_flag=True, is_eager=True, expose_value=False,
              callback=lambda ctx, _param, value: _print_dbt_package(ctx) if value else None,
              help="Print where this install keeps the dbt package (for your packages.yml) and exit.")
def models_command(
    duckdb: str | None, dataset: str | None, timezone: str | None, settlement_delay_days: int | None,
    as_of: dt.date | None, destination: str | None, postgres_dsn: str | None, run_tests: bool,
    strict: bool, lock_timeout: float, stale_after_days: float | None, verbose: bool,
) -> None:
    """Build the analytics models (staging, intermediate, marts) and run their data tests."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    warn_unknown_keys()

    settings = Settings(duckdb=duckdb, dataset=dataset, destination=destination,
                        stale_after_days=stale_after_days, timezone=timezone,
                        postgres_dsn=postgres_dsn)
    warehouse = warehouse_of(settings)
    params = Params(warehouse.dataset, settings["timezone"], settlement_delay_days, as_of,
                    settings["amounts_include_tax"])
    if warehouse.destination not in DESTINATIONS:
        _build_with_dbt(warehouse, params, run_tests, settings.where("destination"))
        return
    limit = stale_after(settings["stale_after_days"])
    duckdb_path = warehouse.duckdb_path or ""
    try:
        params.validate()
    except ModelsError as exc:
        raise click.UsageError(str(exc)) from None
    destination = warehouse.destination
    if destination == "duckdb" and not Path(duckdb_path).is_file():
        raise click.ClickException(
            f"{duckdb_path}: no such DuckDB file; run `creator-sync sync --duckdb {duckdb_path}` first"
        )
    with contextlib.ExitStack() as stack:
        if destination == "duckdb":
            try:
                stack.enter_context(warehouse_lock(duckdb_path, timeout=lock_timeout))
            except LockTimeout as exc:
                raise click.ClickException(f"{exc}: a sync or webhook loader is writing") from exc
        adapter = _connect(destination, duckdb_path, warehouse.postgres_dsn)
        try:
            result = build(adapter, params, run_tests=run_tests, strict=strict)
            headline = format_headline(headline_figures_from(adapter, as_of, stale_after=limit))
        except DataTestError as exc:
            _print_result(exc.result)
            raise click.ClickException(str(exc)) from exc
        except (ModelsError, ValueError) as exc:
            raise click.ClickException(str(exc)) from exc
        finally:
            adapter.close()
    _print_result(result)
    if result.zone_change:
        click.echo(result.zone_change, err=True)
    for line in headline:
        click.echo(line)
