"""Runnable pipelines and the `creator-sync` command line."""
