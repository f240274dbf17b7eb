"""Which listed records get their single read (`include=` reads of courses and forms, payout
details with their lines): the N+1 of detail resources.

A detail read costs one request per record (and group), so it is done only when the list
record is new or changed: a short hash of its `attributes` and `relationships` is kept per id in
dlt state and compared on the next run. Timestamps alone are not enough (records dated after
the server clock always look "changed"); hashes alone would make the state grow with every
order ever listed, so resources with `detail_if_changed` keep hashes only for records recent
enough to pass that timestamp gate on the next run.

A record is read with all its includes in one request; when the platform cannot build that
(a 5xx for a large course), it is read again in the smaller `include_split` groups, and its id
is remembered in state so that later runs ask the right way first.
"""

from __future__ import annotations

import functools
import hashlib
import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import orjson

from .client import CreatorPlatformClient
from .endpoints import DAY_S, Resource
from .errors import ApiError, BadResponseError
from .linestream import decode_streamed
from .values import parse_timestamp

log = logging.getLogger("creator_sync.details")
MERGED_ATTEMPTS = 2  # a merged include that fails twice is read in groups (no long backoff)

DEFAULT_DETAIL_REFRESH_S = 7 * DAY_S  # re-read every detail at least this often
GRACE = timedelta(hours=1)  # timestamp gate slack (clock skew between list and cursor)


def record_hash(item: dict[str, Any]) -> str:
    """Stable 16-hex digest of what the list shows of a record."""
    body = {"a": item.get("attributes"), "r": item.get("relationships")}
    raw = orjson.dumps(body, option=orjson.OPT_SORT_KEYS, default=str)
    return hashlib.blake2b(raw, digest_size=8).hexdigest()


@dataclass
class DetailGate:
    """Per (resource, site) decision and the hashes to keep for the next run."""

    resource: Resource
    known: dict[str, str]  # id -> hash, from the last run's state
    reread_all: bool  # first run, --full-refresh or periodic detail refresh
    changed_since: datetime | None  # timestamp gate (resources with detail_if_changed)
    keep_since: datetime | None  # hashes of records older than this are not kept
    seen: dict[str, str] = field(default_factory=dict)
    skipped: int = 0
    split: set[str] = field(default_factory=set)  # ids read in `include_split` groups

    def _recent(self, attrs: Any, since: datetime | None) -> bool:
        if since is None or not self.resource.detail_if_changed:
            return True
        if not isinstance(attrs, dict):
            return True  # malformed: normalisation reports it with resource, URL and id
        for name in self.resource.detail_if_changed:
            try:
                value = parse_timestamp(attrs.get(name))
            except (ValueError, TypeError):
                return True  # let normalisation report it with full context
            if value is not None and value >= since:
                return True
        return False

    def needs(self, item: dict[str, Any]) -> bool:
        """True if the record's details must be read now (and remember its hash)."""
        rid = str(item["id"])
        digest = record_hash(item)
        attrs = item.get("attributes")
        already = self.seen.get(rid) == digest  # read earlier in this run (re-pass, feed)
        if self._recent(attrs, self.keep_since):
            self.seen[rid] = digest
        if already:
            self.skipped += 1
            return False
        if self.reread_all:
            return True
        if self._recent(attrs, self.changed_since) and self.known.get(rid) != digest:
            return True
        self.skipped += 1
        return False


def detail_gate(
    resource: Resource,
    site_state: dict[str, Any],
    *,
    full_listing: bool,
    force: bool,
    now: datetime,
    started: datetime,
    refresh_every_s: int | None,
) -> DetailGate:
    """Build the gate from state. `full_listing`: the plan re-reads everything anyway
    (periodic full refresh of a windowed resource); `force`: --full-refresh."""
    known = site_state.get("detail_hash")
    last = site_state.get("detail_full_at")
    every = refresh_every_s or DEFAULT_DETAIL_REFRESH_S
    stale = resource.detail_refresh and (
        last is None or (now - parse_timestamp(last)).total_seconds() >= every)
    if resource.detail_if_changed:
        # windowed resources (orders): their own periodic full refresh re-reads all
        reread = force or full_listing or not isinstance(known, dict)
    else:
        reread = force or stale or not isinstance(known, dict)
    changed_since = None
    if resource.detail_if_changed and site_state.get("detail_since"):
        changed_since = parse_timestamp(site_state["detail_since"]) - GRACE
    keep_since = started - GRACE if resource.detail_if_changed else None
    split = site_state.get("detail_split")
    return DetailGate(
        resource, dict(known) if isinstance(known, dict) else {}, reread, changed_since,
        keep_since, split=set(split) if isinstance(split, list) else set(),
    )


def save_gate(
    site_state: dict[str, Any], gate: DetailGate, *, started: datetime, complete: bool = True
) -> None:
    """Persist the hashes (and when details were last all re-read) after a good listing.

    `complete=False`: the listing read only part of what the hashes cover (an ordinary run's
    short window): the hashes of records it did not list are kept, else the next deep run would
    take them for new records and re-read them all. Full runs replace them, and so do deep runs
    of resources that keep hashes of recent records only (`detail_if_changed`); both bounded.
    """
    kept = gate.seen if complete else {**gate.known, **gate.seen}
    site_state["detail_hash"] = kept
    if gate.split or "detail_split" in site_state:  # only records still known
        site_state["detail_split"] = sorted(i for i in gate.split if i in kept)
    stamp = started.strftime("%Y-%m-%dT%H:%M:%SZ")
    if gate.reread_all:
        site_state["detail_full_at"] = stamp
    if gate.resource.detail_if_changed:
        site_state["detail_since"] = stamp


def keep_read_hashes(site_state: dict[str, Any], gate: DetailGate, left_out: set[str]) -> None:
    """A listing stopped at a checkpoint: keep the hashes of the records handed on with their
    detail reads (all those listed, but `left_out`: its last page's records not handed on), so
    that the listing going on, and the catch-up after it, read no detail twice. The stamps of a
    complete pass (`detail_full_at`, `detail_since`) wait for the listing to complete."""
    seen = {rid: digest for rid, digest in gate.seen.items() if rid not in left_out}
    site_state["detail_hash"] = {**gate.known, **seen}


def _read_groups(
    client: CreatorPlatformClient, resource: Resource, rid: str,
    groups: tuple[tuple[str, ...], ...],
    site: str | None,
    server_error_attempts: int | None = None,
) -> list[tuple[str, list[Any]]]:
    """One GET per include group: [(url, [record?, *included]), ...], the record itself (its
    freshest form) with the last response. `site`: the listing's, sent where the single read
    authorises by site (`Resource.detail_site`)."""
    record: Any = None
    out: list[tuple[str, list[Any]]] = []
    path = resource.streamed_path  # its lines parsed in parts later (`LineStream`), not here
    decode = None if path is None else functools.partial(decode_streamed, path=path)
    for group in groups:
        params = {"include": ",".join(group)} if group else {}  # empty: a plain single read
        if resource.detail_site and site is not None:
            params["filter[site_id]"] = site
        url = client.url(f"{resource.path}/{rid}", params)
        doc = client.get(f"{resource.path}/{rid}", params, resource=resource.name,
                         exact_decimals=resource.exact_decimals,
                         server_error_attempts=server_error_attempts, decode=decode)
        data = doc.get("data") if isinstance(doc, dict) else None
        if not isinstance(data, dict):
            raise BadResponseError("detail response has no `data` object", resource=resource.name, url=url)
        found = doc.get("included")
        if not isinstance(found, list):
            # quirk: some records carry `included` inside the resource object
            found = data.pop("included", None)
        data.pop("included", None)
        out.append((url, list(found) if isinstance(found, list) else []))
        record = data
    if out:
        url, items = out[-1]
        out[-1] = (url, [record, *items])
    return out


def read_detail(
    client: CreatorPlatformClient, resource: Resource, rid: str, gate: DetailGate | None = None,
    site: str | None = None,
) -> list[tuple[str, list[Any]]] | None:
    """A record re-read with its includes, or None when its single read answers 404 (removed
    since it was listed, or a platform without that read): the list record then stands."""
    try:
        return _read_detail(client, resource, rid, gate, site)
    except ApiError as exc:
        if exc.status != 404:
            raise
        log.info("%s %s: single read answered 404; keeping the list record", resource.name, rid)
        return None


def _read_detail(
    client: CreatorPlatformClient, resource: Resource, rid: str, gate: DetailGate | None,
    site: str | None,
) -> list[tuple[str, list[Any]]]:
    """Merged in one request, or in `include_split` groups when the server answered the
    merged one with a 5xx before (`gate.split`) or does now."""
    if not resource.include_split:
        return _read_groups(client, resource, rid, resource.include, site)
    if gate is None or rid not in gate.split:
        try:
            # a merged include the server cannot build fails the same way every time
            return _read_groups(client, resource, rid, resource.include, site, MERGED_ATTEMPTS)
        except ApiError as exc:
            if exc.status is None or exc.status < 500:
                raise
            log.info("%s %s: include %s failed (HTTP %s); reading it in groups",
                     resource.name, rid, ",".join(resource.include[0]), exc.status)
        if gate is not None:
            gate.split.add(rid)  # set.add is atomic: safe from the detail pool's threads
    return _read_groups(client, resource, rid, resource.include_split, site)
