"""The peer: dlt's generic ``rest_api_source`` configured for the Creator Platform API.

Usage: ``python -m csbench.peer --base-url URL --duckdb PATH --pipelines-dir DIR [--parallelized]``

Configured the way dlt's rest_api documentation shows, so that it is a fair peer:
- ``PageNumberPaginator`` (``page_number``) on ``page[number]``, base page 1, ``total_path``
  ``meta.total_pages``; ``page[size]=100`` (the sandbox's maximum, as ours uses);
- bearer auth with a token obtained first by the client-credentials grant (spec 5.1);
- every collection; site-owned ones as dependent resources of ``sites`` that pass
  ``filter[site_id]`` from ``{resources.sites.id}`` (the documented way to bind a parent field);
- the same single reads ours makes for nested data (courses, forms, orders with ``include``),
  as dependent resources with ``parallelized: True`` (what the docs advise for per-parent child
  fetches), their ``included`` records routed to a table per ``type``;
- into DuckDB, ``write_disposition="replace"`` (a full load; cheaper for dlt than merge).
The source-level ``parallelized`` (list resources extracted side by side) is off by default, as
in the documentation's examples where it is an opt-in "advanced" option; ``--parallelized``
turns it on to see what it buys.
Credentials come from ``CSBENCH_CLIENT_ID`` / ``CSBENCH_CLIENT_SECRET``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import dlt
import requests
from dlt.sources.rest_api import rest_api_source

PAGE_SIZE = 100

# collection path -> table name, for collections listed per site.
SITE_COLLECTIONS: dict[str, str] = {
    "contacts": "contacts",
    "customers": "customers",
    "products": "products",
    "offers": "offers",
    "courses": "courses",
    "forms": "forms",
    "custom_fields": "custom_fields",
    "form_submissions": "form_submissions",
    "purchases": "purchases",
    "orders": "orders",
    "transactions": "transactions",
    "contact_tags": "contact_tags",
    "blog_posts": "blog_posts",
    "website_pages": "website_pages",
    "hooks": "hooks",
}

# Single reads that carry nested records in ``included`` (the same ones ours makes, since the
# API lists nested records on no collection): (name, path, include). Their records land in
# ``<name>_<type>`` tables (course_modules, form_fields, order_order_items, ...). They are
# dependent resources with ``parallelized: True``, as dlt's docs advise for fetching child data
# per parent item: each runs in dlt's thread pool instead of one by one.
DETAIL_READS: list[tuple[str, str, str]] = [
    ("course", "courses/{resources.courses.id}", "modules,lessons,lessons.media"),
    ("form", "forms/{resources.forms.id}", "fields,contact_tags"),
    ("order", "orders/{resources.orders.id}", "order_items"),
]


def fetch_token(api_url: str) -> str:
    response = requests.post(
        f"{api_url}/oauth/token",
        data={
            "grant_type": "client_credentials",
            "client_id": os.environ["CSBENCH_CLIENT_ID"],
            "client_secret": os.environ["CSBENCH_CLIENT_SECRET"],
        },
        timeout=60,
    )
    response.raise_for_status()
    return str(response.json()["access_token"])


def build_config(api_url: str, token: str) -> dict[str, Any]:
    """The rest_api configuration a careful user would write from dlt's docs."""
    site_param = {"filter[site_id]": "{resources.sites.id}"}
    resources: list[dict[str, Any]] = [{"name": "sites", "endpoint": {"path": "sites"}}]
    for path, table in SITE_COLLECTIONS.items():
        resources.append({"name": table, "endpoint": {"path": path, "params": dict(site_param)}})
    resources.append(
        {
            "name": "payouts",
            "endpoint": {
                "path": "platform_payments_payouts",
                # payouts take only page[number] (spec 4.2) and carry the payouts meta shape
                "params": {**site_param, "page[size]": None},
                "paginator": {
                    "type": "page_number",
                    "base_page": 1,
                    "page_param": "page[number]",
                    "total_path": "meta.pagination.last",
                },
            },
        }
    )
    for name, path, include in DETAIL_READS:
        resources.append(
            {
                "name": f"{name}_details",
                "parallelized": True,
                "table_name": lambda item, prefix=name: f"{prefix}_{item.get('type', 'included')}",
                "endpoint": {
                    "path": path,
                    "params": {"include": include, "page[size]": None},
                    "paginator": "single_page",
                    "data_selector": "included",
                },
            }
        )
    return {
        "client": {
            "base_url": f"{api_url}/",
            "auth": {"type": "bearer", "token": token},
            "paginator": {
                "type": "page_number",
                "base_page": 1,
                "page_param": "page[number]",
                "total_path": "meta.total_pages",
            },
        },
        "resource_defaults": {
            "primary_key": "id",
            "write_disposition": "replace",
            "endpoint": {"data_selector": "data", "params": {"page[size]": PAGE_SIZE}},
        },
        "resources": resources,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="csbench.peer", description=__doc__)
    parser.add_argument("--base-url", required=True, help="API root without /v1")
    parser.add_argument("--duckdb", required=True, type=Path)
    parser.add_argument("--pipelines-dir", required=True, type=Path)
    parser.add_argument("--parallelized", action="store_true")
    args = parser.parse_args(argv)
    api_url = f"{args.base_url.rstrip('/')}/v1"
    config = build_config(api_url, fetch_token(api_url))
    source = rest_api_source(config, name="creator_platform", parallelized=args.parallelized)
    pipeline = dlt.pipeline(
        pipeline_name="peer_rest_api",
        pipelines_dir=str(args.pipelines_dir),
        destination=dlt.destinations.duckdb(str(args.duckdb)),
        dataset_name="creator_platform",
    )
    info = pipeline.run(source)
    rows = pipeline.last_trace.last_normalize_info.row_counts if pipeline.last_trace else {}
    print(f"peer loaded {sum(rows.values())} rows into {len(rows)} tables; {info.loads_ids}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
