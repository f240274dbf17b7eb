"""Filter builders: each returns `fn(store, value, parameter) -> bool mask over the table`.

Attribute filters (`<attribute>_<suffix>`) are generated from the schema; the contact and
customer filters are in `people_filters`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from decimal import Decimal, InvalidOperation

import numpy as np

from creator_sync.sandbox.dataset import DAY, Store
from creator_sync.sandbox.errors import bad_param
from creator_sync.sandbox.schema import ATTR_INDEX, ENUM, MONEY, NINT, TIME, site_of
from creator_sync.sandbox.store import NULL

Filter = Callable[[Store, str, str], np.ndarray]
NULL_INT = np.iinfo(np.int64).min
TEXT_SUFFIXES = {"cont", "i_cont", "not_cont", "start", "end"}


# ---- value parsing ---------------------------------------------------------------------------

def parse_bool(value: str, parameter: str) -> bool:
    if value.lower() in ("true", "1"):
        return True
    if value.lower() in ("false", "0"):
        return False
    raise bad_param(parameter, f"{parameter} must be true or false, got {value!r}")


def parse_int(value: str, parameter: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise bad_param(parameter, f"{parameter} must be an integer, got {value!r}") from None


def parse_time(value: str, parameter: str, end_of_day: bool = False) -> int:
    """ISO 8601 date or date-time (naive means UTC) -> epoch seconds."""
    text = value.strip()
    try:
        if len(text) == 10:
            day = dt.date.fromisoformat(text)
            moment = dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)
            return int(moment.timestamp()) + (DAY - 1 if end_of_day else 0)
        moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise bad_param(parameter, f"{parameter} must be an ISO 8601 date or date-time, "
                                   f"got {value!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return int(moment.timestamp())


def parse_cents(value: str, parameter: str) -> int:
    try:
        amount = Decimal(value)
    except InvalidOperation:
        raise bad_param(parameter, f"{parameter} must be a decimal amount, got {value!r}") from None
    if not amount.is_finite():
        raise bad_param(parameter, f"{parameter} must be a finite amount, got {value!r}")
    return int((amount * 100).to_integral_value())


def parse_id(store: Store, type_name: str, value: str, parameter: str) -> int:
    """Row of an id filter value; -1 when well-formed but unknown (matches nothing)."""
    if not value.isdigit():
        raise bad_param(parameter, f"{parameter} must be a {type_name} id (digits), got {value!r}")
    row = store.tables[type_name].row_of(value)
    return NULL if row is None else row


# ---- comparable columns ----------------------------------------------------------------------

def numeric(store: Store, type_name: str, attr_name: str) -> tuple[np.ndarray, np.ndarray]:
    """(values, null mask) of a numeric/time attribute."""
    attr = ATTR_INDEX[type_name][attr_name]
    values = store.tables[type_name].column(attr.column)
    if attr.kind == TIME:
        return values, values == NULL
    if attr.kind == NINT:
        return values, values == NULL_INT
    if values.dtype == object:
        nulls = np.asarray([v is None for v in values.tolist()], dtype=bool)
        return np.where(nulls, 0, values).astype(np.int64), nulls
    return values, np.zeros(len(values), dtype=bool)


def texts(store: Store, type_name: str, attr_name: str, lower: bool) -> tuple[np.ndarray, np.ndarray]:
    """(unicode array, null mask) of an attribute's text, cached per table version."""
    table = store.tables[type_name]
    attr = ATTR_INDEX[type_name][attr_name]

    def build() -> tuple[np.ndarray, np.ndarray]:
        raw = table.column(attr.column)
        if attr.kind == ENUM:
            labels = np.asarray([*list(attr.labels), ""], dtype=object)
            codes = raw.astype(np.int64)
            nulls = codes < 0
            vals = labels[np.where(nulls, len(attr.labels), codes)].tolist()
        elif attr.kind == TIME:
            from creator_sync.sandbox.jsonapi import iso

            nulls = raw == NULL
            vals = ["" if v == NULL else iso(v) for v in raw.tolist()]
        elif attr.kind == MONEY:
            from creator_sync.sandbox.virtuals import cents_text

            nulls = np.zeros(len(raw), bool)
            vals = [cents_text(v) for v in raw.tolist()]
        else:
            vals = raw.tolist()
            nulls = np.asarray([v is None for v in vals], dtype=bool)
            vals = ["" if v is None else str(v) for v in vals]
        if lower:
            vals = [v.lower() for v in vals]
        return np.asarray(vals, dtype=np.str_) if vals else np.empty(0, np.str_), nulls

    return table.cached(("text", attr_name, lower), build)  # type: ignore[return-value]


def text_match(arr: np.ndarray, op: str, needle: str) -> np.ndarray:
    if op in ("cont", "i_cont", "not_cont"):
        hit = np.strings.find(arr, needle) >= 0
        return ~hit if op == "not_cont" else hit
    if op == "start":
        return np.strings.startswith(arr, needle)
    if op == "end":
        return np.strings.endswith(arr, needle)
    raise ValueError(op)


def attribute_filter(type_name: str, attr_name: str, suffix: str) -> Filter:
    """`filter[<attribute>_<suffix>]` with ransack meanings; text matching ignores case.
    Whether the attribute compares as a number, a boolean or text follows its stored column."""
    attr = ATTR_INDEX[type_name][attr_name]

    def run(store: Store, value: str, parameter: str) -> np.ndarray:
        if suffix in TEXT_SUFFIXES:
            arr, nulls = texts(store, type_name, attr_name, lower=True)
            return text_match(arr, suffix, value.lower()) & (~nulls if suffix != "not_cont"
                                                             else np.ones(len(arr), bool))
        kind = _value_kind(store, type_name, attr)
        if suffix == "null":
            want = parse_bool(value, parameter)
            nulls = (texts(store, type_name, attr_name, lower=False)[1] if kind == "text"
                     else numeric(store, type_name, attr_name)[1])
            return nulls if want else ~nulls
        if kind == "text":
            arr, nulls = texts(store, type_name, attr_name, lower=False)
            if suffix in ("in", "not_in"):
                hit = np.isin(arr, [v for v in value.split(",") if v])
                return (hit if suffix == "in" else ~hit) & ~nulls
            return compare(arr, suffix, value) & ~nulls
        vals, nulls = numeric(store, type_name, attr_name)
        if suffix in ("in", "not_in"):
            wanted = [_parse_value(kind, v, parameter) for v in value.split(",") if v]
            hit = np.isin(vals, wanted)
            return (hit if suffix == "in" else ~hit) & ~nulls
        return compare(vals, suffix, _parse_value(kind, value, parameter)) & ~nulls

    return run


def _value_kind(store: Store, type_name: str, attr) -> str:
    """time | int | float | bool | text, from the attribute kind and the stored dtype."""
    from creator_sync.sandbox.schema import DECIMAL

    if attr.kind == TIME:
        return "time"
    if attr.kind in (NINT, DECIMAL, MONEY):
        return "int"
    if attr.kind == ENUM:
        return "text"
    column = store.tables[type_name].column(attr.column)
    if column.dtype == object:  # virtual: compare as its values are (an id is an integer)
        sample = next((v for v in column if v is not None), None)
        if isinstance(sample, int) and not isinstance(sample, bool):
            return "int"
        return "text"
    return {"b": "bool", "f": "float"}.get(column.dtype.kind, "int")


def _parse_value(kind: str, value: str, parameter: str) -> int | float | bool:
    if kind == "time":
        return parse_time(value, parameter)
    if kind == "bool":
        return parse_bool(value, parameter)
    if kind == "float":
        try:
            return float(value)
        except ValueError:
            raise bad_param(parameter, f"{parameter} must be a number, got {value!r}") from None
    return parse_int(value, parameter)


def compare(vals: np.ndarray, suffix: str, target) -> np.ndarray:
    if suffix == "eq":
        return vals == target
    if suffix == "not_eq":
        return vals != target
    if suffix == "gt":
        return vals > target
    if suffix in ("gte", "gteq"):
        return vals >= target
    if suffix == "lt":
        return vals < target
    if suffix in ("lte", "lteq"):
        return vals <= target
    raise ValueError(suffix)


def attribute_filters(type_name: str, attrs: tuple[str, ...],
                      suffixes: tuple[str, ...]) -> dict[str, Filter]:
    return {f"{a}_{s}": attribute_filter(type_name, a, s) for a in attrs for s in suffixes}


# ---- site and reference filters --------------------------------------------------------------

def site_filter(type_name: str) -> Filter:
    def run(store: Store, value: str, parameter: str) -> np.ndarray:
        site = parse_id(store, "sites", value, parameter)
        return site_of(store, type_name) == site

    return run


def ref_filter(type_name: str, column: str, target: str) -> Filter:
    def run(store: Store, value: str, parameter: str) -> np.ndarray:
        row = parse_id(store, target, value, parameter)
        return store.tables[type_name].cols[column] == row

    return run


def bool_column_filter(type_name: str, predicate: Callable[[Store], np.ndarray]) -> Filter:
    def run(store: Store, value: str, parameter: str) -> np.ndarray:
        mask = predicate(store)
        return mask if parse_bool(value, parameter) else ~mask

    return run


def date_range_filter(type_name: str, column: str, end: bool) -> Filter:
    """start_date / end_date: inclusive; a bare date as end means the whole day."""

    def run(store: Store, value: str, parameter: str) -> np.ndarray:
        bound = parse_time(value, parameter, end_of_day=end)
        vals = store.tables[type_name].cols[column]
        return vals <= bound if end else vals >= bound

    return run
