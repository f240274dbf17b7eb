"""Facts read off a client's request log: pages, endpoints, concurrency, rate, record counts."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl

import httpx

from csbench.measure import Request

SITE_FILTER = "filter[site_id]"


def median(values: Iterable[float]) -> float:
    items = list(values)
    return float(statistics.median(items)) if items else float("nan")


def is_auth(request: Request) -> bool:
    return request.path.startswith("/v1/oauth/")


def is_list(request: Request) -> bool:
    """A collection read (``/v1/<collection>``), as opposed to a single read or auth."""
    parts = request.path.strip("/").split("/")
    return request.method == "GET" and len(parts) == 2 and parts[0] == "v1"


def pages(requests: Sequence[Request]) -> list[str]:
    """Every successful GET as ``path?query``, in the order it was started."""
    ordered = sorted(
        (r for r in requests if r.method == "GET" and r.status == 200), key=lambda r: r.start_s
    )
    return [f"{r.path}?{r.query}" if r.query else r.path for r in ordered]


def endpoint_key(request: Request) -> tuple[str, str]:
    """(collection path, site id or ""): one "resource per site" of the incremental budget."""
    site = dict(parse_qsl(request.query)).get(SITE_FILTER, "")
    return request.path, site


def list_endpoints(requests: Sequence[Request]) -> set[tuple[str, str]]:
    return {endpoint_key(r) for r in requests if is_list(r)}


def requests_by_endpoint(requests: Sequence[Request]) -> dict[str, int]:
    """Requests per collection path, single reads of one collection under ``<path>/{id}``,
    largest first: where a sync's requests go."""
    counts: dict[str, int] = {}
    for request in requests:
        parts = request.path.rstrip("/").split("/")
        key = request.path if len(parts) <= 3 or parts[1] != "v1" else "/".join(parts[:3]) + "/{id}"
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: -item[1]))


def peak_in_flight(requests: Sequence[Request]) -> int:
    """Most requests that were open at one instant (ours' real concurrency, all resources)."""
    events = sorted(
        [(r.start_s, 1) for r in requests] + [(r.end_s, -1) for r in requests],
        key=lambda e: (e[0], e[1]),
    )
    level = peak = 0
    for _, step in events:
        level += step
        peak = max(peak, level)
    return peak


def achieved_per_minute(requests: Sequence[Request]) -> float:
    """Requests per minute between the first and the last request start."""
    starts = sorted(r.start_s for r in requests)
    if len(starts) < 2 or starts[-1] <= starts[0]:
        return float("nan")
    return (len(starts) - 1) / (starts[-1] - starts[0]) * 60.0


def first_pages(requests: Sequence[Request]) -> dict[tuple[str, str], str]:
    """For each list endpoint, the query of its first page (to re-read its meta totals)."""
    found: dict[tuple[str, str], str] = {}
    for request in sorted(requests, key=lambda r: r.start_s):
        if not is_list(request) or request.status != 200:
            continue
        query = dict(parse_qsl(request.query))
        if query.get("page[number]", "1") == "1":
            found.setdefault(endpoint_key(request), request.query)
    return found


def total_from_meta(meta: dict[str, object]) -> int:
    """Record total under any of the API's three meta shapes (spec 1.1) or the quirk."""
    for key in ("total_count", "total"):
        value = meta.get(key)
        if isinstance(value, int):
            return value
    pagination = meta.get("pagination")
    if isinstance(pagination, dict) and isinstance(pagination.get("records"), int):
        return int(pagination["records"])
    raise ValueError(f"no record total in meta {sorted(meta)}")


def census(base_url: str, token: str, requests: Sequence[Request]) -> dict[str, int]:
    """How many records the API lists, per ``path[site]``: the denominator of CPU per 100k."""
    counts: dict[str, int] = {}
    with httpx.Client(
        base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=60.0
    ) as client:
        for (path, site), query in sorted(first_pages(requests).items()):
            response = client.get(f"{path}?{query}")
            response.raise_for_status()
            counts[f"{path}[{site}]" if site else path] = records_in(response.json())
    return counts


def records_in(doc: dict[str, object]) -> int:
    """Records a list answer holds in all (its meta total); a single-record endpoint (`/v1/me`,
    no meta) holds its one record."""
    if "meta" not in doc and isinstance(doc.get("data"), dict):
        return 1
    meta = doc.get("meta")
    if not isinstance(meta, dict):
        raise ValueError(f"no meta in a list answer with keys {sorted(doc)}")
    return total_from_meta(meta)


@dataclass
class RateUse:
    """How a run rode a rate limit: API requests only (the token endpoint has its own)."""

    answered: int
    refused: int  # 429s
    errors: int  # other 4xx/5xx answers
    per_minute: float  # answered requests per minute, first request to the end of the run

    @property
    def requests(self) -> int:
        return self.answered + self.refused + self.errors

    @property
    def refused_share(self) -> float:
        return self.refused / self.requests if self.requests else float("nan")


def rate_use(requests: Sequence[Request], end_s: float | None = None) -> RateUse:
    """Answered requests per minute from the first API request to `end_s` (a run stopped at its
    time bound) or to the last request's start (a run that finished)."""
    api = [r for r in requests if not is_auth(r) and r.status]
    answered = [r for r in api if r.status < 400]
    refused = sum(1 for r in api if r.status == 429)
    if not api:
        return RateUse(0, 0, 0, float("nan"))
    first = min(r.start_s for r in api)
    end = end_s if end_s is not None else max(r.start_s for r in api)
    per_minute = len(answered) / (end - first) * 60.0 if end > first else float("nan")
    return RateUse(len(answered), refused, len(api) - len(answered) - refused, per_minute)


def gave_up(log: Path) -> int:
    """Requests the client itself gave up on (its `gave up on` log lines)."""
    if not log.exists():
        return 0
    return sum("gave up on" in line for line in log.read_text(errors="replace").splitlines())
