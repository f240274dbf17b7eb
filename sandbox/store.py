"""Columnar in-memory store.

Records live as numpy columns (one array per attribute) so that generation, filtering and
sorting are vectorised and `medium` fits in memory. Strings that are pure functions of small
codes are *virtual* columns: computed for the rows being rendered, never stored per record.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

NULL = -1  # null row reference / null timestamp sentinel in int64 columns
ID_FLOOR = 2_200_000_000  # every id is above 2^31 and has ten digits
ID_STRIDE = 100_000_000  # id range per type: ids are unique across types

Virtual = Callable[[np.ndarray], list]


@dataclass
class Table:
    """One resource type: stored columns, virtual columns and a version for cache invalidation."""

    type: str
    id_base: int
    cols: dict[str, np.ndarray] = field(default_factory=dict)
    virtual: dict[str, Virtual] = field(default_factory=dict)
    # numeric sort keys for virtual columns whose order follows from their codes (no strings)
    sort_keys: dict[str, Callable[[], np.ndarray]] = field(default_factory=dict)
    n: int = 0
    version: int = 0
    _cache: dict = field(default_factory=dict, repr=False)

    def set_columns(self, cols: dict[str, np.ndarray]) -> None:
        lengths = {len(v) for v in cols.values()}
        if len(lengths) > 1:
            raise ValueError(f"{self.type}: columns of unequal length {lengths}")
        self.cols = dict(cols)
        self.n = lengths.pop() if lengths else 0
        self.touch()

    def touch(self) -> None:
        """Mark the table changed: cached sort orders and materialised strings are dropped."""
        self.version += 1
        self._cache.clear()

    def cached(self, key: object, build: Callable[[], object]) -> object:
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]

    def append(self, values: dict[str, Iterable]) -> np.ndarray:
        """Append rows (every stored column must be given); returns the new row indices."""
        missing = set(self.cols) - set(values)
        if missing:
            raise ValueError(f"{self.type}: append is missing columns {sorted(missing)}")
        count = None
        for name, arr in self.cols.items():
            new = np.asarray(values[name], dtype=arr.dtype)
            count = len(new) if count is None else count
            if len(new) != count:
                raise ValueError(f"{self.type}: appended column {name} has wrong length")
            self.cols[name] = np.concatenate([arr, new])
        start = self.n
        self.n += count or 0
        self.touch()
        return np.arange(start, self.n)

    def ids(self, rows: np.ndarray) -> list[str]:
        """Ids are `id_base + row` unless the table stores explicit ids in column `_id`."""
        rows = np.asarray(rows, dtype=np.int64)
        raw = self.cols["_id"][rows] if "_id" in self.cols else rows + self.id_base
        return raw.astype(np.str_).tolist()

    def id_of(self, row: int) -> str:
        if "_id" in self.cols:
            return str(int(self.cols["_id"][row]))
        return str(self.id_base + int(row))

    def row_of(self, id_text: str) -> int | None:
        """Row index for an id string, or None when the id is not one of this type's."""
        if not id_text.isdigit() or len(id_text) != 10:
            return None
        value = int(id_text)
        if "_id" in self.cols:
            hit = np.flatnonzero(self.cols["_id"] == value)
            return int(hit[0]) if len(hit) else None
        row = value - self.id_base
        return row if 0 <= row < self.n else None

    def values(self, name: str, rows: np.ndarray) -> list:
        """Python values of one column for the given rows (stored or virtual)."""
        if name in self.cols:
            return self.cols[name][rows].tolist()
        return self.virtual[name](np.asarray(rows))

    def column(self, name: str) -> np.ndarray:
        """The whole column as an array; virtual columns are materialised once per version."""
        if name in self.cols:
            return self.cols[name]

        def build() -> np.ndarray:
            out = np.empty(self.n, dtype=object)
            out[:] = self.virtual[name](np.arange(self.n))
            return out

        return self.cached(("column", name), build)  # type: ignore[return-value]


@dataclass
class Links:
    """A to-many relationship as (parent row, child row) pairs with a lazy CSR index."""

    parent: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    child: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    _index: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    _reverse: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)

    def set(self, parent: np.ndarray, child: np.ndarray) -> None:
        self.parent = np.asarray(parent, dtype=np.int64)
        self.child = np.asarray(child, dtype=np.int64)
        self._index = self._reverse = None

    def add(self, parent: int, child: int) -> bool:
        if self._index is not None:
            present = child in self.children(parent).tolist()
        else:  # a linear scan is cheaper than rebuilding the index after every change
            present = bool(np.any((self.parent == parent) & (self.child == child)))
        if present:
            return False
        self.set(np.append(self.parent, parent), np.append(self.child, child))
        return True

    def remove(self, parent: int, child: int) -> bool:
        keep = ~((self.parent == parent) & (self.child == child))
        if keep.all():
            return False
        self.set(self.parent[keep], self.child[keep])
        return True

    @staticmethod
    def _csr(keys: np.ndarray, vals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        same = keys[1:] == keys[:-1]
        if np.all((keys[1:] > keys[:-1]) | (same & (vals[1:] >= vals[:-1]))):
            return keys, vals  # generated pairs come sorted: skip the sort
        order = np.lexsort((vals, keys))
        return keys[order], vals[order]

    def csr(self) -> tuple[np.ndarray, np.ndarray]:
        """(parent keys sorted, children in the same order): children of p are a slice."""
        if self._index is None:
            self._index = self._csr(self.parent, self.child)
        return self._index

    def children(self, parent: int) -> np.ndarray:
        keys, vals = self.csr()
        lo, hi = np.searchsorted(keys, [parent, parent + 1])
        return vals[lo:hi]

    def parents(self, child: int) -> np.ndarray:
        if self._reverse is None:
            self._reverse = self._csr(self.child, self.parent)
        keys, vals = self._reverse
        lo, hi = np.searchsorted(keys, [child, child + 1])
        return vals[lo:hi]

    def has_child_mask(self, n_parents: int, child: int) -> np.ndarray:
        """Boolean mask over parents: which parents link to `child`."""
        mask = np.zeros(n_parents, dtype=bool)
        mask[self.parents(child)] = True
        return mask


def type_base(index: int) -> int:
    return ID_FLOOR + index * ID_STRIDE
