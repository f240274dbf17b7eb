"""JSON:API resource objects -> relational rows, link tables included (docs/architecture.md).

Pure functions with no I/O, so the pull sync and the webhook loader write identical rows:

    rows = normalize_resources(doc["data"] + doc.get("included", []), site_id=..., extracted_at=...)
    tables = rows_to_arrow(rows)            # arrow_tables: table -> pyarrow.Table, declared types
    hints = table_hints("contacts")         # hints: primary/merge key, disposition, columns

Values are converted by `values`, PII hashed or dropped and credentials masked by `pii`.

Link tables are replaced per parent: dlt's `delete-insert` merge with `merge_key` = the parent
column deletes every stored link of each parent the load carries, then inserts the new ones
(`hints.table_hints`). A parent whose to-many relationship carries an *empty* `data` list gets
one marker row (child column `LINK_MARKER`, ""), so that the merge still deletes its old links;
the marker has `EMPTY_PARENT` true, dlt's `hard_delete` column, so dlt never inserts it.
Line tables (an array attribute of plain objects, such as a payout detail's `transactions`, see
`endpoints.LineTable`) work the same way: keyed by parent and `line_number`, replaced per parent,
an empty array written as one marker row with `line_number` 0 (`child_marker`). A line
array still to be parsed (`linestream.LineStream`, a payout detail read as a stream) is read
whole here, or, for a caller that asks (`streamed=`), handed back as `StreamedLines`, whose
rows come in parts (`StreamedLines.parts`).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import InvalidOperation
from typing import Any

from .endpoints import (
    LINE_KEY,
    LINE_TABLES,
    RAW_SUFFIX,
    ColumnType,
    LineTable,
    column_type,
    decimal_scale,
    link_table,
    type_info,
)
from .errors import NormalizationError, UnreadableValue
from .hints import EMPTY_PARENT
from .linestream import LineStream
from .pii import PiiMode, apply_pii, redact_credentials
from .values import CONVERTERS, MAX_BIGINT, MIN_BIGINT, normal_word, read_decimal, to_json_text

LINK_MARKER = ""
LINE_MARKER = 0  # line numbers start at 1
_RESERVED = frozenset({"id", "site_id", "_extracted_at", "_is_deleted"})
_PARENTS: Any = ("__parents__",)  # bookkeeping key inside a link bucket


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

    def unreadable(self, kind: str, value: Any, exc: Exception, record_id: str | None,
                   field: str, line: int | None = None) -> UnreadableValue:
        """A value its column's type cannot hold: the record may be set aside (`Rejected`)."""
        reason = "not a number" if isinstance(exc, InvalidOperation) else str(exc)
        at = f" in line {line}" if line is not None else ""
        return UnreadableValue(
            f"bad {kind} value {_preview(value)}{at}: {reason}", value=_value_text(value),
            resource=self.resource, url=self.url, record_id=record_id, field=field)


@dataclass(frozen=True)
class Rejected:
    """A record set aside: one of its values cannot be read (`UnreadableValue`); the rest
    of its resource loads, and the record is read again by the next run."""

    record_id: str | None
    jtype: str | None
    field: str | None
    value: str
    reason: str
    record: Mapping[str, Any]  # the resource object as read (its cursor field, for the retry)


def _convert(row: dict[str, Any], name: str, kind: ColumnType, value: Any) -> None:
    """`value` into `row[name]` as `kind`; a decimal also writes `<name>_raw`, the exact text,
    where storing it rounded it (`values.read_decimal`). Raises what the converter raises."""
    if kind == "decimal":
        row[name], raw = read_decimal(value, decimal_scale(name))
        if raw is not None:
            row[name + RAW_SUFFIX] = raw
    else:
        row[name] = CONVERTERS[kind](value)


def _preview(value: Any, limit: int = 40) -> str:
    """A short, safe rendering of a bad value for an error message."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} chars)"


def _value_text(value: Any, limit: int = 200) -> str:
    """A bad value as the API wrote it (a string as is, anything else as JSON), cut short."""
    if isinstance(value, str):
        text = value
    elif isinstance(value, dict | list):
        text = to_json_text(value) or "null"
    else:
        text = "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} chars)"


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
        if value is None or (kind == "bigint" and type(value) is int and MIN_BIGINT <= value < MAX_BIGINT):
            continue  # every converter maps None to None; what to_bigint returns, without the call
        try:
            if kind == "decimal":
                _convert(row, name, kind, value)
            else:  # (the hot path: a call less per timestamp)
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
        elif kind == "bigint" and type(value) is int and MIN_BIGINT <= value < MAX_BIGINT:
            row[name] = value  # what to_bigint returns, without the call
            continue
        try:
            _convert(row, name, kind, value)
        except (ValueError, TypeError, InvalidOperation, OverflowError) as exc:
            raise where.unreadable(kind, value, exc, rid, name) from None
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
    if info.flags_deleted:
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
                if kind == "decimal":
                    _convert(row, name, kind, value)
                else:
                    row[name] = CONVERTERS[kind](value)
            except (ValueError, TypeError, InvalidOperation, OverflowError) as exc:
                raise where.unreadable(kind, value, exc, parent, f"{lines.attribute}.{name}",
                                       number) from None
        out[(parent, number)] = row
    return out


def _link_row(
    parent_col: str, parent: str, child_col: str, child: str, site: str | None, at: datetime
) -> dict[str, Any]:
    return {parent_col: parent, child_col: child, "site_id": site, "_extracted_at": at}




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
    rejected: list[Rejected] | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Primary + included resource objects -> {table: rows}, incl. link tables.

    Records are routed by `type`; a duplicate id within the batch keeps the last occurrence.
    `resource`/`url` only label errors. Raises NormalizationError naming record id and field.
    `streamed`: line arrays still to be parsed (`LineStream`) are appended to it, for the
    caller to read in parts (`StreamedLines.parts`), instead of being read whole here.
    `rejected`: a record with a value its column cannot hold (`UnreadableValue`) is appended
    to it and left out, instead of failing the batch (a malformed record still fails it).
    """
    at = extracted_at or datetime.now(UTC)
    where = _Where(resource, url)
    tables: dict[str, dict[str, dict[str, Any]]] = {}
    links: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}
    for item in resources:
        if rejected is None:
            table, row = normalize_resource(item, site_id=site_id, extracted_at=at, links=links,
                                            where=where, streamed=streamed)
        else:
            try:
                table, row = normalize_resource(item, site_id=site_id, extracted_at=at,
                                                links=links, where=where, streamed=streamed)
            except UnreadableValue as exc:
                rejected.append(Rejected(exc.record_id, item.get("type"), exc.field, exc.value,
                                         exc.message, item))
                continue
        if pii is not None:
            apply_pii(row, pii, pii_salt, table)
        redact_credentials(table, row)
        tables.setdefault(table, {})[row["id"]] = row
    out: dict[str, list[dict[str, Any]]] = {t: list(rows.values()) for t, rows in tables.items()}
    for table, rows in links.items():
        rows.pop(_PARENTS, None)
        link_rows = list(rows.values())
        for row in link_rows:
            apply_pii(row, pii, pii_salt, table)
        out[table] = link_rows
    return out


def child_marker(table: str) -> str | int:
    """The child-key value of a marker row (an empty relationship or array) in a link or
    line table."""
    return LINE_MARKER if table in LINE_TABLES else LINK_MARKER


