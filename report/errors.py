"""The one error type the report raises for bad input (missing database, mart, column)."""

from __future__ import annotations


class ReportError(Exception):
    """Raised with a message that names what is wrong and where (file, schema, table, column)."""
