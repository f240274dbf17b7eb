"""Batching: arrow tables per warehouse table, held until big enough to hand to dlt as one item.

`Batches` also decides, per table, whether this run may `append` (a table new to the
destination that one resource alone writes) and then drops records already emitted (their
keys held in a `key_sets.CompactKeySet` per table).

numpy and pyarrow (~0.2 s of CPU to import) are imported by the methods that use them, not
with this module: a run with nothing new reads pages but builds no arrow data.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from .endpoints import RESOURCES, Resource, type_info
from .hints import is_link_table, link_columns
from .key_sets import CompactKeySet, canonical_ints
from .rows import child_marker
from .tuning import ARROW_PARTS_MAX

if TYPE_CHECKING:
    import pyarrow as pa


@functools.cache
def _included_tables() -> frozenset[str]:
    """Tables that `include=` reads write: more than one resource may write them in one run."""
    return frozenset(
        type_info(name).table
        for res in RESOURCES.values()
        for group in res.include
        for path in group
        for name in path.split(".")
    )


class Batches:
    """Arrow tables per warehouse table, held until enough rows to yield as one item.

    A table not in `kept` did not exist in the destination before this run: if only `resource`
    writes it (its own table, link tables and line table, and no other resource includes that
    type), it is loaded with dlt's `append`, since there is nothing to merge into and a merge
    would stage, sort and copy the whole collection (memory growing with data,
    docs/performance.md#memory). An
    append keeps duplicates a merge would collapse (a record re-read by a drift pass, the
    change feed, two groups of one page), so for those tables a record (a link or line table: a
    parent's links or lines, keyed (parent, child) or (parent, `line_number`)) already emitted
    by an earlier page is dropped here. Their marker rows (an empty relationship or line array,
    rows.py) only tell a merge to drop a parent's old links, so an appended table keeps
    none (`_unmarked`; dlt would insert them, `hard_delete` is for merges). One
    parent's lines
    that come in pieces (a streamed payout's, `listing.Piece`) are one record: the first piece
    is deduped, the later ones follow it (kept or dropped as it was).
    """

    PARTS_MAX = ARROW_PARTS_MAX  # a table's arrow tables are merged into one this often

    def __init__(self, resource: Resource | None = None, kept: frozenset[str] | None = None) -> None:
        self._parts: dict[str, list[pa.Table]] = {}
        self._rows: dict[str, int] = {}
        self._resource = resource
        self._kept = kept
        self._append: dict[str, bool] = {}
        self._seen: dict[str, CompactKeySet] = {}
        self._started: set[str] = set()  # tables that had rows added
        self._first_kept: dict[str, bool] = {}  # was a table's last first piece kept?

    def appends(self, table: str, columns: list[str]) -> bool:
        """Is `table` loaded with `append` in this run (decided once per table)?"""
        decided = self._append.get(table)
        if decided is None:
            decided = self._append[table] = self._owned_and_fresh(table, columns)
        return decided

    def _owned_and_fresh(self, table: str, columns: list[str]) -> bool:
        res = self._resource
        if res is None or self._kept is None or table in self._kept or res.table in _included_tables():
            return False
        if table == res.table:
            return True
        lines = type_info(res.jtype).lines
        if lines is not None and table == lines.table:
            # its line table (payout_lines): only this type's detail reads write it; a first
            # load's merge of it ran out of memory at `large` (docs/performance.md#memory)
            return True
        if not is_link_table(columns, table) or not table.startswith(f"{res.table}_"):
            return False  # an included type: another resource may write it too
        parent, _ = link_columns(table, columns)
        return parent == f"{type_info(res.jtype).singular}_id"

    def _dedupe(self, table: str, tbl: pa.Table) -> pa.Table:
        """Rows of `tbl` not emitted before (entity: by id; link table: by parent), and of
        rows repeated within `tbl` (entity: id; link table: parent and child) the first."""
        import numpy as np
        import pyarrow as pa

        link = "id" not in tbl.column_names
        key_col, child_col = link_columns(table, tbl.column_names) if link else ("id", "id")
        column = tbl.column(key_col)
        keys = column.to_pylist()
        if column.null_count or not pa.types.is_string(column.type):
            keys = [str(k) for k in keys]
        marks: list[Any] = list(zip(keys, tbl.column(child_col).to_pylist(), strict=True)) if link else keys
        seen = self._seen.setdefault(table, CompactKeySet())
        ints = canonical_ints(keys)
        keep = ~seen.seen(keys, ints)
        if len(set(marks)) != len(marks):  # rare: a row repeated within the batch
            here: set[Any] = set()
            first = np.fromiter(
                (not (mark in here or here.add(mark)) for mark in marks),  # type: ignore[func-returns-value]
                dtype=np.bool_, count=len(marks))
            keep &= first
        if keep.all():
            seen.remember(keys, ints)
            return tbl
        flags = keep.tolist()
        seen.remember([k for k, kept in zip(keys, flags, strict=True) if kept],
                      None if ints is None else [n for n, kept in zip(ints, flags, strict=True) if kept])
        return tbl.filter(pa.array(keep, type=pa.bool_()))

    def _unmarked(self, table: str, tbl: pa.Table) -> pa.Table:
        """`tbl` (of an appended link or line table, deduped) without its marker rows: an
        append has no old rows to replace, and dlt applies `hard_delete` to merges only. A
        table's first part keeps its columns with no rows, so that the load still creates it."""
        import pyarrow.compute as pc

        if "id" in tbl.column_names:
            return tbl
        _, child = link_columns(table, tbl.column_names)
        marks = pc.equal(tbl.column(child), child_marker(table))
        if not pc.any(marks).as_py():
            return tbl  # most pages: no marker, no copy
        # a null child is no marker (equal() gives null, which filter would drop)
        return tbl.filter(pc.invert(pc.fill_null(marks, False)))

    def add(self, table: str, tbl: pa.Table, piece: int = 0) -> None:
        """`piece`: 0, whole records; 1, the first piece of one parent's lines; 2, a later one."""
        if self.appends(table, tbl.column_names):
            if piece > 1:
                if not self._first_kept.get(table):
                    return  # the parent was emitted before this read: all its pieces go
            else:
                tbl = self._unmarked(table, self._dedupe(table, tbl))
                if piece:
                    self._first_kept[table] = tbl.num_rows > 0
            if not tbl.num_rows and table in self._started:
                return
        self._started.add(table)
        parts = self._parts.setdefault(table, [])
        parts.append(tbl)
        self._rows[table] = self._rows.get(table, 0) + tbl.num_rows
        if len(parts) >= self.PARTS_MAX:
            self._parts[table] = [_concat(parts).combine_chunks()]

    def rows(self, table: str) -> int:
        return self._rows.get(table, 0)

    def tables(self) -> list[str]:
        return [t for t, parts in self._parts.items() if parts]

    def take(self, table: str) -> pa.Table | None:
        parts = self._parts.pop(table, [])
        self._rows.pop(table, None)
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else _concat(parts)


def _concat(parts: list[pa.Table]) -> pa.Table:
    import pyarrow as pa

    # pages may differ in columns (drift): missing ones become nulls
    return pa.concat_tables(parts, promote_options="permissive")
