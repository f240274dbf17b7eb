"""Columnar store pieces: Links (to-many pairs) and Table append/ids."""

from __future__ import annotations

import numpy as np
import pytest

from creator_sync.sandbox.store import Links, Table


def brute(pairs: set[tuple[int, int]], parent: int) -> list[int]:
    return sorted(c for p, c in pairs if p == parent)


@pytest.mark.parametrize("presorted", [True, False])
def test_links_children_parents_add_remove(presorted):
    rng = np.random.default_rng(1)
    raw = {(int(p), int(c)) for p, c in zip(rng.integers(0, 50, 400), rng.integers(0, 30, 400),
                                           strict=True)}
    pairs = sorted(raw) if presorted else list(raw)
    links = Links()
    links.set(np.asarray([p for p, _ in pairs]), np.asarray([c for _, c in pairs]))
    for parent in range(50):
        assert links.children(parent).tolist() == brute(raw, parent)
    assert sorted(links.parents(7).tolist()) == sorted(p for p, c in raw if c == 7)
    new = next((p, c) for p in range(50) for c in range(30) if (p, c) not in raw)
    assert links.add(*new) and not links.add(*new)
    raw.add(new)
    gone = sorted(raw)[0]
    assert links.remove(*gone) and not links.remove(*gone)
    raw.discard(gone)
    for parent in range(50):
        assert links.children(parent).tolist() == brute(raw, parent)
    mask = links.has_child_mask(50, 7)
    assert np.flatnonzero(mask).tolist() == sorted({p for p, c in raw if c == 7})


def test_table_append_ids_and_lookup():
    table = Table(type="things", id_base=2_300_000_000)
    table.set_columns({"a": np.arange(3, dtype=np.int64), "b": np.zeros(3, bool)})
    version = table.version
    rows = table.append({"a": [7, 8], "b": [True, False]})
    assert rows.tolist() == [3, 4] and table.n == 5 and table.version > version
    assert table.ids(rows) == ["2300000003", "2300000004"]
    assert table.row_of("2300000004") == 4
    assert table.row_of("2300000005") is None and table.row_of("abc") is None
    with pytest.raises(ValueError, match="missing columns"):
        table.append({"a": [1]})
