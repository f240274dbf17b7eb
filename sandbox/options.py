"""Sandbox options: one dataclass shared by the CLI, `run_sandbox` and the app."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, fields

from creator_sync.sandbox.ratelimit import WINDOW_KINDS

CUSTOMER_RULES = ("delete", "keep", "refuse")  # what deleting a customer's contact does to it

DEFAULT_NOW = "2026-03-01T12:00:00Z"
DEFAULT_BRAND = "platform"
BRAND_WORD = re.compile(r"^[a-z][a-z0-9]{0,39}$")


@dataclass
class Options:
    host: str = "127.0.0.1"
    port: int = 0
    seed: int = 42
    scale: str = "demo"
    sites: int = 2
    now: str | None = DEFAULT_NOW
    token_ttl: int = 7200
    refresh_token_ttl: int = 30 * 86400
    page_size_default: int = 25
    page_size_max: int = 100
    rate_limit: int = 0  # requests per rate_window per client; 0 = unlimited
    rate_window: float = 60.0  # seconds
    rate_window_type: str = "sliding"  # or "fixed" (clock-aligned windows)
    retry_after: bool = True
    latency_ms: int = 0
    fault_rate: float = 0.0
    fault_slow_seconds: float = 15.0
    quirks: bool = False
    # payouts (the first N rows) whose `amount` reads `n/a`: a value no sync can read, for the
    # drill of a record set aside (docs/sync.md#values-that-cannot-be-read)
    unreadable_amounts: int = 0
    # `collection:filter,...` (`blog_posts:updated_at_gt`): list filters answered with a 400,
    # as a platform that does not take them (docs/sandbox.md)
    refuse_filters: str = ""
    brand: str = DEFAULT_BRAND  # payouts at /v1/<brand>_payments_payouts (addendum A1)
    maintenance: bool = False  # every /v1 request answers 503 (A4: /v1/version's 503)
    activity_interval: float = 0.0
    activity_count: int = 10
    settlement_delay_days: int = 2
    webhook_retries: int = 3
    webhook_backoff: float = 0.5
    seconds_per_event: int = 3600
    response_cache_mb: int = 256  # how far the clock moves per activity event
    # what deleting a customer's contact does to the customer (deletes.py): delete | keep | refuse
    customer_on_contact_delete: str = "delete"
    # per activity event, the chance that a contact (and, apart, a note) is deleted; off by
    # default: a sync after activity then equals a fresh sync (deletes show only at the weekly
    # full listing), which the drills and benchmarks compare
    delete_rate: float = 0.0

    @classmethod
    def from_kwargs(cls, **kwargs: object) -> Options:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(kwargs) - known)
        if unknown:
            raise TypeError(f"unknown sandbox option(s): {', '.join(unknown)}")
        return cls(**kwargs)  # type: ignore[arg-type]

    def validate(self) -> None:
        if self.page_size_default < 1 or self.page_size_max < self.page_size_default:
            raise ValueError("need 1 <= page_size_default <= page_size_max")
        if not 0.0 <= self.fault_rate <= 1.0:
            raise ValueError(f"fault_rate must be between 0 and 1, got {self.fault_rate}")
        if self.token_ttl < 1:
            raise ValueError("token_ttl must be at least 1 second")
        if self.rate_window <= 0:
            raise ValueError(f"rate_window must be positive seconds, got {self.rate_window}")
        if self.rate_window_type not in WINDOW_KINDS:
            raise ValueError(f"rate_window_type must be one of {', '.join(WINDOW_KINDS)}, "
                             f"got {self.rate_window_type!r}")
        if self.settlement_delay_days < 0:
            raise ValueError("settlement_delay_days must be >= 0")
        if not BRAND_WORD.match(self.brand):
            raise ValueError(f"--brand must be one lowercase word of letters and digits "
                             f"(starting with a letter), got {self.brand!r}")
        if self.unreadable_amounts < 0:
            raise ValueError("--unreadable-amounts must be >= 0")
        self.refused_filters()
        if self.customer_on_contact_delete not in CUSTOMER_RULES:
            raise ValueError(f"customer_on_contact_delete must be one of "
                             f"{', '.join(CUSTOMER_RULES)}, got {self.customer_on_contact_delete!r}")
        if not 0.0 <= self.delete_rate <= 1.0:
            raise ValueError(f"delete_rate must be between 0 and 1, got {self.delete_rate}")
        self.now_epoch()  # a bad --now is a usage error, not a traceback

    def refused_filters(self) -> frozenset[tuple[str, str]]:
        """(collection path, filter name) pairs of `refuse_filters`."""
        pairs = set()
        for item in filter(None, (i.strip() for i in self.refuse_filters.split(","))):
            path, _, name = item.partition(":")
            name = name.removeprefix("filter[").removesuffix("]")
            if not path or not name:
                raise ValueError(f"--refuse-filters takes collection:filter items "
                                 f"(blog_posts:updated_at_gt), got {item!r}")
            pairs.add((path.strip("/"), name))
        return frozenset(pairs)

    def now_epoch(self) -> int:
        return parse_now(self.now or DEFAULT_NOW)


def parse_now(text: str) -> int:
    """ISO 8601 instant -> epoch seconds; a naive value is UTC."""
    try:
        moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"--now must be an ISO 8601 instant, got {text!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return int(moment.timestamp())
