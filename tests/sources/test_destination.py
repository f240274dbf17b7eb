"""What the source reads of its destination during the extract (sources/creator_platform/
destination.py) and how a run keeps it (`run.HeldTables`): the tables the dataset holds, less
those this load drops, and the keys the webhook loader wrote; read once per run, and never
when the host said."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import dlt

from creator_sync.sources.creator_platform.destination import (
    PUSHED_LOAD_ID_PREFIX,
    Held,
    current_pipeline,
    held,
    held_tables,
)
from creator_sync.sources.creator_platform.run import HeldTables


def pipeline_at(tmp_path: Path) -> Any:
    return dlt.pipeline("held", destination=dlt.destinations.duckdb(str(tmp_path / "h.duckdb")),
                        dataset_name="data", pipelines_dir=str(tmp_path / "pipelines"))


def test_the_tables_the_dataset_holds_less_those_this_load_drops(tmp_path: Path) -> None:
    pipeline = pipeline_at(tmp_path)
    assert held_tables(None) is None  # no pipeline: unknown
    assert held_tables(pipeline) == frozenset()  # no dataset yet: nothing held
    pipeline.run([{"id": 1}], table_name="kept")
    pipeline.run([{"id": 1}], table_name="dropped")
    assert {"kept", "dropped"} <= held_tables(pipeline)
    with pipeline.sql_client() as client:  # by hand: dlt's schema still lists it
        client.execute_sql("drop table data.kept")
    assert "kept" not in held_tables(pipeline) and "kept" in pipeline.default_schema.tables

    seen: list[Any] = []

    @dlt.resource(name="dropped", table_name="dropped")
    def dropped() -> Any:
        seen.append(held_tables(current_pipeline()))  # during the extract
        yield {"id": 2}

    pipeline.extract(dropped(), refresh="drop_resources")
    assert seen and "dropped" not in seen[0] and "_dlt_version" in seen[0]


def test_the_keys_of_rows_the_webhook_loader_wrote_last(tmp_path: Path) -> None:
    pipeline = pipeline_at(tmp_path)
    pipeline.run([{"id": "1", "name": "a"}, {"id": "2", "name": "b"}], table_name="products")
    pipeline.run([{"course_id": "7", "tag_id": "8"}], table_name="courses_tags")
    with pipeline.sql_client() as client:
        for table, column, key in (("products", "id", "2"), ("courses_tags", "course_id", "7")):
            client.execute_sql(f"update data.{table} set _dlt_load_id = %s where {column} = %s",
                               f"{PUSHED_LOAD_ID_PREFIX}1700000000.000000", key)
    found = held(pipeline)
    assert found is not None and {"products", "courses_tags"} <= found.tables
    assert found.pushed == {"products": frozenset({"2"}), "courses_tags": frozenset({"7"})}


def test_a_run_reads_once_and_not_when_the_host_said() -> None:
    calls: list[int] = []

    def read() -> Held:
        calls.append(1)
        return Held(frozenset({"orders"}))

    given = HeldTables(Held(frozenset({"products"})), read)
    assert given() == Held(frozenset({"products"})) and not calls
    lazy = HeldTables(None, read)
    assert not calls  # nothing read until asked
    threads = [threading.Thread(target=lazy) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert lazy() == Held(frozenset({"orders"})) and calls == [1]
    unknown = HeldTables(None, lambda: None)
    assert unknown() is None
