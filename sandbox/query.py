"""The list query engine: parse JSON:API parameters, filter, sort, page, build links and meta.

Sorting uses precomputed stable orders per (attribute, direction) cached on the table version;
filters are numpy masks. Nothing here knows about HTTP.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from urllib.parse import quote

import numpy as np

from creator_sync.sandbox.collections import Collection
from creator_sync.sandbox.dataset import Store
from creator_sync.sandbox.errors import bad_param
from creator_sync.sandbox.filters import NULL_INT
from creator_sync.sandbox.options import DEFAULT_BRAND
from creator_sync.sandbox.schema import (
    ATTR_INDEX,
    DETAIL_ATTRS,
    ENUM,
    MONEY,
    NINT,
    PAYOUTS,
    REL_INDEX,
    TIME,
    public_type,
)
from creator_sync.sandbox.store import NULL

FAMILY = re.compile(r"^(page|filter|fields)\[([^\]]*)\](\[\])?$")  # `[]`: an array filter


@dataclass
class ListParams:
    number: int = 1
    size: int = 25
    sort: str | None = None
    filters: dict[str, str] = field(default_factory=dict)
    fields: dict[str, set[str]] = field(default_factory=dict)
    include: list[str] = field(default_factory=list)
    pairs: list[tuple[str, str]] = field(default_factory=list)  # as given, for links


def parse_params(pairs: list[tuple[str, str]], *, default_size: int, max_size: int,
                 page_size_allowed: bool = True, allow_sort: bool = True,
                 allow_include: bool = False, allow_page: bool = True) -> ListParams:
    """Validate query parameters; unknown parameters are a 400 naming the parameter."""
    out = ListParams(size=default_size, pairs=pairs)
    for key, value in pairs:
        m = FAMILY.match(key)
        if key == "sort" and allow_sort:
            out.sort = value
        elif key == "include" and allow_include:
            out.include = value.split(",")
        elif m and m.group(1) == "page" and allow_page:
            name = m.group(2)
            if name == "number":
                out.number = _positive(key, value)
            elif name == "size" and page_size_allowed:
                size = _positive(key, value)
                if size > max_size:
                    raise bad_param(key, f"{key} must be at most {max_size}, got {size}")
                out.size = size
            elif name == "size":
                raise bad_param(key, "this collection accepts only page[number]; "
                                     "page[size] is not supported")
            else:
                raise bad_param(key, f"unknown page parameter {key}")
        elif m and m.group(1) == "filter" and m.group(3):  # values of an array filter
            name = m.group(2)
            out.filters[name] = ",".join(v for v in (out.filters.get(name), value) if v)
        elif m and m.group(1) == "filter":
            out.filters[m.group(2)] = value
        elif m and m.group(1) == "fields":
            out.fields[m.group(2)] = {f for f in value.split(",") if f}
        else:
            raise bad_param(key, f"unknown query parameter {key!r}")
    return out


MAX_PAGE_NUMBER = 2**31 - 1


def _positive(key: str, value: str) -> int:
    if not value.isdigit() or not 1 <= int(value) <= MAX_PAGE_NUMBER:
        raise bad_param(key, f"{key} must be an integer from 1 to {MAX_PAGE_NUMBER}, "
                             f"got {value[:40]!r}")
    return int(value)


def internal_fields(params: ListParams, brand: str) -> None:
    """Key `params.fields` by internal type: `fields[<brand>_payments_payouts]` names the
    payouts; the internal name `payouts` is no public type (ignored like any absent type)."""
    public = public_type(PAYOUTS, brand)
    params.fields = {(PAYOUTS if name == public else f"?{name}" if name == PAYOUTS else name):
                     names for name, names in params.fields.items()}


def check_fields(params: ListParams, allowed_types: set[str], brand: str = DEFAULT_BRAND,
                 detail: bool = False) -> None:
    """Unknown field names of a type in the response are a 400; sparse parameters for types
    not in the response are ignored (spec 4.4). `detail`: a single read, whose type may show
    more attributes than its list (`DETAIL_ATTRS`)."""
    for type_name, names in params.fields.items():
        key = f"fields[{public_type(type_name, brand)}]"
        if type_name not in allowed_types:
            continue
        known = set(ATTR_INDEX[type_name]) | set(REL_INDEX[type_name])
        if detail:
            known |= set(DETAIL_ATTRS.get(type_name, ()))
        unknown = sorted(names - known)
        if unknown:
            raise bad_param(key, f"{key}: unknown field(s) {', '.join(unknown)} of "
                                 f"{public_type(type_name, brand)}")


def check_includes(params: ListParams, allowed: tuple[str, ...]) -> None:
    for path in params.include:
        if path not in allowed:
            raise bad_param("include", f"include {path!r} is not supported here; "
                                       f"allowed: {', '.join(allowed) or 'none'}")


def included_types(type_name: str, paths: list[str]) -> set[str]:
    types = {type_name}
    for path in paths:
        current = type_name
        for name in path.split("."):
            current = REL_INDEX[current][name].type
            types.add(current)
    return types


# ---- sorting ---------------------------------------------------------------------------------

def sort_key(store: Store, type_name: str, attr_name: str) -> tuple[np.ndarray, np.ndarray]:
    """(numeric key, null mask) for an attribute; strings become their lexicographic rank."""
    table = store.tables[type_name]
    attr = ATTR_INDEX[type_name].get(attr_name)
    if attr is None:  # listed as sortable but not an attribute (contact_tags `email`): no-op
        return np.zeros(table.n, np.int64), np.zeros(table.n, bool)
    if attr.column in table.sort_keys:
        key = table.sort_keys[attr.column]()
        return key, np.zeros(len(key), bool)
    raw = table.column(attr.column)
    if attr.kind == TIME:
        return raw, raw == NULL
    if attr.kind == NINT:
        return raw, raw == NULL_INT
    if attr.kind == MONEY:
        return raw, np.zeros(len(raw), bool)
    if attr.kind == ENUM:
        codes = raw.astype(np.int64)
        labels = np.asarray(attr.labels, dtype=object)
        rank = np.argsort(np.argsort(labels.astype(str), kind="stable"), kind="stable")
        nulls = codes < 0
        return np.where(nulls, 0, rank[np.maximum(codes, 0)]), nulls
    if raw.dtype != object:
        return raw.astype(np.float64) if raw.dtype.kind == "f" else raw.astype(np.int64), \
            np.zeros(len(raw), bool)
    values = raw.tolist()
    nulls = np.asarray([v is None for v in values], dtype=bool)
    if all(isinstance(v, (int, float, bool)) for v in values if v is not None):
        return np.asarray([0 if v is None else v for v in values], np.float64), nulls
    texts = np.asarray(["" if v is None else str(v) for v in values], dtype=np.str_)
    _, inverse = np.unique(texts, return_inverse=True)
    return inverse.astype(np.int64), nulls


def sorted_rows(store: Store, type_name: str, attr_name: str, descending: bool) -> np.ndarray:
    """Row order: ascending puts nulls last, descending nulls first; ties by ascending id."""
    table = store.tables[type_name]

    def build() -> np.ndarray:
        key, nulls = sort_key(store, type_name, attr_name)
        key = np.where(nulls, 0, key)
        rows = np.arange(table.n)
        if descending:
            return np.lexsort((rows, -key, ~nulls))
        return np.lexsort((rows, key, nulls))

    return table.cached(("order", attr_name, descending), build)  # type: ignore[return-value]


def parse_sort(collection: Collection, value: str) -> tuple[str, bool]:
    if not collection.sorts:
        raise bad_param("sort", f"{collection.path} cannot be sorted")
    descending = value.startswith("-")
    name = value[1:] if descending else value
    if "," in value or name not in collection.sorts:
        raise bad_param("sort", f"cannot sort {collection.path} by {value!r}; sortable: "
                                f"{', '.join(collection.sorts)} (prefix - for descending)")
    return name, descending


# ---- running a list query --------------------------------------------------------------------

@dataclass
class Page:
    rows: np.ndarray
    total: int
    number: int
    size: int

    @property
    def pages(self) -> int:
        return math.ceil(self.total / self.size) if self.total else 0


def require_site(collection: Collection, params: ListParams, site_count: int) -> None:
    """The 400 of a read without the `filter[site_id]` its collection authorises by (the
    list, and the payout detail as the list: addendum A8)."""
    needs_site = collection.site_rule == "required" or (
        collection.site_rule == "multi" and site_count > 1)
    if needs_site and "site_id" not in params.filters:
        why = ("is required" if collection.site_rule == "required"
               else "is required when the account has more than one site")
        raise bad_param("filter[site_id]", f"filter[site_id] {why} on {collection.path}")


def run_list(store: Store, collection: Collection, params: ListParams, site_count: int) -> Page:
    table = store.tables[collection.type]
    unknown = sorted(set(params.filters) - set(collection.filters))
    if unknown:
        key = f"filter[{unknown[0]}]"
        raise bad_param(key, f"unknown filter {key} on {collection.path}; known: "
                             f"{', '.join(sorted(collection.filters)) or 'none'}")
    require_site(collection, params, site_count)
    wanted = params.sort or collection.default_sort
    sort = parse_sort(collection, wanted) if wanted else None
    key = ("select", collection.path, tuple(sorted(params.filters.items())), sort)
    selected = table._cache.get(key)
    if selected is None:
        mask = collection.listed(store).copy() if collection.listed else np.ones(table.n, bool)
        for name, value in params.filters.items():
            mask &= collection.filters[name](store, value, f"filter[{name}]")
        if sort:
            order = sorted_rows(store, collection.type, sort[0], sort[1])
            selected = order[mask[order]]
        else:
            selected = np.flatnonzero(mask)
        # the filters of the next page are the same: keep a few selections per table version
        selections = [k for k in table._cache if isinstance(k, tuple) and k[:1] == ("select",)]
        for old in selections[: max(0, len(selections) - 31)]:
            del table._cache[old]
        table._cache[key] = selected
    start = (params.number - 1) * params.size
    return Page(selected[start:start + params.size], len(selected), params.number, params.size)


def page_links(url_base: str, path: str, params: ListParams, page: Page) -> dict:
    """self/first/prev/next/last as absolute URLs; prev and next are null at the ends."""
    last = max(page.pages, 1)
    rest = [(k, v) for k, v in params.pairs if k != "page[number]"]

    def url(number: int) -> str:
        items = [*rest, ("page[number]", str(number))]
        query = "&".join(f"{quote(k, safe='[]')}={quote(v, safe=',-:')}" for k, v in items)
        return f"{url_base}/{path}?{query}"

    return {
        "self": url(page.number),
        "first": url(1),
        "prev": url(page.number - 1) if 1 < page.number <= last + 1 else None,
        "next": url(page.number + 1) if page.number < last else None,
        "last": url(last),
    }


def page_meta(shape: str, page: Page, count: int) -> dict:
    if shape == "purchases":
        return {"count": count, "total_count": page.total, "total_pages": page.pages}
    if shape == "payouts":
        last = max(page.pages, 1)
        return {"total": page.total, "pagination": {
            "current": page.number, "first": 1,
            "prev": page.number - 1 if 1 < page.number <= last + 1 else None,
            "next": page.number + 1 if page.number < last else None,
            "last": last, "records": count}}
    return {"total_pages": page.pages, "total_count": page.total, "current_page": page.number}
