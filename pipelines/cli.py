"""The `creator-sync` console script.

Subcommands live with the code they drive and are imported only when called, so that
`creator-sync --help` stays fast and one broken area cannot break the others.
"""

from __future__ import annotations

import importlib

import click

# name -> "module:attribute" of a click.Command
COMMANDS: dict[str, str] = {
    "sandbox": "sandbox.cli:sandbox_command",
    "sync": "pipelines.sync:sync_command",
    "demo": "pipelines.demo:demo_command",
    "models": "models.cli:models_command",
    "hooks": "pipelines.webhooks.cli:hooks_command",
    "listen": "pipelines.webhooks.cli:listen_command",
    "report": "report.cli:report_command",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, _, attribute = target.partition(":")
        module = importlib.import_module(module_name)
        return getattr(module, attribute)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="creator-sync")
def main() -> None:
    """Sync a Creator Platform account into a warehouse and model it for finance."""
