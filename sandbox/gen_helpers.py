"""Small array helpers shared by the generator modules."""

from __future__ import annotations

import numpy as np


def uniq(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values (numpy 2's hashing `np.unique` is several times slower here)."""
    ordered = np.sort(values, kind="stable")
    if not len(ordered):
        return ordered
    keep = np.empty(len(ordered), bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


def obj(values: list) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def i64(values) -> np.ndarray:
    return np.asarray(values, dtype=np.int64)
