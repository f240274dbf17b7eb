"""`creator-sync demo`: a full first run, then an incremental second run after new activity."""

from __future__ import annotations

from pathlib import Path

import duckdb

from creator_sync.common.warehouse import state_folder
from creator_sync.demo import again_command, demo_warehouse, forget, run_demo


def test_demo_twice_is_incremental(tmp_path, capsys):
    db = tmp_path / "demo.duckdb"
    report = tmp_path / "demo-report.html"
    first = run_demo(str(db), str(report), scale="tiny")
    assert first["run"] == 1
    assert all("first sync" in r or "full refresh" in r for r in first["sync"].plans.values())
    second = run_demo(str(db), str(report), scale="tiny")
    assert second["run"] == 2
    incremental = [r for r in second["sync"].plans.values() if r.startswith("incremental")]
    assert incremental, second["sync"].plans
    assert second["sync"].stats.requests < first["sync"].stats.requests
    assert sum(new for new, _ in second["sync"].tables.values()) > 0  # the day's activity landed
    out = capsys.readouterr().out
    assert "demo run 2" in out and "next:" in out
    # the closing hint runs this same demo again: the flags given, not the defaults
    assert f"run `creator-sync demo --duckdb {db} --report {report} --scale tiny` again" in out
    if first.get("report"):
        assert report.exists()
    assert (tmp_path / "demo.duckdb.demo-runs").read_text() == "2"


def test_reset_forgets_the_state_the_sync_keeps(tmp_path, capsys):
    """`demo --reset` finds the pipeline's state where the sync keeps it, whatever the file is
    called: `my-demo.duckdb` keeps its state in `.creator-sync/my_demo` (issue 16, point 4)."""
    db = tmp_path / "my-demo.duckdb"
    warehouse = demo_warehouse(str(db))
    state = Path(warehouse.pipelines_dir)
    assert state == state_folder("duckdb", db) == tmp_path / ".creator-sync" / "my_demo"

    first = run_demo(str(db), str(tmp_path / "r.html"), scale="tiny")
    assert first["warehouse"] == warehouse and (state / warehouse.pipeline_name).is_dir()
    loaded = _rows(db, warehouse.dataset)
    again = run_demo(str(db), str(tmp_path / "r.html"), scale="tiny", reset=True)
    assert again["run"] == 1
    # a fresh start: every resource read from scratch, the same rows as the first run
    assert all("first sync" in r or "full refresh" in r for r in again["sync"].plans.values()), (
        again["sync"].plans)
    assert _rows(db, warehouse.dataset) == loaded
    assert (tmp_path / "my-demo.duckdb.demo-runs").read_text() == "1"


def test_reset_leaves_a_shared_pipelines_folder_to_others(tmp_path, monkeypatch):
    """A configured `pipelines_dir` may hold other pipelines: reset removes only the demo's."""
    shared = tmp_path / "shared"
    monkeypatch.setenv("CREATOR_SYNC__PIPELINES_DIR", str(shared))
    warehouse = demo_warehouse(str(tmp_path / "d.duckdb"))
    assert Path(warehouse.pipelines_dir) == shared
    (shared / warehouse.pipeline_name).mkdir(parents=True)
    (shared / "someone_else").mkdir()
    forget(warehouse)
    assert not (shared / warehouse.pipeline_name).exists() and (shared / "someone_else").is_dir()


def _rows(db: Path, dataset: str) -> dict[str, int]:
    with duckdb.connect(str(db), read_only=True) as con:
        tables = [t for (t,) in con.execute(
            "select table_name from duckdb_tables() where schema_name = ? "
            "and table_name not like '\\_dlt%' escape '\\' and table_name <> 'sync_resources'",
            [dataset]).fetchall()]
        return {t: con.execute(f'select count(*) from "{dataset}"."{t}"').fetchone()[0]
                for t in tables}


def test_the_again_hint_names_only_the_flags_given():
    assert again_command("demo.duckdb", "demo-report.html", "demo", None, None) == (
        "creator-sync demo")
    assert again_command("my db.duckdb", "demo-report.html", "demo", "raw", "Europe/Paris") == (
        "creator-sync demo --duckdb 'my db.duckdb' --dataset raw --timezone Europe/Paris")
