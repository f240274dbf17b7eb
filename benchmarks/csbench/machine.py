"""The machine, versions and commit a result was measured on: ratios mean little without them."""

from __future__ import annotations

import os
import platform
import subprocess
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version

from csbench.measure import REPO

PACKAGES = ("creator-sync", "dlt", "duckdb", "httpx", "pyarrow", "orjson", "requests")


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _ram_gib() -> float:
    try:
        with open("/proc/meminfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    return float("nan")


def _commit() -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(REPO), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "absent"


def load_average() -> float:
    """1-minute load average: above the core count, other work competed with the clients."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return float("nan")


def describe() -> dict[str, object]:
    return {
        "load_avg_1m_start": load_average(),
        "date_utc": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "cores": os.cpu_count(),
        "cpu": _cpu_model(),
        "ram_gib": round(_ram_gib(), 1),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "versions": {name: _version(name) for name in PACKAGES},
        "commit": _commit(),
    }
