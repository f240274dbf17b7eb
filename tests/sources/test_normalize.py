"""Normalisation: JSON:API -> typed rows and arrow tables, per docs/architecture.md."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from decimal import Decimal

import pyarrow as pa
import pytest

from creator_sync.sources.creator_platform.arrow_tables import rows_to_arrow
from creator_sync.sources.creator_platform.errors import NormalizationError
from creator_sync.sources.creator_platform.hints import EMPTY_PARENT, table_hints
from creator_sync.sources.creator_platform.rows import LINK_MARKER, normalize_resources
from creator_sync.sources.creator_platform.values import parse_timestamp

AT = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)


def res(jtype, rid, attributes=None, relationships=None):
    return {"id": rid, "type": jtype, "attributes": attributes or {}, "relationships": relationships or {}}


def one(jtype, rid):
    return {"data": None if rid is None else {"id": rid, "type": jtype}}


def many(jtype, *ids):
    return {"data": [{"id": i, "type": jtype} for i in ids]}


def test_primary_row_has_id_attributes_site_and_to_one_ids():
    contact = res(
        "contacts", "3000000001",
        {"name": "Ada", "email": "ada@example.com", "subscribed": True,
         "created_at": "2025-01-01T10:00:00-05:00"},
        {"site": one("sites", "2147483650"), "customer": one("customers", "3000000002"),
         "offers": {"links": {"self": "https://x/v1/contacts/1/relationships/offers"}}},
    )
    rows = normalize_resources([contact], site_id="999", extracted_at=AT)
    (row,) = rows["contacts"]
    assert row["id"] == "3000000001"
    assert row["site_id"] == "2147483650"  # from the relationship, not the request filter
    assert row["customer_id"] == "3000000002"
    assert row["created_at"] == datetime(2025, 1, 1, 15, 0, tzinfo=UTC)
    assert row["_extracted_at"] == AT
    assert "contacts_offers" not in rows  # links-only relationship leaves link rows alone


def test_site_id_falls_back_to_request_filter_and_sites_use_their_own_id():
    rows = normalize_resources(
        [res("purchases", "1", {"amount_in_cents": 100}), res("sites", "7", {"name": "S"})],
        site_id="42", extracted_at=AT,
    )
    assert rows["purchases"][0]["site_id"] == "42"
    assert rows["sites"][0]["site_id"] == "7"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2025-03-01T00:30:00Z", datetime(2025, 3, 1, 0, 30, tzinfo=UTC)),
        ("2025-03-01T00:30:00+02:00", datetime(2025, 2, 28, 22, 30, tzinfo=UTC)),
        ("2025-02-28T19:30:00-05:00", datetime(2025, 3, 1, 0, 30, tzinfo=UTC)),
        ("2025-03-01T00:30:00.123456+00:00", datetime(2025, 3, 1, 0, 30, 0, 123456, tzinfo=UTC)),
    ],
)
def test_timestamps_any_offset_become_utc(text, expected):
    rows = normalize_resources([res("orders", "1", {"created_at": text})], site_id="1", extracted_at=AT)
    value = rows["orders"][0]["created_at"]
    assert value == expected and value.utcoffset().total_seconds() == 0


def test_payout_amount_is_exact_decimal_and_status_lowercased():
    payout = res("platform_payments_payouts", "p1",
                 {"amount": 1234567.89, "status": "In_Transit", "initiated_date": "2025-01-02T09:00:00Z"})
    rows = normalize_resources([payout], site_id="1", extracted_at=AT)
    (row,) = rows["payouts"]
    assert row["amount"] == Decimal("1234567.89")
    assert row["status"] == "in_transit"
    table = rows_to_arrow(rows)["payouts"]
    assert table.schema.field("amount").type == pa.decimal128(38, 9)
    assert table.column("amount").to_pylist() == [Decimal("1234567.890000000")]


def test_exact_decimal_from_decimal_and_string_inputs():
    rows = normalize_resources(
        [res("platform_payments_payouts", "p", {"amount": Decimal("0.10")}),
         res("customers", "c", {"net_revenue": "1234.50"})],
        site_id="1", extracted_at=AT,
    )
    assert rows["payouts"][0]["amount"] == Decimal("0.10")
    assert rows["customers"][0]["net_revenue"] == Decimal("1234.50")


def test_non_integer_cents_is_rejected_naming_resource_url_record_and_field():
    bad = res("transactions", "3000000009", {"amount_in_cents": 12.5})
    with pytest.raises(NormalizationError) as err:
        normalize_resources([bad], site_id="1", extracted_at=AT, resource="transactions",
                            url="https://api.example.com/v1/transactions?page[number]=3")
    text = str(err.value)
    for part in ("transactions", "3000000009", "amount_in_cents", "page[number]=3", "12.5"):
        assert part in text


@pytest.mark.parametrize("value", ["12.50", "abc", True, [1]])
def test_bad_integers_are_rejected(value):
    with pytest.raises(NormalizationError):
        normalize_resources([res("orders", "1", {"total_price_in_cents": value})], site_id="1", extracted_at=AT)


def test_integral_values_are_accepted_as_bigint():
    rows = normalize_resources([res("orders", "1", {"total_price_in_cents": "1200", "order_number": 7.0})],
                               site_id="1", extracted_at=AT)
    assert rows["orders"][0]["total_price_in_cents"] == 1200
    assert rows["orders"][0]["order_number"] == 7


def test_invalid_timestamp_is_rejected_with_field():
    with pytest.raises(NormalizationError, match="created_at"):
        normalize_resources([res("orders", "1", {"created_at": "yesterday"})], site_id="1", extracted_at=AT)


@pytest.mark.parametrize("rid", [None, "", {"x": 1}])
def test_missing_or_bad_id_is_rejected(rid):
    with pytest.raises(NormalizationError, match="id"):
        normalize_resources([res("orders", rid)], site_id="1", extracted_at=AT)


def test_to_many_relationships_become_link_rows_with_natural_keys():
    contact = res("contacts", "c1", {}, {"site": one("sites", "s1"), "tags": many("contact_tags", "t1", "t2")})
    purchase = res("purchases", "p1", {}, {"transactions": many("transactions", "x1"),
                                            "products": many("products", "pr1")})
    rows = normalize_resources([contact, purchase], site_id="s1", extracted_at=AT)
    assert {(r["contact_id"], r["contact_tag_id"]) for r in rows["contacts_tags"]} == {("c1", "t1"), ("c1", "t2")}
    assert rows["contacts_tags"][0]["site_id"] == "s1"
    assert [(r["purchase_id"], r["transaction_id"]) for r in rows["purchases_transactions"]] == [("p1", "x1")]
    assert [(r["purchase_id"], r["product_id"]) for r in rows["purchases_products"]] == [("p1", "pr1")]


def test_empty_to_many_emits_one_marker_row_so_old_links_are_replaced():
    rows = normalize_resources([res("contacts", "c1", {}, {"tags": {"data": []}})], site_id="1", extracted_at=AT)
    assert rows["contacts_tags"] == [
        {"contact_id": "c1", "contact_tag_id": LINK_MARKER, "site_id": "1", "_extracted_at": AT,
         EMPTY_PARENT: True}
    ]
    # dlt deletes the parent's stored links (merge_key) and never inserts the marker (hard_delete)
    hints = table_hints("contacts_tags", dict.fromkeys(["contact_id", "contact_tag_id"], "text"))
    assert hints["columns"][EMPTY_PARENT] == {"data_type": "bool", "nullable": True, "hard_delete": True}
    assert hints["write_disposition"] == {"disposition": "merge", "strategy": "delete-insert"}
    assert hints["merge_key"] == "contact_id"


def test_included_records_are_routed_by_type_and_deduplicated_on_id():
    course = res("courses", "k1", {"title": "C"}, {"modules": many("modules", "m1"), "lessons": many("lessons", "l1")})
    included = [
        res("modules", "m1", {"title": "M", "position": 1}, {"course": one("courses", "k1"),
                                                             "lessons": many("lessons", "l1")}),
        res("lessons", "l1", {"title": "old"}, {"module": one("modules", "m1"), "media": many("media", "v1")}),
        res("lessons", "l1", {"title": "L", "position": 2}, {"module": one("modules", "m1"), "media": many("media", "v1")}),
        res("media", "v1", {"duration_in_minutes": 3.5}, {"lesson": one("lessons", "l1")}),
    ]
    rows = normalize_resources([course, *included], site_id="s", extracted_at=AT)
    assert [r["id"] for r in rows["modules"]] == ["m1"] and rows["modules"][0]["course_id"] == "k1"
    assert rows["lessons"] == [rows["lessons"][0]] and rows["lessons"][0]["title"] == "L"
    assert rows["media"][0]["lesson_id"] == "l1" and rows["media"][0]["site_id"] == "s"
    assert {"courses_modules", "courses_lessons", "modules_lessons", "lessons_media"} <= set(rows)
    assert rows["courses"][0]["_is_deleted"] is False


def test_schema_drift_unknown_attribute_and_unknown_type():
    rows = normalize_resources(
        [res("orders", "1", {"gift_wrap_in_cents": 300, "shipped_at": "2025-01-01T00:00:00Z", "note": "x",
                              "meta": {"a": 1}}),
         res("gift_cards", "g1", {"code": "ABC"})],
        site_id="1", extracted_at=AT,
    )
    tables = rows_to_arrow(rows)
    schema = tables["orders"].schema
    assert schema.field("gift_wrap_in_cents").type == pa.int64()
    assert schema.field("shipped_at").type == pa.timestamp("us", tz="UTC")
    assert schema.field("note").type == pa.string()
    assert tables["orders"].column("meta").to_pylist() == ['{"a":1}']
    assert tables["gift_cards"].column("code").to_pylist() == ["ABC"]


def test_arrow_types_follow_the_contract():
    rows = normalize_resources(
        [res("customers", "c", {"net_revenue": "10.00", "socials": {"twitter": "@x"}, "sign_in_count": 3,
                                "last_request_at": None})],
        site_id="1", extracted_at=AT,
    )
    schema = rows_to_arrow(rows)["customers"].schema
    assert schema.field("net_revenue").type == pa.decimal128(38, 9)
    assert schema.field("sign_in_count").type == pa.int64()
    assert schema.field("last_request_at").type == pa.timestamp("us", tz="UTC")  # declared, even if null
    assert schema.field("id").nullable is False
    hints = table_hints("customers")
    assert hints["primary_key"] == "id" and hints["write_disposition"] == "merge"
    assert hints["columns"]["socials"]["data_type"] == "json"


def test_link_table_hints_merge_on_parent():
    rows = normalize_resources([res("contacts", "c1", {}, {"tags": many("contact_tags", "t1")})], site_id="1", extracted_at=AT)
    table = rows_to_arrow(rows)["contacts_tags"]
    hints = table_hints("contacts_tags", dict.fromkeys(table.column_names, "text"))
    assert hints["merge_key"] == "contact_id"
    assert hints["primary_key"] == ["contact_id", "contact_tag_id"]


def test_pii_hash_reaches_every_table_and_drop_removes_columns():
    docs = [
        res("contacts", "c1", {"email": " Ada@Example.com ", "phone_number": "+1 (555) 010-0000", "name": "Ada"}),
        res("form_submissions", "f1", {"email": "ada@example.com", "address_city": "Paris", "name": "Ada "}),
        res("customers", "u1", {"name": "ada"}),
        res("contact_tags", "t1", {"name": "VIP"}),
        res("offers", "o1", {"name": "Course"}),
    ]
    hashed = normalize_resources(docs, site_id="1", extracted_at=AT, pii="hash", pii_salt="pepper")
    expected = hashlib.sha256(b"pepperada@example.com").hexdigest()
    assert hashed["contacts"][0]["email"] == expected
    assert hashed["form_submissions"][0]["email"] == expected  # joinable across tables
    assert hashed["contacts"][0]["phone_number"] == hashlib.sha256(b"pepper+15550100000").hexdigest()
    # a person's name is personal in the people tables, and hashes alike across them
    name = hashlib.sha256(b"pepperada").hexdigest()
    assert [hashed[t][0]["name"] for t in ("contacts", "customers", "form_submissions")] == [name] * 3
    # a tag's or an offer's name is not
    assert hashed["contact_tags"][0]["name"] == "VIP" and hashed["offers"][0]["name"] == "Course"
    dropped = normalize_resources(docs, site_id="1", extracted_at=AT, pii="drop")
    tables = rows_to_arrow(dropped, pii="drop")
    assert "email" not in tables["contacts"].column_names
    assert "address_city" not in tables["form_submissions"].column_names
    for table in ("contacts", "customers", "form_submissions"):
        assert "name" not in tables[table].column_names, table
    assert "name" in tables["contact_tags"].column_names and "name" in tables["offers"].column_names


def test_attribute_cannot_overwrite_bookkeeping_columns():
    rows = normalize_resources([res("orders", "1", {"site_id": "evil", "id": "evil"})], site_id="s", extracted_at=AT)
    assert rows["orders"][0]["id"] == "1" and rows["orders"][0]["site_id"] == "s"


@pytest.mark.parametrize("doc", [{"id": "1", "type": "orders"}, {"id": "1", "type": "orders", "attributes": "oops"}])
def test_missing_or_non_object_attributes_are_refused(doc):
    with pytest.raises(NormalizationError, match="attributes") as err:
        normalize_resources([doc], site_id="1", extracted_at=AT, resource="orders", url="https://h/v1/orders")
    assert "id=1" in str(err.value) and "resource=orders" in str(err.value)


# ---------------------------------------------------------------- fast paths keep the values
@pytest.mark.parametrize("text", [
    "2025-01-01T10:00:00Z", "2025-01-01T10:00:00.123456Z", "2025-01-01T10:00:00+00:00",
    "2025-01-01T10:00:00-05:00", "2025-01-01T23:30:00+05:30", "2025-01-01T10:00:00",
    "2025-01-01", " 2025-01-01T10:00:00Z ",
])
def test_parse_timestamp_is_aware_utc_and_the_same_instant(text):
    got = parse_timestamp(text)
    # reference: the same instant computed without the fast path
    want = datetime.fromisoformat(text.strip())
    want = want.replace(tzinfo=UTC) if want.tzinfo is None else want.astimezone(UTC)
    assert got == want and got.tzinfo is UTC and got.utcoffset().total_seconds() == 0


@pytest.mark.parametrize("bad", ["   ", "yesterday", "2025-13-01T00:00:00Z", 12, 1.5])
def test_parse_timestamp_still_refuses_what_is_not_a_timestamp(bad):
    with pytest.raises(ValueError):
        parse_timestamp(bad)


def _tricky_page():
    """Records that exercise every column kind: nulls, drift, nested objects, links, unicode,
    big integers, money strings and a record that comes twice."""
    return [
        res("contacts", "1", {"name": "Zoë 🚀 Ünïcødé", "email": None, "subscribed": True,
                              "created_at": "2025-01-01T10:00:00-05:00",
                              "brand_new_field": {"nested": [1, {"a": None}]},
                              "visits_count": 2**62, "score_in_cents": "-12"},
            {"site": one("sites", "5"), "tags": many("tags", "7", "8"), "offers": many("offers")}),
        res("contacts", "2", {"name": None, "created_at": None, "later_at": "2025-02-01T00:00:00Z"},
            {"tags": many("tags")}),
        res("contacts", "1", {"name": "Zoë again", "created_at": "2025-01-02T00:00:00Z"},
            {"tags": many("tags", "9")}),
        res("purchases", "3", {"amount": "12.34", "amount_in_cents": 1234,
                               "created_at": "2025-01-01T00:00:00+00:00"}),
        res("tags", "7", {"name": "VIP"}),
    ]


def test_rows_to_arrow_equals_the_per_row_conversion_on_tricky_records():
    rows = normalize_resources(_tricky_page(), site_id="42", extracted_at=AT)
    tables = rows_to_arrow(rows)
    assert set(tables) == {t for t, r in rows.items() if r}
    for table, tbl in tables.items():
        reference = pa.Table.from_pylist(rows[table], schema=tbl.schema)  # row by row
        assert tbl.equals(reference), table
        assert tbl.column("_extracted_at").to_pylist() == [AT] * tbl.num_rows
    contacts = tables["contacts"].to_pylist()
    assert [r["id"] for r in contacts] == ["1", "2"]
    assert contacts[0]["name"] == "Zoë again" and contacts[1]["later_at"] == datetime(2025, 2, 1, tzinfo=UTC)


def test_rows_to_arrow_keeps_each_rows_own_extracted_at_when_they_differ():
    later = datetime(2025, 6, 2, tzinfo=UTC)
    first = normalize_resources([res("contacts", "1", {"name": "a"})], site_id="1", extracted_at=AT)
    second = normalize_resources([res("contacts", "2", {"name": "b"})], site_id="1", extracted_at=later)
    same_instant = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)  # equal to AT, another object
    third = normalize_resources([res("contacts", "3", {})], site_id="1", extracted_at=same_instant)
    rows = {"contacts": first["contacts"] + second["contacts"] + third["contacts"]}
    tbl = rows_to_arrow(rows)["contacts"]
    assert tbl.column("_extracted_at").to_pylist() == [AT, later, AT]
    assert tbl.equals(pa.Table.from_pylist(rows["contacts"], schema=tbl.schema))


def test_rows_to_arrow_of_rows_without_extracted_at():
    rows = {"contacts": [{"id": "1", "name": "a"}, {"id": "2", "name": None}]}
    tbl = rows_to_arrow(rows)["contacts"]
    assert tbl.column("_extracted_at").to_pylist() == [None, None]
    assert tbl.equals(pa.Table.from_pylist(rows["contacts"], schema=tbl.schema))


@pytest.mark.parametrize(("value", "want"), [
    (2**63 - 1, 2**63 - 1), (-(2**63), -(2**63)), (0, 0), ("12", 12), (12.0, 12), (None, None),
])
def test_bigint_columns_keep_in_range_integers(value, want):
    (row,) = normalize_resources([res("purchases", "1", {"amount_in_cents": value})],
                                 site_id="1", extracted_at=AT)["purchases"]
    assert row["amount_in_cents"] == want and type(row["amount_in_cents"]) is type(want)


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1, True, 12.5, "12.5"])
def test_bigint_columns_refuse_what_is_not_a_bigint(value):
    with pytest.raises(NormalizationError, match="bad bigint value"):
        normalize_resources([res("purchases", "1", {"amount_in_cents": value})],
                            site_id="1", extracted_at=AT)


def test_null_values_of_typed_columns_stay_null():
    attrs = {"amount_in_cents": None, "created_at": None, "amount": None, "subscribed": None}
    (row,) = normalize_resources([res("purchases", "1", attrs)], site_id="1", extracted_at=AT)["purchases"]
    assert {k: row[k] for k in attrs} == dict.fromkeys(attrs)


def _per_attribute(monkeypatch, fn):
    """`fn()` with every record converted attribute by attribute (`_convert_each`, the
    reference path the planned one must equal)."""
    from creator_sync.sources.creator_platform import rows

    with monkeypatch.context() as patched:
        patched.setattr(rows, "_attribute_plan", lambda names, lines_attribute: None)
        return fn()


def _outcome(records, **kwargs):
    """Rows, arrow tables (with their key order: column order) or the error, as comparable data."""
    try:
        rows = normalize_resources(records, site_id="42", extracted_at=AT, resource="r", url="u",
                                   **kwargs)
    except NormalizationError as exc:
        return ("error", str(exc), exc.record_id, exc.field)
    tables = rows_to_arrow(rows, pii=kwargs.get("pii"))
    return ({t: [list(r.items()) for r in rs] for t, rs in rows.items()},
            {t: (tbl.schema, tbl.to_pylist()) for t, tbl in tables.items()})


def _drift_page():
    """Every path a planned conversion can take: text columns holding numbers, booleans,
    objects and lists; typed columns holding nulls, strings and out-of-range integers; reserved
    names; a payout's line array beside non-string text; the same keys in another order."""
    payout_type = "platform_payments_payouts"
    return [
        *_tricky_page(),
        res("contacts", "10", {"name": 12, "email": True, "note": 1.5, "tags_text": [1, "a"],
                               "meta": {"b": 1, "a": [None, "é"]}, "visits_count": None,
                               "score_in_cents": "9223372036854775807"[:-1]}),
        res("contacts", "11", {"visits_count": None, "meta": {"a": 1}, "email": True, "name": 12,
                               "note": 1.5, "tags_text": [1, "a"], "score_in_cents": None}),
        res("contacts", "12", {"id": "overwrite?", "site_id": "x", "_extracted_at": "2025-01-01T00:00:00Z",
                               "name": "n"}),
        res(payout_type, "p1", {"amount": "10.50", "status": "PAID", "description": 7,
                                "transactions": [{"amount": "1.25", "customer_id": 5, "extra": {"k": 1}},
                                                 {"amount": None, "fee": 0.1}]}),
        res(payout_type, "p2", {"amount": 3, "status": None, "transactions": []}),
        res(payout_type, "p3", {"status": "Open", "transactions": None, "note": {"x": [1]}}),
        res("orders", "2400000000000000001", {"total_in_cents": 2**63 - 1, "quantity": "12",
                                              "created_at": "2025-03-01", "subscribed": "true",
                                              "duration_in_minutes": "2.5", "socials": {"x": "y"}}),
    ]


def test_planned_conversion_equals_the_per_attribute_path_on_drifting_records(monkeypatch):
    page = _drift_page()
    for kwargs in ({}, {"pii": "hash", "pii_salt": "s"}, {"pii": "drop"}):
        planned = _outcome(page, **kwargs)
        reference = _per_attribute(monkeypatch, lambda kwargs=kwargs: _outcome(page, **kwargs))
        assert planned == reference, kwargs
        assert planned[0] != "error"
    contacts = {r["id"]: r for r in map(dict, _outcome(page)[0]["contacts"])}
    contact = contacts["10"]  # numbers and booleans as text, objects as JSON
    assert (contact["name"], contact["email"], contact["meta"]) == ("12", "true", '{"a":[null,"é"],"b":1}')
    assert contacts["12"]["attr_id"] == "overwrite?"
    rows = _outcome(page)[0]
    assert [dict(r)["line_number"] for r in rows["payout_lines"]] == [1, 2, 0]


@pytest.mark.parametrize("bad", [
    {"visits_count": 12.5}, {"created_at": "yesterday"}, {"amount_in_cents": 2**63},
    {"name": "ok", "subscribed": "maybe"}, {"amount": "1e40"}, {"amount": "abc"},
])
def test_planned_conversion_fails_exactly_as_the_per_attribute_path(monkeypatch, bad):
    page = [res("contacts", "1", {"name": "a"}), res("purchases", "7", {"email": 5, **bad})]
    planned = _outcome(page)
    assert planned[0] == "error" and planned[2] == "7"
    assert planned == _per_attribute(monkeypatch, lambda: _outcome(page))


def test_a_bundled_transaction_lands_every_purchase_it_pays():
    """A8: `relationships.purchases` is to-many (several for a bundle) and `offer` is null."""
    bundle = res("transactions", "t1", {"amount_in_cents": 4000},
                 {"offer": one("offers", None), "purchases": many("purchases", "p1", "p2")})
    rows = normalize_resources([bundle], site_id="1", extracted_at=AT)
    assert rows["transactions"][0]["offer_id"] is None
    assert sorted((r["transaction_id"], r["purchase_id"]) for r in rows["transactions_purchases"]) == [
        ("t1", "p1"), ("t1", "p2")]
    table = rows_to_arrow(rows)["transactions_purchases"]
    hints = table_hints("transactions_purchases", dict.fromkeys(table.column_names, "text"))
    assert hints["merge_key"] == "transaction_id"


def test_a_payout_status_written_for_people_is_compared_normalised():
    """A8: statuses are capitalised for people; lower case, spaces and underscores alike."""
    for sent in ("In Transit", "in_transit", " IN  transit ", "In_Transit"):
        rows = normalize_resources([res("acme_payments_payouts", "p1", {"status": sent})],
                                   site_id="1", extracted_at=AT)
        assert rows["payouts"][0]["status"] == "in_transit", sent
