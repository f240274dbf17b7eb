"""Where a warehouse and its pipeline's local state live: derived once, for every command.

For a DuckDB file `X.duckdb` the dlt pipeline is named `creator_sync_<dataset>` and keeps its
local state in `<folder of X>/.creator-sync/<X's name, made safe>/`, so that two warehouses never
share state. `sync`, `demo --reset`, `listen`, `models` and `report` all ask `warehouse_of` with
the command's `Settings`, never rebuild the path themselves.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from .files import STATE_DIR_NAME

PIPELINE_PREFIX = "creator_sync_"


@dataclass(frozen=True)
class Warehouse:
    destination: str
    dataset: str
    duckdb_path: str | None  # absolute path when destination is duckdb
    pipeline_name: str
    pipelines_dir: str


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
    return Warehouse(
        destination=destination,
        dataset=dataset,
        duckdb_path=duckdb_path,
        pipeline_name=pipeline_name(dataset),
        pipelines_dir=str(Path(configured).expanduser().resolve() if configured
                          else state_folder(destination, duckdb_path)),
    )

