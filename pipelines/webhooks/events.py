"""The one table of per-event facts (spec section 6): everything else looks events up here."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EventSpec:
    name: str
    scopes: tuple[str, ...]
    fires_when: str


EVENTS: dict[str, EventSpec] = {
    spec.name: spec
    for spec in (
        EventSpec("purchase", ("view:purchases",), "a customer makes a purchase"),
        EventSpec("payment_succeeded", ("view:transactions",), "a payment transaction completes"),
        EventSpec("order_created", ("view:transactions", "view:orders"), "a new order is created"),
        EventSpec("form_submission", ("view:form_submissions",), "someone submits a form"),
        EventSpec("tag_added", ("view:contacts",), "a tag is added to a contact"),
        EventSpec("tag_removed", ("view:contacts",), "a tag is removed from a contact"),
    )
}


def event_spec(name: str) -> EventSpec:
    """The facts of a known event, or a ValueError that lists the known ones."""
    try:
        return EVENTS[name]
    except KeyError:
        known = ", ".join(EVENTS)
        raise ValueError(f"unknown event {name!r}; known events: {known}") from None
