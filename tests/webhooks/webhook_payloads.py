"""Delivery bodies shaped like spec section 6, for tests that run without the sandbox."""

from __future__ import annotations

from typing import Any


def customer(cid: str = "3000000001", site: str = "2200000001", **attrs: Any) -> dict:
    return {
        "id": cid,
        "type": "customers",
        "attributes": {
            "name": "Ada",
            "email": "ada@example.com",
            "net_revenue": "123.45",
            "created_at": "2026-01-02T03:04:05Z",
            **attrs,
        },
        "relationships": {
            "site": {"data": {"id": site, "type": "sites"}},
            "contact": {"data": {"id": "3100000001", "type": "contacts"}},
        },
        "links": {"contact": "https://example.test/v1/contacts/3100000001"},
    }


def transaction(tid: str = "3300000001", amount: int = 4999, **attrs: Any) -> dict:
    return {
        "id": tid,
        "type": "transactions",
        "attributes": {
            "action": "charge",
            "state": "succeeded",
            "payment_type": "one_time",
            "amount_in_cents": amount,
            "sales_tax_in_cents": 0,
            "currency": "USD",
            "currency_symbol": "$",
            "formatted_amount": f"${amount / 100:.2f}",
            "created_at": "2026-01-02T03:04:05+02:00",
            **attrs,
        },
        "relationships": {
            "customer": {"data": {"id": "3000000001", "type": "customers"}},
            "offer": {"data": None},
        },
    }


def order(oid: str = "3400000001", items: tuple[str, ...] = ("3500000001", "3500000002")) -> list[dict]:
    head = {
        "id": oid,
        "type": "orders",
        "attributes": {
            "order_number": 1001,
            "currency_code": "USD",
            "fulfilled_at": None,
            "created_at": "2026-01-02T03:04:05Z",
            "total_price_in_cents": 9998,
            "subtotal_in_cents": 9998,
            "sales_tax_amount_in_cents": 0,
            "discount_amount_in_cents": 0,
        },
        "relationships": {
            "site": {"data": {"id": "2200000001", "type": "sites"}},
            "customer": {"data": {"id": "3000000001", "type": "customers"}},
            "order_items": {"data": [{"id": i, "type": "order_items"} for i in items]},
            "payment_transactions": {"data": [{"id": "3300000001", "type": "transactions"}]},
        },
    }
    lines = [
        {
            "id": i,
            "type": "order_items",
            "attributes": {"quantity": 1, "title": "Course", "total_price_in_cents": 4999},
            "relationships": {"order": {"data": {"id": oid, "type": "orders"}}},
        }
        for i in items
    ]
    return [head, *lines]


def delivery(event: str, rid: str, payload: list[dict]) -> dict:
    return {"id": rid, "event": event, "payload": payload}


def payment_succeeded(tid: str = "3300000001", amount: int = 4999) -> dict:
    return delivery("payment_succeeded", tid, [transaction(tid, amount), customer()])


def order_created(oid: str = "3400000001") -> dict:
    return delivery("order_created", oid, [transaction(), customer(), *order(oid)])
