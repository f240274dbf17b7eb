"""`write_report`: one DuckDB file in, one self-contained HTML file out."""

from __future__ import annotations

import datetime as dt
import os
import pathlib
import tempfile

import duckdb

from common.config import DEFAULT_DATASET
from common.duckdb_names import connect_warehouse
from models.coverage import stale_after
from report.data import load_report_data
from report.errors import ReportError
from report.page import render_page


def _connect(duckdb_path: str) -> duckdb.DuckDBPyConnection:
    """Read-only: the report must never be the thing that changes or locks the warehouse."""
    if not pathlib.Path(duckdb_path).is_file():
        raise ReportError(f"{duckdb_path}: no such DuckDB file (run creator-sync sync first)")
    try:
        return connect_warehouse(duckdb_path, read_only=True)
    except duckdb.Error as exc:
        hint = " (is a sync or a models build still writing to it?)" if "lock" in str(exc) else ""
        raise ReportError(
            f"{duckdb_path}: cannot open the database read-only{hint}: {exc}"
        ) from exc


def _write_atomically(out: pathlib.Path, html: str) -> None:
    """Write beside the target, then rename: an open or published report is never half-written."""
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
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
) -> pathlib.Path:
    """Render the finance report of `duckdb_path` into `out_path` and return its absolute path.
    `stale_after_days`: the staleness limit (default: configuration, else 2 days)."""
    limit = stale_after(stale_after_days)
    con = _connect(duckdb_path)
    try:
        data = load_report_data(
            con, duckdb_path, site_id=site_id, since=since, dataset=dataset, stale_after=limit
        )
    finally:
        con.close()
    out = pathlib.Path(out_path).resolve()
    _write_atomically(out, render_page(data))
    return out
