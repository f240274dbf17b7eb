"""Erase people's personal fields in the raw tables; their keys and money stay.

`erase_people` erases, given ids, the people a `forget` names (or every row flagged
`_is_deleted`). A sync erases the people the platform deleted in its own load, with the same
columns (`sources.creator_platform.deletions`, `[creator_sync] deleted_people = "erase"`). Which columns are personal is written once, in
`sources.creator_platform.pii` (`personal_columns`, `PERSON_KEYS`, `PERSON_EMAILS`): what
`--pii` covers plus free text about the person. Plain SQL through a dlt `sql_client`, so it
runs on DuckDB and PostgreSQL alike. The marts read the raw tables: a model build after it
leaves no erased value in them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from creator_sync.sources.creator_platform import (
    PERSON_EMAILS,
    PERSON_KEYS,
    personal_held,
)

PEOPLE_TABLES = tuple(sorted({person for keys in PERSON_KEYS.values() for _, person in keys}))
IDS_PER_STATEMENT = 1000


def erase_people(
    client: Any, tables: Mapping[str, Iterable[str]],
    people: Mapping[str, Iterable[str]] | None = None,
) -> dict[str, int]:
    """Set every personal column of the named people's rows to NULL; returns rows erased per
    table (only rows that still held a value count, so a second call erases nothing).

    `client`: an open dlt sql client of the dataset; `tables`: the tables it holds -> their
    columns (`warehouse_sql.data_tables`); `people`: ids per people table (`contacts`,
    `customers`, `contact_notes`), or None for every row flagged `_is_deleted` in them. A
    person's rows are theirs in every table (`PERSON_KEYS`): a customer's purchases and payout
    lines, a contact's notes; form submissions match by the person's email, so they go
    first, while that email is still there.
    """
    who = _Who(client, tables, people)
    erased: dict[str, int] = {}
    for table in PERSON_EMAILS:
        for person in ("contacts", "customers"):
            _erase(client, table, tables, "email", who.emails(person), erased)
    for table, keys in PERSON_KEYS.items():
        if table in PEOPLE_TABLES:
            continue  # the people's own rows last: their emails are matched above
        for column, person in keys:
            _erase(client, table, tables, column, who.ids(person), erased)
    for table in PEOPLE_TABLES:
        for column, person in PERSON_KEYS[table]:
            _erase(client, table, tables, column, who.ids(person), erased)
    return erased


def any_deleted(client: Any, people_tables: Iterable[str]) -> bool:
    """Does any of these people tables hold a row flagged `_is_deleted`? (One query.)"""
    parts = [f"SELECT 1 FROM {client.make_qualified_table_name(t)} WHERE _is_deleted"
             for t in people_tables]
    if not parts:
        return False
    rows = client.execute_sql(f"SELECT COUNT(*) FROM ({' UNION ALL '.join(parts)}) AS flagged")
    return bool(rows and rows[0][0])


class _Who:
    """The people to erase per people table, as a SQL condition on a column and its args."""

    def __init__(self, client: Any, tables: Mapping[str, Iterable[str]],
                 people: Mapping[str, Iterable[str]] | None) -> None:
        self.client = client
        self.tables = {t: set(c) for t, c in tables.items()}
        self.people = None if people is None else {t: sorted(set(map(str, ids)))
                                                    for t, ids in people.items()}

    def _flagged(self, person: str) -> str | None:
        """`SELECT id ... WHERE _is_deleted` of a people table, or None if it cannot say."""
        if "_is_deleted" not in self.tables.get(person, set()):
            return None
        return (f"SELECT id FROM {self.client.make_qualified_table_name(person)} "
                f"WHERE _is_deleted")

    def ids(self, person: str) -> list[tuple[str, list[Any]]]:
        """(`IN (...)` body, args) chunks naming the ids of the people of `person`."""
        if self.people is None:
            flagged = self._flagged(person)
            return [] if flagged is None else [(flagged, [])]
        ids = self.people.get(person, [])
        return [(", ".join(["%s"] * len(chunk)), chunk)
                for chunk in (ids[i:i + IDS_PER_STATEMENT]
                              for i in range(0, len(ids), IDS_PER_STATEMENT))]

    def emails(self, person: str) -> list[tuple[str, list[Any]]]:
        """The same people's emails (as the people table holds them, maybe hashed)."""
        if "email" not in self.tables.get(person, set()):
            return []
        q = self.client.make_qualified_table_name(person)
        return [(f"SELECT email FROM {q} WHERE email IS NOT NULL AND id IN ({body})", args)
                for body, args in self.ids(person)]


def _erase(client: Any, table: str, tables: Mapping[str, Iterable[str]], column: str,
           conditions: list[tuple[str, list[Any]]], erased: dict[str, int]) -> None:
    have = set(tables.get(table, ()))
    esc = client.escape_column_name
    personal = personal_held(table, have, esc)
    if personal is None or column not in have or not conditions:
        return
    q = client.make_qualified_table_name(table)
    targets, held = personal
    sets = ", ".join(f"{esc(c)} = NULL" for c in targets)
    for body, args in conditions:
        key = f"CAST({esc(column)} AS VARCHAR)"
        if column == "email":  # (as typed: the case may differ from the person's record)
            key, body = f"LOWER({key})", body.replace("SELECT email", "SELECT LOWER(email)", 1)
        where = f"({held}) AND {key} IN ({body})"
        count = int(client.execute_sql(f"SELECT COUNT(*) FROM {q} WHERE {where}", *args)[0][0])
        if count:
            client.execute_sql(f"UPDATE {q} SET {sets} WHERE {where}", *args)
            erased[table] = erased.get(table, 0) + count
