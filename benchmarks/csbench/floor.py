"""The physical floor: fetch a fixed list of pages and throw them away.

Usage: ``python -m csbench.floor --base-url URL --pages FILE --concurrency N``

The page list is exactly the GETs our sync made in the same benchmark run, so the floor fetches
the same pages as ours and does nothing else: no parsing, no normalising, no loading. With
``--concurrency 1`` it is the sequential floor; with ours' concurrency it is the best a client
at that concurrency could do. The client id and secret come from the environment
(``CSBENCH_CLIENT_ID`` / ``CSBENCH_CLIENT_SECRET``) so that they never sit in a process list.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path

import httpx

TIMEOUT = httpx.Timeout(60.0)


def fetch_token(base_url: str) -> str:
    """Client-credentials grant (spec 5.1)."""
    response = httpx.post(
        f"{base_url}/v1/oauth/token",
        data={
            "grant_type": "client_credentials",
            "client_id": os.environ["CSBENCH_CLIENT_ID"],
            "client_secret": os.environ["CSBENCH_CLIENT_SECRET"],
        },
        timeout=TIMEOUT,
    )
    response.raise_for_status()
    return str(response.json()["access_token"])


def fetch_sequential(base_url: str, token: str, pages: list[str]) -> int:
    """One connection, one page at a time. Returns how many pages were not 200."""
    failures = 0
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=base_url, headers=headers, timeout=TIMEOUT) as client:
        for page in pages:
            response = client.get(page)
            response.read()
            failures += response.status_code != 200
    return failures


async def fetch_concurrent(base_url: str, token: str, pages: list[str], concurrency: int) -> int:
    """``concurrency`` workers over one pooled client, pulling pages in order."""
    queue: asyncio.Queue[str] = asyncio.Queue()
    for page in pages:
        queue.put_nowait(page)
    failures = 0
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    headers = {"Authorization": f"Bearer {token}"}

    async def worker(client: httpx.AsyncClient) -> None:
        nonlocal failures
        while not queue.empty():
            page = queue.get_nowait()
            response = await client.get(page)
            await response.aread()
            failures += response.status_code != 200

    async with httpx.AsyncClient(
        base_url=base_url, headers=headers, timeout=TIMEOUT, limits=limits
    ) as client:
        await asyncio.gather(*(worker(client) for _ in range(concurrency)))
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="csbench.floor", description=__doc__)
    parser.add_argument("--base-url", required=True, help="sandbox root, without /v1")
    parser.add_argument("--pages", required=True, type=Path, help="one path?query per line")
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--report", type=Path, help="write {pages, fetch_s} here as JSON")
    args = parser.parse_args(argv)
    pages = [line for line in args.pages.read_text().splitlines() if line.strip()]
    token = fetch_token(args.base_url)
    started = time.monotonic()
    if args.concurrency <= 1:
        failures = fetch_sequential(args.base_url, token, pages)
    else:
        failures = asyncio.run(fetch_concurrent(args.base_url, token, pages, args.concurrency))
    fetch_s = time.monotonic() - started
    if args.report:
        args.report.write_text(json.dumps({"pages": len(pages), "fetch_s": fetch_s}))
    print(f"floor: {len(pages)} pages, concurrency {args.concurrency}, {failures} not 200")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
