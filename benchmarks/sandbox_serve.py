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
import multiprocessing
import os
import sys
import time
from pathlib import Path

import httpx
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from creator_sync.sandbox.testing import run_sandbox_process

COLLECTIONS = ("contacts", "transactions", "customers", "purchases", "orders", "form_submissions")
TARGET = 20_000


def cpu_seconds(pid: int) -> float:
    """user + system CPU of a process (so a busy machine does not distort the figure)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def warm_up(_: int) -> None:
    time.sleep(0.2)


def client_run(args: tuple[str, str, str, str, float]) -> dict[str, int]:
    """One client process: page through a collection until the deadline (wall clock)."""
    api, bearer, collection, site, deadline = args
    totals = {"records": 0, "requests": 0, "bytes": 0}
    with httpx.Client(timeout=60, headers={"Authorization": f"Bearer {bearer}"}) as client:
        number = 1
        while time.time() < deadline:
            response = client.get(f"{api}/{collection}", params={
                "filter[site_id]": site, "page[size]": 100, "page[number]": number})
            response.raise_for_status()
            body = orjson.loads(response.content)
            totals["records"] += len(body["data"])
            totals["requests"] += 1
            totals["bytes"] += len(response.content)
            number = number + 1 if body["links"]["next"] else 1
    return totals


def measure(api: str, clients: int, seconds: float) -> dict[str, float]:
    """`clients` httpx clients, each in its own process (one GIL each), side by side."""
    token = httpx.post(f"{api}/oauth/token", data={
        "client_id": "sandbox", "client_secret": "sandbox-secret",
        "grant_type": "client_credentials"}).json()["access_token"]
    sites = httpx.get(f"{api}/sites", headers={"Authorization": f"Bearer {token}"}).json()["data"]
    with multiprocessing.get_context("spawn").Pool(clients) as pool:
        pool.map(warm_up, range(clients))  # process start-up is not serving time
        started = time.time()
        deadline = started + seconds
        jobs = [(api, token, COLLECTIONS[k % len(COLLECTIONS)], sites[k % len(sites)]["id"],
                 deadline) for k in range(clients)]
        results = pool.map(client_run, jobs)
        wall = time.time() - started
    return {"wall": wall, **{k: float(sum(r[k] for r in results)) for k in results[0]}}


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
        cpu_before = cpu_seconds(proc.pid)
        result = measure(proc.api_url, args.clients, args.seconds)
        cpu = cpu_seconds(proc.pid) - cpu_before
        rss = peak_rss_mib(proc.pid)
    rate = result["records"] / result["wall"]
    print(f"scale {args.scale}, {args.clients} concurrent clients, page[size]=100, "
          f"{result['wall']:.1f} s")
    print(f"  machine load average (1 min):       {os.getloadavg()[0]:8.1f} on {os.cpu_count()} cores "
          "(records/s is only meaningful on a quiet machine)")
    print(f"  start to ready (generation + boot): {ready:6.1f} s")
    print(f"  sandbox peak RSS:                   {rss:8.0f} MiB")
    print(f"  requests/s:                         {result['requests'] / result['wall']:8.0f}")
    print(f"  records/s:                          {rate:8.0f}   (target >= {TARGET:,}: "
          f"{rate / TARGET:.2f}x)")
    print(f"  sandbox CPU:                        {cpu:8.1f} s "
          f"({result['records'] / max(cpu, 1e-9):,.0f} records per CPU-second, "
          f"{cpu / result['wall']:.0%} of one core)")
    print(f"  MiB/s served:                       {result['bytes'] / result['wall'] / 2**20:8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
