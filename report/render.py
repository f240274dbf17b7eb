"""`write_report`: one warehouse in (the DuckDB file, or the PostgreSQL database the models
built), one self-contained HTML file out."""

from __future__ import annotations

import datetime as dt
import os
import pathlib
import tempfile

from creator_sync.common.settings import DEFAULT_DATASET, BadSetting
from creator_sync.models.adapters import (
    Adapter,
    MissingWarehouseCredentials,
    WarehouseUnavailable,
    open_adapter,
)
from creator_sync.models.coverage import stale_after
from creator_sync.report.data import load_report_data
from creator_sync.report.errors import ReportError
from creator_sync.report.page import render_page


def _connect(destination: str, duckdb_path: str, postgres_dsn: str | None) -> Adapter:
    """Read-only on DuckDB: the report must never be the thing that changes or locks the
    warehouse."""
    if destination == "duckdb" and not pathlib.Path(duckdb_path).is_file():
        raise ReportError(f"{duckdb_path}: no such DuckDB file (run creator-sync sync first)")
    try:
        return open_adapter(destination, duckdb_path, postgres_dsn, read_only=True)
    except MissingWarehouseCredentials as exc:
        raise BadSetting(str(exc), "flag=--postgres-dsn") from None
    except WarehouseUnavailable as exc:
        raise ReportError(str(exc)) from None


def _write_atomically(out: pathlib.Path, html: str) -> None:
    """Write beside the target, then rename: an open or published report is never half-written."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    except OSError as exc:  # named as the report, not as the temp file beside it
        cause = os.strerror(exc.errno).lower() if exc.errno else str(exc)
        raise ReportError(f"cannot write the report {out}: {cause} (pass --out with a path "
                          "you can write)") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(html)
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    except BaseException:
        pathlib.Path(tmp).unlink(missing_ok=True)
        raise


def write_report(
    duckdb_path: str,
    out_path: str,
    site_id: str | None = None,
    since: dt.date | None = None,
    dataset: str = DEFAULT_DATASET,
    stale_after_days: float | None = None,
    *,
    destination: str = "duckdb",
    postgres_dsn: str | None = None,
) -> pathlib.Path:
    """Render the finance report of the warehouse (`duckdb_path`, or PostgreSQL when
    `destination="postgres"`) into `out_path` and return its absolute path.
    `stale_after_days`: the staleness limit (default: configuration, else 2 days)."""
    limit = stale_after(stale_after_days)
    adapter = _connect(destination, duckdb_path, postgres_dsn)
    try:
        data = load_report_data(
            adapter, site_id=site_id, since=since, dataset=dataset, stale_after=limit
        )
    finally:
        adapter.close()
    out = pathlib.Path(out_path).resolve()
    _write_atomically(out, render_page(data))
    return out
