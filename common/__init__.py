"""The bottom layer every command stands on: the app's settings and how every setting is
declared, resolved and checked (`settings`, `setting_kinds`), the terminal contract (exit codes,
the one error line), locks, owner-only files, DuckDB names, where a warehouse and its state live.

Imports nothing of ours (tests/test_layers.py checks): the source and every command may stand on
it. The source's own keys are the source's (`creator_sync.sources.creator_platform.config`).
"""
