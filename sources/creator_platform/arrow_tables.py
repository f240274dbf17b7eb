"""Relational rows -> arrow tables with the declared types (docs/architecture.md).

Pure, shared by the pull sync and the webhook loader; pyarrow is imported lazily.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .endpoints import DECIMAL_PRECISION, ColumnType, pii_columns
from .hints import EXTRACTED_AT, declared_columns, link_columns
from .pii import PiiMode

if TYPE_CHECKING:
    import pyarrow as pa


def _arrow_type(kind: ColumnType) -> pa.DataType:
    import pyarrow as pa

    return {
        "text": pa.string(),
        "bigint": pa.int64(),
        "bool": pa.bool_(),
        "timestamp": pa.timestamp("us", tz="UTC"),
        "decimal": pa.decimal128(*DECIMAL_PRECISION),
        "double": pa.float64(),
        "json": pa.string(),
    }[kind]


def rows_to_arrow(
    rows_by_table: Mapping[str, list[dict[str, Any]]],
    *,
    pii: PiiMode = None,
) -> dict[str, pa.Table]:
    """Rows (as produced by `normalize_resources`) -> arrow tables with the declared types.
    pyarrow (and numpy, which it imports: ~0.2 s of CPU) is imported by the functions that
    build arrow data, not with this module: a run with nothing to load never needs it."""
    out: dict[str, pa.Table] = {}
    for table, rows in rows_by_table.items():
        if not rows:
            continue
        import pyarrow as pa
        observed = dict.fromkeys(rows[0])
        first = rows[0].keys()
        for row in rows:
            if row.keys() != first:  # rare: records of one page mostly share their keys
                observed.update(dict.fromkeys(row))
        cols = declared_columns(table, observed)
        if pii == "drop":
            cols = {c: t for c, t in cols.items() if c not in pii_columns(table)}
        schema, stamp, rest = _arrow_schema(table, tuple(cols.items()))
        at = rows[0].get(EXTRACTED_AT)
        if stamp >= 0 and at is not None and all(
            map(operator.is_, map(dict.get, rows, itertools.repeat(EXTRACTED_AT)), itertools.repeat(at))
        ):
            # one batch shares one `_extracted_at` object: a constant column, instead of
            # converting the same aware datetime once per row (a fifth of the arrow work)
            stamps = pa.repeat(_stamp(at, schema.field(stamp).type), len(rows))
            out[table] = _from_rows(rows, rest).add_column(stamp, schema.field(stamp), stamps)
        else:
            out[table] = _from_rows(rows, schema)
    return out


@functools.lru_cache(maxsize=16)
def _stamp(at: datetime, arrow_type: pa.DataType) -> pa.Scalar:
    """`at` as an arrow scalar: a page's tables share one `_extracted_at` (~10 us each)."""
    import pyarrow as pa

    return pa.scalar(at, type=arrow_type)


def _from_rows(rows: list[dict[str, Any]], schema: pa.Schema) -> pa.Table:
    """The rows as a table of `schema` (missing keys -> null, other keys ignored): the same
    table as `pa.Table.from_pylist`, but arrow reads the dicts in C++ as one struct array
    (from_pylist first builds a Python list per column: ~25 % slower)."""
    import pyarrow as pa

    return pa.Table.from_struct_array(pa.array(rows, type=pa.struct(schema)))


@functools.lru_cache(maxsize=1024)
def _arrow_schema(
    table: str, cols: tuple[tuple[str, ColumnType], ...]
) -> tuple[pa.Schema, int, pa.Schema]:
    """Arrow schema of a table's columns (cached: pages of a table repeat the same columns),
    the position of `_extracted_at` in it (-1: none) and the schema without it."""
    import pyarrow as pa

    keys = {"id"} if any(c == "id" for c, _ in cols) else set(link_columns(table, [c for c, _ in cols]))
    schema = pa.schema([pa.field(c, _arrow_type(kind), nullable=c not in keys) for c, kind in cols])
    stamp = schema.get_field_index(EXTRACTED_AT)
    return schema, stamp, (schema.remove(stamp) if stamp >= 0 else schema)


def conformed(table: str, tbl: pa.Table) -> pa.Table:
    """Stored rows read back from the destination (`deletions.py`) as the arrow table the
    resources build for `table`: its declared columns in their order, types and nullability
    (dlt writes a table's items of one file as one arrow schema)."""
    names = set(tbl.column_names)
    cols = tuple((c, k) for c, k in declared_columns(table, tbl.column_names).items() if c in names)
    schema, _, _ = _arrow_schema(table, cols)
    return tbl.select([c for c, _ in cols]).cast(schema)
