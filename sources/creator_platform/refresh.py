"""The customers named by this run's new money, re-read by id: the source's `customers_refresh`.

`customers` can only be windowed on `created_at`, so a customer created before the look-back
whose `net_revenue` moved (a new purchase, a refund) would stay stale until the periodic full
refresh. A resource of the source (`customer_refresh`) waits for `transactions`, `purchases`
and `customers` to end, then reads the customers they reference that the customers listing of
this run did not cover with `GET /v1/customers/{id}` (detail concurrency), merged into
`customers` in the same load.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import dlt
from dlt.sources import DltResource

from .arrow_tables import rows_to_arrow
from .client import CreatorPlatformClient
from .errors import ApiError, BadResponseError, CreatorPlatformError
from .ratelimit import LimiterClosed
from .rows import normalize_resources

log = logging.getLogger("creator_sync.refresh")
FEEDERS = ("transactions", "purchases")  # resources whose rows name a customer
TARGET = "customers"


def stale_customers(report: Any) -> dict[str | None, list[str]]:
    """Site -> customer ids referenced by this run's feeders but not listed this run."""
    out: dict[str | None, list[str]] = {}
    for site, refs in report.customer_refs.items():
        if site in report.customers_full or not refs:
            continue  # a complete listing already read every customer of the site; none named
        todo = refs.without(report.customers_listed.get(site))
        if todo:
            out[site] = todo
    return out


def _read(client: CreatorPlatformClient, cid: str) -> tuple[str, Any] | None:
    path = f"/customers/{cid}"
    url = client.url(path)
    try:
        doc = client.get(path, resource=TARGET)
    except ApiError as exc:
        if exc.status == 404:
            log.info("customer %s referenced but not found (deleted?)", cid)
            return None
        raise
    data = doc.get("data") if isinstance(doc, dict) else None
    if not isinstance(data, dict):
        raise BadResponseError("detail response has no `data` object", resource=TARGET, url=url)
    return url, data


REFRESH = "customers_refresh"  # the resource's name (its rows go to `customers`)


def customer_refresh(run: Any) -> DltResource:
    """The resource re-reading, by id, the customers this run's new money named that its
    customers listing did not read (a `SyncRun`), merged into `customers` on their id.

    A resource of the source like the others, so a plain `pipeline.run(source)` re-reads them
    in the same load. It waits (`RunReport.until_ended`) until `transactions`, `purchases` and
    `customers` have ended, then reads only when `customers` synced (not asked for, not
    permitted, or failed: its state did not advance either). A read that still fails after its
    retries ends the refresh, not the run: `customers` is marked failed (the customers already
    re-read are kept; the rest wait for the next full listing of customers). A read refused
    because the host stops the run (a signal closed its rate limiter) ends it quietly: the
    customers wait for the next run.
    """
    report = run.report

    def rows() -> Iterator[Any]:
        try:
            for item in _rows():  # (keys noted for `deletions`, a deleted person's fields erased)
                # (a None is "nothing yet" while it waits: handed on as it is)
                yield item if item is None or run.deletions is None else run.deletions.take(TARGET, item)
        finally:  # the `deletions` resource waits for it
            report.end(REFRESH)

    def _rows() -> Iterator[Any]:
        yield from report.until_ended((*FEEDERS, TARGET))
        outcome = report.outcomes.get(TARGET)
        if outcome is None or outcome.status != "synced":
            return
        todo = stale_customers(report)
        if not todo:
            return
        try:
            yield from _read_all(run.client, todo, run.options.pii, run.options.pii_salt)
        except LimiterClosed:
            log.info("customers: stopping, the customers named by new money wait for the next run")
        except CreatorPlatformError as exc:
            log.error("customers: re-reading customers named by new money failed: %s", exc)
            reason = " ".join(f"re-reading customers named by new money failed: {exc}".split())
            report.set_outcome(TARGET, "failed", reason)

    return dlt.resource(rows, name=REFRESH, table_name=TARGET,
                        write_disposition="merge", primary_key="id")


def _read_all(client: CreatorPlatformClient, todo: dict[str | None, list[str]], pii: Any,
              pii_salt: str) -> Iterator[Any]:
    for site, ids in todo.items():
        found = [r for r in client.detail_pool.map(lambda c: _read(client, c), ids) if r]
        at = datetime.now(UTC)
        records: list[dict[str, Any]] = []
        for url, data in found:
            # a customer with a value that cannot be read is left out here: the customers
            # listing sets it aside (rejects.py) and reads it again
            part = normalize_resources([data], site_id=site, extracted_at=at, pii=pii,
                                       pii_salt=pii_salt, resource=TARGET, url=url,
                                       rejected=[])
            records.extend(part.get(TARGET, []))
        if not records:
            continue
        tbl = rows_to_arrow({TARGET: records}, pii=pii)[TARGET]
        client.stats.add_rows(TARGET, tbl.num_rows)
        log.info("customers site=%s: %s re-read after new transactions", site, tbl.num_rows)
        yield dlt.mark.with_table_name(tbl, TARGET)
