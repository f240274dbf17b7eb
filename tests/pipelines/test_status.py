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


def test_a_site_listed_whose_catch_up_was_cut_is_not_shown_as_not_started(
        fake_api, settings_for, monkeypatch) -> None:
    """Issue 38, point 5: a budgeted run that completed a site's listing and was stopped in
    the catch-up after it (what changed since it began) showed the site "not started"."""
    from urllib.parse import parse_qs, urlsplit

    from creator_sync.pipelines import sync as sync_module
    from creator_sync.pipelines.status import status_rows
    from creator_sync.pipelines.sync import run_sync

    site_a = "2147483650"
    spent = {"now": False}
    trigger = {"when": lambda q: False}

    def hook(request):
        q = {k: v[0] for k, v in parse_qs(urlsplit(str(request.url)).query).items()}
        if request.url.path.endswith("/contacts") and q.get("filter[site_id]") == site_a \
                and trigger["when"](q):
            spent["now"] = True  # the budget runs out while this page is read
        return None

    real_spent = sync_module.RunClock.spent
    monkeypatch.setattr(sync_module.RunClock, "spent",
                        lambda self: "budget" if spent["now"] else real_spent(self))
    fake_api.hook = hook
    settings = settings_for(resources=("sites", "contacts"), page_size=5, max_duration=3600.0)
    # run 1: stopped in site A's listing (page 2 of 3)
    trigger["when"] = lambda q: q.get("page[number]") == "2"
    first = run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert first.partial["contacts"].startswith(f"left: site {site_a} from page "), first.partial
    # run 2: site A's listing completes; the catch-up after it (a window) is cut
    spent["now"] = False
    trigger["when"] = lambda q: "filter[created_in_last]" in q
    second = run_sync(settings, transport=fake_api.transport(), show_progress=False)
    left = second.partial["contacts"]
    assert left.startswith(f"left: site {site_a} changes since 20"), left
    assert "site 2147483651 not started" in left and left.count("not started") == 1, left
    shown = {r["resource"]: r for r in status_rows(settings.warehouse)}["contacts"]
    assert shown["status"] == "partial" and shown["left"] == left.removeprefix("left: ")
    assert [(s["site"], s["status"]) for s in shown["sites"]] == [(site_a, "catch-up")]
    text = format_status([shown])
    assert f"  site {site_a}: listed; changes since 20" in text and "not started" not in \
        text.split("\n", 2)[2], text
    # run 3 reads the changes since and the other site: complete
    spent["now"] = False
    trigger["when"] = lambda q: False
    third = run_sync(settings, transport=fake_api.transport(), show_progress=False)
    assert not third.partial and third.tables
