"""Addendum A5: `contact_notes`, `landing_pages` and `podcasts` (list with page[number],
page[size], filter[site_id]; a single read at `/{id}`; their sorts and filters), and the live
`/v1/courses` list (sort, fields[courses], title/description contains filters).

Pagination, meta shape, site scoping and attribute types of the three collections are also
walked by the conventions and resources suites (they are in SITE_COLLECTIONS)."""

from __future__ import annotations

import httpx
import pytest
from sandbox_contract_helpers import (
    Api,
    assert_error,
    assert_sorted,
    check_filter,
    contains,
    parse_ts,
    pick_needle,
    rel_id,
)

NEW = ("contact_notes", "landing_pages", "podcasts")


@pytest.mark.parametrize("collection", NEW)
def test_pages_and_single_reads(api, catalog, site_ids, collection):
    for site in site_ids:
        records = catalog.all(collection, site)
        assert records, f"no {collection} on site {site}"
        first = api.get(collection, {"filter[site_id]": site, "page[size]": 1,
                                     "page[number]": 2})
        assert first["data"] == records[1:2] or len(records) == 1
        assert first["meta"]["total_count"] == len(records)
        for record in records[:3]:
            assert api.get(f"{collection}/{record['id']}")["data"] == record
    assert_error(api.raw_get(f"{collection}/2999999999"), 404)
    everywhere = api.get(collection, {"page[size]": 100})["meta"]["total_count"]
    assert everywhere == sum(len(catalog.all(collection, s)) for s in site_ids)


# ---- contact notes ---------------------------------------------------------------------------

def test_notes_belong_to_existing_contacts_of_their_site(catalog, each_site):
    contacts = catalog.by_id("contacts", each_site)
    for note in catalog.all("contact_notes", each_site):
        contact = contacts[rel_id(note, "contact")]  # a contact of the same site
        a = note["attributes"]
        assert a["body"].strip()
        assert parse_ts(a["created_at"]) >= parse_ts(contact["attributes"]["created_at"])
        assert parse_ts(a["updated_at"]) >= parse_ts(a["created_at"])


def test_notes_filter_contact_id(api, catalog, site_ids):
    notes = [n for s in site_ids for n in catalog.all("contact_notes", s)]
    contact = rel_id(notes[0], "contact")
    site = next(s for s in site_ids if notes[0] in catalog.all("contact_notes", s))
    check_filter(api, catalog.all("contact_notes", site), "contact_notes", site,
                 {"filter[contact_id]": contact}, lambda r: rel_id(r, "contact") == contact)
    assert_error(api.raw_get("contact_notes", {"filter[contact_id]": "x"}), 400, "contact_id")
    assert api.get("contact_notes", {"filter[contact_id]": "2999999999"})["data"] == []


@pytest.mark.parametrize("sort", ["created_at", "-created_at", "updated_at", "-updated_at"])
def test_notes_sort(api, site_id, sort):
    records = api.all("contact_notes", {"filter[site_id]": site_id, "sort": sort})
    assert_sorted(records, sort.lstrip("-"), sort.startswith("-"))


# ---- landing pages ---------------------------------------------------------------------------

@pytest.mark.parametrize("sort", ["title", "-title"])
@pytest.mark.parametrize("collection", ["landing_pages", "podcasts"])
def test_title_sorts(api, site_id, collection, sort):
    records = api.all(collection, {"filter[site_id]": site_id, "sort": sort})
    assert len(records) >= 2
    assert_sorted(records, "title", sort.startswith("-"))


@pytest.mark.parametrize("collection", ["landing_pages", "podcasts"])
def test_unlisted_sorts_are_400(api, collection):
    assert_error(api.raw_get(collection, {"sort": "created_at"}), 400, "sort")


def test_landing_pages_title_start_and_cont(api, catalog, each_site):
    pages = catalog.all("landing_pages", each_site)
    word = pages[0]["attributes"]["title"].split()[0]
    check_filter(api, pages, "landing_pages", each_site, {"filter[title_start]": word},
                 lambda r: r["attributes"]["title"].lower().startswith(word.lower()))
    needle = pick_needle([p["attributes"]["title"] for p in pages])
    check_filter(api, pages, "landing_pages", each_site, {"filter[title_cont]": needle},
                 contains("title", needle))


def test_landing_pages_publish_at_is_nullable(catalog, site_ids):
    values = [p["attributes"]["publish_at"] for s in site_ids for p in catalog.all("landing_pages", s)]
    assert None in values and any(values), "drafts (null) and published pages"


# ---- podcasts ---------------------------------------------------------------------------------

def test_podcasts_title_eq(api, catalog, each_site):
    podcasts = catalog.all("podcasts", each_site)
    title = podcasts[-1]["attributes"]["title"]
    check_filter(api, podcasts, "podcasts", each_site, {"filter[title_eq]": title},
                 lambda r: r["attributes"]["title"] == title)


def test_podcast_arrays(catalog, site_ids):
    podcasts = [p for s in site_ids for p in catalog.all("podcasts", s)]
    for podcast in podcasts:
        a = podcast["attributes"]
        assert a["categories"] and all(isinstance(c, str) and c for c in a["categories"])
        assert all(isinstance(d, dict) and d for d in a["directories"])
        assert (a["migrated_to_url"] is not None) == a["migrated"]
    assert any(p["attributes"]["directories"] for p in podcasts)


# ---- courses (the live list) --------------------------------------------------------------------

@pytest.mark.parametrize("sort", ["title", "-title", "created_at", "-created_at"])
def test_course_sorts(api, sort):
    records = api.all("courses", {"sort": sort})
    assert len(records) >= 2
    assert_sorted(records, sort.lstrip("-"), sort.startswith("-"))


def test_course_filters_and_fields(api, catalog):
    courses = catalog.all("courses", None)
    for attribute in ("title", "description"):
        needle = pick_needle([c["attributes"][attribute] for c in courses])
        got = set(api.ids("courses", {f"filter[{attribute}_cont]": needle}))
        assert got == {c["id"] for c in courses if contains(attribute, needle)(c)}
        assert got
    sparse = api.get("courses", {"fields[courses]": "title"})["data"]
    assert sparse and all(set(c["attributes"]) == {"title"} for c in sparse)


# ---- activity -----------------------------------------------------------------------------------

def test_activity_writes_and_edits_notes_and_edits_content(sandbox_factory):
    """Activity adds notes to contacts of their site and edits notes, landing pages and podcasts
    (updated_at moves past the old clock). Each kind is rare, so it runs until all were seen."""
    client = Api(sandbox_factory(seed=9).base_url)
    try:
        before = {name: {r["id"]: r for r in client.all(name)} for name in NEW}
        clock = client.server_now()
        moved: dict[str, list[str]] = {}
        for _ in range(8):
            response = httpx.post(client.base_url + "/_sandbox/activity", json={"count": 100},
                                  timeout=120)
            assert response.status_code == 200
            after = {name: {r["id"]: r for r in client.all(name)} for name in NEW}
            moved = {name: [i for i, r in after[name].items() if i in before[name]
                            and r["attributes"]["updated_at"]
                            != before[name][i]["attributes"]["updated_at"]] for name in NEW}
            if all(moved.values()):
                break
        assert all(moved.values()), {name: len(ids) for name, ids in moved.items()}
        for name, ids in moved.items():
            for record_id in ids:
                assert parse_ts(after[name][record_id]["attributes"]["updated_at"]) > clock
        new_notes = set(after["contact_notes"]) - set(before["contact_notes"])
        assert new_notes and min(map(int, new_notes)) > max(map(int, before["contact_notes"]))
        for site in [s["id"] for s in client.all("sites")]:
            contacts = set(client.ids("contacts", {"filter[site_id]": site}))
            for note in client.all("contact_notes", {"filter[site_id]": site}):
                assert rel_id(note, "contact") in contacts, "a note of a contact of its site"
    finally:
        client.close()
