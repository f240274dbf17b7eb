"""`--pii hash|drop` covers people's names (issue 29): no contact's, customer's or form
submitter's name stays in clear in any table of a sync, while a tag's or a site's name does."""

from __future__ import annotations

import pytest
from sandbox_helpers import query, sync

PEOPLE = ("contacts", "customers", "form_submissions")
# the people tables, and the tables that repeat a person's name (payout lines, included records)
RESOURCES = (*PEOPLE, "purchases", "transactions", "payouts", "contact_tags", "sites")


def people_names(sandbox) -> set[str]:
    store = sandbox.store
    names: set[str] = set()
    for table in PEOPLE:
        names.update(v for v in store.tables[table].column("name").tolist() if v)
    return names


def text_values(db) -> dict[str, set[str]]:
    """`table.column` -> every distinct text value of the warehouse's data tables."""
    out: dict[str, set[str]] = {}
    columns = query(db, "select table_name, column_name from information_schema.columns where "
                        "table_schema = 'creator_platform' and data_type in ('VARCHAR', 'JSON') "
                        "and table_name not like '\\_dlt%' escape '\\'")
    for table, column in columns:
        values = query(db, f'select distinct "{column}"::varchar from creator_platform."{table}"')
        out[f"{table}.{column}"] = {v for (v,) in values if v is not None}
    return out


@pytest.mark.parametrize("mode", ["hash", "drop"])
def test_no_person_name_in_clear_anywhere(sandbox, tmp_path, mode):
    names = people_names(sandbox)
    assert len(names) > 20, "the sandbox has too few names to prove anything"
    db = tmp_path / "wh.duckdb"
    result = sync(sandbox, db, resources=RESOURCES, pii=mode, pii_salt="pepper")
    assert not result.failed
    values = text_values(db)
    leaks = {column: sorted(found & names)[:3] for column, found in values.items()
             if found & names}
    assert leaks == {}, f"names in clear under --pii {mode}: {leaks}"
    for table in PEOPLE:
        named = values.get(f"{table}.name")
        if mode == "drop":
            assert named is None, f"{table}.name kept under --pii drop"
        else:
            assert named and all(len(v) == 64 for v in named), table
    # not personal: a tag's and a site's name stay readable
    for column in ("contact_tags.name", "sites.name"):
        assert values[column] and not any(len(v) == 64 for v in values[column]), column
