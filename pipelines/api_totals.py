"""`api_totals`: per resource and site, the API's total that the last complete listing read
(issue 40, completeness). `creator-sync status` and `analytics.data_coverage` set it beside the
rows landed; a complete listing reads it from its own pages (`meta`), no request of its own.

One row per (resource, site): a complete listing (a first sync, a weekly full listing, a full
refresh) replaces it; an incremental window leaves it, so `read_at` says how old it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import dlt

from .sync_resources import destination_types
from .warehouse_sql import sql_client

API_TOTALS = "api_totals"
# (column, dlt data type), docs/architecture.md (warehouse contract)
API_TOTALS_COLUMNS = (
    ("resource", "text"),
    ("site_id", "text"),  # null: a resource not listed per site (`sites`)
    ("table_name", "text"),  # the raw table whose rows the total counts
    ("api_total", "bigint"),  # the total at the listing's last page; null: none comparable
    ("first_page_total", "bigint"),  # the total at the first page this run read
    ("read_at", "timestamp"),  # the platform's clock when the listing completed
    ("listing_started_at", "timestamp"),  # ... and when it began
    ("no_total_reason", "text"),  # why there is no comparable total (null when there is)
)


def write_api_totals(pipeline: dlt.Pipeline, totals: Mapping[tuple[str, str | None], Any]) -> None:
    """Upsert one row per (resource, site) the run listed whole. A no-op without any."""
    if not totals:
        return
    keys = sorted(totals, key=lambda k: (k[0], k[1] or ""))
    with sql_client(pipeline) as client:
        if not client.has_dataset():
            client.create_dataset()
        q = client.make_qualified_table_name(API_TOTALS)
        col = {name: client.escape_column_name(name) for name, _ in API_TOTALS_COLUMNS}
        exists = client.execute_sql(
            "SELECT 1 FROM information_schema.tables WHERE table_schema = %s AND table_name = %s",
            client.dataset_name, API_TOTALS)
        if not exists:
            kinds = destination_types(client, API_TOTALS_COLUMNS, API_TOTALS)
            client.execute_sql(f"CREATE TABLE {q} (" + ", ".join(
                f"{col[name]} {kinds[kind]}" for name, kind in API_TOTALS_COLUMNS) + ")")
        values: list[Any] = []
        for resource, site in keys:
            t = totals[(resource, site)]
            values += [resource, site, t.table, t.total, t.first_total, t.read_at,
                       t.listing_started_at, t.reason]
        row_marks = ", ".join(["(" + ", ".join(["%s"] * len(API_TOTALS_COLUMNS)) + ")"] * len(keys))
        match = " OR ".join(
            [f"({col['resource']} = %s AND COALESCE({col['site_id']}, '') = %s)"] * len(keys))
        with client.begin_transaction():
            client.execute_sql(f"DELETE FROM {q} WHERE {match}",
                               *[v for r, s in keys for v in (r, s or "")])
            client.execute_sql(f"INSERT INTO {q} ({', '.join(col.values())}) VALUES {row_marks}",
                               *values)
