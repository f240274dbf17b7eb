"""`creator-sync status` as its reader sees it (issue 30, point 3): per resource complete,
partial (what is left, where each site stands) or failed, with the last complete sync in words;
`--json` keeps the same rows for machines; no warehouse is one line."""

from __future__ import annotations

import json

from click.testing import CliRunner

from creator_sync.cli import main
from creator_sync.pipelines.status import format_status

ROWS = [
    {"resource": "contacts", "status": "partial", "left": "site 2200000000 from page 4",
     "reason": None, "last_attempt_at": "2026-11-27T11:53:09.064820+00:00",
     "last_synced_at": None,
     "sites": [{"site": "2200000000", "status": "partial", "from_page": 4},
               {"site": "2200000001", "status": "complete", "from_page": None}]},
    {"resource": "payouts", "status": "failed", "left": None,
     "reason": "/acme_payments_payouts answered 404", "last_attempt_at": None,
     "last_synced_at": "2026-11-26T23:05:00+01:00", "sites": []},
    {"resource": "transactions", "status": "complete", "left": None, "reason": None,
     "last_attempt_at": None, "last_synced_at": "2026-11-27T11:53:09.064820+00:00",
     "sites": []},
]


def test_the_text_names_what_is_left_per_site_and_times_in_utc_words() -> None:
    lines = format_status(ROWS).splitlines()
    assert lines[0].split() == ["resource", "status", "last", "complete", "sync", "detail"]
    assert lines[1].split() == ["contacts", "partial", "never", "left:", "site", "2200000000",
                                "from", "page", "4"]
    assert lines[2:4] == ["  site 2200000000: from page 4", "  site 2200000001: complete"]
    assert "payouts" in lines[4] and "2026-11-26 22:05 UTC" in lines[4]  # in UTC, to the minute
    assert lines[4].endswith("/acme_payments_payouts answered 404")
    assert "2026-11-27 11:53 UTC" in lines[5] and lines[5] == lines[5].rstrip()
    assert lines[-1].startswith("partial: contacts; the next `creator-sync sync` goes on")


def test_nothing_recorded_and_no_warehouse_say_so_in_one_line(tmp_path, monkeypatch) -> None:
    assert format_status([]) == "no sync recorded yet: run `creator-sync sync`"
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["status"])
    assert result.exit_code == 1
    (line,) = result.output.strip().splitlines()
    assert line.startswith("error: no warehouse at ") and "creator-sync sync" in line
    assert "Traceback" not in result.output


def test_json_holds_the_rows_of_a_synced_warehouse(synced_sandbox, tmp_path, monkeypatch) -> None:
    """On the session's synced sandbox: every resource complete, with its ISO sync time."""
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["status", "--json", "--duckdb", str(synced_sandbox.path)])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert {r["resource"] for r in rows} >= {"transactions", "payouts", "contacts"}
    assert all(r["status"] == "complete" and r["last_synced_at"] for r in rows), rows
