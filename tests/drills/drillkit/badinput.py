"""The catalogue of bad-input cases: one row per case, one generic way to serve and judge them.

Every case corrupts the responses of one collection (at one page) behind the drill proxy; all
other traffic is the sandbox's. A case lists the outcomes it accepts (by default both):
- "fail": exit non-zero with one error line naming the resource, the page URL and the problem
  (`words`: any one of them must appear), every earlier row intact;
- "load": exit 0 with the warehouse identical to the reference, the altered record included (the
  bad value must not have landed). Only a case with a `check` (valid but unusual data, like a
  4 MiB name) expects the altered record to be stored as served: `check` verifies it, and the
  table comparison leaves it out.
Valid-but-unusual cases accept only "load": failing on good data is a bug too.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import orjson

from .proxy import DrillProxy, Exchange, Fetch, Reply

Doc = dict[str, Any]
Edit = Callable[["CaseRun", Doc, Exchange], "Doc | Reply | bytes"]

HUGE_TOTAL_PAGES = 10**9
OVERSIZED_STRING_CHARS = 4 * 1024 * 1024
BIG_PAGE_BYTES = 100 * 1024 * 1024


@dataclass
class CaseRun:
    """Per-run memory of a case: which records it altered, what it served."""

    proxy: DrillProxy
    altered: dict[str, set[str]] = field(default_factory=dict)  # table -> ids
    served: dict[str, Any] = field(default_factory=dict)

    def alter(self, table: str, record: Doc) -> None:
        if isinstance(record.get("id"), str):
            self.altered.setdefault(table, set()).add(record["id"])


@dataclass(frozen=True)
class Case:
    name: str
    collection: str  # path segment under /v1 (payouts: platform_payments_payouts)
    table: str  # warehouse table of that collection
    problem: str  # what is wrong, in words
    edit: Edit
    page: int | None = 1  # None: every page
    detail: bool = False  # corrupt `GET /v1/<collection>/<id>` (include) instead of the list
    fresh: bool = False  # start from a warehouse that never had this resource
    ci: bool = False  # in the CI subset (the benchmark runs every case)
    needs_record: bool = True  # the edit works on a record: inject one into an empty page
    accept: frozenset[str] = frozenset({"fail", "load"})
    words: tuple[str, ...] = ()
    timeout: float = 120.0
    check: Callable[[CaseRun, str], list[str]] | None = None  # (run, warehouse) -> problems
    extra_tables: frozenset[str] = frozenset()  # tables a "load" may add (schema drift)

    @property
    def resource(self) -> str:
        return self.table

    def matches(self, ex: Exchange) -> bool:
        if ex.method != "GET" or ex.collection != self.collection or ex.is_detail != self.detail:
            return False
        return self.detail or self.page is None or ex.page == self.page

    def mutator(self, run: CaseRun) -> Callable[[Exchange, Fetch], Reply]:
        def mutate(ex: Exchange, fetch: Fetch) -> Reply:
            reply = fetch()
            if not self.matches(ex) or reply.status != 200 or reply.abort:
                return reply
            try:
                doc = reply.json()
            except orjson.JSONDecodeError:
                return reply
            if not isinstance(doc, dict):
                return reply
            if self.needs_record and not _records(doc):
                sample = _sample_record(run.proxy, ex)
                if sample is None:
                    return reply
                doc["data"] = [sample]
            out = self.edit(run, doc, ex)
            run.proxy.injected += 1
            if isinstance(out, Reply):
                return out
            body = out if isinstance(out, bytes) else dump(out)
            return Reply(200, [(k, v) for k, v in reply.headers if k.lower() != "content-type"]
                         + [("Content-Type", "application/vnd.api+json")], body)

        return mutate


def dump(doc: Any) -> bytes:
    """Serialise like the API would; the stdlib handles what orjson refuses (10^30)."""
    try:
        return orjson.dumps(doc)
    except TypeError:
        return json.dumps(doc).encode()


def _records(doc: Doc) -> list[Doc]:
    data = doc.get("data")
    if isinstance(data, list):
        return [r for r in data if isinstance(r, dict)]
    return [data] if isinstance(data, dict) else []


def _sample_record(proxy: DrillProxy, ex: Exchange) -> Doc | None:
    """A real record of the same collection and site, for pages an incremental run gets empty."""
    keep = [(k, v) for k, v in ex.query if k == "filter[site_id]"]
    target = ex.path + "?" + urlencode([*keep, ("page[number]", "1")])
    reply = proxy._forward("GET", target, ex.headers, b"")
    if reply.status != 200:
        return None
    recs = _records(reply.json())
    return copy.deepcopy(recs[0]) if recs else None


# ---------------------------------------------------------------------- edits
def first(run: CaseRun, doc: Doc, table: str) -> Doc:
    rec = _records(doc)[0]
    run.alter(table, rec)
    return rec


def set_attr(table: str, attr: str, value: Any) -> Edit:
    def edit(run: CaseRun, doc: Doc, ex: Exchange) -> Doc:
        rec = first(run, doc, table)
        rec.setdefault("attributes", {})[attr] = value
        return doc

    return edit


def map_attr(table: str, attr: str, fn: Callable[[Any], Any]) -> Edit:
    def edit(run: CaseRun, doc: Doc, ex: Exchange) -> Doc:
        rec = _records(doc)[0]
        attrs = rec.setdefault("attributes", {})
        attrs[attr] = fn(attrs.get(attr))
        return doc

    return edit


def set_record(key: str, value: Any, table: str) -> Edit:
    def edit(run: CaseRun, doc: Doc, ex: Exchange) -> Doc:
        rec = first(run, doc, table)
        if value is _DELETE:
            rec.pop(key, None)
        else:
            rec[key] = value
        return doc

    return edit


_DELETE = object()


def set_top(key: str, value: Any) -> Edit:
    def edit(run: CaseRun, doc: Doc, ex: Exchange) -> Doc:
        if value is _DELETE:
            doc.pop(key, None)
        else:
            doc[key] = value
        return doc

    return edit


def raw(body: bytes, content_type: str = "application/vnd.api+json") -> Edit:
    def edit(run: CaseRun, doc: Doc, ex: Exchange) -> Reply:
        return Reply(200, [("Content-Type", content_type)], body)

    return edit


def truncated(run: CaseRun, doc: Doc, ex: Exchange) -> bytes:
    body = orjson.dumps(doc)
    return body[: max(10, len(body) * 2 // 3)]


def nan_literal(run: CaseRun, doc: Doc, ex: Exchange) -> bytes:
    rec = first(run, doc, "transactions")
    rec["attributes"]["amount_in_cents"] = "__NAN__"
    return orjson.dumps(doc).replace(b'"__NAN__"', b"NaN")


def latin1_body(run: CaseRun, doc: Doc, ex: Exchange) -> bytes:
    rec = first(run, doc, "contacts")
    rec["attributes"]["name"] = "__LATIN1__"
    return orjson.dumps(doc).replace(b"__LATIN1__", "Ren\u00e9e M\u00fcller".encode("latin-1"))


def duplicate_first(run: CaseRun, doc: Doc, ex: Exchange) -> Doc:
    recs = doc["data"]
    recs.insert(1, copy.deepcopy(recs[0]))
    return doc


def deep_nesting(run: CaseRun, doc: Doc, ex: Exchange) -> bytes:
    rec = first(run, doc, "purchases")
    rec["attributes"]["raw_extra_contact_information"] = "__DEEP__"
    depth = 200_000
    return orjson.dumps(doc).replace(b'"__DEEP__"', b"[" * depth + b"]" * depth)


def big_page(run: CaseRun, doc: Doc, ex: Exchange) -> bytes:
    body = orjson.dumps(doc)
    pad = b'"padding":"' + b"x" * BIG_PAGE_BYTES + b'",'
    return b"{" + pad + body[1:]


def huge_total_pages(run: CaseRun, doc: Doc, ex: Exchange) -> Doc:
    meta = doc.setdefault("meta", {})
    meta["total_pages"] = HUGE_TOTAL_PAGES
    meta["total_count"] = HUGE_TOTAL_PAGES * 10
    return doc


def string_total_pages(run: CaseRun, doc: Doc, ex: Exchange) -> Doc:
    doc.setdefault("meta", {})["total_pages"] = "many"
    return doc


def status_400(run: CaseRun, doc: Doc, ex: Exchange) -> Reply:
    err = {"errors": [{"status": "400", "source": {"pointer": "/page/number"},
                       "title": "Bad request", "detail": "page[number] is invalid"}]}
    return Reply(400, [("Content-Type", "application/vnd.api+json")], orjson.dumps(err))


def offset_timestamp(value: Any) -> Any:
    """Same instant, written with a +05:30 offset: must land identical in UTC."""
    from datetime import datetime, timedelta, timezone

    if not isinstance(value, str):
        return value
    instant = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return instant.astimezone(timezone(timedelta(hours=5, minutes=30))).isoformat()


def float_cents(value: Any) -> Any:
    return float(value) if isinstance(value, int) else value


def string_amount(value: Any) -> Any:
    return f"{value:.2f}" if isinstance(value, int | float) else value


def unknown_included(run: CaseRun, doc: Doc, ex: Exchange) -> Doc:
    doc.setdefault("included", []).append(
        {"id": "999000111222", "type": "widgets", "attributes": {"title": "mystery"},
         "relationships": {}}
    )
    return doc


def included_without_id(run: CaseRun, doc: Doc, ex: Exchange) -> Doc:
    inc = [r for r in doc.get("included") or [] if isinstance(r, dict)]
    if inc:
        inc[0].pop("id", None)
    else:
        doc["included"] = [{"type": "modules", "attributes": {"title": "orphan"}}]
    return doc


def oversized_name(run: CaseRun, doc: Doc, ex: Exchange) -> Doc:
    rec = first(run, doc, "contacts")
    value = "N" * OVERSIZED_STRING_CHARS
    rec["attributes"]["name"] = value
    run.served["name"] = (rec["id"], len(value))
    return doc


def check_oversized(run: CaseRun, warehouse: str) -> list[str]:
    import duckdb

    rid, length = run.served["name"]
    con = duckdb.connect(warehouse, read_only=True)
    try:
        row = con.execute(
            "SELECT length(name) FROM creator_platform.contacts WHERE id = ?", [rid]
        ).fetchone()
    finally:
        con.close()
    if row is None or row[0] != length:
        return [f"contacts {rid}: loaded name length {row and row[0]}, served {length}"]
    return []


def never_ending(run: CaseRun, doc: Doc, ex: Exchange) -> Doc:
    """Every page (past the real end too) has records and a `next`; no meta to stop on."""
    if not _records(doc):
        doc["data"] = run.served.setdefault("last", [])
    else:
        run.served["last"] = copy.deepcopy(doc["data"])
    doc.pop("meta", None)
    base = "http://127.0.0.1" + ex.path
    doc["links"] = {"self": f"{base}?page[number]={ex.page}",
                    "next": f"{base}?page[number]={ex.page + 1}"}
    return doc


def foreign_links(evil_base: str) -> Edit:
    def edit(run: CaseRun, doc: Doc, ex: Exchange) -> Doc:
        links = doc.setdefault("links", {})
        for key in ("self", "first", "next", "last", "current"):
            links[key] = f"{evil_base}{ex.path}?page[number]={ex.page + (key == 'next')}"
        return doc

    return edit


# ---------------------------------------------------------------------- the catalogue
JSON_WORDS = ("json", "decode", "parse", "truncat", "invalid", "malformed", "unexpected")


def catalogue(evil_base: str = "http://127.0.0.1:9") -> list[Case]:
    """All cases. `evil_base` is a loopback server that must never be contacted.

    `fresh=True` cases start from a warehouse without the target resource, so the bad run reads
    it from scratch and the bad page (2) comes after a good one; the others corrupt the first
    page of an ordinary incremental run over a full warehouse. Detail cases are fresh too: an
    incremental run re-reads only new or changed records, so the crafted detail would never be
    asked for.
    """
    C = Case
    return [
        # --- body and envelope
        C("malformed_json", "contacts", "contacts", "body cut off mid-document", truncated,
          page=2, fresh=True, words=JSON_WORDS, ci=True),
        C("html_200", "contacts", "contacts", "HTML maintenance page with status 200",
          raw(b"<!DOCTYPE html><html><body><h1>Down for maintenance</h1></body></html>",
              "text/html; charset=utf-8"), page=2, fresh=True, needs_record=False,
          words=(*JSON_WORDS, "html", "content-type")),
        C("empty_body_200", "purchases", "purchases", "empty body with status 200", raw(b""),
          page=2, fresh=True, needs_record=False, words=(*JSON_WORDS, "empty")),
        C("non_utf8_body", "contacts", "contacts", "latin-1 bytes in a UTF-8 JSON body",
          latin1_body, words=(*JSON_WORDS, "utf", "unicode", "encod")),
        C("nan_literal", "transactions", "transactions", "NaN literal (not JSON)", nan_literal,
          words=(*JSON_WORDS, "nan")),
        C("deep_nesting", "purchases", "purchases", "JSON nested 200,000 levels deep",
          deep_nesting, words=(*JSON_WORDS, "depth", "recursion", "nest")),
        C("missing_data", "orders", "orders", "no `data` member", set_top("data", _DELETE),
          page=2, fresh=True, needs_record=False, words=("data",)),
        C("data_null", "transactions", "transactions", "`data` is null", set_top("data", None),
          page=2, fresh=True, needs_record=False, words=("data",)),
        C("data_object", "contacts", "contacts", "`data` is an object, not a list",
          set_top("data", {"id": "1", "type": "contacts"}), needs_record=False,
          words=("data", "list", "array"), ci=True),
        C("missing_meta", "customers", "customers", "no `meta` member on page 1",
          set_top("meta", _DELETE), fresh=True, needs_record=False,
          words=("meta",)),
        C("missing_meta_and_links", "contact_tags", "contact_tags", "no `meta`, no `links`",
          lambda run, doc, ex: {"data": doc.get("data")}, needs_record=False,
          words=("meta",), ci=True),
        C("total_pages_1e9", "contacts", "contacts", "meta.total_pages = 10^9",
          huge_total_pages, fresh=True, needs_record=False,
          words=("page", "total"), ci=True),
        C("total_pages_string", "orders", "orders", "meta.total_pages is a string",
          string_total_pages, fresh=True, needs_record=False,
          words=("total_pages", "meta")),
        C("never_ending_next", "custom_fields", "custom_fields",
          "`next` link on every page, records on every page, no meta", never_ending,
          page=None, needs_record=False,
          words=("page", "pagination", "repeat", "loop", "cap", "never"), ci=True),
        C("foreign_next_link", "products", "products", "links point at another host",
          foreign_links(evil_base), needs_record=False, words=("link", "host")),
        C("page_100mb", "contacts", "contacts", "a 100 MB page", big_page, page=2,
          fresh=True, needs_record=False,
          words=("size", "large", "mb", "bytes", "limit", "too big"), ci=True),
        C("status_400_mid_pagination", "transactions", "transactions", "400 error on page 2",
          status_400, page=2, fresh=True, needs_record=False, words=("400", "bad request")),
        # --- records
        C("null_id", "contacts", "contacts", "a record with id null",
          set_record("id", None, "contacts"), words=("id",), ci=True),
        C("missing_id", "purchases", "purchases", "a record without id",
          set_record("id", _DELETE, "purchases"), words=("id",)),
        C("integer_id", "customers", "customers", "id sent as a JSON integer",
          lambda run, doc, ex: _int_id(doc), words=("id",)),
        C("attributes_missing", "transactions", "transactions", "a record without attributes",
          set_record("attributes", _DELETE, "transactions"), words=("attributes",), ci=True),
        C("attributes_not_object", "orders", "orders", "attributes is a string",
          set_record("attributes", "oops", "orders"), words=("attributes",), ci=True),
        C("relationship_malformed", "purchases", "purchases",
          "relationships.customer.data is a string",
          lambda run, doc, ex: _bad_relationship(run, doc),
          words=("relationship", "customer")),
        C("duplicate_id_in_page", "contacts", "contacts", "the same record twice in a page",
          duplicate_first, page=2, fresh=True, accept=frozenset({"load"}), ci=True),
        C("string_in_cents", "transactions", "transactions", "amount_in_cents = \"12x\"",
          set_attr("transactions", "amount_in_cents", "12x"),
          words=("amount_in_cents", "integer", "int"), ci=True),
        C("fractional_cents", "transactions", "transactions", "amount_in_cents = 1234.5",
          set_attr("transactions", "amount_in_cents", 1234.5),
          words=("amount_in_cents", "integer", "int"), ci=True),
        C("integral_float_cents", "purchases", "purchases",
          "amount_in_cents sent as 1234.0 (same value, float syntax)",
          map_attr("purchases", "amount_in_cents", float_cents),
          words=("amount_in_cents", "integer")),
        C("cents_overflow", "orders", "orders", "total_price_in_cents = 10^30",
          set_attr("orders", "total_price_in_cents", 10**30),
          words=("total_price_in_cents", "range", "overflow", "integer", "int")),
        C("payout_amount_text", "platform_payments_payouts", "payouts", "amount = \"N/A\"",
          set_attr("payouts", "amount", "N/A"), words=("amount", "decimal", "number"), ci=True),
        C("payout_amount_as_string", "platform_payments_payouts", "payouts",
          "amount sent as a decimal string", map_attr("payouts", "amount", string_amount),
          words=("amount", "decimal")),
        C("invalid_timestamp", "contacts", "contacts", "created_at = \"not-a-date\"",
          set_attr("contacts", "created_at", "not-a-date"),
          words=("created_at", "timestamp", "date", "time"), ci=True),
        C("impossible_timestamp", "orders", "orders", "created_at = 2024-02-30T25:61:00Z",
          set_attr("orders", "created_at", "2024-02-30T25:61:00Z"), page=2, fresh=True,
          words=("created_at", "timestamp", "date", "time")),
        C("timestamp_with_offset", "purchases", "purchases",
          "updated_at with a +05:30 offset (same instant)",
          map_attr("purchases", "updated_at", offset_timestamp), accept=frozenset({"load"})),
        C("oversized_string", "contacts", "contacts", "a 4 MiB contact name", oversized_name,
          check=check_oversized, words=("size", "long", "large", "name"), ci=True),
        C("unknown_included_type", "courses", "courses", "included record of type `widgets`",
          unknown_included, detail=True, fresh=True, needs_record=False,
          extra_tables=frozenset({"widgets"}), words=("widgets", "type", "included"), ci=True),
        C("included_without_id", "courses", "courses", "included module without id",
          included_without_id, detail=True, fresh=True, needs_record=False,
          words=("id", "included"), ci=True),
    ]


def _int_id(doc: Doc) -> Doc:
    rec = _records(doc)[0]
    if isinstance(rec.get("id"), str) and rec["id"].isdigit():
        rec["id"] = int(rec["id"])
    return doc


def _bad_relationship(run: CaseRun, doc: Doc) -> Doc:
    rec = first(run, doc, "purchases")
    rec.setdefault("relationships", {})["customer"] = {"data": "garbage"}
    return doc
