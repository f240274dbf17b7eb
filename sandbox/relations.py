"""Resolve relationships for many rows at once (vectorised CSR lookups).

To-one relationships are a row-reference column; to-many ones are a slice of a sorted index
(`Links.csr()` or a foreign-key index), so a page of 100 records costs two `searchsorted` calls
per relationship instead of a Python call per record.
"""

from __future__ import annotations

import numpy as np

from creator_sync.sandbox.bundles import paid_csr
from creator_sync.sandbox.dataset import Store
from creator_sync.sandbox.schema import Rel
from creator_sync.sandbox.store import NULL


def to_one(store: Store, type_name: str, rel: Rel, rows: np.ndarray) -> np.ndarray:
    return store.tables[type_name].cols[rel.source[1]][rows]


def to_many(store: Store, type_name: str, rel: Rel,
            rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(children, lo, hi): the children of rows[k] are children[lo[k]:hi[k]]."""
    kind = rel.source[0]
    if kind == "link":
        keys, vals = store.link(rel.source[1]).csr()
        parents = rows
    elif kind == "fk":
        keys, vals = store.fk_index(rel.source[1], rel.source[2])
        parents = rows
    elif kind == "paid":  # transactions <-> purchases, many-to-many (bundles, A8)
        keys, vals = paid_csr(store, type_name)
        parents = rows
    elif kind == "via":
        parents = store.tables[type_name].cols[rel.source[1]][rows]
        keys, vals = store.link(rel.source[2]).csr()
    else:
        raise ValueError(f"{type_name}.{rel.name}: unknown source {rel.source}")
    lo = np.searchsorted(keys, parents, "left")
    hi = np.searchsorted(keys, parents, "right")
    return vals, lo, hi


def related(store: Store, type_name: str, rel: Rel, row: int) -> list[int]:
    """Rows related to one record (for `include`), deleted ones left out (deletes.py)."""
    rows = np.asarray([row], dtype=np.int64)
    if not rel.many:
        ref = int(to_one(store, type_name, rel, rows)[0])
        out = [] if ref == NULL else [ref]
    else:
        vals, lo, hi = to_many(store, type_name, rel, rows)
        out = vals[lo[0]:hi[0]].tolist()
    gone = store.deleted.get(rel.type)
    return [r for r in out if r not in gone] if gone else out
