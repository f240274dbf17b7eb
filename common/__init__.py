"""The bottom layer every command stands on: settings, terminal contract, locks, DuckDB names.

Imports only `sources` (the API's facts and errors) and libraries, never `pipelines`, `models`,
`report` or `creator_sync` (tests/test_layers.py checks).
"""
