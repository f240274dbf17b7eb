"""What one journal record holds, and how a delivery body is checked before it is accepted.

A record is either an accepted delivery (`kind` "event") or a dead letter (`kind` "dead": a
malformed body or an unknown event) so that nothing the platform sent is ever silently dropped.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson

from creator_sync.pipelines.delivery_rows import Delivery
from creator_sync.pipelines.webhooks.events import EVENTS

DEAD_BODY_LIMIT = 64 * 1024  # bytes of a rejected body kept for inspection


class BadDelivery(ValueError):
    """A delivery we reject; `status` is the HTTP answer, `reason` a short machine code."""

    def __init__(self, status: int, reason: str, detail: str, event: str | None = None):
        super().__init__(detail)
        self.status = status
        self.reason = reason
        self.detail = detail
        self.event = event


@dataclass(frozen=True)
class DeadLetter:
    reason: str
    detail: str
    event: str | None
    body: str
    received_at: datetime


def payload_hash(payload: Any) -> str:
    """Hash of the canonical JSON (sorted keys), so key order in a redelivery does not matter."""
    return hashlib.sha256(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)).hexdigest()


def parse_delivery(
    raw: bytes, received_at: datetime, site_id: str | None = None
) -> Delivery:
    """Check a delivery body against spec section 6; raise BadDelivery naming the bad field."""
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise BadDelivery(400, "malformed_json", f"body is not valid JSON: {exc}") from None
    if not isinstance(body, dict):
        raise BadDelivery(400, "malformed_json", "body must be a JSON object with event, id, payload")
    event = body.get("event")
    if not isinstance(event, str) or not event:
        raise BadDelivery(422, "missing_event", "field 'event' is missing or not a string")
    if event not in EVENTS:
        known = ", ".join(EVENTS)
        raise BadDelivery(422, "unknown_event", f"unknown event {event!r} (known: {known})", event)
    resource_id = body.get("id")
    if isinstance(resource_id, int) and not isinstance(resource_id, bool):
        resource_id = str(resource_id)
    if not isinstance(resource_id, str) or not resource_id:
        raise BadDelivery(422, "bad_id", f"event {event!r}: field 'id' is missing or not a string", event)
    payload = body.get("payload")
    if not isinstance(payload, list):
        raise BadDelivery(422, "bad_payload", f"event {event!r}: field 'payload' must be an array", event)
    for index, resource in enumerate(payload):
        if not (
            isinstance(resource, dict)
            and isinstance(resource.get("id"), str | int)
            and isinstance(resource.get("type"), str)
        ):
            raise BadDelivery(
                422,
                "bad_payload",
                f"event {event!r}: payload[{index}] must be a resource object with id and type",
                event,
            )
    return Delivery(event, resource_id, payload, payload_hash(payload), received_at, site_id)


def dead_letter(raw: bytes, error: BadDelivery, received_at: datetime) -> DeadLetter:
    body = raw[:DEAD_BODY_LIMIT].decode("utf-8", errors="replace")
    return DeadLetter(error.reason, error.detail, error.event, body, received_at)


def encode(item: Delivery | DeadLetter) -> bytes:
    """Journal body for one accepted delivery or dead letter."""
    if isinstance(item, Delivery):
        return orjson.dumps(
            {
                "kind": "event",
                "event": item.event,
                "id": item.resource_id,
                "payload": item.payload,
                "hash": item.payload_hash,
                "received_at": item.received_at.isoformat(),
                "site_id": item.site_id,
            }
        )
    return orjson.dumps(
        {
            "kind": "dead",
            "reason": item.reason,
            "detail": item.detail,
            "event": item.event,
            "body": item.body,
            "received_at": item.received_at.isoformat(),
        }
    )


def decode(raw: bytes) -> Delivery | DeadLetter:
    data = orjson.loads(raw)
    received_at = datetime.fromisoformat(data["received_at"])
    if data["kind"] == "event":
        return Delivery(
            data["event"],
            data["id"],
            data["payload"],
            data["hash"],
            received_at,
            data.get("site_id"),
        )
    return DeadLetter(data["reason"], data["detail"], data.get("event"), data["body"], received_at)


def utcnow() -> datetime:
    return datetime.now(UTC)
