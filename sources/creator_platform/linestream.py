"""A JSON body whose one big array is parsed as it is read, not whole (issue 15,
docs/performance.md#memory).

A payout detail holds its lines as `data.attributes.transactions` (addendum A3): up to 14,401
of them in one 7 MB body at `large`. Parsed whole (with `Decimal`, for exact money) and then
normalised, one such body held ~60 MB of objects at once, and the allocators kept that
high-water for the rest of the run (docs/performance.md#memory).

`decode_streamed(body, path)` parses the body in two steps:

1. at once (where the body is read, so that a malformed body is retried as before): every
   value as `json.loads(body, parse_float=Decimal)` would, except the array at `path`, which
   is only checked (parsed element by element and let go: syntax errors surface here) and
   kept as its text, a `LineStream`;
2. later, `LineStream.parts(n)`: the elements, `n` at a time, parsed with `Decimal`; a part
   is let go before the next is parsed.

Where the value at `path` is not an object down to an array (a null, a malformed record),
the body is parsed whole: the same document `json.loads` gives, errors reported as before.
Pure: no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from json.decoder import WHITESPACE  # type: ignore[attr-defined]
from typing import Any

_EXACT = json.JSONDecoder(parse_float=Decimal)
# elements checked and let go: objects become None as soon as parsed (no dict is built)
_CHECK = json.JSONDecoder(object_pairs_hook=lambda pairs: None)
_scan_key = json.decoder.scanstring  # type: ignore[attr-defined]


class LineStream:
    """The text of one JSON array, its elements parsed on demand (`parts`)."""

    __slots__ = ("count", "start", "text")

    def __init__(self, text: str, start: int, count: int) -> None:
        # the whole body's text (the array is most of it: a slice would copy it), checked by
        # `decode_streamed`, and where the array's "[" is
        self.text = text
        self.start = start
        self.count = count  # elements

    def __len__(self) -> int:
        return self.count

    def __repr__(self) -> str:
        return f"LineStream({self.count} elements)"

    def parts(self, size: int | None) -> Iterator[list[Any]]:
        """The elements in lists of `size` (None: all in one), each parsed as `json.loads`
        with `parse_float=Decimal` would; one empty list for an empty array."""
        text, step = self.text, size or self.count or 1
        pos, out = _skip(text, self.start + 1), []
        while text[pos] != "]":
            value, pos = _EXACT.raw_decode(text, pos)
            out.append(value)
            pos = _skip(text, pos)
            if text[pos] == ",":
                pos = _skip(text, pos + 1)
            if len(out) >= step:
                yield out
                out = []
        if out or not self.count:
            yield out

    def whole(self) -> list[Any]:
        """Every element, as one list (what `json.loads` would have made of the array)."""
        return [value for part in self.parts(None) for value in part]


def _skip(text: str, pos: int) -> int:
    return WHITESPACE.match(text, pos).end()


def decode_streamed(body: bytes, path: tuple[str, ...]) -> Any:
    """`body` as `json.loads(body, parse_float=Decimal)`, with the array at `path` (object
    keys from the top) a `LineStream`. Raises ValueError where json.loads would."""
    text = body.decode(json.detect_encoding(body), "surrogatepass")
    start = _skip(text, 0)
    value, end = _value(text, start, path)
    end = _skip(text, end)
    if end != len(text):
        raise json.JSONDecodeError("Extra data", text, end)
    return value


def _value(text: str, pos: int, path: tuple[str, ...]) -> tuple[Any, int]:
    """The value at `pos` (no leading whitespace) and where it ends; `path`: the keys still
    to walk down to the streamed array (empty: this is it)."""
    if not path:
        if text.startswith("[", pos):
            return _checked_array(text, pos)
    elif text.startswith("{", pos):
        return _object(text, pos, path)
    return _EXACT.raw_decode(text, pos)  # not the expected shape: parsed whole, as before


def _object(text: str, pos: int, path: tuple[str, ...]) -> tuple[dict[str, Any], int]:
    """The object at `pos`, its member `path[0]` walked further; the others parsed whole.
    Checks what json's scanner checks (a key twice: the last wins, as in json.loads)."""
    out: dict[str, Any] = {}
    pos = _skip(text, pos + 1)
    if text.startswith("}", pos):
        return out, pos + 1
    while True:
        if not text.startswith('"', pos):
            raise json.JSONDecodeError(
                "Expecting property name enclosed in double quotes", text, pos)
        key, pos = _scan_key(text, pos + 1)
        pos = _skip(text, pos)
        if not text.startswith(":", pos):
            raise json.JSONDecodeError("Expecting ':' delimiter", text, pos)
        pos = _skip(text, pos + 1)
        if key == path[0]:
            out[key], pos = _value(text, pos, path[1:])
        else:
            out[key], pos = _EXACT.raw_decode(text, pos)
        pos = _skip(text, pos)
        if text.startswith("}", pos):
            return out, pos + 1
        if not text.startswith(",", pos):
            raise json.JSONDecodeError("Expecting ',' delimiter", text, pos)
        pos = _skip(text, pos + 1)


def _checked_array(text: str, pos: int) -> tuple[LineStream, int]:
    """The array at `pos` checked (its objects parsed and let go), kept as its text."""
    checked, end = _CHECK.raw_decode(text, pos)
    return LineStream(text, pos, len(checked)), end
