"""`creator-sync models` on a warehouse the runner does not build (BigQuery, Snowflake,
MotherDuck...): the package `sql/` run by dlt's dbt runner with the pipeline's own credentials,
in the current environment (no virtualenv downloaded), marts into `analytics` (docs/dbt.md).

Without dbt installed it says in one line how to get it (a configuration error, exit 2)."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from importlib.util import find_spec
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from creator_sync.common.warehouse import Warehouse
from creator_sync.models.dbt_context import TARGET_SCHEMA, build_vars
from creator_sync.models.project import SQL_DIR

DBT_OUTPUTS = ("target", "logs", "dbt_packages", "__pycache__")
INSTALL_HINT = 'pip install "creator-sync[dbt]" plus the dbt adapter of {destination} (docs/dbt.md)'


class DbtRouteError(ValueError):
    """The dbt route cannot start: dbt missing, or no pipeline state to take credentials from."""


def run_with_dbt(warehouse: Warehouse, params: Any, run_tests: bool = True) -> list[Any]:
    """Build the package on the pipeline's destination with dlt's dbt runner; its node results."""
    if find_spec("dbt") is None or find_spec("dbt.version") is None:
        raise DbtRouteError(
            f"the runner builds duckdb and postgres; on {warehouse.destination} the models run "
            f"with dbt, which is not installed: {INSTALL_HINT.format(destination=warehouse.destination)}"
        )
    import dlt
    from dlt.common.runners import Venv

    try:
        pipeline = dlt.attach(pipeline_name=warehouse.pipeline_name,
                              pipelines_dir=warehouse.pipelines_dir)
    except Exception as exc:  # dlt raises CannotRestorePipelineException
        raise DbtRouteError(
            f"no pipeline {warehouse.pipeline_name} in {warehouse.pipelines_dir} to take the "
            f"{warehouse.destination} credentials from: run `creator-sync sync --destination "
            f"{warehouse.destination}` first, or pass its --pipelines-dir"
        ) from exc
    # this interpreter's environment: dlt's own `restore_current` runs whatever `python` is first
    # on PATH unless VIRTUAL_ENV is set, and its default downloads a new virtualenv
    here = SimpleNamespace(bin_path=os.path.dirname(sys.executable), env_exe=sys.executable)
    with tempfile.TemporaryDirectory(prefix="creator-sync-dbt-") as work:
        # dbt writes target/, logs/ and dbt_packages/ into the package: a copy keeps the
        # installed package (site-packages) untouched
        package = shutil.copytree(SQL_DIR, Path(work) / "creator_platform",
                                  ignore=shutil.ignore_patterns(*DBT_OUTPUTS))
        runner = dlt.dbt.package(pipeline, str(package), venv=Venv(here, current=True))
        results: list[Any] = runner.run_all(
            run_params=("--fail-fast",),
            additional_vars=build_vars(params),
            destination_dataset_name=TARGET_SCHEMA,
        )
        if run_tests:
            results += runner.test(additional_vars=build_vars(params),
                                   destination_dataset_name=TARGET_SCHEMA)
    return results
