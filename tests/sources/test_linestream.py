"""A payout detail's line array read as a stream (linestream.py, docs/performance.md#memory): the
document is
what `json.loads(body, parse_float=Decimal)` gives, the array's elements come in parts, and a
malformed body fails where the body is read (so the client retries it, as before)."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from creator_sync.sources.creator_platform.linestream import LineStream, decode_streamed

PATH = ("data", "attributes", "transactions")


def loads(body: bytes):
    return json.loads(body, parse_float=Decimal)


def streamed(body: bytes):
    """The streamed document with its LineStream read whole: must equal `loads(body)`."""
    doc = decode_streamed(body, PATH)
    node = doc.get("data") if isinstance(doc, dict) else None
    node = node.get("attributes") if isinstance(node, dict) else None
    if isinstance(node, dict) and isinstance(node.get("transactions"), LineStream):
        node["transactions"] = node["transactions"].whole()
    return doc


LINE = {"amount": 10.1, "net": -0.30, "rate": 1.0, "big": 1e400, "n": 7, "name": "\u00e9t\u00e9 \"q\"",
        "offer_ids": [1, 2], "nested": {"a": [1.5]}, "none": None, "yes": True}
BODIES = [
    {"data": {"type": "p", "id": "1", "attributes": {"status": "Paid", "amount": 20.20,
              "transactions": [dict(LINE, n=i) for i in range(25)]},
              "relationships": {"site": {"data": {"type": "sites", "id": "9"}}}}},
    # the array first, last, alone; empty; every other member parsed whole
    {"links": {"self": "x"}, "data": {"attributes": {"transactions": [LINE], "z": [1.25]}, "id": 2}},
    {"data": {"attributes": {"transactions": []}}, "included": [{"attributes": {"transactions": [1]}}]},
    # the path's values of another shape: parsed whole, as json.loads would
    {"data": {"attributes": {"transactions": None}}},
    {"data": {"attributes": {"transactions": {"a": 1.5}}}},
    {"data": {"attributes": None}},
    {"data": [{"attributes": {"transactions": [1.5]}}]},
    [1, 2.5],
    {},
]


@pytest.mark.parametrize("doc", BODIES)
@pytest.mark.parametrize("indent", [None, 2])
def test_the_document_is_what_json_loads_gives(doc, indent):
    body = json.dumps(doc, indent=indent, ensure_ascii=indent is None).encode()
    assert streamed(body) == loads(body)
    assert streamed(b" \n" + body + b" \r\n") == loads(b" \n" + body + b" \r\n")


def test_a_key_twice_keeps_the_last_as_json_loads_does():
    body = (b'{"data": {"attributes": {"transactions": [{"a": 1}], "transactions": [{"a": 2.5}]},'
            b' "attributes": {"transactions": [{"b": 3}], "x": 1}}}')
    assert streamed(body) == loads(body)


def test_lines_come_in_parts_of_the_size_asked_numbered_as_one_array():
    body = json.dumps({"data": {"attributes": {"transactions": [{"n": i, "v": i / 10}
                                                                 for i in range(2_345)]}}}).encode()
    lines = decode_streamed(body, PATH)["data"]["attributes"]["transactions"]
    assert isinstance(lines, LineStream) and len(lines) == 2_345
    sizes = [len(part) for part in lines.parts(1_000)]
    assert sizes == [1_000, 1_000, 345]
    flat = [line for part in lines.parts(1_000) for line in part]
    assert flat == loads(body)["data"]["attributes"]["transactions"]
    assert isinstance(flat[1]["v"], Decimal) and str(flat[1]["v"]) == "0.1"  # exact, as sent
    empty = decode_streamed(b'{"data": {"attributes": {"transactions": [ ]}}}', PATH)
    assert [p for p in empty["data"]["attributes"]["transactions"].parts(1_000)] == [[]]


def test_a_malformed_body_fails_when_read_wherever_the_fault_is():
    body = json.dumps(BODIES[0]).encode()
    for cut in range(1, len(body), 7):  # truncated anywhere, the line array included
        with pytest.raises(ValueError):
            decode_streamed(body[:cut], PATH)
    faults = [body.replace(b'"n": 3', b'"n": 3,'), body.replace(b'}, {', b'} {', 1),
              body.replace(b'"status"', b'status'), body.replace(b'"amount": 20.2', b'"amount" 20.2'),
              body + b"{}", body.replace(b'"n": 4', b'"n": 0x4')]
    for bad in faults:
        assert bad != body
        with pytest.raises(ValueError):
            loads(bad)
        with pytest.raises(ValueError):
            decode_streamed(bad, PATH)
