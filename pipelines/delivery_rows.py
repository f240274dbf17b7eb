"""Turn a micro-batch of deliveries into per-table arrow batches, using the pipeline's normaliser
(the webhook loader writes them; the pull's `push_restore` applies them again after its load).

The source's `rows`, `values`, `pii`, `hints` and `arrow_tables` are the single definition of
how a JSON:API resource becomes warehouse rows and types; this module only adds what is specific
to the push path: which site a delivery belongs to, which columns a payload really carried, and
the last-delivery-wins rule inside one batch (per id for resources, per parent for link sets).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pyarrow as pa

from creator_sync.pipelines.pushed_writes import PRESENT, TableBatch
from creator_sync.sources.creator_platform import (
    LINK_MARKER,
    PiiMode,
    apply_pii,
    is_link_table,
    link_columns,
    normalize_resources,
    rows_to_arrow,
    type_info,
)

LOAD_ID = "_dlt_load_id"  # the pull sync's arrow loads carry it (NOT NULL); so do ours
ALWAYS_PRESENT = ("id", "site_id", "_extracted_at", "_is_deleted", LOAD_ID)


@dataclass(frozen=True)
class Delivery:
    """One accepted delivery: its event, the resource it is about, and its payload."""

    event: str
    resource_id: str
    payload: list[dict[str, Any]]
    payload_hash: str
    received_at: datetime
    site_id: str | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        """Redeliveries of the same event for the same resource with the same payload collapse."""
        return (self.event, self.resource_id, self.payload_hash)


class DeliveryError(ValueError):
    """One delivery cannot be normalised; the loader dead-letters it instead of blocking."""


def delivery_site_id(delivery: Delivery) -> str | None:
    """The site of a delivery: a `site` relationship in its payload, else the URL/CLI hint."""
    for resource in delivery.payload:
        site = (resource.get("relationships") or {}).get("site")
        data = site.get("data") if isinstance(site, dict) else None
        if isinstance(data, dict) and data.get("id") is not None:
            return str(data["id"])
    return delivery.site_id


def present_columns(resource: dict[str, Any]) -> list[str]:
    """Columns this resource's payload actually carried (attributes and to-one links with data)."""
    columns = list(ALWAYS_PRESENT)
    columns.extend((resource.get("attributes") or {}).keys())
    for name, rel in (resource.get("relationships") or {}).items():
        if isinstance(rel, dict) and "data" in rel and not isinstance(rel["data"], list):
            columns.append(f"{name}_id")
    return columns


def normalise_delivery(
    delivery: Delivery, pii: PiiMode = None, pii_salt: str = ""
) -> dict[str, list[dict[str, Any]]]:
    """Rows of one delivery's payload; any failure becomes a DeliveryError naming the delivery."""
    try:
        return normalize_resources(
            delivery.payload,
            site_id=delivery_site_id(delivery),
            extracted_at=delivery.received_at,
            pii=pii,
            pii_salt=pii_salt,
            resource=f"webhook {delivery.event}",
        )
    except Exception as exc:
        raise DeliveryError(
            f"event {delivery.event!r} for resource {delivery.resource_id}: {exc}"
        ) from exc


@dataclass
class BatchRows:
    """Accumulates the rows of many deliveries; the last delivery wins per id / per link parent."""

    resources: dict[str, dict[str, tuple[dict[str, Any], list[str]]]] = field(default_factory=dict)
    links: dict[str, dict[str, list[dict[str, Any]]]] = field(default_factory=dict)
    link_parent: dict[str, str] = field(default_factory=dict)

    def add(self, delivery: Delivery, tables: dict[str, list[dict[str, Any]]]) -> None:
        present = {str(r["id"]): present_columns(r) for r in delivery.payload}
        for table, rows in tables.items():
            if not rows:
                continue
            if is_link_table(rows[0]):
                self._add_links(table, rows)
                continue
            bucket = self.resources.setdefault(table, {})
            for row in rows:
                row_id = row["id"]
                if _older(row, bucket.get(row_id)):
                    continue
                bucket.pop(row_id, None)  # re-insert: dict order follows the last delivery
                bucket[row_id] = (row, present.get(row_id, list(row)))

    def _add_links(self, table: str, rows: list[dict[str, Any]]) -> None:
        parent_col, child_col = link_columns(table, rows[0])
        self.link_parent[table] = parent_col
        grouped: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            group = grouped.setdefault(row[parent_col], [])
            if row[child_col] != LINK_MARKER:  # marker = "this parent now has no links"
                group.append(row)
        bucket = self.links.setdefault(table, {})
        for parent, group in grouped.items():
            bucket.pop(parent, None)
            bucket[parent] = group

    def table_batches(self, load_id: str, pii: PiiMode = None) -> list[TableBatch]:
        batches = []
        for table, by_id in self.resources.items():
            rows = [row for row, _ in by_id.values()]
            data = _with_load_id(rows_to_arrow({table: rows}, pii=pii)[table], load_id)
            present = [cols for _, cols in by_id.values()]
            data = data.append_column(PRESENT, pa.array(present, type=pa.list_(pa.string())))
            batches.append(TableBatch(table, data))
        for table, by_parent in self.links.items():
            rows = [row for group in by_parent.values() for row in group]
            data = rows_to_arrow({table: rows}, pii=pii).get(table)
            if data is not None:
                data = _with_load_id(data, load_id)
            batches.append(TableBatch(table, data, self.link_parent[table], set(by_parent)))
        return batches


def _older(row: dict[str, Any], kept: tuple[dict[str, Any], list[str]] | None) -> bool:
    """True when `row` has an older `updated_at` than the version already in the batch."""
    if kept is None:
        return False
    new, old = row.get("updated_at"), kept[0].get("updated_at")
    return new is not None and old is not None and new < old


def _with_load_id(data: pa.Table, load_id: str) -> pa.Table:
    return data.append_column(LOAD_ID, pa.array([load_id] * data.num_rows, type=pa.string()))


def scrub_payload(payload: list[dict[str, Any]], pii: PiiMode, pii_salt: str) -> list[dict]:
    """The raw payload as stored in webhook_events, with the sync's PII rule applied to it too."""
    if pii is None:
        return payload
    scrubbed = []
    for resource in payload:
        attributes = dict(resource.get("attributes") or {})
        jtype = resource.get("type")
        apply_pii(attributes, pii, pii_salt, type_info(jtype).table if isinstance(jtype, str) else None)
        scrubbed.append({**resource, "attributes": attributes})
    return scrubbed
