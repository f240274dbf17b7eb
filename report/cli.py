"""`creator-sync report`: write the static HTML finance report."""

from __future__ import annotations

import datetime as dt

import click

from models.adapters import DESTINATIONS, POSTGRES_DSN_ENV
from models.coverage import stale_after_option
from report.errors import ReportError


@click.command("report")
@click.option(
    "--duckdb",
    "duckdb_path",
    default=None,
    type=click.Path(dir_okay=False),
    help="DuckDB file holding the synced dataset and the analytics marts "
    "[config creator_sync.duckdb, else creator_platform.duckdb].",
)
@click.option(
    "--destination",
    type=click.Choice(DESTINATIONS),
    default=None,
    help="Where the models were built, as `creator-sync models --destination` "
    "[config creator_sync.destination, else duckdb].",
)
@click.option(
    "--postgres-dsn",
    default=None,
    help=f"Postgres DSN [env {POSTGRES_DSN_ENV}, else dlt's "
    "DESTINATION__POSTGRES__CREDENTIALS / .dlt/secrets.toml].",
)
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
@click.option(
    "--dataset",
    default=None,
    help="Raw dataset (schema) the sync loaded; read for the data-freshness line "
    "[config creator_sync.dataset, else creator_platform].",
)
@stale_after_option
def report_command(
    duckdb_path: str | None,
    destination: str | None,
    postgres_dsn: str | None,
    out_path: str,
    site_id: str | None,
    since: dt.datetime | None,
    dataset: str | None,
    stale_after_days: float | None,
) -> None:
    """Write one self-contained HTML page: revenue, MRR, payouts and their reconciliation,
    from the DuckDB file or the PostgreSQL database the models were built in."""
    from pipelines.config import SYNC_SECTION, setting, warn_unknown_keys

    warn_unknown_keys()

    duckdb_path = str(setting(SYNC_SECTION, "duckdb", duckdb_path))
    dataset = str(setting(SYNC_SECTION, "dataset", dataset))
    destination = str(setting(SYNC_SECTION, "destination", destination))
    if destination not in DESTINATIONS:  # sync loads into any dlt destination; models build two
        raise click.UsageError(
            f"the report reads {' or '.join(DESTINATIONS)}, not {destination!r} "
            "(--destination, or creator_sync.destination in the configuration)"
        )
    from report.render import write_report  # matplotlib loads only when a report is made

    try:
        path = write_report(
            duckdb_path,
            out_path,
            site_id=site_id,
            since=since.date() if since else None,
            dataset=dataset,
            stale_after_days=stale_after_days,
            destination=destination,
            postgres_dsn=postgres_dsn,
        )
    except ReportError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"report written to {path}")
