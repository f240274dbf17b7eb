"""dlt's `validate_dict` with its type hints remembered (`process_tuning.remember_type_hints`, issue 15):
the same verdicts, each TypedDict's hints resolved once."""

from __future__ import annotations

import pytest
from dlt.common import typing as dlt_typing
from dlt.common import validation
from dlt.common.exceptions import DictValidationException
from dlt.common.schema.typing import TColumnSchema, TTableSchema

from creator_sync.pipelines import process_tuning


def _table(**columns):
    return {"name": "contacts", "write_disposition": "merge", "columns": columns}


GOOD = _table(id={"name": "id", "data_type": "text", "nullable": False},
              amount={"name": "amount", "data_type": "decimal", "precision": 38, "scale": 9})
BAD = [
    _table(id={"name": "id", "data_type": "text", "nullable": "no"}),  # wrong type
    _table(id={"name": "id", "data_type": "text", "colour": "red"}),  # unknown key
    {"write_disposition": "merge", "columns": {}, "unknown_prop": 1},  # unknown table key
]


def _verdicts():
    out = []
    for doc in [GOOD, *BAD]:
        try:
            validation.validate_dict_ignoring_xkeys(spec=TTableSchema, doc=doc, path="t")
            out.append("ok")
        except DictValidationException as exc:
            out.append(str(exc))
    return out


@pytest.fixture
def restore_validation():
    original = validation.get_type_hints
    yield
    validation.get_type_hints = original


def test_same_verdicts_with_hints_remembered_and_resolved_once(restore_validation, monkeypatch):
    original = dlt_typing.get_type_hints  # dlt's own, whatever an earlier test patched
    monkeypatch.setattr(validation, "get_type_hints", original)
    before = _verdicts()
    assert before[0] == "ok" and all(v != "ok" for v in before[1:])

    calls: list[object] = []

    def counting(obj, *args, **kwargs):
        calls.append(obj)
        return original(obj, *args, **kwargs)

    monkeypatch.setattr(validation, "get_type_hints", counting)
    process_tuning.remember_type_hints()
    process_tuning.remember_type_hints()  # idempotent: wraps once
    assert getattr(validation.get_type_hints, "remembered", False)
    assert _verdicts() == before
    assert _verdicts() == before
    assert calls.count(TTableSchema) == 1 and calls.count(TColumnSchema) == 1


def test_calls_in_another_namespace_are_not_remembered(restore_validation, monkeypatch):
    monkeypatch.setattr(validation, "get_type_hints", dlt_typing.get_type_hints)
    process_tuning.remember_type_hints()
    patched = validation.get_type_hints
    class Spec:
        x: int
    first = patched(Spec, globalns={"int": int})
    Spec.__annotations__["y"] = str
    assert patched(Spec, globalns={"int": int, "str": str}) == {"x": int, "y": str} != first
