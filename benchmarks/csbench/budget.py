"""The request floor of a full sync: the fewest requests any client needs for the same data.

floor = Σ over list endpoints and sites of ceil(total ÷ the largest page size)
      + one detail read per payout, per course and per form (their lines and nested records
        are on no list)
      + the token requests (grant, revoke) and site discovery (``/v1/sites`` is a list endpoint).

The endpoints are the ones ours' full sync listed (from its request log), re-read once at the
largest page size to get their totals; an endpoint without ``page[size]`` (payouts) counts the
pages its own meta announces, and a single-object endpoint (``/v1/me``) counts one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from urllib.parse import parse_qsl, urlencode

import httpx

from csbench import traffic
from csbench.measure import Request

LARGEST_PAGE_SIZE = 100  # the sandbox's maximum page[size] (addendum A7: clients use 100)
PAGE_SIZE = "page[size]"
# collections whose every record needs one single read (payout lines, course and form contents)
DETAIL_SUFFIXES = ("_payments_payouts", "/courses", "/forms")


@dataclass
class Floor:
    list_pages: int = 0
    detail_reads: int = 0
    auth: int = 0
    per_endpoint: dict[str, int] = field(default_factory=dict)  # "path[site]" -> pages

    @property
    def total(self) -> int:
        return self.list_pages + self.detail_reads + self.auth

    def as_json(self) -> dict[str, object]:
        return {**asdict(self), "total": self.total}


def _floor_query(query: str) -> tuple[dict[str, str], bool]:
    """Ours' first-page query reduced to what a complete listing needs: the site filter and
    the largest page size where ours sent one (an endpoint that takes none got none)."""
    params = dict(parse_qsl(query))
    paged = PAGE_SIZE in params
    kept = {k: v for k, v in params.items() if k == traffic.SITE_FILTER}
    kept["page[number]"] = "1"
    if paged:
        kept[PAGE_SIZE] = str(LARGEST_PAGE_SIZE)
    return kept, paged


def _pages(doc: dict[str, object], paged: bool) -> int:
    data = doc.get("data")
    if isinstance(data, dict):  # a single object (/v1/me)
        return 1
    meta = doc.get("meta") if isinstance(doc.get("meta"), dict) else {}
    total = traffic.total_from_meta(meta)  # type: ignore[arg-type]
    if paged:  # an empty listing still takes one request to learn that it is empty
        return max(1, math.ceil(total / LARGEST_PAGE_SIZE))
    pagination = meta.get("pagination") if isinstance(meta, dict) else None
    if isinstance(pagination, dict) and isinstance(pagination.get("last"), int):
        return int(pagination["last"])
    size = len(data) if isinstance(data, list) else 0
    return max(1, math.ceil(total / size) if size else 1)


def request_floor(
    base_url: str,
    token: str,
    requests: Sequence[Request],
    transport: httpx.BaseTransport | None = None,
) -> Floor:
    """The floor for the data ours' full sync (``requests``) listed, read off the API."""
    floor = Floor(auth=sum(1 for r in requests if traffic.is_auth(r)))
    with httpx.Client(
        base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=60.0,
        transport=transport,
    ) as client:
        for (path, site), query in sorted(traffic.first_pages(requests).items()):
            params, paged = _floor_query(query)
            response = client.get(f"{path}?{urlencode(params, safe='[]')}")
            response.raise_for_status()
            doc = response.json()
            pages = _pages(doc, paged)
            floor.per_endpoint[f"{path}[{site}]" if site else path] = pages
            floor.list_pages += pages
            if path.endswith(DETAIL_SUFFIXES):
                floor.detail_reads += traffic.total_from_meta(doc["meta"])
    return floor
