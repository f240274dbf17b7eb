"""JSON:API documents -> typed relational rows and arrow tables (docs/architecture.md).

Pure functions with no I/O, so the pull sync and the webhook loader write identical rows:

    rows = normalize_resources(doc["data"] + doc.get("included", []), site_id=..., extracted_at=...)
    tables = rows_to_arrow(rows)            # table name -> pyarrow.Table with declared types
    hints = table_hints("contacts")         # dlt hints: primary/merge key, disposition, columns

Link tables are replaced per parent: dlt's `delete-insert` merge with `merge_key` = the parent
column deletes every stored link of each parent the load carries, then inserts the new ones
(`table_hints`). A parent whose to-many relationship carries an *empty* `data` list gets one
marker row (child column `LINK_MARKER`, ""), so that the merge still deletes its old links; the
marker has `EMPTY_PARENT` true, dlt's `hard_delete` column, so dlt never inserts it. Line tables
(an array attribute of plain objects, such as a payout detail's `transactions`, see
`settings.LineTable`) work the same way: keyed by parent and `line_number`, replaced per parent,
an empty array written as one marker row with `line_number` 0 (`child_marker`). A line
array still to be parsed (`linestream.LineStream`, a payout detail read as a stream) is read
whole here, or, for a caller that asks (`streamed=`), handed back as `StreamedLines`, whose
rows come in parts (`StreamedLines.parts`).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import operator
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any, Literal

import orjson

from .errors import NormalizationError
from .linestream import LineStream
from .redact import redact_target_url
from .settings import (
    DECIMAL_PRECISION,
    LINE_KEY,
    LINE_TABLES,
    ColumnType,
    LineTable,
    column_type,
    link_table,
    pii_columns,
    type_info,
)

if TYPE_CHECKING:
    import pyarrow as pa

PiiMode = Literal["hash", "drop"] | None
LINK_MARKER = ""
LINE_MARKER = 0  # line numbers start at 1
# true on a marker row only: dlt's `hard_delete` column of link and line tables (the merge
# deletes the parent's stored rows and inserts no marker), null in every stored row
EMPTY_PARENT = "_empty_parent"
_RESERVED = frozenset({"id", "site_id", "_extracted_at", "_is_deleted"})
_PARENTS: Any = ("__parents__",)  # bookkeeping key inside a link bucket
EXTRACTED_AT = "_extracted_at"
META_COLUMNS: dict[str, ColumnType] = {"site_id": "text", EXTRACTED_AT: "timestamp"}
_QUANT = Decimal(1).scaleb(-DECIMAL_PRECISION[1])
_MAX_DECIMAL = Decimal(10) ** (DECIMAL_PRECISION[0] - DECIMAL_PRECISION[1])
_INT_RE = re.compile(r"^[+-]?\d+$")
_MIN_BIGINT, _MAX_BIGINT = -(2**63), 2**63


# ------------------------------------------------------------------ context for errors
class _Where:
    """Error location (resource, URL) threaded through conversions without globals."""

    __slots__ = ("resource", "url")

    def __init__(self, resource: str | None, url: str | None) -> None:
        self.resource = resource
        self.url = url

    def fail(self, message: str, record_id: str | None, field: str | None) -> NormalizationError:
        return NormalizationError(
            message, resource=self.resource, url=self.url, record_id=record_id, field=field
        )


# ------------------------------------------------------------------ value conversion

def _preview(value: Any, limit: int = 40) -> str:
    """A short, safe rendering of a bad value for an error message."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} chars)"

def parse_timestamp(value: Any) -> datetime | None:
    """ISO 8601 with any offset (or `Z`, or a bare date) -> aware UTC datetime."""
    if type(value) is str and value:  # the common case: one C call, already UTC ("Z")
        dt = datetime.fromisoformat(value.strip())
        if dt.tzinfo is UTC:
            return dt
    elif value is None or value == "":
        return None
    elif isinstance(value, datetime):
        dt = value
    elif isinstance(value, date):
        dt = datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        dt = datetime.fromisoformat(value.strip())
    else:
        raise ValueError(f"expected an ISO 8601 string, got {type(value).__name__}")
    if dt.tzinfo is None:
        return dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC)


def to_decimal(value: Any) -> Decimal | None:
    """Exact major-unit amount. Floats go through their shortest repr, never binary arithmetic."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError("expected a number, got a boolean")
    if isinstance(value, Decimal):
        dec = value
    elif isinstance(value, int):
        dec = Decimal(value)
    elif isinstance(value, float):
        dec = Decimal(repr(value))
    elif isinstance(value, str):
        dec = Decimal(value.strip())
    else:
        raise ValueError(f"expected a decimal number, got {type(value).__name__}")
    if not dec.is_finite():
        raise ValueError(f"not a finite number: {value!r}")
    if abs(dec) >= _MAX_DECIMAL:
        raise ValueError(f"number too large for DECIMAL{DECIMAL_PRECISION}: {value!r}")
    quantized = dec.quantize(_QUANT)
    if quantized != dec:
        raise ValueError(f"more than {DECIMAL_PRECISION[1]} decimal places: {value!r}")
    return quantized


def to_bigint(value: Any) -> int | None:
    """Integers only: an integral float or a string of digits is accepted, 12.5 is refused."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError("expected an integer, got a boolean")
    if isinstance(value, int):
        result = value
    elif (isinstance(value, float) and value.is_integer()) or (isinstance(value, Decimal) and value == value.to_integral_value()):
        result = int(value)
    elif isinstance(value, str) and _INT_RE.match(value.strip()):
        result = int(value.strip())
    else:
        raise ValueError(f"expected an integer, got {value!r}")
    if not _MIN_BIGINT <= result < _MAX_BIGINT:
        raise ValueError(f"integer out of BIGINT range: {value!r}")
    return result


def to_bool(value: Any) -> bool | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0"):
        return value.strip().lower() in ("true", "1")
    raise ValueError(f"expected a boolean, got {value!r}")


def to_double(value: Any) -> float | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError("expected a number, got a boolean")
    if isinstance(value, int | float | Decimal):
        return float(value)
    if isinstance(value, str):
        return float(value)
    raise ValueError(f"expected a number, got {type(value).__name__}")


def _json_default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    raise TypeError


def to_json_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return orjson.dumps(value, default=_json_default, option=orjson.OPT_SORT_KEYS).decode()


def to_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return to_json_text(value)
    return str(value)


CONVERTERS = {
    "text": to_text,
    "bigint": to_bigint,
    "bool": to_bool,
    "timestamp": parse_timestamp,
    "decimal": to_decimal,
    "double": to_double,
    "json": to_json_text,
}


# column_type and link_table are pure functions of the facts table; a record calls them once per
# attribute and relationship, so they are remembered (bounded: drifted names are few)
_column_kind = functools.lru_cache(maxsize=4096)(column_type)
_link_table = functools.lru_cache(maxsize=4096)(link_table)


def _observed_type(name: str, value: Any) -> ColumnType:
    """Type for an attribute the contract does not declare (schema drift)."""
    declared = _column_kind(name)
    if declared != "text":
        return declared
    if isinstance(value, dict | list):
        return "json"
    return "text"


def normal_word(value: str) -> str:
    """A provider, type or status as compared (A8): lower case, spaces and underscores alike
    (`In Transit` -> `in_transit`, `Platform Payments` -> `platform_payments`)."""
    return "_".join(value.strip().lower().replace("_", " ").split())


# ------------------------------------------------------------------ PII
def _pii_normal(column: str, value: str) -> str:
    if "phone" in column or "business_number" in column:
        return "".join(ch for ch in value if ch.isdigit() or ch == "+")
    return " ".join(value.split()).lower()


def apply_pii(row: dict[str, Any], mode: PiiMode, salt: str, table: str | None = None) -> None:
    """Hash (sha256 hex of salt + normalised value) or drop `table`'s PII columns, in place."""
    if mode is None:
        return
    for column in pii_columns(table).intersection(row):
        if mode == "drop":
            del row[column]
            continue
        value = row[column]
        if value is not None:
            digest = hashlib.sha256((salt + _pii_normal(column, str(value))).encode())
            row[column] = digest.hexdigest()


# ------------------------------------------------------------------ resources -> rows
def _record_id(value: Any, where: _Where, jtype: Any) -> str:
    if value is None or value == "" or isinstance(value, bool | dict | list):
        raise where.fail(f"record of type {jtype!r} has no usable id ({value!r})", None, "id")
    return str(value)


_TEXT_VALUES = frozenset({str, type(None)})  # text-column values kept as they are
# what `_attribute_plan` returns: typed (name, kind) in attribute order, a getter of the text
# attributes' values, and the line array attribute if it is among them
_Plan = tuple[tuple[tuple[str, ColumnType], ...], Callable[[Any], tuple[Any, ...]] | None, str | None]
_FAILED: Any = object()  # `_convert_planned` could not convert a value


@functools.lru_cache(maxsize=4096)
def _attribute_plan(names: tuple[str, ...], lines_attribute: str | None) -> _Plan | None:
    """How to convert an attributes object with these keys, in this order (records of a type
    repeat a few key tuples): None where a name needs renaming (`_RESERVED`)."""
    if not _RESERVED.isdisjoint(names):
        return None
    typed: list[tuple[str, ColumnType]] = []
    text: list[str] = []
    for name in names:
        if name == lines_attribute:
            continue
        kind = _column_kind(name)
        (text.append(name) if kind == "text" else typed.append((name, kind)))
    getter: Callable[[Any], tuple[Any, ...]] | None = None
    if len(text) == 1:
        only = text[0]
        getter = lambda attributes: (attributes[only],)  # noqa: E731
    elif text:
        getter = operator.itemgetter(*text)
    return tuple(typed), getter, lines_attribute if lines_attribute in names else None


def _convert_planned(row: dict[str, Any], attributes: dict[str, Any], plan: _Plan) -> Any:
    """`attributes` into `row` by `plan`: copied at once, then the typed values converted;
    returns the line array (None: absent). `_FAILED` (row half done) where a value fails to
    convert or a text column holds a non-string: the caller redoes the record attribute by
    attribute (`_convert_each`), which renders it, or names the failure, exactly as before."""
    typed, text, lines_attribute = plan
    row.update(attributes)
    items = None if lines_attribute is None else row.pop(lines_attribute)
    for name, kind in typed:
        value = row[name]
        if value is None or (kind == "bigint" and type(value) is int and _MIN_BIGINT <= value < _MAX_BIGINT):
            continue  # every converter maps None to None; what to_bigint returns, without the call
        try:
            row[name] = CONVERTERS[kind](value)
        except (ValueError, TypeError, InvalidOperation, OverflowError):
            return _FAILED
    if text is not None and not _TEXT_VALUES.issuperset(map(type, text(attributes))):
        return _FAILED  # a number, bool or object in a text column (rare): the reference path
    return items


def _convert_each(
    row: dict[str, Any], attributes: dict[str, Any], lines_attribute: str | None, rid: str,
    where: _Where,
) -> Any:
    """`attributes` into `row` one by one (the reference path); returns the line array."""
    items: Any = None
    for name, value in attributes.items():
        if name == lines_attribute:
            items = value  # its own table, below
            continue
        if name in _RESERVED:
            name = f"attr_{name}"  # never let an attribute overwrite our keys
        kind = _column_kind(name)
        if kind == "text":
            if value is None or type(value) is str:
                row[name] = value  # the common case, no conversion
                continue
            if isinstance(value, dict | list):
                kind = "json"
        elif value is None:  # every converter maps None to None
            row[name] = None
            continue
        elif kind == "bigint" and type(value) is int and _MIN_BIGINT <= value < _MAX_BIGINT:
            row[name] = value  # what to_bigint returns, without the call
            continue
        try:
            row[name] = CONVERTERS[kind](value)
        except (ValueError, TypeError, InvalidOperation, OverflowError) as exc:
            reason = "not a number" if isinstance(exc, InvalidOperation) else str(exc)
            raise where.fail(f"bad {kind} value {_preview(value)}: {reason}", rid, name) from None
    return items


@functools.lru_cache(maxsize=4096)
def _id_column(relationship: str) -> str:
    """The column of a to-one relationship's id."""
    return f"{relationship}_id"


@dataclass(frozen=True)
class StreamedLines:
    """A record's line array still to be parsed, with what its rows need: its rows come in
    parts (`parts`), each parsed, converted and handed on before the next is parsed."""

    lines: LineTable
    parent: str
    items: LineStream
    site: str | None
    at: datetime
    where: _Where

    def parts(self, size: int | None, pii: PiiMode = None, pii_salt: str = "") -> Iterator[list[dict[str, Any]]]:
        """The line rows, about `size` at a time (None: all at once), numbered as one array;
        an empty array: its marker row."""
        first = 1
        for items in self.items.parts(size):
            rows = list(_line_rows(self.lines, self.parent, items, self.site, self.at, self.where,
                                   {}, first=first).values())
            first += len(items)
            for row in rows:
                apply_pii(row, pii, pii_salt)
            yield rows


def normalize_resource(
    resource: Mapping[str, Any],
    *,
    site_id: str | None,
    extracted_at: datetime,
    links: dict[str, dict[tuple[str, str], dict[str, Any]]],
    where: _Where,
    streamed: list[StreamedLines] | None = None,
) -> tuple[str, dict[str, Any]]:
    """One JSON:API resource object -> (table, row); appends its link rows to `links` (and a
    line array still to be parsed to `streamed`, if given: else its rows to `links` too)."""
    if not isinstance(resource, dict):
        raise where.fail(f"expected a resource object, got {type(resource).__name__}", None, None)
    jtype = resource.get("type")
    if not isinstance(jtype, str) or not jtype:
        rid = resource.get("id")
        raise where.fail("resource has no `type`", None if rid is None else str(rid), "type")
    info = type_info(jtype)
    rid = _record_id(resource.get("id"), where, jtype)
    row: dict[str, Any] = {"id": rid}

    if "attributes" not in resource:
        # merging an attribute-less record would blank the stored row: refuse it
        raise where.fail("record has no `attributes`", rid, "attributes")
    attributes = resource["attributes"] if resource["attributes"] is not None else {}
    if not isinstance(attributes, dict):
        raise where.fail(
            f"record attributes must be an object, got {type(attributes).__name__}", rid, "attributes"
        )
    lines = info.lines
    lines_attribute = lines.attribute if lines is not None else None
    plan = _attribute_plan(tuple(attributes), lines_attribute)
    items = _FAILED if plan is None else _convert_planned(row, attributes, plan)
    if items is _FAILED:  # reserved names, or a value failed to convert: attribute by attribute
        row = {"id": rid}
        items = _convert_each(row, attributes, lines_attribute, rid, where)
    if info.table == "payouts" and isinstance(row.get("status"), str):
        row["status"] = normal_word(row["status"])

    relationships = resource.get("relationships") or {}
    if not isinstance(relationships, dict):
        raise where.fail("`relationships` is not an object", rid, "relationships")
    row_site = site_id
    to_many: list[tuple[str, list[Any]]] = []
    for rel, body in relationships.items():
        if not isinstance(body, dict) or "data" not in body:
            continue  # links-only relationship: leave what we have alone
        data = body["data"]
        if isinstance(data, list):
            to_many.append((rel, data))
        elif data is None:
            row[_id_column(rel)] = None
        elif isinstance(data, dict):
            related = data.get("id")
            row[_id_column(rel)] = None if related is None else str(related)
            if rel == "site" and related is not None:
                row_site = str(related)
        else:
            raise where.fail("relationship `data` is neither object, list nor null", rid, rel)
    if info.table == "sites":
        row_site = rid
    row["site_id"] = row_site
    row["_extracted_at"] = extracted_at
    if info.dimension:
        row["_is_deleted"] = False
    if isinstance(items, LineStream) and lines is not None:
        if streamed is not None:
            streamed.append(StreamedLines(lines, rid, items, row_site, extracted_at, where))
            items = None  # its rows come from the caller, in parts
        else:
            items = items.whole()
    if lines is not None and items is not None:  # absent or null: lines unknown, keep them
        bucket = links.setdefault(lines.table, {})
        bucket.update(_line_rows(lines, rid, items, row_site, extracted_at, where, bucket))

    for rel, items in to_many:
        first = items[0] if items else None
        child_type = first["type"] if type(first) is dict and first.get("type") else next(
            (i.get("type") for i in items if isinstance(i, dict) and i.get("type")), None
        )
        table, parent_col, child_col = _link_table(info.table, rel, child_type)
        bucket = links.setdefault(table, {})
        parents = bucket.setdefault(_PARENTS, set())  # type: ignore[arg-type]
        if rid in parents:  # the parent came twice in one batch: keep only its last links
            for key in [k for k in bucket if k is not _PARENTS and k[0] == rid]:
                del bucket[key]
        parents.add(rid)  # type: ignore[union-attr]
        if not items:
            bucket[(rid, LINK_MARKER)] = {
                **_link_row(parent_col, rid, child_col, LINK_MARKER, row_site, extracted_at),
                EMPTY_PARENT: True}
        for item in items:
            if not isinstance(item, dict) or item.get("id") is None:
                raise where.fail("to-many relationship item has no id", rid, rel)
            child = str(item["id"])
            bucket[(rid, child)] = _link_row(parent_col, rid, child_col, child, row_site, extracted_at)
    return info.table, row


def _line_rows(
    lines: LineTable, parent: str, items: Any, site: str | None, at: datetime, where: _Where,
    bucket: dict[Any, dict[str, Any]], first: int = 1,
) -> dict[Any, dict[str, Any]]:
    """A parent's array of plain objects (or the part of it from line `first` on) ->
    {(parent, n): row}; drops the parent's earlier lines from `bucket` (the parent came twice
    in one batch: its last lines win)."""
    for key in [k for k in bucket if k[0] == parent]:
        del bucket[key]
    base = {lines.parent_column: parent, LINE_KEY: LINE_MARKER, "site_id": site, "_extracted_at": at}
    if not isinstance(items, list):
        raise where.fail(f"`{lines.attribute}` must be an array, got {type(items).__name__}",
                         parent, lines.attribute)
    if not items and first == 1:  # no lines: a marker row, so that the merge still drops the old ones
        return {(parent, LINE_MARKER): {**base, EMPTY_PARENT: True}}
    declared = lines.column_types
    out: dict[Any, dict[str, Any]] = {}
    for number, item in enumerate(items, start=first):
        if not isinstance(item, dict):
            raise where.fail(f"`{lines.attribute}` line {number} is not an object", parent,
                             lines.attribute)
        row = dict(base)
        row[LINE_KEY] = number
        for name, value in item.items():
            if name in row:
                name = f"attr_{name}"  # never let a field overwrite our keys
            kind = declared.get(name) or _observed_type(name, value)
            try:
                row[name] = CONVERTERS[kind](value)
            except (ValueError, TypeError, InvalidOperation, OverflowError) as exc:
                reason = "not a number" if isinstance(exc, InvalidOperation) else str(exc)
                raise where.fail(f"bad {kind} value {_preview(value)} in line {number}: {reason}",
                                 parent, f"{lines.attribute}.{name}") from None
        out[(parent, number)] = row
    return out


def _link_row(
    parent_col: str, parent: str, child_col: str, child: str, site: str | None, at: datetime
) -> dict[str, Any]:
    return {parent_col: parent, child_col: child, "site_id": site, "_extracted_at": at}


# (table, column) -> masking function: values that are credentials must not reach the warehouse
# (the `listen` receiver authenticates deliveries by the secret segment of the hook's URL)
REDACTED_COLUMNS: dict[tuple[str, str], Callable[[Any], Any]] = {
    ("hooks", "target_url"): redact_target_url,
}


_REDACTED_TABLES = frozenset(name for name, _ in REDACTED_COLUMNS)


def _redact(table: str, row: dict[str, Any]) -> None:
    if table not in _REDACTED_TABLES:
        return
    for (name, column), mask in REDACTED_COLUMNS.items():
        if name == table and row.get(column) is not None:
            row[column] = mask(row[column])


def normalize_resources(
    resources: Iterable[Mapping[str, Any]],
    *,
    site_id: str | None,
    extracted_at: datetime | None = None,
    pii: PiiMode = None,
    pii_salt: str = "",
    resource: str | None = None,
    url: str | None = None,
    streamed: list[StreamedLines] | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Primary + included resource objects -> {table: rows}, incl. link tables.

    Records are routed by `type`; a duplicate id within the batch keeps the last occurrence.
    `resource`/`url` only label errors. Raises NormalizationError naming record id and field.
    `streamed`: line arrays still to be parsed (`LineStream`) are appended to it, for the
    caller to read in parts (`StreamedLines.parts`), instead of being read whole here.
    """
    at = extracted_at or datetime.now(UTC)
    where = _Where(resource, url)
    tables: dict[str, dict[str, dict[str, Any]]] = {}
    links: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}
    for item in resources:
        table, row = normalize_resource(item, site_id=site_id, extracted_at=at, links=links,
                                        where=where, streamed=streamed)
        if pii is not None:
            apply_pii(row, pii, pii_salt, table)
        _redact(table, row)
        tables.setdefault(table, {})[row["id"]] = row
    out: dict[str, list[dict[str, Any]]] = {t: list(rows.values()) for t, rows in tables.items()}
    for table, rows in links.items():
        rows.pop(_PARENTS, None)
        link_rows = list(rows.values())
        for row in link_rows:
            apply_pii(row, pii, pii_salt, table)
        out[table] = link_rows
    return out


# ------------------------------------------------------------------ arrow + dlt hints
def _arrow_type(kind: ColumnType) -> pa.DataType:
    import pyarrow as pa

    return {
        "text": pa.string(),
        "bigint": pa.int64(),
        "bool": pa.bool_(),
        "timestamp": pa.timestamp("us", tz="UTC"),
        "decimal": pa.decimal128(*DECIMAL_PRECISION),
        "double": pa.float64(),
        "json": pa.string(),
    }[kind]


@functools.cache
def _known_tables() -> dict[str, Any]:
    from .settings import TYPES

    return {info.table: info for info in TYPES.values()}


def declared_columns(table: str, observed: Iterable[str] = ()) -> dict[str, ColumnType]:
    """Column -> type for a table: contract columns first, then drifted ones, by name."""
    cols: dict[str, ColumnType] = {}
    line = LINE_TABLES.get(table)
    if line is not None:
        cols[line.parent_column] = "text"
        cols[LINE_KEY] = "bigint"
        cols["site_id"] = "text"
        cols.update(line.column_types)
        cols["_extracted_at"] = "timestamp"
    elif table in _known_tables():
        info = _known_tables()[table]
        cols["id"] = "text"
        for attr in info.attributes:
            cols[attr] = column_type(attr)
        for rel in info.to_one:
            cols[f"{rel}_id"] = "text"
        cols.update(META_COLUMNS)
        if info.dimension:
            cols["_is_deleted"] = "bool"
    for name in observed:
        if name not in cols:
            cols[name] = "bool" if name in ("_is_deleted", EMPTY_PARENT) else (
                "text" if name.endswith("_id") or name == "id" else column_type(name)
            )
    return cols


def rows_to_arrow(
    rows_by_table: Mapping[str, list[dict[str, Any]]],
    *,
    pii: PiiMode = None,
) -> dict[str, pa.Table]:
    """Rows (as produced by `normalize_resources`) -> arrow tables with the declared types.
    pyarrow (and numpy, which it imports: ~0.2 s of CPU) is imported by the functions that
    build arrow data, not with this module: a run with nothing to load never needs it."""
    out: dict[str, pa.Table] = {}
    for table, rows in rows_by_table.items():
        if not rows:
            continue
        import pyarrow as pa
        observed = dict.fromkeys(rows[0])
        first = rows[0].keys()
        for row in rows:
            if row.keys() != first:  # rare: records of one page mostly share their keys
                observed.update(dict.fromkeys(row))
        cols = declared_columns(table, observed)
        if pii == "drop":
            cols = {c: t for c, t in cols.items() if c not in pii_columns(table)}
        schema, stamp, rest = _arrow_schema(table, tuple(cols.items()))
        at = rows[0].get(EXTRACTED_AT)
        if stamp >= 0 and at is not None and all(
            map(operator.is_, map(dict.get, rows, itertools.repeat(EXTRACTED_AT)), itertools.repeat(at))
        ):
            # one batch shares one `_extracted_at` object: a constant column, instead of
            # converting the same aware datetime once per row (a fifth of the arrow work)
            stamps = pa.repeat(_stamp(at, schema.field(stamp).type), len(rows))
            out[table] = _from_rows(rows, rest).add_column(stamp, schema.field(stamp), stamps)
        else:
            out[table] = _from_rows(rows, schema)
    return out


@functools.lru_cache(maxsize=16)
def _stamp(at: datetime, arrow_type: pa.DataType) -> pa.Scalar:
    """`at` as an arrow scalar: a page's tables share one `_extracted_at` (~10 us each)."""
    import pyarrow as pa

    return pa.scalar(at, type=arrow_type)


def _from_rows(rows: list[dict[str, Any]], schema: pa.Schema) -> pa.Table:
    """The rows as a table of `schema` (missing keys -> null, other keys ignored): the same
    table as `pa.Table.from_pylist`, but arrow reads the dicts in C++ as one struct array
    (from_pylist first builds a Python list per column: ~25 % slower)."""
    import pyarrow as pa

    return pa.Table.from_struct_array(pa.array(rows, type=pa.struct(schema)))


@functools.lru_cache(maxsize=1024)
def _arrow_schema(
    table: str, cols: tuple[tuple[str, ColumnType], ...]
) -> tuple[pa.Schema, int, pa.Schema]:
    """Arrow schema of a table's columns (cached: pages of a table repeat the same columns),
    the position of `_extracted_at` in it (-1: none) and the schema without it."""
    import pyarrow as pa

    keys = {"id"} if any(c == "id" for c, _ in cols) else set(link_columns(table, [c for c, _ in cols]))
    schema = pa.schema([pa.field(c, _arrow_type(kind), nullable=c not in keys) for c, kind in cols])
    stamp = schema.get_field_index(EXTRACTED_AT)
    return schema, stamp, (schema.remove(stamp) if stamp >= 0 else schema)


def table_hints(table: str, columns: Mapping[str, ColumnType] | None = None) -> dict[str, Any]:
    """dlt hints (for `dlt.mark.make_hints`) for a resource or link table."""
    cols = dict(columns) if columns is not None else declared_columns(table)
    col_hints: dict[str, dict[str, Any]] = {}
    for name, kind in cols.items():
        hint: dict[str, Any] = {"data_type": _dlt_type(kind), "nullable": True}
        if kind == "decimal":
            hint["precision"], hint["scale"] = DECIMAL_PRECISION
        if kind == "timestamp":
            hint["timezone"] = True
        col_hints[name] = hint
    if "id" in cols:
        col_hints["id"]["nullable"] = False
        return {
            "table_name": table,
            "write_disposition": "merge",
            "primary_key": "id",
            "columns": col_hints,
        }
    parent_col, child_col = link_columns(table, cols)
    for c in (parent_col, child_col):
        col_hints.setdefault(c, {"data_type": "text"})["nullable"] = False
    # declared whether or not this item has a marker: the first item's hints make the table
    col_hints[EMPTY_PARENT] = {"data_type": "bool", "nullable": True, "hard_delete": True}
    return {
        "table_name": table,
        # a parent's rows are replaced as a set: those of each parent loaded are deleted first
        "write_disposition": {"disposition": "merge", "strategy": "delete-insert"},
        "primary_key": [parent_col, child_col],
        "merge_key": parent_col,
        "columns": col_hints,
    }


def link_columns(table: str, columns: Iterable[str]) -> tuple[str, str]:
    """(parent column, child column) of a link table: the first two `*_id` besides site_id;
    of a line table: its parent column and `line_number`."""
    line = LINE_TABLES.get(table)
    if line is not None:
        return line.parent_column, LINE_KEY
    ids = [c for c in columns if c.endswith("_id") and c != "site_id" and not c.startswith("_")]
    if len(ids) < 2:
        raise ValueError(f"{table} does not look like a link table: {list(columns)}")
    return ids[0], ids[1]


def child_marker(table: str) -> str | int:
    """The child-key value of a marker row (an empty relationship or array) in a link or
    line table."""
    return LINE_MARKER if table in LINE_TABLES else LINK_MARKER


def _dlt_type(kind: ColumnType) -> str:
    return {
        "text": "text",
        "bigint": "bigint",
        "bool": "bool",
        "timestamp": "timestamp",
        "decimal": "decimal",
        "double": "double",
        "json": "json",
    }[kind]


def is_link_table(columns: Iterable[str], table: str | None = None) -> bool:
    """Link tables have no `id` column (and are named `<resource table>_<relationship>`); line
    tables (`settings.LINE_TABLES`) are keyed and replaced per parent the same way."""
    if "id" in set(columns):
        return False
    return table is None or table in LINE_TABLES or any(
        table.startswith(f"{t}_") for t in _known_tables())
