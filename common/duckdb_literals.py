"""Parameters written into DuckDB SQL as literals, so that no run pays for pandas.

DuckDB's Python client imports pandas (and numpy) the first time a value is bound to a
statement on a connection, to ask whether the value is one of theirs: ~0.4 s of CPU, more than
a fifth of a nothing-new sync. dlt binds a parameter when it opens a connection (each `SET` of
its settings) and in its own statements; our destination (`duckdb_names.catalog_qualified_duckdb`)
writes those values as literals instead. A value with no exact literal here (bytes, a list, an
infinite float, an int beyond BIGINT, a Decimal, whose bound width DuckDB derives from its text)
is still bound, as before: correctness first.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import date, datetime, time
from typing import Any

PLACEHOLDER = "%s"  # dlt's DB-API style; its DuckDB client turns each into `?`


def quote_literal(value: str) -> str:
    return "'" + str(value).replace("'", "''") + "'"


def sql_literal(value: Any) -> str | None:
    """`value` as a DuckDB literal of the type binding would give it, or None: bind it."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        if -(2**31) <= value < 2**31:
            return f"CAST({value} AS INTEGER)"
        return f"CAST({value} AS BIGINT)" if -(2**63) <= value < 2**63 else None
    if isinstance(value, float):
        return f"CAST({value!r} AS DOUBLE)" if math.isfinite(value) else None
    if isinstance(value, str):
        return None if "\x00" in value else quote_literal(value)
    if isinstance(value, datetime):
        kind = "TIMESTAMP" if value.tzinfo is None else "TIMESTAMPTZ"
        return f"{kind} {quote_literal(value.isoformat())}"
    if isinstance(value, date):
        return f"DATE {quote_literal(value.isoformat())}"
    if isinstance(value, time) and value.tzinfo is None:
        return f"TIME {quote_literal(value.isoformat())}"
    return None


def inline_parameters(sql: str, args: Sequence[Any], placeholder: str = PLACEHOLDER) -> str | None:
    """`sql` with each placeholder (dlt's `%s`; `?` for DuckDB's own) replaced by its
    argument's literal; None when any argument has no literal, or the placeholders and the
    arguments do not pair up (then bind, as before)."""
    parts = sql.split(placeholder)
    if len(parts) != len(args) + 1:
        return None
    literals = [sql_literal(arg) for arg in args]
    if any(literal is None for literal in literals):
        return None
    out = [parts[0]]
    for literal, part in zip(literals, parts[1:], strict=True):
        out += [literal, part]  # type: ignore[list-item]
    return "".join(out)
