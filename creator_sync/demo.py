"""`creator-sync demo`: the whole job on the embedded sandbox, in one command.

Run 1 syncs a fresh demo account (scale `demo`, 2 sites, fixed seed) into `demo.duckdb`.
Run N (N > 1) starts the same seeded sandbox, replays N-1 deterministic rounds of platform
activity (new purchases, refunds, tag changes...), and syncs incrementally: the warehouse then
equals what a nightly sync would have produced after N-1 days of activity. The run counter lives
in `<duckdb>.demo-runs` next to the warehouse; `--reset` starts over.
"""

from __future__ import annotations

import shlex
import shutil
import sys
import textwrap
from pathlib import Path
from typing import Any

import click

from creator_sync.common.settings import Settings, option
from creator_sync.common.terminal import reported_failures, setup_logging
from creator_sync.common.warehouse import Warehouse, state_folder, warehouse_of
from creator_sync.models.project import TIMEZONE_SHOWN
from creator_sync.pipelines.sync import format_summary, log_path, run_sync, sync_settings
from creator_sync.sources.creator_platform.auth import Secret

DEMO_SEED = 20240601
DEMO_SITES = 2
DEMO_DUCKDB = "demo.duckdb"  # the demo's own file: it never writes into the user's warehouse
DEMO_REPORT = "demo-report.html"
DEMO_SCALE = "demo"
ACTIVITY_PER_ROUND = 24  # the sandbox clock moves 1 h per event: one day of business per run
SANDBOX_CLIENT_ID = "sandbox"
SANDBOX_CLIENT_SECRET = "sandbox-secret"


def _run_number(counter: Path, reset: bool) -> int:
    if reset or not counter.exists():
        return 1
    try:
        return int(counter.read_text().strip() or 0) + 1
    except ValueError:
        return 1


def demo_warehouse(duckdb: str | None = None, dataset: str | None = None) -> Warehouse:
    """The demo's warehouse: always a DuckDB file (`demo.duckdb` unless given); the dataset and
    the pipelines folder as configured, like every command."""
    return warehouse_of(Settings(duckdb=duckdb or DEMO_DUCKDB, dataset=dataset,
                                 destination="duckdb"))


def forget(warehouse: Warehouse) -> None:
    """`--reset`: the warehouse file, the run counter and the pipeline's local state.

    The state is found where the sync keeps it (`warehouse.pipelines_dir`, the one derivation);
    a folder of the demo's own is removed whole (log and lock too), a configured folder other
    pipelines may share loses only this pipeline's working folder.
    """
    assert warehouse.duckdb_path is not None
    db = Path(warehouse.duckdb_path)
    for path in (db, Path(f"{db}.wal"), Path(f"{db}.demo-runs")):
        path.unlink(missing_ok=True)
    state = Path(warehouse.pipelines_dir)
    if state != state_folder("duckdb", db):
        state = state / warehouse.pipeline_name
    if state.exists():
        shutil.rmtree(state)


def run_demo(duckdb: str | None, report: str, *, reset: bool = False, scale: str = DEMO_SCALE,
             dataset: str | None = None, timezone: str | None = None) -> dict[str, Any]:
    """Do the demo; returns what happened (used by tests). `timezone`: the flag (None: the
    `[creator_sync] timezone` setting, as `models` reads it)."""
    from creator_sync.sandbox.testing import run_sandbox

    warehouse = demo_warehouse(duckdb, dataset)
    assert warehouse.duckdb_path is not None
    db = Path(warehouse.duckdb_path)
    counter = Path(f"{db}.demo-runs")
    if reset:
        forget(warehouse)
    number = _run_number(counter, reset)
    out: dict[str, Any] = {"run": number, "warehouse": warehouse}
    with run_sandbox(seed=DEMO_SEED, scale=scale, sites=DEMO_SITES) as sandbox:
        for _ in range(number - 1):
            sandbox.activity(ACTIVITY_PER_ROUND)
        settings = sync_settings(
            base_url=sandbox.base_url,
            client_id=SANDBOX_CLIENT_ID,
            client_secret=Secret(SANDBOX_CLIENT_SECRET),
            warehouse=warehouse,
        )
        click.echo(
            f"demo run {number}: sandbox at {sandbox.base_url} (seed {DEMO_SEED}, {DEMO_SITES} sites"
            + (f", {number - 1} round(s) of activity" if number > 1 else "") + ")"
        )
        # dlt's log lines go to the demo's log file, not the terminal
        log_file = log_path(settings.warehouse)
        result = run_sync(settings, on_locked=lambda: setup_logging(False, log_file, what="demo sync"))
    counter.write_text(str(number))
    out["sync"] = result
    click.echo(format_summary(result))

    from creator_sync.models.headline import format_headline, headline_figures
    from creator_sync.models.runner import run_models
    from creator_sync.report.render import write_report  # matplotlib loads only here

    chosen = Settings(timezone=timezone)
    built = run_models(str(db), dataset=warehouse.dataset, timezone=chosen["timezone"],
                       amounts_include_tax=chosen["amounts_include_tax"])
    if built.zone_change:
        click.echo(built.zone_change, err=True)
    marts = sorted(model.name for model in built.models if model.layer == "marts")
    click.echo("models: built schema `analytics`")
    out["models"] = True
    path = write_report(str(db), report, dataset=warehouse.dataset)
    click.echo(f"report: {path}")
    out["report"] = str(path)
    headline = headline_figures(str(db))  # integer cents, never float
    out["headline"] = headline
    click.echo("headline figures:")
    for line in format_headline(headline):
        click.echo(f"  {line}")
    click.echo(
        "\nnext:\n"
        f"  open {report or 'the report'} in a browser (no network needed)\n"
        f"  {shlex.quote(sys.executable)} -c \"import duckdb; duckdb.connect('{db}').sql("
        "'select * from analytics.payout_reconciliation where not is_reconciled').show()\"\n"
        + textwrap.fill("marts in schema analytics: " + ", ".join(marts), width=96,
                        initial_indent="  ", subsequent_indent="  ") + "\n"
        f"  (raw tables: {warehouse.dataset})\n"
        f"  run `{again_command(duckdb, report, scale, dataset, timezone)}` again: "
        "new platform activity, incremental sync."
    )
    return out


def again_command(duckdb: str | None, report: str, scale: str, dataset: str | None,
                  timezone: str | None) -> str:
    """The command that runs this demo again: the flags given, none of the defaults."""
    given = [("--duckdb", duckdb, DEMO_DUCKDB), ("--dataset", dataset, None),
             ("--report", report, DEMO_REPORT), ("--scale", scale, DEMO_SCALE),
             ("--timezone", timezone, None)]
    flags = [f"{flag} {shlex.quote(value)}" for flag, value, default in given
             if value is not None and value != default]
    return " ".join(["creator-sync demo", *flags])


@click.command("demo")
@click.option("--duckdb", default=DEMO_DUCKDB, show_default=True,
              help="Demo warehouse file (its own: never the configured warehouse).")
@option("dataset")
@click.option("--report", default=DEMO_REPORT, show_default=True, help="Report output.")
@click.option("--reset", is_flag=True, help="Forget previous demo runs and start over.")
@click.option("--scale", default=DEMO_SCALE, show_default=True, help="Sandbox scale.")
@option("timezone", shown=TIMEZONE_SHOWN)
def demo_command(duckdb: str, dataset: str | None, report: str, reset: bool, scale: str,
                 timezone: str | None) -> None:
    """Start the sandbox in-process, sync it, build models and report (run again: incremental)."""
    with reported_failures(False):
        run_demo(duckdb, report, reset=reset, scale=scale, dataset=dataset, timezone=timezone)
