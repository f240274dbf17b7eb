"""`creator-sync demo`: the whole job on the embedded sandbox, in one command.

Run 1 syncs a fresh demo account (scale `demo`, 2 sites, fixed seed) into `demo.duckdb`.
Run N (N > 1) starts the same seeded sandbox, replays N-1 deterministic rounds of platform
activity (new purchases, refunds, tag changes...), and syncs incrementally: the warehouse then
equals what a nightly sync would have produced after N-1 days of activity. The run counter lives
in `<duckdb>.demo-runs` next to the warehouse; `--reset` starts over.
"""

from __future__ import annotations

import importlib
import shlex
import sys
from pathlib import Path
from typing import Any

import click

from common.terminal import reported_failures, setup_logging
from pipelines.factory import resolve_warehouse
from pipelines.sync import SyncSettings, format_summary, log_path, run_sync
from sources.creator_platform.auth import Secret

DEMO_SEED = 20240601
DEMO_SITES = 2
ACTIVITY_PER_ROUND = 24  # the sandbox clock moves 1 h per event: one day of business per run
SANDBOX_CLIENT_ID = "sandbox"
SANDBOX_CLIENT_SECRET = "sandbox-secret"


def _optional(module: str, attribute: str) -> Any | None:
    """A function from another area if it has landed, else None (the demo skips that step)."""
    try:
        return getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError):
        return None


def _run_number(counter: Path, reset: bool) -> int:
    if reset or not counter.exists():
        return 1
    try:
        return int(counter.read_text().strip() or 0) + 1
    except ValueError:
        return 1


def run_demo(duckdb: str, report: str, *, reset: bool = False, scale: str = "demo") -> dict[str, Any]:
    """Do the demo; returns what happened (used by tests)."""
    run_sandbox = _optional("sandbox.testing", "run_sandbox")
    if run_sandbox is None:
        raise click.ClickException("the embedded sandbox (sandbox.testing) is not available")
    db = Path(duckdb).resolve()
    counter = Path(f"{db}.demo-runs")
    if reset:
        for path in (db, Path(f"{db}.wal"), counter):
            path.unlink(missing_ok=True)
        state_dir = db.parent / ".creator-sync" / db.stem
        if state_dir.exists():
            import shutil

            shutil.rmtree(state_dir)
    number = _run_number(counter, reset)
    out: dict[str, Any] = {"run": number}
    with run_sandbox(seed=DEMO_SEED, scale=scale, sites=DEMO_SITES) as sandbox:
        for _ in range(number - 1):
            sandbox.activity(ACTIVITY_PER_ROUND)
        settings = SyncSettings(
            base_url=sandbox.base_url,
            client_id=SANDBOX_CLIENT_ID,
            client_secret=Secret(SANDBOX_CLIENT_SECRET),
            warehouse=resolve_warehouse(duckdb=str(db), dataset="creator_platform", destination="duckdb"),
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

    run_models = _optional("models.runner", "run_models")
    if run_models is None:
        click.echo("models: not available yet (models.runner) - skipped")
    else:
        run_models(str(db), dataset="creator_platform")
        click.echo("models: built schema `analytics`")
        out["models"] = True
    write_report = _optional("report.render", "write_report")
    if write_report is None:
        click.echo("report: not available yet (report.render) - skipped")
    else:
        path = write_report(str(db), report)
        click.echo(f"report: {path}")
        out["report"] = str(path)
    figures = _optional("models.headline", "headline_figures")
    fmt = _optional("models.headline", "format_headline")  # integer cents, never float
    if figures is not None and fmt is not None and out.get("models"):
        headline = figures(str(db))
        out["headline"] = headline
        click.echo("headline figures:")
        for line in fmt(headline):
            click.echo(f"  {line}")
    click.echo(
        "\nnext:\n"
        f"  open {report or 'the report'} in a browser (no network needed)\n"
        f"  {shlex.quote(sys.executable)} -c \"import duckdb; duckdb.connect('{db}').sql("
        "'select * from analytics.payout_reconciliation where not is_reconciled').show()\"\n"
        "  marts in schema analytics: revenue_daily, mrr_monthly, orders, customers,\n"
        "  payout_reconciliation, payout_transactions, unpaid_balance (raw tables: creator_platform)\n"
        "  run `creator-sync demo` again: new platform activity, incremental sync."
    )
    return out


@click.command("demo")
@click.option("--duckdb", default="demo.duckdb", show_default=True, help="Demo warehouse file.")
@click.option("--report", default="demo-report.html", show_default=True, help="Report output.")
@click.option("--reset", is_flag=True, help="Forget previous demo runs and start over.")
@click.option("--scale", default="demo", show_default=True, help="Sandbox scale.")
def demo_command(duckdb: str, report: str, reset: bool, scale: str) -> None:
    """Start the sandbox in-process, sync it, build models and report (run again: incremental)."""
    with reported_failures(False):
        run_demo(duckdb, report, reset=reset, scale=scale)
