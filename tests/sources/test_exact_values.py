"""Values read exactly (issue 40, point 4): money and rates from the JSON text, never through a
float; money at the cent, half-even, with the text kept where it was not whole cents; a record
whose value cannot be read is set aside (`Rejected`), the rest of its batch loads."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from creator_sync.sources.creator_platform.arrow_tables import rows_to_arrow
from creator_sync.sources.creator_platform.errors import NormalizationError, UnreadableValue
from creator_sync.sources.creator_platform.rows import normalize_resources
from creator_sync.sources.creator_platform.values import loads_exact, read_decimal

AT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
PAYOUT_BODY = (b'{"data": {"id": "9", "type": "platform_payments_payouts", "attributes": '
               b'{"amount": 3.3000000000000003, "status": "Paid", "transactions": [{"amount": '
               b'3.3000000000000003, "fee": 0.125, "net": 3.18, "exchange_rate": 1.08345678912, '
               b'"presented_amount": 3.05}]}}}')


def _doc(net_revenue: str, duration: str = "12.5") -> bytes:
    return (b'{"data": [{"id": "1", "type": "customers", "attributes": {"net_revenue": '
            + net_revenue.encode() + b'}}], "included": [{"id": "2", "type": "media", '
            b'"attributes": {"duration_in_minutes": ' + duration.encode() + b'}}]}')


def test_loads_exact_keeps_the_text_of_a_fractional_amount():
    doc = loads_exact(_doc("1.08345678912345678901"))
    assert doc["data"][0]["attributes"]["net_revenue"] == Decimal("1.08345678912345678901")
    assert doc["included"][0]["attributes"]["duration_in_minutes"] == Decimal("12.5")
    for written in ('"0.0"', "10000"):  # no fractional amount: orjson's document, as is
        doc = loads_exact(_doc(written))
        assert doc["data"][0]["attributes"]["net_revenue"] == json.loads(written)
        assert type(doc["included"][0]["attributes"]["duration_in_minutes"]) is float


@pytest.mark.parametrize(("value", "scale", "stored", "raw"), [
    (Decimal("3.3000000000000003"), 2, Decimal("3.30"), "3.3000000000000003"),
    (Decimal("0.125"), 2, Decimal("0.12"), "0.125"),  # half-even: to the even cent
    (Decimal("0.135"), 2, Decimal("0.14"), "0.135"),
    (Decimal("-0.005"), 2, Decimal("0.00"), "-0.005"),
    (Decimal("12.50"), 2, Decimal("12.50"), None),  # whole cents: nothing to keep
    ("0.0", 2, Decimal("0"), None),  # a numeric string, as written
    (10000, 2, Decimal("10000"), None),  # an integer: major units, the field's unit
    (Decimal("1.08345678912"), 9, Decimal("1.083456789"), "1.08345678912"),  # a rate
    (Decimal("1.0"), 9, Decimal("1"), None),
])
def test_read_decimal_rounds_half_even_and_keeps_the_text(value, scale, stored, raw):
    got, text = read_decimal(value, scale)
    assert got == stored and text == raw


@pytest.mark.parametrize("value", ["n/a", "12,50", True, "NaN", "1e40", {"cents": 5}])
def test_read_decimal_refuses_what_is_no_number_the_column_holds(value):
    with pytest.raises((ValueError, ArithmeticError)):
        read_decimal(value, 2)


def test_a_payout_with_a_long_rate_and_a_float_amount_loads_exactly():
    doc = loads_exact(PAYOUT_BODY)
    rows = normalize_resources([doc["data"]], site_id="1", extracted_at=AT, rejected=[])
    (payout,) = rows["payouts"]
    (line,) = rows["payout_lines"]
    assert payout["amount"] == Decimal("3.30") and payout["amount_raw"] == "3.3000000000000003"
    assert line["exchange_rate"] == Decimal("1.083456789")
    assert line["exchange_rate_raw"] == "1.08345678912"
    assert line["fee"] == Decimal("0.12") and line["fee_raw"] == "0.125"
    assert "net_raw" not in line and "presented_amount_raw" not in line  # whole cents
    tables = rows_to_arrow(rows)
    assert tables["payout_lines"].column("exchange_rate_raw").to_pylist() == ["1.08345678912"]
    assert tables["payouts"].column("amount").to_pylist() == [Decimal("3.300000000")]


def _customers(*values):
    return [{"id": str(n), "type": "customers", "attributes": {"name": f"c{n}", "net_revenue": v}}
            for n, v in enumerate(values, start=1)]


def test_a_record_that_cannot_be_read_is_set_aside_and_the_rest_loads():
    rejected: list = []
    rows = normalize_resources(_customers("10.00", "n/a", 10000, "0.0"), site_id="7",
                               extracted_at=AT, resource="customers", rejected=rejected)
    assert [r["id"] for r in rows["customers"]] == ["1", "3", "4"]
    (bad,) = rejected
    assert (bad.record_id, bad.field, bad.value) == ("2", "net_revenue", "n/a")
    assert "not a number" in bad.reason and bad.record["id"] == "2"


def test_a_bad_line_value_sets_its_payout_aside_with_the_field_named():
    doc = loads_exact(PAYOUT_BODY.replace(b'"fee": 0.125', b'"fee": "twelve"'))
    rejected: list = []
    rows = normalize_resources([doc["data"]], site_id="1", extracted_at=AT, rejected=rejected)
    assert not rows.get("payouts") and not rows.get("payout_lines")
    assert rejected[0].field == "transactions.fee" and rejected[0].value == "twelve"


def test_without_a_rejected_list_a_bad_value_still_fails_the_batch():
    with pytest.raises(UnreadableValue) as err:
        normalize_resources(_customers("n/a"), site_id="7", extracted_at=AT, resource="customers")
    assert "net_revenue" in str(err.value) and "customers" in str(err.value)


def test_a_malformed_record_is_not_set_aside():
    bad = {"id": "1", "type": "customers", "attributes": ["not", "an", "object"]}
    with pytest.raises(NormalizationError):
        normalize_resources([bad], site_id="7", extracted_at=AT, rejected=[])
