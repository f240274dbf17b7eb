"""Render rows of a table as JSON:API resource objects (column-wise, for speed).

A page's attribute values are fetched one column at a time (`Table.values`), converted by kind,
then zipped into resource dicts. Sparse fieldsets, quirk offsets and capitalised payout status are
applied here so that every endpoint behaves the same.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import orjson

from creator_sync.sandbox.dataset import Store
from creator_sync.sandbox.options import DEFAULT_BRAND
from creator_sync.sandbox.relations import related, to_many, to_one
from creator_sync.sandbox.schema import (
    ATTRIBUTES,
    DECIMAL,
    ENUM,
    MONEY,
    NINT,
    PAYOUTS,
    REL_INDEX,
    RELATIONSHIPS,
    TIME,
    Attr,
    Rel,
    public_type,
)
from creator_sync.sandbox.store import NULL
from creator_sync.sandbox.virtuals import cents_text

NULL_INT = np.iinfo(np.int64).min
QUIRK_OFFSET = -5 * 3600  # quirk timestamps are written as -05:00 (same instant)


def iso(ts: int, offset: int = 0) -> str:
    """ISO 8601 text: `Z` normally, `-05:00` for quirk records."""
    if offset == 0:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))
    sign = "-" if offset < 0 else "+"
    hours, minutes = divmod(abs(offset) // 60, 60)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts + offset)) + \
        f"{sign}{hours:02d}:{minutes:02d}"


def http_date(ts: int) -> str:
    return time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(ts))


@dataclass
class RenderContext:
    store: Store
    api_url: str
    quirks: bool = False
    fields: dict[str, set[str]] = field(default_factory=dict)  # keyed by internal type
    in_list: bool = False
    brand: str = DEFAULT_BRAND
    unreadable: int = 0  # payout rows below this serve an amount of `n/a` (--unreadable-amounts)


def iso_many(values: list[int], offsets: list[int] | None) -> list[str | None]:
    """Vectorised `iso` for a page of timestamps (NULL -> None)."""
    arr = np.asarray(values, dtype=np.int64)
    shift = np.asarray(offsets, dtype=np.int64) if offsets is not None else 0
    text = np.datetime_as_string((arr + shift).astype("datetime64[s]"), unit="s").tolist()
    if offsets is None:
        return [None if v == NULL else t + "Z" for v, t in zip(values, text, strict=True)]
    return [None if v == NULL else t + ("Z" if o == 0 else OFFSET_TEXT)
            for v, t, o in zip(values, text, offsets, strict=True)]


OFFSET_TEXT = "-05:00"


def _convert(attr: Attr, values: list, offsets: list[int] | None) -> list:
    kind = attr.kind
    if kind == TIME:
        return iso_many(values, offsets)
    if kind == ENUM:
        labels = attr.labels
        return [None if v < 0 else labels[v] for v in values]
    if kind == NINT:
        return [None if v == NULL_INT else v for v in values]
    if kind == MONEY:
        return [cents_text(v) for v in values]
    if kind == DECIMAL:
        return decimals(values)
    return values


OWN_PROCESSOR = f"{DEFAULT_BRAND}_payments"  # the platform's own processor, under its brand


def processor_names(values: list, brand: str) -> list:
    """Transactions name the platform's own processor after its brand: `<brand>_payments`
    (as payout lines write "<Brand> Payments", addendum A8)."""
    own = f"{brand}_payments"
    return [own if v == OWN_PROCESSOR else v for v in values]


def net_revenue_as_written(values: list) -> list:
    """--quirks: net revenue as the live document writes it: nothing as `"0.0"`, whole
    amounts as JSON integers (`10000`), the rest as decimal strings; the same values."""
    out: list = []
    for text in values:
        if text is None or not text.endswith(".00"):
            out.append(text)
        elif text in ("0.00", "-0.00"):
            out.append("0.0")
        else:
            out.append(int(text[:-3]))
    return out


def decimals(cents: list[int]) -> list[orjson.Fragment]:
    """Cents as JSON numbers in major units with two decimals (exact, never through float)."""
    return [orjson.Fragment(cents_text(v).encode()) for v in cents]


def _expand(vals: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """Concatenate vals[lo[k]:hi[k]] for every k (vectorised) and return the split offsets."""
    counts = hi - lo
    total = int(counts.sum())
    starts = np.cumsum(counts) - counts
    idx = np.repeat(lo - starts, counts) + np.arange(total)
    bounds = np.concatenate([[0], np.cumsum(counts)]).tolist()
    return vals[idx], bounds


def _relationship_column(ctx: RenderContext, type_name: str, rel: Rel, rows: np.ndarray,
                         ids: list[str]) -> list[dict]:
    """The relationship object of `rel` for every row."""
    store = ctx.store
    target = store.tables[rel.type]
    kind = public_type(rel.type, ctx.brand)
    if not rel.many:
        refs = to_one(store, type_name, rel, rows)
        tids = target.ids(np.maximum(refs, 0)) if len(refs) else []
        return [{"data": None} if r == NULL else {"data": {"id": t, "type": kind}}
                for r, t in zip(refs.tolist(), tids, strict=True)]
    out: list[dict] = [{} for _ in ids]
    if not (ctx.in_list and not rel.list_data):
        vals, lo, hi = to_many(store, type_name, rel, rows)
        flat, bounds = _expand(vals, lo, hi)
        child_ids = target.ids(flat)
        for k, item in enumerate(out):
            item["data"] = [{"id": c, "type": kind} for c in child_ids[bounds[k]:bounds[k + 1]]]
    if rel.links_self:
        for rid, item in zip(ids, out, strict=True):
            base = f"{ctx.api_url}/{type_name}/{rid}"
            item["links"] = {"self": f"{base}/relationships/{rel.name}",
                             "related": f"{base}/{rel.name}"}
    return out


def render(ctx: RenderContext, type_name: str, rows: np.ndarray,
           extra: tuple[Rel, ...] = ()) -> list[dict]:
    """Resource objects for `rows` of `type_name`, in the given order."""
    store = ctx.store
    table = store.tables[type_name]
    rows = np.asarray(rows, dtype=np.int64)
    sparse = ctx.fields.get(type_name)
    attrs = ATTRIBUTES[type_name]
    rels = list(RELATIONSHIPS[type_name]) + list(extra)
    if sparse is not None:
        attrs = [a for a in attrs if a.name in sparse]
        rels = [r for r in rels if r.name in sparse]
    ids = table.ids(rows)
    offsets = None
    if ctx.quirks:
        offsets = [QUIRK_OFFSET if int(i) % 5 == 0 else 0 for i in ids]
    columns = [(a.name, _convert(a, table.values(a.column, rows), offsets)) for a in attrs]
    if type_name == "transactions" and ctx.brand != DEFAULT_BRAND:
        columns = [(n, processor_names(vals, ctx.brand) if n == "provider" else vals)
                   for n, vals in columns]
    if ctx.quirks and type_name == PAYOUTS:
        columns = [(n, [v.capitalize() for v in vals] if n == "status" else vals)
                   for n, vals in columns]
    if ctx.quirks and type_name == "customers":
        columns = [(n, net_revenue_as_written(vals) if n == "net_revenue" else vals)
                   for n, vals in columns]
    if ctx.unreadable and type_name == PAYOUTS:
        columns = [(n, ["n/a" if r < ctx.unreadable else v for r, v in zip(rows.tolist(), vals,
                                                                            strict=True)]
                    if n == "amount" else vals) for n, vals in columns]
    names = [n for n, _ in columns]
    attr_rows = zip(*(vals for _, vals in columns), strict=True) if columns else \
        iter([() for _ in ids])
    rel_names = [r.name for r in rels]
    rel_cols = [_relationship_column(ctx, type_name, r, rows, ids) for r in rels]
    rel_rows = zip(*rel_cols, strict=True) if rel_cols else iter([() for _ in ids])
    links = _resource_links(ctx, type_name, rows, ids)
    kind = public_type(type_name, ctx.brand)
    out = []
    for k, (rid, values, relvals) in enumerate(zip(ids, attr_rows, rel_rows, strict=True)):
        resource = {
            "id": rid,
            "type": kind,
            "attributes": dict(zip(names, values, strict=True)),
            "relationships": dict(zip(rel_names, relvals, strict=True)),
        }
        if links is not None:
            resource["links"] = links[k]
        out.append(resource)
    return out


def _resource_links(ctx: RenderContext, type_name: str, rows: np.ndarray,
                    ids: list[str]) -> list[dict] | None:
    store = ctx.store
    api = ctx.api_url
    if type_name == "contacts":
        refs = store.tables["contacts"].cols["customer"][rows]
        cids = store.tables["customers"].ids(np.maximum(refs, 0))
        out = []
        for rid, ref, cid in zip(ids, refs.tolist(), cids, strict=True):
            item = {"self": f"{api}/contacts/{rid}"}
            if ref != NULL:
                item["customer"] = f"{api}/customers/{cid}"
            out.append(item)
        return out
    if type_name == "customers":
        refs = store.tables["customers"].cols["contact"][rows]
        cids = store.tables["contacts"].ids(refs)
        return [{"self": f"{api}/customers/{rid}", "contact": f"{api}/contacts/{cid}"}
                for rid, cid in zip(ids, cids, strict=True)]
    return None


def resolve_includes(store: Store, type_name: str, row: int,
                     paths: list[str]) -> list[tuple[str, np.ndarray]]:
    """Related rows per include path, deduplicated, grouped by type in first-seen order."""
    seen: dict[str, list[int]] = {}
    seen_set: set[tuple[str, int]] = set()
    for path in paths:
        frontier: list[tuple[str, int]] = [(type_name, row)]
        for name in path.split("."):
            nxt: list[tuple[str, int]] = []
            for t, r in frontier:
                rel = REL_INDEX[t][name]
                nxt.extend((rel.type, x) for x in related(store, t, rel, r))
            for item in nxt:
                if item not in seen_set:
                    seen_set.add(item)
                    seen.setdefault(item[0], []).append(item[1])
            frontier = nxt
    return [(t, np.asarray(rs, dtype=np.int64)) for t, rs in seen.items()]
