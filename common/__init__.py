"""The bottom layer every command stands on: the terminal contract (exit codes, the one error
line), locks, owner-only files, DuckDB names, where a warehouse and its state live.

Imports nothing of ours (tests/test_layers.py checks): the source and every command may stand on
it. The settings are the source's (`creator_sync.sources.creator_platform.config`), since its
signature is built from them.
"""
