"""Code-derived sort keys order exactly like the strings they stand for."""

from __future__ import annotations

import numpy as np
import pytest

from creator_sync.sandbox import virtuals
from creator_sync.sandbox.generate import generate
from creator_sync.sandbox.options import parse_now


@pytest.mark.parametrize(("type_name", "column"), [
    ("contacts", "name"), ("customers", "name"), ("form_submissions", "name"),
    ("purchases", "cardholder_name"), ("contacts", "email"), ("customers", "email"),
    ("form_submissions", "email"),
])
def test_sort_key_agrees_with_string_order(type_name, column):
    store = generate(13, "demo", 2, parse_now("2026-03-01T12:00:00Z"))
    virtuals.install(store)
    table = store.tables[type_name]
    rows = np.arange(table.n)
    key = table.sort_keys[column]()
    by_key = np.lexsort((rows, key)).tolist()
    strings = table.values(column, rows)
    assert by_key == sorted(rows.tolist(), key=lambda r: (strings[r], r))


def test_digit_key_orders_like_strings_with_a_high_terminator():
    from creator_sync.sandbox.virtuals import _digits_key

    rows = np.asarray([0, 1, 9, 10, 11, 100, 99, 1000, 5, 123456789, 12, 120])
    key = _digits_key(rows)
    assert [int(r) for r in rows[np.argsort(key)]] == sorted(
        rows.tolist(), key=lambda r: str(r) + "@")
