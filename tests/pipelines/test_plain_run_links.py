"""Issue 33 point 2: a plain `pipeline.run(creator_platform_source())` leaves exact link tables.

What every dlt user writes first, with no `finish_sync` after it: no link or line table may hold
a row with an empty key (the marker of an empty relationship), on the first run (dlt merges
every table it does not know) nor on an incremental one; and after the platform changed links
(`POST /_sandbox/activity` removes and adds contact tags), the second plain run's link tables
equal those of a fresh `creator-sync sync` of the same data, row for row: a parent whose links
changed or emptied lost its old ones. The CLI's own first sync (new tables appended) and its
incremental one are held to the same.
"""

from __future__ import annotations

from pathlib import Path

import dlt
import duckdb
import pytest
from sandbox_helpers import CLIENT_ID, CLIENT_SECRET, snapshot, sync

from creator_sync.sandbox.testing import start_sandbox
from creator_sync.sources.creator_platform import creator_platform_source
from creator_sync.sources.creator_platform.hints import EMPTY_PARENT, is_link_table, link_columns
from creator_sync.sources.creator_platform.rows import child_marker

DATASET = "creator_platform"


@pytest.fixture(scope="module")
def sandbox():
    handle = start_sandbox(scale="tiny", sites=2, seed=16, now="2026-03-01T12:00:00Z")
    yield handle
    handle.stop()


def plain_run(sandbox, where: Path) -> Path:
    """The README's `pipeline.run(creator_platform_source())`, and nothing after it."""
    db = where / "plain.duckdb"
    pipeline = dlt.pipeline("plain_links", destination=dlt.destinations.duckdb(str(db)),
                            dataset_name=DATASET, pipelines_dir=str(where / "pipelines"))
    pipeline.run(creator_platform_source(base_url=sandbox.base_url, client_id=CLIENT_ID,
                                         client_secret=CLIENT_SECRET))
    return db


def link_tables(db: Path) -> dict[str, tuple[str, str]]:
    """Link and line tables of the warehouse -> (parent column, child column)."""
    out = {}
    with duckdb.connect(str(db), read_only=True) as con:
        tables = [r[0] for r in con.execute(
            "select table_name from information_schema.tables where table_schema = ? "
            "and table_name not like '\\_dlt%' escape '\\'", [DATASET]).fetchall()]
        for table in tables:
            cols = [r[0] for r in con.execute(
                "select column_name from information_schema.columns where table_schema = ? "
                "and table_name = ?", [DATASET, table]).fetchall()]
            if is_link_table(cols, table):
                out[table] = link_columns(table, cols)
    return out


def placeholders(db: Path) -> dict[str, int]:
    """Rows per link or line table whose child key is empty (a marker) or that carry the
    marker flag."""
    found = {}
    with duckdb.connect(str(db), read_only=True) as con:
        for table, (_, child) in link_tables(db).items():
            marker = child_marker(table)
            (count,) = con.execute(
                f'select count(*) from {DATASET}."{table}" where "{child}" is null '
                f'or "{child}" = ? or "{EMPTY_PARENT}" is not null', [marker]).fetchone()
            if count:
                found[table] = count
    return found


def test_plain_runs_leave_exact_link_tables(sandbox, tmp_path):
    db = plain_run(sandbox, tmp_path)
    tables = link_tables(db)
    assert {"contacts_tags", "contacts_offers", "forms_contact_tags"} <= set(tables)
    assert placeholders(db) == {}
    before = snapshot(db)
    assert sum(len(before[t]) for t in tables) > 100  # the sandbox really had links
    cli = tmp_path / "cli" / "cli.duckdb"  # the CLI's first sync: new tables are appended
    cli.parent.mkdir()
    sync(sandbox, cli)
    assert placeholders(cli) == {}

    changed = sandbox.activity(300)
    assert changed  # new records, moved links
    db = plain_run(sandbox, tmp_path)  # the second plain run: an incremental merge
    assert placeholders(db) == {}
    sync(sandbox, cli)  # and the CLI's incremental sync (merged, then `finish_sync`)
    assert placeholders(cli) == {}

    fresh = tmp_path / "fresh" / "fresh.duckdb"  # the same data, synced from scratch
    fresh.parent.mkdir()
    sync(sandbox, fresh)
    assert placeholders(fresh) == {}
    ours, theirs, cli_rows = snapshot(db), snapshot(fresh), snapshot(cli)
    assert set(link_tables(fresh)) == set(tables)
    for table in tables:
        assert ours[table] == theirs[table], f"{table}: the incremental plain run is not exact"
        assert cli_rows[table] == theirs[table], f"{table}: the incremental CLI sync is not exact"
    # the activity did change links the first run had loaded (else the check proves nothing)
    assert before["contacts_tags"] != theirs["contacts_tags"]
    assert not set(theirs["contacts_tags"]) >= set(before["contacts_tags"])  # some were removed
