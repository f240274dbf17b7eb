"""The SQL models (staging, intermediate, marts) and data tests, as files.

This folder is the package `creator_sync.models.sql` (pyproject.toml maps it): it ships inside
the wheel and `creator_sync.models.project` finds it through importlib.resources. It holds no Python beyond this marker.
"""
