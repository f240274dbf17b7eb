"""Progress: plain periodic lines when stderr is not a terminal."""

from __future__ import annotations

import time

from creator_sync.pipelines.progress import progress_reporter
from creator_sync.sources.creator_platform.stats import RunStats


def test_plain_log_lines_when_not_a_tty(capsys):
    stats = RunStats()
    with progress_reporter(stats, interval=0.05):
        stats.add("requests", 3)
        stats.add_rows("contacts", 250)
        stats.add_page("contacts")
        time.sleep(0.2)
    err = capsys.readouterr().err
    assert "extracting: 250 rows, 1 pages, 3 requests" in err


def test_disabled_prints_nothing(capsys):
    with progress_reporter(RunStats(), enabled=False, interval=0.01):
        time.sleep(0.05)
    assert capsys.readouterr().err == ""
