"""Work a nothing-new sync no longer does (issue 15 point 2, finding 25), and what it still
decides the same way: counts of no tables open no connection, the destination mark reads the
state file instead of decoding dlt's state, and DuckDB's `import pandas` fails at once when
pandas is not installed. What such a run writes is compared with a fresh full sync in
`test_nothing_new_fast_path.py`.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest
from dlt.pipeline.pipeline import Pipeline

from common.warehouse import resolve_warehouse
from pipelines import postload
from pipelines import sync as sync_module
from pipelines.factory import build_pipeline


class _NoDestination:
    """A pipeline whose warehouse must not be touched."""

    def sql_client(self):
        raise AssertionError("opened a connection")

    @property
    def destination(self):
        raise AssertionError("asked for the destination")


def test_counting_no_tables_opens_no_connection():
    pipeline = _NoDestination()
    assert postload.row_counts(pipeline, []) == {}  # type: ignore[arg-type]
    assert postload.loaded_counts(pipeline, [], ["1700000000.1"]) == {}  # type: ignore[arg-type]
    assert postload.loaded_counts(pipeline, iter(()), ["1700000000.1"]) == {}  # type: ignore[arg-type]


def test_the_destination_mark_follows_the_state_file_without_decoding_it(tmp_path, monkeypatch):
    """`sync_destination` is skipped while the warehouse file and the local state file are as
    the last sync left them; any change of either runs it again. dlt's state is not decoded
    for it (two full decodes a run, finding 25)."""
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


@pytest.mark.skipif(importlib.util.find_spec("pandas") is not None, reason="pandas is installed")
def test_an_absent_pandas_fails_at_once_and_everything_else_imports_as_before():
    # a child process: `sys.meta_path` is process-wide
    script = textwrap.dedent("""
        import sys
        from pipelines import factory

        searched = []

        class Spy:  # last in line: reached only when no finder before it answered
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] == "pandas":
                    searched.append(name)
                return None

        sys.meta_path.append(Spy())
        try:
            import pandas  # noqa: F401
        except ModuleNotFoundError:
            pass
        assert searched == ["pandas"], searched  # before: every path entry was searched

        factory.skip_absent_pandas()
        factory.skip_absent_pandas()  # idempotent: one finder
        assert sum(isinstance(f, factory._NotInstalled) for f in sys.meta_path) == 1
        searched.clear()  # its own one look whether pandas is installed
        for name in ("pandas", "pandas.core"):
            try:
                __import__(name)
            except ModuleNotFoundError as exc:
                assert exc.name == "pandas", exc.name  # as Python names it: the package
            else:
                raise AssertionError(name + " imported")
        assert searched == [], searched  # answered first: no search
        assert "pandas" not in sys.modules  # nothing another library reads (finding 10)

        import duckdb, pyarrow, json  # binding values, arrow from Python lists: as before
        con = duckdb.connect()
        assert con.execute("select ? + 1, ?", [41, "x"]).fetchall() == [(42, "x")]
        assert pyarrow.array([1, None, 3]).to_pylist() == [1, None, 3]
        assert pyarrow.Table.from_pylist([{"a": 1}]).num_rows == 1
        print("ok")
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
