"""Query engine: sort order (stable, nulls), paging, links and meta shapes, parameter errors."""

from __future__ import annotations

import numpy as np
import pytest

from creator_sync.sandbox import virtuals
from creator_sync.sandbox.collections import COLLECTIONS
from creator_sync.sandbox.errors import ApiError
from creator_sync.sandbox.generate import generate
from creator_sync.sandbox.options import parse_now
from creator_sync.sandbox.query import (
    Page,
    page_links,
    page_meta,
    parse_params,
    run_list,
    sorted_rows,
)
from creator_sync.sandbox.store import NULL


@pytest.fixture(scope="module")
def store():
    built = generate(42, "demo", 2, parse_now("2026-03-01T12:00:00Z"))
    virtuals.install(built)
    return built


def test_sort_is_stable_on_id_and_puts_nulls_last_ascending(store):
    order = sorted_rows(store, "customers", "last_request_at", descending=False)
    values = store.tables["customers"].cols["last_request_at"][order]
    nulls = values == NULL
    assert nulls.any()
    first_null = int(np.argmax(nulls))
    assert nulls[first_null:].all(), "nulls come last when ascending"
    present = values[:first_null]
    assert np.all(np.diff(present) >= 0)
    ties = np.flatnonzero(np.diff(present) == 0)
    assert np.all(order[ties] < order[ties + 1]), "ties by ascending id"
    desc = sorted_rows(store, "customers", "last_request_at", descending=True)
    assert (store.tables["customers"].cols["last_request_at"][desc[: nulls.sum()]] == NULL).all()


def test_string_sort_matches_python_sorted(store):
    order = sorted_rows(store, "contacts", "name", descending=False)
    names = store.tables["contacts"].values("name", order)
    assert names == sorted(names)
    rows = np.arange(store.tables["contacts"].n)
    expected = sorted(rows.tolist(), key=lambda r: (names_of(store, r), r))
    assert order.tolist() == expected


def names_of(store, row: int) -> str:
    return store.tables["contacts"].values("name", np.asarray([row]))[0]


def test_filters_combine_and_pages_slice(store):
    collection = COLLECTIONS["purchases"]
    site = store.tables["sites"].id_of(1)
    pairs = [("filter[site_id]", site), ("filter[active]", "true"), ("page[size]", "7"),
             ("page[number]", "3")]
    params = parse_params(pairs, default_size=25, max_size=100)
    page = run_list(store, collection, params, 2)
    cols = store.tables["purchases"].cols
    expected = np.flatnonzero((cols["site"] == 1) & (cols["deactivated_at"] == NULL))
    assert page.total == len(expected)
    assert page.rows.tolist() == expected[14:21].tolist()


@pytest.mark.parametrize(("pairs", "parameter"), [
    ([("page[size]", "101")], "page[size]"),
    ([("page[size]", "0")], "page[size]"),
    ([("page[number]", "x")], "page[number]"),
    ([("page[offset]", "1")], "page[offset]"),
    ([("bogus", "1")], "bogus"),
])
def test_bad_parameters_name_the_parameter(pairs, parameter):
    with pytest.raises(ApiError) as caught:
        parse_params(pairs, default_size=25, max_size=100)
    assert caught.value.status == 400
    assert caught.value.parameter == parameter


def test_links_and_meta_at_the_ends():
    page = Page(np.arange(5), total=12, number=3, size=5)
    params = parse_params([("page[size]", "5"), ("page[number]", "3")], default_size=25,
                          max_size=100)
    links = page_links("http://h/v1", "contacts", params, page)
    assert links["next"] is None and links["prev"].endswith("page[number]=2")
    assert links["last"] == links["self"]
    assert page_meta("default", page, 2) == {"total_pages": 3, "total_count": 12,
                                             "current_page": 3}
    assert page_meta("purchases", page, 2) == {"count": 2, "total_count": 12, "total_pages": 3}
    assert page_meta("payouts", page, 2)["pagination"] == {
        "current": 3, "first": 1, "prev": 2, "next": None, "last": 3, "records": 2}
