"""What `forget` does to one text or one delivery: the person's values gone, the rest kept.

Pure, shared by the warehouse's event log (`webhook_events.payload`, dead letters), the webhook
journal's records and the log files: the same rule everywhere a delivery or a line may name
the person.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from creator_sync.sources.creator_platform import personal_columns

ERASED = "[erased]"
# resource type -> the relationship that names its person, and which people table that is
_PERSON_RELATIONSHIPS = {"customer": "customers", "contact": "contacts"}


@dataclass(frozen=True)
class Person:
    """One person to forget: their ids, and the texts that name them (emails and names as the
    warehouse holds them). Erasing a text removes every occurrence, case-insensitively."""

    contact_ids: frozenset[str]
    customer_ids: frozenset[str]
    texts: frozenset[str]

    def ids(self, people_table: str) -> frozenset[str]:
        return self.contact_ids if people_table == "contacts" else self.customer_ids

    @property
    def pattern(self) -> re.Pattern[str] | None:
        texts = sorted((t for t in self.texts if t.strip()), key=len, reverse=True)
        if not texts:
            return None
        return re.compile("|".join(re.escape(t) for t in texts), re.IGNORECASE)

    def named_in(self, data: bytes | str) -> bool:
        """Whether `data` holds any of the person's texts or (as a JSON string) ids."""
        text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
        pattern = self.pattern
        if pattern is not None and pattern.search(text):
            return True
        return any(f'"{i}"' in text for i in self.contact_ids | self.customer_ids)


def join(people: Iterable[Person]) -> Person:
    """Several people forgotten at once, as one."""
    people = list(people)
    return Person(frozenset().union(*(p.contact_ids for p in people)),
                  frozenset().union(*(p.customer_ids for p in people)),
                  frozenset().union(*(p.texts for p in people)))


def erase_in_text(text: str, person: Person) -> str:
    pattern = person.pattern
    return text if pattern is None else pattern.sub(ERASED, text)


def _concerns(resource: dict[str, Any], person: Person) -> bool:
    rid = str(resource.get("id"))
    kind = resource.get("type")
    if kind in ("contacts", "customers") and rid in person.ids(str(kind)):
        return True
    for relation, people_table in _PERSON_RELATIONSHIPS.items():
        related = ((resource.get("relationships") or {}).get(relation) or {}).get("data")
        if isinstance(related, dict) and str(related.get("id")) in person.ids(people_table):
            return True
    email = (resource.get("attributes") or {}).get("email")
    return isinstance(email, str) and email.strip().lower() in {t.lower() for t in person.texts}


def _scrub_strings(value: Any, person: Person) -> Any:
    if isinstance(value, str):
        return erase_in_text(value, person)
    if isinstance(value, list):
        return [_scrub_strings(v, person) for v in value]
    if isinstance(value, dict):
        return {k: _scrub_strings(v, person) for k, v in value.items()}
    return value


def erase_in_payload(payload: Any, person: Person) -> Any:
    """A delivery's payload (its array of resources) with the person's personal attributes set
    to null, in every resource that is theirs, and their texts erased wherever else they stand."""
    if not isinstance(payload, list):
        return _scrub_strings(payload, person)
    out = []
    for resource in payload:
        if isinstance(resource, dict) and _concerns(resource, person):
            attributes = dict(resource.get("attributes") or {})
            for column in personal_columns(str(resource.get("type"))) & set(attributes):
                attributes[column] = None
            resource = {**resource, "attributes": attributes}
        out.append(_scrub_strings(resource, person))
    return out


def erase_in_body(body: bytes, person: Person) -> bytes | None:
    """A journal record or dead letter's body without the person, or None when it does not name
    them. A body that is not a delivery's JSON has the person's texts erased as text."""
    if not person.named_in(body):
        return None
    try:
        delivery = orjson.loads(body)
    except orjson.JSONDecodeError:
        return erase_in_text(body.decode("utf-8", "replace"), person).encode()
    if isinstance(delivery, dict) and "payload" in delivery:
        delivery = {**delivery, "payload": erase_in_payload(delivery["payload"], person)}
    return orjson.dumps(_scrub_strings(delivery, person))
