"""`_is_deleted` follows a dimension's own listing, whatever other resources include."""

from __future__ import annotations

import copy

import duckdb
from fakeapi import record

from creator_sync.pipelines.sync import run_sync

SITE = "2147483650"
ARCHIVED = "4000000009"  # a tag the listing hides (archived) that a form still names


def _tags_and_a_form(api, *, archived_listed: bool) -> None:
    tags = [record("contact_tags", 4000000000 + i, site=SITE, name=f"t{i}") for i in range(3)]
    archived = record("contact_tags", ARCHIVED, site=SITE, name="churned")
    api.collections["contact_tags"] = tags + ([archived] if archived_listed else [])
    form = record("forms", "2800000000", site=SITE, name="Signup")
    form["relationships"]["contact_tags"] = {"data": [{"id": ARCHIVED, "type": "contact_tags"}]}
    api.collections["forms"] = [form]
    api.details[("forms", "2800000000")] = {"data": copy.deepcopy(form), "included": [archived]}


def _alive(db: str) -> dict[str, bool]:
    with duckdb.connect(db, read_only=True) as con:
        rows = con.execute(
            "select id, _is_deleted from creator_platform.contact_tags where site_id = ?", [SITE]
        ).fetchall()
    return {rid: not deleted for rid, deleted in rows}


def test_a_row_only_an_include_wrote_is_deleted_and_comes_back_when_listed(fake_api, settings_for):
    _tags_and_a_form(fake_api, archived_listed=False)
    settings = settings_for(resources=("contact_tags", "forms"))
    db = settings.warehouse.duckdb_path

    first = run_sync(settings, transport=fake_api.transport(), show_progress=False)
    alive = _alive(db)
    assert alive[ARCHIVED] is False  # the form's include wrote it, the listing does not have it
    assert [alive[str(4000000000 + i)] for i in range(3)] == [True, True, True]
    assert first.deleted == {"contact_tags": 1}

    # a run of the tags alone agrees with the run that also read the form
    run_sync(settings_for(resources=("contact_tags",)), transport=fake_api.transport(),
             show_progress=False)
    assert _alive(db)[ARCHIVED] is False

    _tags_and_a_form(fake_api, archived_listed=True)  # un-archived: listed again
    run_sync(settings_for(resources=("contact_tags",)), transport=fake_api.transport(),
             show_progress=False)
    assert _alive(db) == {**alive, ARCHIVED: True}
