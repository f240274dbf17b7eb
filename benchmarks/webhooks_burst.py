#!/usr/bin/env python3
"""Burst benchmark of `creator-sync listen`: can it hold 500 deliveries/s with no loss?

    .venv/bin/python benchmarks/webhooks_burst.py [--count 5000] [--rate 500] [--clients 2]
    .venv/bin/python benchmarks/webhooks_burst.py --writers   # direct DuckDB vs dlt merge

Starts a real receiver subprocess (journal fsync, loader into DuckDB), sends a bounded burst of
distinct payment_succeeded deliveries paced at --rate from --clients processes of httpx clients,
then a second, unpaced burst to show the headroom (paced vs max side by side). For each burst it
reports the achieved rate, p50/p99/max latency of the 2xx, rows landed in webhook_events and
transactions, losses, and how long the loader took to catch up after the last answer.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import duckdb  # noqa: E402
import httpx  # noqa: E402
import orjson  # noqa: E402

from creator_sync.pipelines.webhooks.journal import journal_status  # noqa: E402
from creator_sync.pipelines.webhooks.testing import ListenProcess  # noqa: E402

SECRET = "bench-secret-0123456789"


def delivery(n: int) -> bytes:
    tid = str(5_000_000_000 + n)
    return orjson.dumps(
        {
            "id": tid,
            "event": "payment_succeeded",
            "payload": [
                {
                    "id": tid,
                    "type": "transactions",
                    "attributes": {
                        "action": "charge",
                        "state": "succeeded",
                        "amount_in_cents": 1000 + n % 5000,
                        "currency": "USD",
                        "created_at": "2026-01-02T03:04:05Z",
                    },
                    "relationships": {
                        "customer": {"data": {"id": str(6_000_000_000 + n % 300), "type": "customers"}},
                        "offer": {"data": None},
                    },
                },
                {
                    "id": str(6_000_000_000 + n % 300),
                    "type": "customers",
                    "attributes": {"email": f"c{n % 300}@example.com", "net_revenue": "10.00"},
                    "relationships": {"site": {"data": {"id": "2200000001", "type": "sites"}}},
                },
            ],
        }
    )


def _client(url: str, indexes: list[int], first: int, t0: float, rate: float | None,
            threads: int) -> tuple[list[float], dict[str, int]]:
    """One client process: `threads` keep-alive httpx clients working through its share."""
    latencies: list[float] = []
    failures: dict[str, int] = {}
    lock = threading.Lock()
    pending = iter(indexes)

    def work() -> None:
        with httpx.Client(timeout=30) as http:
            while True:
                with lock:
                    i = next(pending, None)
                if i is None:
                    return
                if rate:  # open loop: delivery i is due at t0 + i/rate, whatever came before
                    delay = t0 + i / rate - time.time()
                    if delay > 0:
                        time.sleep(delay)
                start = time.perf_counter()
                try:
                    status = http.post(url, content=delivery(first + i)).status_code
                    key = None if status == 200 else str(status)
                except httpx.HTTPError as exc:
                    key = type(exc).__name__
                with lock:
                    latencies.append(time.perf_counter() - start)
                    if key:
                        failures[key] = failures.get(key, 0) + 1

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return latencies, failures


def burst(url: str, first: int, count: int, rate: float | None, clients: int) -> dict:
    """Send `count` deliveries from `clients` processes (4 connections each).

    Processes, not asyncio: one Python process cannot drive httpx much past ~400 requests/s, so
    a single-process client would measure itself rather than the receiver."""
    with ProcessPoolExecutor(clients) as pool:
        t0 = time.time() + 1.0  # all processes start on the same schedule
        futures = [
            pool.submit(_client, url, list(range(c, count, clients)), first, t0, rate, 4)
            for c in range(clients)
        ]
        results = [f.result() for f in futures]
    elapsed = time.time() - t0
    ordered = sorted(x for latencies, _ in results for x in latencies)
    failures: dict[str, int] = {}
    for _, failed in results:
        for key, n in failed.items():
            failures[key] = failures.get(key, 0) + n
    return {
        "sent": count,
        "target_rate": rate,
        "achieved_rate": round(count / elapsed, 1),
        "p50_ms": round(statistics.median(ordered) * 1000, 2),
        "p99_ms": round(ordered[max(0, int(len(ordered) * 0.99) - 1)] * 1000, 2),
        "max_ms": round(ordered[-1] * 1000, 2),
        "failures": failures,
    }


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process, from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_loaded(journal_dir: Path, timeout: float = 120.0) -> float:
    """Seconds until the loader's committed offset reaches the last journaled delivery."""
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        last, loaded = journal_status(journal_dir)
        if loaded >= last:
            return time.perf_counter() - start
        time.sleep(0.05)
    raise TimeoutError("loader did not catch up")


def compare_writers(batches: int = 5, size: int = 500, postgres_dsn: str | None = None) -> dict:
    """Per micro-batch cost of the chosen writer (direct DuckDB, column-aware upsert) against a
    dlt merge of the very same arrow tables, side by side on the same machine; with
    `postgres_dsn`, the same direct writer into that (empty) PostgreSQL database too."""
    import dlt

    from creator_sync.pipelines.delivery_rows import PRESENT, BatchRows, normalise_delivery
    from creator_sync.pipelines.webhooks.journal import Journal, JournalReader
    from creator_sync.pipelines.webhooks.loader import Loader
    from creator_sync.pipelines.webhooks.records import decode, encode, parse_delivery, utcnow
    from creator_sync.sources.creator_platform.hints import table_hints

    with tempfile.TemporaryDirectory(prefix="webhooks-writers-") as tmp:
        journal = Journal(Path(tmp) / "journal")
        now = utcnow()
        for b in range(batches):
            journal.append(
                [encode(parse_delivery(delivery(b * size + i), now)) for i in range(size)]
            )
        loader = Loader(journal, Path(tmp) / "direct.duckdb")
        reader = JournalReader(journal, 0)
        start = time.perf_counter()
        for _ in range(batches):
            loader.load(reader.read(size))
        direct = (time.perf_counter() - start) / batches

        pipeline = dlt.pipeline(
            "webhooks_writer_bench",
            destination=dlt.destinations.duckdb(str(Path(tmp) / "dlt.duckdb")),
            dataset_name="creator_platform",
            pipelines_dir=str(Path(tmp) / "dlt-state"),
        )
        reader = JournalReader(journal, 0)
        start = time.perf_counter()
        for _ in range(batches):
            rows = BatchRows()
            for record in reader.read(size):
                item = decode(record.body)
                rows.add(item, normalise_delivery(item))
            resources = []
            for table in rows.table_batches("bench"):
                hints = table_hints(table.name)
                hints.pop("table_name")
                data = table.rows.drop_columns([PRESENT, "_dlt_load_id"])
                resources.append(dlt.resource(data, name=table.name, **hints))
            pipeline.run(resources)
        with_dlt = (time.perf_counter() - start) / batches
        result = {
            "batch": size,
            "direct_ms": round(direct * 1000, 1),
            "dlt_merge_ms": round(with_dlt * 1000, 1),
            "dlt_over_direct": round(with_dlt / direct, 2),
        }
        if postgres_dsn:
            from creator_sync.common.warehouse import Warehouse

            target = Warehouse("postgres", "creator_platform", None, "bench", tmp,
                               postgres_dsn=postgres_dsn)
            loader = Loader(journal, target)
            reader = JournalReader(journal, 0)
            start = time.perf_counter()
            for _ in range(batches):
                loader.load(reader.read(size))
            on_postgres = (time.perf_counter() - start) / batches
            result["postgres_direct_ms"] = round(on_postgres * 1000, 1)
            result["postgres_over_duckdb"] = round(on_postgres / direct, 2)
        journal.close()
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--rate", type=float, default=500.0)
    parser.add_argument("--clients", type=int, default=2, help="client processes")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--postgres-dsn", default=None,
                        help="with --writers: the direct writer into this empty PostgreSQL "
                        "database too")
    parser.add_argument("--writers", action="store_true",
                        help="only compare the micro-batch writers (direct DuckDB vs dlt merge)")
    args = parser.parse_args()
    if args.writers:
        result = compare_writers(postgres_dsn=args.postgres_dsn)
        on_postgres = (f"; direct PostgreSQL upsert {result['postgres_direct_ms']} ms "
                       f"({result['postgres_over_duckdb']}x DuckDB's)"
                       if "postgres_direct_ms" in result else "")
        print(json.dumps(result) if args.json else (
            f"micro-batch of {result['batch']}: direct DuckDB upsert {result['direct_ms']} ms, "
            f"dlt merge {result['dlt_merge_ms']} ms ({result['dlt_over_direct']}x){on_postgres}"))
        return 0

    with tempfile.TemporaryDirectory(prefix="webhooks-burst-") as tmp:
        db = Path(tmp) / "bench.duckdb"
        journal_dir = Path(f"{db}.webhooks-journal")
        results = {}
        with ListenProcess(db, SECRET) as receiver:
            for name, first, rate in (("paced", 0, args.rate), ("unpaced", args.count, None)):
                cpu_before = process_cpu_s(receiver.proc.pid)
                result = burst(receiver.url, first, args.count, rate, args.clients)
                # the loader is not in the request path; measure how far it lags behind
                result["catch_up_s"] = round(wait_loaded(journal_dir), 2)
                # CPU the receiver process (HTTP + journal + loader) spent per delivery: unlike
                # the rate, this hardly depends on what else the machine is running
                cpu = process_cpu_s(receiver.proc.pid) - cpu_before
                result["receiver_cpu_ms_per_delivery"] = round(cpu / args.count * 1000, 3)
                results[name] = result
            receiver.terminate()
        with duckdb.connect(str(db), read_only=True) as con:
            events, distinct = con.execute(
                "SELECT count(*), count(DISTINCT resource_id) FROM creator_platform.webhook_events"
            ).fetchone()
            transactions = con.execute(
                "SELECT count(*) FROM creator_platform.transactions"
            ).fetchone()[0]
        sent = 2 * args.count
        results["landed"] = {
            "webhook_events": events,
            "distinct_events": distinct,
            "transactions": transactions,
            "losses": sent - distinct,
            "duplicates": events - distinct,
        }
    results["load_average"] = os.getloadavg()[0]
    if args.json:
        print(json.dumps(results))
    else:
        for name in ("paced", "unpaced"):
            r = results[name]
            print(
                f"{name:8} sent {r['sent']} target {r['target_rate'] or 'max'}/s -> "
                f"achieved {r['achieved_rate']}/s, p50 {r['p50_ms']} ms, p99 {r['p99_ms']} ms, "
                f"max {r['max_ms']} ms, non-2xx {r['failures'] or 0}, loader caught up "
                f"{r['catch_up_s']} s after the last answer; receiver CPU "
                f"{r['receiver_cpu_ms_per_delivery']} ms/delivery"
            )
        landed = results["landed"]
        print(
            f"landed: {landed['webhook_events']} webhook_events ({landed['distinct_events']} "
            f"distinct), {landed['transactions']} transactions; losses {landed['losses']}, "
            f"duplicates {landed['duplicates']}"
        )
        print(f"(1-minute load average at the end: {results['load_average']:.1f})")
    ok = results["landed"]["losses"] == 0 and results["landed"]["duplicates"] == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
