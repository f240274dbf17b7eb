"""The peer: dlt's generic ``rest_api_source`` configured for the Creator Platform API.

Usage: ``python -m csbench.peer --base-url URL --duckdb PATH --pipelines-dir DIR [--parallelized]``

Configured the way dlt's rest_api documentation shows, so that it is a fair peer:
- ``PageNumberPaginator`` (``page_number``) on ``page[number]``, base page 1, ``total_path``
  ``meta.total_pages``; ``page[size]=100`` (the sandbox's maximum, as ours uses);
- bearer auth with a token obtained first by the client-credentials grant (spec 5.1);
- every collection ours reads (taken from ours' per-resource facts table, so the two cannot
  drift apart); site-owned ones as dependent resources of ``sites`` that pass
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

from creator_sync.sources.creator_platform.endpoints import RESOURCES

PAGE_SIZE = 100
PAGE_NUMBER = {"type": "page_number", "base_page": 1, "page_param": "page[number]"}
# total_path per meta shape (spec 1.1): default and purchases carry meta.total_pages, payouts
# carry meta.pagination.last.
TOTAL_PATH = {
    "default": "meta.total_pages",
    "purchases": "meta.total_pages",
    "payouts": "meta.pagination.last",
}


def _include(resource: Any) -> str:
    """All of a resource's include groups in one ``include=`` (one read per record, as a
    rest_api user would write it; ours may split them into groups)."""
    names: list[str] = []
    for group in resource.include:
        names.extend([group] if isinstance(group, str) else group)
    return ",".join(names)


def endpoint_resources() -> list[dict[str, Any]]:
    """One rest_api resource per collection, from ours' own per-resource facts table, so that
    the peer reads exactly the collections (and the nested single reads) ours reads."""
    resources: list[dict[str, Any]] = []
    for r in RESOURCES.values():
        params: dict[str, Any] = {}
        if r.site_scoped:
            params["filter[site_id]"] = "{resources.sites.id}"
        if not r.takes_page_size:
            params["page[size]"] = None  # e.g. payouts take only page[number] (spec 4.2)
        endpoint: dict[str, Any] = {"path": r.path.lstrip("/"), "params": params}
        if r.single:  # one object (/v1/me)
            endpoint.update(paginator="single_page", data_selector="data",
                            params={"page[size]": None})
        elif r.meta != "default":
            endpoint["paginator"] = {**PAGE_NUMBER, "total_path": TOTAL_PATH[r.meta]}
        listing: dict[str, Any] = {"name": r.name, "endpoint": endpoint}
        resources.append(listing)
        if r.reads_details:
            # the API lists nested records (and payout lines) on no collection: one single read
            # per record, as a dependent resource with parallelized=True, as dlt's docs advise
            # for per-parent child reads; its `included` records (or, with no include, the
            # record itself) land in `<name>_<type>` tables.
            include = _include(r)
            detail_params: dict[str, Any] = {"page[size]": None}
            if include:
                detail_params["include"] = include
            if r.detail_site:  # the payout detail authorises by site, as its list (A8)
                detail_params["filter[site_id]"] = (
                    f"{{resources.{r.name}.relationships.site.data.id}}")
            resources.append(
                {
                    "name": f"{r.name}_details",
                    "parallelized": True,
                    "table_name": lambda item, prefix=r.name: (
                        f"{prefix}_{item.get('type', 'included')}"
                    ),
                    "endpoint": {
                        "path": f"{r.path.lstrip('/')}/{{resources.{r.name}.id}}",
                        "params": detail_params,
                        "paginator": "single_page",
                        "data_selector": "included" if include else "data",
                    },
                }
            )
    # `sites` first: every site-owned resource depends on it
    return sorted(resources, key=lambda res: res["name"] != "sites")


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
    return {
        "client": {
            "base_url": f"{api_url}/",
            "auth": {"type": "bearer", "token": token},
            "paginator": {**PAGE_NUMBER, "total_path": TOTAL_PATH["default"]},
        },
        "resource_defaults": {
            "primary_key": "id",
            "write_disposition": "replace",
            "endpoint": {"data_selector": "data", "params": {"page[size]": PAGE_SIZE}},
        },
        "resources": endpoint_resources(),
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
