"""Work a nothing-new sync no longer does (issue 15 point 2, docs/performance.md#nothing-new), and
what it still
decides the same way: counts of no tables open no connection, and the destination mark reads
the state file instead of decoding dlt's state. What such a run writes is compared with a
fresh full sync in `test_nothing_new_fast_path.py`.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
from dlt.pipeline.pipeline import Pipeline

from creator_sync.pipelines import counts
from creator_sync.pipelines import sync as sync_module
from creator_sync.pipelines.factory import build_pipeline, resolve_warehouse


class _NoDestination:
    """A pipeline whose warehouse must not be touched."""

    def sql_client(self):
        raise AssertionError("opened a connection")

    @property
    def destination(self):
        raise AssertionError("asked for the destination")


def test_counting_no_tables_opens_no_connection():
    pipeline = _NoDestination()
    assert counts.row_counts(pipeline, []) == {}  # type: ignore[arg-type]
    assert counts.loaded_counts(pipeline, [], ["1700000000.1"]) == {}  # type: ignore[arg-type]
    assert counts.loaded_counts(pipeline, iter(()), ["1700000000.1"]) == {}  # type: ignore[arg-type]


def test_the_destination_mark_follows_the_state_file_without_decoding_it(tmp_path, monkeypatch):
    """`sync_destination` is skipped while the warehouse file and the local state file are as
    the last sync left them; any change of either runs it again. dlt's state is not decoded
    for it (two full decodes a run, docs/performance.md#nothing-new)."""
    monkeypatch.chdir(tmp_path)
    wh = resolve_warehouse(duckdb=str(tmp_path / "w.duckdb"))
    duckdb.connect(wh.duckdb_path).close()
    pipeline = build_pipeline(wh)
    state_file = Path(pipeline.working_dir) / Pipeline.STATE_FILE
    state_file.parent.mkdir(parents=True, exist_ok=True)
    state_file.write_text('{"_state_version": 3, "_version_hash": "h", "sources": {}}')

    def no_decoding(self):
        raise AssertionError("decoded the pipeline state")

    monkeypatch.setattr(Pipeline, "_get_state", no_decoding)
    assert not sync_module.destination_unchanged(wh, pipeline)  # never noted
    sync_module.note_destination(wh, pipeline)
    assert sync_module.destination_unchanged(wh, pipeline)

    # the same version and hash, other content (a restored or edited state): sync again
    state_file.write_text('{"_state_version": 3, "_version_hash": "h", "sources": {"x": 1}}')
    assert not sync_module.destination_unchanged(wh, pipeline)
    sync_module.note_destination(wh, pipeline)
    assert sync_module.destination_unchanged(wh, pipeline)

    with duckdb.connect(wh.duckdb_path) as con:  # another writer
        con.execute("create table t as select 1 as x")
    assert not sync_module.destination_unchanged(wh, pipeline)

    state_file.unlink()  # no local state: nothing to compare, sync
    sync_module.note_destination(wh, pipeline)
    assert not sync_module.destination_unchanged(wh, pipeline)
