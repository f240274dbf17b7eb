"""The `creator-sync` console script.

Subcommands live with the code they drive and are imported only when called, so that
`creator-sync --help` stays fast and one broken area cannot break the others.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
from collections.abc import Iterator
from typing import Any

import click

from creator_sync.common.terminal import (
    EXIT_USAGE,
    describe,
    error_line,
    exit_code_of,
    exit_now,
    install_signal_handlers,
    interrupt_code,
    signal_name,
    usage_message,
    verbose_requested,
    was_interrupted,
)

# name -> "module:attribute" of a click.Command
COMMANDS: dict[str, str] = {
    "init": "creator_sync.init_command:init_command",
    "sandbox": "creator_sync.sandbox.cli:sandbox_command",
    "sync": "creator_sync.pipelines.sync:sync_command",
    "status": "creator_sync.pipelines.status:status_command",
    "demo": "creator_sync.demo:demo_command",
    "models": "creator_sync.models.cli:models_command",
    "hooks": "creator_sync.pipelines.webhooks.cli:hooks_command",
    "listen": "creator_sync.pipelines.webhooks.cli:listen_command",
    "report": "creator_sync.report.cli:report_command",
    "forget": "creator_sync.forget:forget_command",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, _, attribute = target.partition(":")
        with _imports_frozen():
            module = importlib.import_module(module_name)
        return getattr(module, attribute)


@contextlib.contextmanager
def _imports_frozen() -> Iterator[None]:
    """A subcommand's imports (dlt, duckdb, httpx, ...: ~150,000 objects) without the cyclic
    garbage collector, then frozen out of its walks (`gc.freeze`).

    With the collector on, those imports ran ~100 young and a full collection over objects
    that live as long as the process: 0.05-0.2 s of a nothing-new sync's ~1.7 s CPU
    (docs/performance.md#nothing-new). Imports leave ~600 objects of cyclic garbage, kept by the
    freeze. Once per process (a
    command's first import): `pipelines.process_tuning.settle_gc` does the same for what a sync
    builds after; a process that turned the collector off itself keeps it off.
    """
    if getattr(_imports_frozen, "done", False) or not gc.isenabled():
        yield
        return
    _imports_frozen.done = True  # type: ignore[attr-defined]
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


# Files the tool creates hold personal data, state or logs: owner-only, whoever creates them
# (dlt's pipeline folder, the warehouse, the journal). The report chmods itself to 0644.
PRIVATE_UMASK = 0o077


class CreatorSyncGroup(LazyGroup):
    """Run as a program (standalone), every way a command ends maps to one exit code and one
    `error:` line: click's own three-line usage errors, tracebacks and "Aborted!" never show."""

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        if args is None:  # the program itself (not a test's CliRunner): process-wide settings
            install_signal_handlers()
            os.umask(os.umask(PRIVATE_UMASK) | PRIVATE_UMASK)
        code: Any = 0
        try:
            code = super().main(args, prog_name, complete_var, False, **extra)
        except click.exceptions.NoArgsIsHelpError as exc:  # `creator-sync` or a group alone
            assert exc.ctx is not None
            click.echo(exc.ctx.get_help(), err=True)
            _end(None, EXIT_USAGE)
        except click.UsageError as exc:
            _end(error_line(usage_message(exc)), EXIT_USAGE)
        except click.ClickException as exc:
            _end(error_line(exc.format_message()), exc.exit_code)
        except click.exceptions.Abort as exc:  # click's wrapper of a KeyboardInterrupt
            code = interrupt_code(exc.__cause__ or exc.__context__)
            _end(error_line(f"interrupted by {signal_name(code)}"), code)
        except Exception as exc:
            if was_interrupted(exc):
                code = interrupt_code(exc)
                _end(error_line(f"interrupted by {signal_name(code)}"), code)
            if verbose_requested(args):
                raise
            _end(error_line(describe(exc)), exit_code_of(exc))
        _end(None, code if isinstance(code, int) else 0)


def _end(line: str | None, code: int) -> None:
    if line:
        click.echo(line, err=True)
    exit_now(code)


@click.group(cls=CreatorSyncGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="creator-sync")
def main() -> None:
    """Sync a Creator Platform account into a warehouse and model it for finance.

    Exit status: 0 success, 1 failure at run time, 2 usage or configuration error,
    130 SIGINT, 143 SIGTERM.
    """
