"""Values as the API writes them -> the warehouse's types (docs/architecture.md).

Pure functions with no I/O, shared by the pull sync and the webhook loader: one converter per
logical column type (`settings.ColumnType`), each refusing what it cannot convert exactly (money
never goes through a float; timestamps come out UTC-aware).
"""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

import orjson

from .endpoints import ATTRIBUTE_TYPES, DECIMAL_PRECISION

_QUANT = Decimal(1).scaleb(-DECIMAL_PRECISION[1])
_QUANTS = {scale: Decimal(1).scaleb(-scale) for scale in range(DECIMAL_PRECISION[1] + 1)}
_MAX_DECIMAL = Decimal(10) ** (DECIMAL_PRECISION[0] - DECIMAL_PRECISION[1])
_INT_RE = re.compile(r"^[+-]?\d+$")
MIN_BIGINT, MAX_BIGINT = -(2**63), 2**63


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


def _exact(value: Any) -> Decimal:
    """The number a JSON value states, exactly: a JSON number decoded by `loads_exact` is a
    Decimal of its text; an integer or a numeric string (`"0.0"`) is read as written; a float
    (from a decoder that made one) by its shortest repr, never binary arithmetic."""
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
    return dec


def to_decimal(value: Any) -> Decimal | None:
    """Exact major-unit amount of at most the column's scale (refuses more places: see
    `read_decimal` for the reading that rounds and keeps the text)."""
    if value is None or value == "":
        return None
    dec = _exact(value)
    quantized = dec.quantize(_QUANT)
    if quantized != dec:
        raise ValueError(f"more than {DECIMAL_PRECISION[1]} decimal places: {value!r}")
    return quantized


def read_decimal(value: Any, scale: int) -> tuple[Decimal | None, str | None]:
    """(the value rounded half-even to `scale` places, the exact value as text where rounding
    changed it, else None). Money is read at 2 places (cents: `3.3000000000000003` -> 3.30,
    kept as written), a rate at the column's 9 (`1.08345678912` -> 1.083456789, kept as
    written); a value that is no finite number fitting the column raises ValueError."""
    if value is None or value == "":
        return None, None
    dec = _exact(value)
    rounded = dec.quantize(_QUANTS[scale], rounding=ROUND_HALF_EVEN)
    if rounded == dec:
        return rounded.quantize(_QUANT), None
    text = value.strip() if isinstance(value, str) else str(dec)
    return rounded.quantize(_QUANT), text


# attributes typed decimal (money in major units): a float in one of them means the body is
# decoded again exactly
_DECIMAL_ATTRIBUTES = tuple(name for name, kind in ATTRIBUTE_TYPES.items() if kind == "decimal")


def loads_exact(body: bytes | str) -> Any:
    """A JSON:API body, its decimal attributes exact: decoded by orjson (the fast path: money
    comes as strings, or not at all, on most pages), and again with every fractional number
    as the Decimal of its text where a record's decimal attribute came as a JSON number with
    a fraction (a float would lose digits past the 17th)."""
    doc = orjson.loads(body)
    if _float_money(doc):
        return json.loads(body, parse_float=Decimal)
    return doc


def _float_money(doc: Any) -> bool:
    if not isinstance(doc, dict):
        return False
    data = doc.get("data")
    records = data if isinstance(data, list) else [data]
    included = doc.get("included")
    if isinstance(included, list):
        records = [*records, *included]
    for record in records:
        attributes = record.get("attributes") if isinstance(record, dict) else None
        if isinstance(attributes, dict):
            for name in _DECIMAL_ATTRIBUTES:
                if type(attributes.get(name)) is float:
                    return True
    return False


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
    if not MIN_BIGINT <= result < MAX_BIGINT:
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



def normal_word(value: str) -> str:
    """A provider, type or status as compared (A8): lower case, spaces and underscores alike
    (`In Transit` -> `in_transit`, `Platform Payments` -> `platform_payments`)."""
    return "_".join(value.strip().lower().replace("_", " ").split())
