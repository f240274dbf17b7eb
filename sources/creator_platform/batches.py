"""Batching: arrow tables per warehouse table, held until big enough to hand to dlt as one item.

`Batches` also decides, per table, whether this run may `append` (a table new to the
destination that one resource alone writes) and then drops records already emitted;
`IdTally` counts the distinct ids of one listing for the drift check; `IdSet` holds the ids a
run gathers for the steps after it (customers listed and named).

numpy and pyarrow (~0.2 s of CPU to import) are imported by the methods that use them, not
with this module: a run with nothing new reads pages but builds no arrow data, and its
listings are small enough to count without numpy (`IdTally.SMALL`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .hints import is_link_table, link_columns
from .rows import child_marker
from .settings import RESOURCES, Resource, type_info

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

# a canonical decimal that fits an int64 ("7", not "007" nor "٧"): written once, used alone
# and for a comma-joined page of keys
_CANONICAL = r"(?:0|[1-9][0-9]{0,17})"
_ONE_CANONICAL = re.compile(_CANONICAL, re.ASCII)
_ALL_CANONICAL = re.compile(rf"{_CANONICAL}(?:,{_CANONICAL})*", re.ASCII)


def canonical_int(key: str) -> int | None:
    """`key` as an int64 if it is a canonical decimal (`_CANONICAL`), else None."""
    return int(key) if _ONE_CANONICAL.fullmatch(key) else None


def canonical_ints(keys: list[str]) -> list[int] | None:
    """Every key as an int64 if every one is canonical (`canonical_int`), else None: one regex
    over the joined keys and one C-level `map(int, ...)` instead of a Python call per key (ids
    are integers in practice, so a page's keys almost always are)."""
    if not keys:
        return []
    joined = ",".join(keys)
    if _ALL_CANONICAL.fullmatch(joined) is None or joined.count(",") != len(keys) - 1:
        return None  # (a key holding a comma would pass the regex as two keys)
    return list(map(int, keys))


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


def _file_keys(keys: Iterable[str], add_int: Callable[[int], object], other: set[str]) -> None:
    """Canonical integer keys to `add_int` (8 bytes each where it packs them), the rest to `other`."""
    for key in keys:
        n = canonical_int(key)
        if n is None:
            other.add(key)
        else:
            add_int(n)


class SeenKeys:
    """Keys already emitted in this run, for the in-run dedupe of appended tables.

    Integer keys are held in chunks of `CHUNK` consecutive values: a chunk with at least
    `DENSE_MIN` keys is a bitmap (8 KiB, one bit per value), the others stay in one sorted
    int64 array (8 bytes per key). So a key never costs more than 8 bytes, and ids handed out
    in sequence (dense, as in the sandbox) cost about one bit: at `large` a sorted array of
    every key (~11M, ~90 MB plus a copy at each merge) grew with the data
    (docs/performance.md#memory). Other
    keys go to a set.
    """

    PENDING_MAX = 4_096  # recent integer keys, merged into the chunks in bulk
    SHIFT = 16
    CHUNK = 1 << SHIFT  # values per chunk
    DENSE_MIN = CHUNK // 64  # keys from which a chunk's bitmap (CHUNK bits) is no bigger

    def __init__(self) -> None:
        self._sorted: np.ndarray | None = None  # keys of sparse chunks (numpy on first merge)
        self._dense: dict[int, np.ndarray] = {}  # chunk number -> its bitmap (CHUNK bools, packed)
        self._pending: set[int] = set()
        self._other: set[str] = set()
        # the least and greatest integer key held: a page of keys outside them (ids in sequence,
        # read in either order: the usual page) holds none, answered without numpy's per-call cost
        self._lo: int | None = None
        self._hi: int | None = None

    def __bool__(self) -> bool:
        """Any key at all (without merging or numpy)."""
        return self._lo is not None or bool(self._other)

    def __len__(self) -> int:
        """Distinct keys held."""
        if self._sorted is None:  # never merged: no numpy needed
            return len(self._pending) + len(self._other)
        import numpy as np

        self._merge()
        bits = sum(int(np.unpackbits(b).sum()) for b in self._dense.values())
        return len(self._sorted) + bits + len(self._other)

    def seen(self, keys: list[str], ints: list[int] | None = None) -> np.ndarray:
        """Per key (a bool array): emitted by an earlier `remember`. `ints`: the caller's
        `canonical_ints(keys)`, if it has it."""
        import numpy as np

        if ints is None:
            ints = canonical_ints(keys)
        if ints is None:  # some key is not a canonical integer: key by key
            return self._seen_each(keys)
        out = np.zeros(len(ints), dtype=np.bool_)
        lo, hi = self._lo, self._hi
        if not ints or lo is None or hi is None or min(ints) > hi or max(ints) < lo:
            return out
        if self._pending and not self._pending.isdisjoint(ints):
            out |= np.fromiter((n in self._pending for n in ints), dtype=np.bool_, count=len(ints))
        if self._sorted is not None:
            out |= self._merged(np.asarray(ints, dtype=np.int64))
        return out

    def _merged(self, arr: np.ndarray) -> np.ndarray:
        """Per integer key: in a dense chunk's bitmap or in the sorted array."""
        import numpy as np

        out = np.zeros(len(arr), dtype=np.bool_)
        if self._sorted is not None and len(self._sorted):
            pos = np.minimum(np.searchsorted(self._sorted, arr), len(self._sorted) - 1)
            out |= self._sorted[pos] == arr
        if self._dense and len(arr):
            chunks = arr >> self.SHIFT
            first = int(chunks[0])
            if int(chunks.min()) == int(chunks.max()):  # the usual page: one chunk
                bits = self._dense.get(first)
                if bits is not None:
                    out |= self._bits_set(bits, arr)
                return out
            for chunk in np.unique(chunks).tolist():
                bits = self._dense.get(chunk)
                if bits is not None:
                    where = chunks == chunk
                    out[where] |= self._bits_set(bits, arr[where])
        return out

    def ints(self) -> np.ndarray:
        """Every integer key held, sorted (int64)."""
        import numpy as np

        self._merge()
        assert self._sorted is not None
        parts = [self._sorted]
        for chunk, bits in self._dense.items():
            low = np.flatnonzero(np.unpackbits(bits)).astype(np.int64)
            parts.append(low + (chunk << self.SHIFT))
        return np.sort(np.concatenate(parts))

    def others(self) -> set[str]:
        """The keys held that are not canonical integers (a copy)."""
        return set(self._other)

    def _bits_set(self, bits: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """Per key of one chunk: its bit in `bits`."""
        low = keys & (self.CHUNK - 1)
        return (bits[low >> 3] >> (7 - (low & 7))) & 1 == 1

    def _seen_each(self, keys: list[str]) -> np.ndarray:
        import numpy as np

        out = np.zeros(len(keys), dtype=np.bool_)
        ints: list[int] = []
        where: list[int] = []
        for i, key in enumerate(keys):
            n = canonical_int(key)
            if n is None:
                out[i] = key in self._other
            elif n in self._pending:
                out[i] = True
            else:
                ints.append(n)
                where.append(i)
        if ints and self._sorted is not None:
            out[where] = self._merged(np.asarray(ints, dtype=np.int64))
        return out

    def remember(self, keys: Iterable[str], ints: list[int] | None = None) -> None:
        """Note `keys` as emitted (`ints`: the caller's `canonical_ints(keys)`, if it has it)."""
        keys = list(keys)
        if ints is None:
            ints = canonical_ints(keys)
        if ints is None:
            ints = []
            _file_keys(keys, ints.append, self._other)
        self.add_ints(ints)

    def add_ints(self, ints: list[int]) -> None:
        """Note integer keys (0 <= n < 2**63), whether held already or not."""
        if not ints:
            return
        lo, hi = min(ints), max(ints)
        self._lo = lo if self._lo is None else min(lo, self._lo)
        self._hi = hi if self._hi is None else max(hi, self._hi)
        self._pending.update(ints)
        if len(self._pending) >= self.PENDING_MAX:
            self._merge()

    def _merge(self) -> None:
        """The pending keys into the dense bitmaps or the sorted array; a chunk of the array
        that reaches `DENSE_MIN` keys becomes a bitmap."""
        import numpy as np

        if self._sorted is None:
            self._sorted = np.empty(0, dtype=np.int64)
        if not self._pending:
            return
        new = np.fromiter(self._pending, dtype=np.int64, count=len(self._pending))
        self._pending.clear()
        new = np.sort(new[~self._merged(new)])
        chunks = new >> self.SHIFT
        grown: list[int] = []
        for chunk in np.unique(chunks).tolist():
            bits = self._dense.get(chunk)
            if bits is not None:
                self._set_bits(bits, new[chunks == chunk])
            else:
                grown.append(chunk)
        if self._dense:
            new = new[np.isin(chunks, grown)]
        if not len(new):
            return
        # (np.isin on the whole array would sort a copy of it: 5x its size)
        self._sorted = np.insert(self._sorted, np.searchsorted(self._sorted, new), new)
        for chunk in grown:
            lo, hi = np.searchsorted(self._sorted, [chunk << self.SHIFT, (chunk + 1) << self.SHIFT])
            if hi - lo >= self.DENSE_MIN:
                bits = np.zeros(self.CHUNK // 8, dtype=np.uint8)
                self._set_bits(bits, self._sorted[lo:hi])
                self._dense[chunk] = bits
                self._sorted = np.concatenate((self._sorted[:lo], self._sorted[hi:]))

    def _set_bits(self, bits: np.ndarray, keys: np.ndarray) -> None:
        import numpy as np

        low = keys & (self.CHUNK - 1)
        mask = np.zeros(self.CHUNK, dtype=np.bool_)
        mask[low] = True
        bits |= np.packbits(mask)


class _SetThenSeen:
    """Keys in a plain set while few (`SMALL`), then in `SeenKeys` (at most 8 bytes a key, about
    a bit for ids in sequence): a run with nothing new lists little, and importing numpy would
    cost it ~0.15 s of CPU. The base of `KeySet` (text keys, with membership) and `IdTally`
    (integer ids, counted)."""

    SMALL = SeenKeys.PENDING_MAX

    def __init__(self) -> None:
        self._small: set[Any] | None = set()
        self._big = SeenKeys()

    def _hold(self, keys: Iterable[Any], spill: Callable[[list[Any]], None]) -> bool:
        """Add `keys` to the small set if it is still in use (True); past `SMALL` keys, they all
        go to `spill` (a `SeenKeys` method) and the set is done with."""
        small = self._small
        if small is None:
            return False
        small.update(keys)
        if len(small) > self.SMALL:
            self._small = None
            spill(list(small))
        return True

    def __len__(self) -> int:
        """Distinct keys held."""
        return len(self._small) if self._small is not None else len(self._big)


class KeySet(_SetThenSeen):
    """Text keys, with membership. For unchanged.py's check of keys read twice: every listing
    running at once holds one per table, so the set stays small (~0.4 MB)."""

    def having(self, keys: list[str], ints: list[int] | None = None) -> list[str]:
        """The keys of `keys` held (`ints`: the caller's `canonical_ints(keys)`, if it has it)."""
        if self._small is not None:
            small = self._small
            return [] if small.isdisjoint(keys) else [k for k in keys if k in small]
        held = self._big.seen(keys, ints)
        return [k for k, h in zip(keys, held.tolist(), strict=True) if h] if held.any() else []

    def add(self, keys: list[str]) -> list[str]:
        """Hold `keys` (distinct); returns those held already."""
        if self._small is not None:
            before = self.having(keys)
            self._hold(keys, self._big.remember)
            return before
        ints = canonical_ints(keys)
        before = self.having(keys, ints)
        self._big.remember(keys, ints)
        return before


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

    # a table that gets a row or two per page (a sparse link table) would hold thousands of
    # one-row arrow tables (~4 KiB each) before it reaches BATCH_ROWS at `large`: its parts
    # are merged into one every this many pages (docs/performance.md#memory)
    PARTS_MAX = 64

    def __init__(self, resource: Resource | None = None, kept: frozenset[str] | None = None) -> None:
        self._parts: dict[str, list[pa.Table]] = {}
        self._rows: dict[str, int] = {}
        self._resource = resource
        self._kept = kept
        self._append: dict[str, bool] = {}
        self._seen: dict[str, SeenKeys] = {}
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
        seen = self._seen.setdefault(table, SeenKeys())
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


class IdTally(_SetThenSeen):
    """Distinct record ids of one listing, for the drift check: only a count, so no membership
    is asked (an int64 appended per record grew with the listing, 13 MB for one `large` site's
    transactions, docs/performance.md#memory). Digit ids by value ("007" is 7), the rest as text."""

    SMALL = 8_192  # ids held in a set (~0.5 MiB at most) before they move to SeenKeys

    def __init__(self) -> None:
        super().__init__()
        self._other: set[str] = set()  # ids that are not digit strings

    def add(self, records: list[Any]) -> None:
        ints: list[int] = []
        for item in records:
            rid = item.get("id") if isinstance(item, dict) else None
            text = str(rid)
            if text.isdigit() and len(text) < 19:
                ints.append(int(text))
            else:
                self._other.add(text)
        if not self._hold(ints, self._big.add_ints):
            self._big.add_ints(ints)

    def distinct(self) -> int:
        return len(self) + len(self._other)


class IdSet:
    """Record ids a run gathers for the steps after it (per site: the customers it listed, the
    customers new money names), held as `SeenKeys`: about a bit per id in sequence, at most 8
    bytes. An int64 appended per id (duplicates kept until the array doubled) held ~23 MiB at
    `large` and twice that while deduplicating (docs/performance.md#memory); a set of strings costs
    ~100 bytes
    an id (docs/performance.md#memory). Other ids go to a set."""

    def __init__(self, ids: Iterable[str] = ()) -> None:
        self._keys = SeenKeys()
        self.update(ids)

    def update(self, ids: Iterable[str]) -> None:
        self._keys.remember(ids)

    def __len__(self) -> int:
        return len(self._keys)

    def __bool__(self) -> bool:
        """Any id at all (without numpy: the usual answer of a run with nothing new)."""
        return bool(self._keys)

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        return bool(self._keys.seen([key])[0])

    def without(self, other: IdSet | None) -> list[str]:
        """The ids here and not in `other`, sorted as text."""
        import numpy as np

        ints, rest = self._keys.ints(), self._keys.others()
        if other is not None:
            ints = np.setdiff1d(ints, other._keys.ints(), assume_unique=True)
            rest -= other._keys.others()
        return sorted([str(n) for n in ints.tolist()] + list(rest))
