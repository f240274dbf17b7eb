#!/usr/bin/env python3
"""How fast the sandbox serves, so that it is never what a pipeline benchmark measures.

Starts `creator-sync sandbox` as a subprocess at a scale (default `medium`), then 4 concurrent
httpx clients page through big collections with `page[size]=100` for a fixed time. Prints the
generation time (start to ready line), records served per second, requests per second, and the
sandbox's peak RSS. Target: >= 20,000 records/s at `medium` on 2 cores.

    .venv/bin/python benchmarks/sandbox_serve.py [--scale medium] [--seconds 20] [--clients 4]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

import httpx
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sandbox.testing import run_sandbox_process

COLLECTIONS = ("contacts", "transactions", "customers", "purchases", "orders", "form_submissions")
TARGET = 20_000


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def token(client: httpx.AsyncClient, api: str) -> str:
    response = await client.post(f"{api}/oauth/token", data={
        "client_id": "sandbox", "client_secret": "sandbox-secret",
        "grant_type": "client_credentials"})
    response.raise_for_status()
    return response.json()["access_token"]


async def worker(api: str, bearer: str, collection: str, site: str, deadline: float,
                 totals: dict[str, int]) -> None:
    headers = {"Authorization": f"Bearer {bearer}"}
    async with httpx.AsyncClient(timeout=60, headers=headers) as client:
        number = 1
        while time.perf_counter() < deadline:
            response = await client.get(f"{api}/{collection}", params={
                "filter[site_id]": site, "page[size]": 100, "page[number]": number})
            response.raise_for_status()
            body = orjson.loads(response.content)
            totals["records"] += len(body["data"])
            totals["requests"] += 1
            totals["bytes"] += len(response.content)
            number = number + 1 if body["links"]["next"] else 1


async def measure(api: str, clients: int, seconds: float) -> dict[str, float]:
    async with httpx.AsyncClient(timeout=60) as client:
        bearer = await token(client, api)
        sites = (await client.get(f"{api}/sites", headers={
            "Authorization": f"Bearer {bearer}"})).json()["data"]
    totals = {"records": 0, "requests": 0, "bytes": 0}
    started = time.perf_counter()
    deadline = started + seconds
    await asyncio.gather(*(
        worker(api, bearer, COLLECTIONS[k % len(COLLECTIONS)], sites[k % len(sites)]["id"],
               deadline, totals) for k in range(clients)))
    wall = time.perf_counter() - started
    return {"wall": wall, **{k: float(v) for k, v in totals.items()}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", default="medium")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    started = time.perf_counter()
    with run_sandbox_process(scale=args.scale, seed=args.seed, port=0, timeout=600) as proc:
        ready = time.perf_counter() - started
        result = asyncio.run(measure(proc.api_url, args.clients, args.seconds))
        rss = peak_rss_mib(proc.pid)
    rate = result["records"] / result["wall"]
    print(f"scale {args.scale}, {args.clients} concurrent clients, page[size]=100, "
          f"{result['wall']:.1f} s")
    print(f"  start to ready (generation + boot): {ready:6.1f} s")
    print(f"  sandbox peak RSS:                   {rss:8.0f} MiB")
    print(f"  requests/s:                         {result['requests'] / result['wall']:8.0f}")
    print(f"  records/s:                          {rate:8.0f}   (target >= {TARGET:,}: "
          f"{rate / TARGET:.2f}x)")
    print(f"  MiB/s served:                       {result['bytes'] / result['wall'] / 2**20:8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
