"""A subcommand's imports run without the cyclic garbage collector and are frozen out of its
walks after (`creator_sync.cli._imports_frozen`, issue 15 point 2,
docs/performance.md#nothing-new); the collector
is on again for what the command does."""

from __future__ import annotations

from gc_child import run_child


def test_a_subcommands_imports_are_not_walked_by_the_collector_and_cycles_are_still_freed():
    # a child process: the collector's state is process-wide
    run_child("""
        import gc
        import click
        from creator_sync import cli

        full = gc.get_stats()[2]["collections"]
        young = gc.get_stats()[0]["collections"]
        command = cli.LazyGroup().get_command(click.Context(click.Command("x")), "sync")
        assert command is not None and command.name == "sync"
        assert gc.get_stats()[2]["collections"] == full  # before: a full collection ran
        assert gc.get_stats()[0]["collections"] - young < 5  # before: ~100 young ones
        assert gc.isenabled()
        frozen = gc.get_freeze_count()
        assert frozen > 50_000, frozen  # dlt, duckdb, httpx, ...
        cli.LazyGroup().get_command(click.Context(click.Command("x")), "models")
        assert gc.get_freeze_count() <= frozen  # once per process: models' objects not frozen
    """, then_cycles_freed=True)


def test_a_process_that_turned_the_collector_off_keeps_it_off():
    run_child("""
        import gc
        import click
        from creator_sync import cli

        gc.disable()
        cli.LazyGroup().get_command(click.Context(click.Command("x")), "report")
        assert not gc.isenabled()
        assert gc.get_freeze_count() == 0
    """)
