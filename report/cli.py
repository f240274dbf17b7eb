"""`creator-sync report`: write the static HTML finance report."""

from __future__ import annotations

import datetime as dt

import click

from creator_sync.common.settings import BadSetting, Settings, option, warn_unknown_keys
from creator_sync.common.warehouse import warehouse_of
from creator_sync.models.adapters import DESTINATIONS
from creator_sync.models.coverage import stale_after_option
from creator_sync.report.errors import ReportError


@click.command("report")
@option("duckdb", type=click.Path(dir_okay=False))
@option("postgres_dsn")
@click.option(
    "--out",
    "out_path",
    default="report.html",
    show_default=True,
    type=click.Path(dir_okay=False, writable=True),
    help="HTML file to write.",
)
@click.option("--site-id", default=None, help="Only this site (default: all sites).")
@click.option(
    "--since",
    type=click.DateTime(formats=["%Y-%m-%d"]),
    default=None,
    help="First day shown in the charts and payout list (YYYY-MM-DD).",
)
@option("dataset")
@option("destination", help="Warehouse the models were built in: duckdb or postgres.")
@stale_after_option
def report_command(
    duckdb: str | None,
    postgres_dsn: str | None,
    out_path: str,
    site_id: str | None,
    since: dt.datetime | None,
    dataset: str | None,
    destination: str | None,
    stale_after_days: float | None,
) -> None:
    """Write one self-contained HTML page: revenue, MRR, payouts and their reconciliation,
    from the DuckDB file or the PostgreSQL database the models were built in."""
    warn_unknown_keys()
    settings = Settings(duckdb=duckdb, dataset=dataset, destination=destination,
                        stale_after_days=stale_after_days, postgres_dsn=postgres_dsn)
    warehouse = warehouse_of(settings)
    if warehouse.destination not in DESTINATIONS:  # sync loads into any dlt destination
        raise BadSetting(f"the report reads {' or '.join(DESTINATIONS)}, not "
                         f"{warehouse.destination!r}", settings.where("destination"))
    from creator_sync.report.render import (
        write_report,  # matplotlib loads only when a report is made
    )

    try:
        path = write_report(
            warehouse.duckdb_path or "",
            out_path,
            site_id=site_id,
            since=since.date() if since else None,
            dataset=warehouse.dataset,
            stale_after_days=settings["stale_after_days"],
            destination=warehouse.destination,
            postgres_dsn=warehouse.postgres_dsn,
        )
    except ReportError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"report written to {path}")
