"""`creator-sync demo`: a full first run, then an incremental second run after new activity."""

from __future__ import annotations

from creator_sync.demo import run_demo


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
    if first.get("report"):
        assert report.exists()
    assert (tmp_path / "demo.duckdb.demo-runs").read_text() == "2"
