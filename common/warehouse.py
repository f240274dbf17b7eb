"""Where a warehouse and its pipeline's local state live: derived once, for every command.

For a DuckDB file `X.duckdb` the dlt pipeline is named `creator_sync_<dataset>` and keeps its
local state in `<folder of X>/.creator-sync/<X's name, made safe>/`, so that two warehouses never
share state. `sync`, `demo --reset`, `listen`, `models` and `report` all ask `warehouse_of` with
the command's `Settings`, never rebuild the path themselves.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from .files import STATE_DIR_NAME

PIPELINE_PREFIX = "creator_sync_"
DEPRECATED_DSN_ENV = "CREATOR_SYNC_POSTGRES_DSN"  # the setting `creator_sync.postgres_dsn` before


@dataclass(frozen=True)
class Warehouse:
    destination: str
    dataset: str
    duckdb_path: str | None  # absolute path when destination is duckdb
    pipeline_name: str
    pipelines_dir: str
    # the setting `postgres_dsn` when given (else dlt's credentials: `warehouse_db.postgres_dsn`)
    postgres_dsn: str | None = field(default=None, repr=False, compare=False)


def safe_name(text: str) -> str:
    """A name usable as a folder and a dlt pipeline name (`my-demo` -> `my_demo`)."""
    return re.sub(r"[^a-zA-Z0-9_]+", "_", text).strip("_").lower() or "default"


def pipeline_name(dataset: str) -> str:
    return PIPELINE_PREFIX + safe_name(dataset)


def state_folder(destination: str, duckdb_path: str | Path | None = None) -> Path:
    """The default folder of the pipeline's local state (absolute): beside the DuckDB file,
    named after it; for another destination, named after the destination in the working dir."""
    if destination == "duckdb":
        assert duckdb_path is not None
        path = Path(duckdb_path).expanduser().resolve()
        return path.parent / STATE_DIR_NAME / safe_name(path.stem)
    return (Path(STATE_DIR_NAME) / safe_name(destination)).resolve()


class Keyed(Protocol):
    """A command's resolved settings, read by key (`sources.creator_platform.Settings`)."""

    def __getitem__(self, key: str) -> Any: ...


def warehouse_of(settings: Keyed) -> Warehouse:
    """The warehouse the command's settings name (destination, dataset, file, state)."""
    destination = settings["destination"]
    dataset = settings["dataset"]
    duckdb_path = None
    if destination == "duckdb":
        duckdb_path = str(Path(settings["duckdb"]).expanduser().resolve())
    configured = settings["pipelines_dir"]
    dsn = settings["postgres_dsn"] if destination == "postgres" else None
    return Warehouse(
        destination=destination,
        dataset=dataset,
        duckdb_path=duckdb_path,
        pipeline_name=pipeline_name(dataset),
        pipelines_dir=str(Path(configured).expanduser().resolve() if configured
                          else state_folder(destination, duckdb_path)),
        postgres_dsn=dsn,
    )



def duckdb_file(path: str | Path, dataset: str) -> Warehouse:
    """The warehouse of a bare DuckDB file (a caller that holds only its path)."""
    resolved = str(Path(path).expanduser().resolve())
    return Warehouse(destination="duckdb", dataset=dataset, duckdb_path=resolved,
                     pipeline_name=pipeline_name(dataset),
                     pipelines_dir=str(state_folder("duckdb", resolved)))


def as_warehouse(target: Warehouse | str | Path, dataset: str) -> Warehouse:
    """`target` itself, or the warehouse of the DuckDB file it names (with `dataset`)."""
    return target if isinstance(target, Warehouse) else duckdb_file(target, dataset)
