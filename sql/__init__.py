"""The SQL models (staging, intermediate, marts) and data tests, as files.

This folder is the package `models.sql` (pyproject.toml maps it): it ships inside the wheel and
`models.project` finds it through importlib.resources. It holds no Python beyond this marker.
"""
