"""`forget` in the warehouse: find a person by email or contact id, and erase what the raw
tables, the webhook event log, its dead letters and dlt's merge staging hold about them.

Plain SQL through the pipeline's dlt `sql_client`, so it runs on DuckDB and PostgreSQL alike.
The person's rows in the raw tables go through the one erasure (`erasure.erase_people`); this
module adds what only a request to forget needs: finding them, the event log's JSON, and a last
sweep of every text column for their email. Keys and money stay, so the books still add up.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from creator_sync.sources.creator_platform import apply_pii

from .erasure import erase_people
from .forget_scrub import ERASED, Person, erase_in_body, erase_in_payload
from .warehouse_sql import existing_tables

TEXT_TYPES = ("varchar", "text", "character varying", "json", "jsonb")
EVENTS, DEAD_LETTERS = "webhook_events", "webhook_dead_letters"


@dataclass
class Request:
    """One person asked for: by `email` or by `contact_id` (exactly one of them)."""

    email: str | None = None
    contact_id: str | None = None

    def __str__(self) -> str:
        return f"email {self.email}" if self.email else f"contact id {self.contact_id}"


@dataclass
class Found:
    request: Request
    contact_ids: set[str] = field(default_factory=set)
    customer_ids: set[str] = field(default_factory=set)
    texts: set[str] = field(default_factory=set)

    @property
    def person(self) -> Person:
        return Person(frozenset(self.contact_ids), frozenset(self.customer_ids),
                      frozenset(self.texts))

    @property
    def empty(self) -> bool:
        return not (self.contact_ids or self.customer_ids or self.texts)


def normal_email(email: str) -> str:
    return " ".join(email.split()).lower()


def stored_email(email: str, pii_mode: str | None, salt: str) -> str | None:
    """The email as the warehouse holds it under `--pii` (None: `drop` keeps none)."""
    if pii_mode == "drop":
        return None
    row = {"email": normal_email(email)}
    apply_pii(row, pii_mode, salt, "contacts")  # type: ignore[arg-type]
    return str(row["email"])


def text_columns(client: Any, schema: str) -> dict[str, dict[str, str]]:
    """table -> {column: data type} of the text and JSON columns of `schema`."""
    rows = client.execute_sql(
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = %s", schema)
    out: dict[str, dict[str, str]] = {}
    for table, column, kind in rows or []:
        if str(kind).lower() in TEXT_TYPES:
            out.setdefault(table, {})[column] = str(kind)
    return out


def find(client: Any, tables: Mapping[str, Iterable[str]], request: Request,
         pii_mode: str | None, salt: str) -> Found:
    """The person `request` names in the people tables and the event log (a person a delivery
    brought who was not synced yet is found there too)."""
    found = Found(request)
    have = {t: set(c) for t, c in tables.items()}
    email = stored_email(request.email, pii_mode, salt) if request.email else None
    if request.contact_id:
        found.contact_ids.add(str(request.contact_id))
    if email is not None:
        found.texts.add(email)
    for _ in range(2):  # a contact's customer, a customer's contact: one more round finds both
        _from_people(client, have, found, email)
    if email is not None and existing_tables(client, {EVENTS}):  # (the receiver's own table)
        _from_events(client, found, email)
    if not (found.contact_ids or found.customer_ids) and not _named_anywhere(client, found):
        found.texts.clear()
    return found


def _from_people(client: Any, have: dict[str, set[str]], found: Found, email: str | None) -> None:
    for table, link in (("contacts", None), ("customers", "contact_id")):
        columns = have.get(table, set())
        if "id" not in columns:
            continue
        conditions, args = [], []
        if email is not None and "email" in columns:
            conditions.append("LOWER(email) = %s")
            args.append(email.lower())
        own = found.contact_ids if table == "contacts" else found.customer_ids
        if own:
            conditions.append(f"id IN ({', '.join(['%s'] * len(own))})")
            args.extend(sorted(own))
        if link and link in columns and found.contact_ids:
            conditions.append(f"{link} IN ({', '.join(['%s'] * len(found.contact_ids))})")
            args.extend(sorted(found.contact_ids))
        if not conditions:
            continue
        wanted = ["id"] + [c for c in ("contact_id", "email", "name") if c in columns]
        rows = client.execute_sql(
            f"SELECT {', '.join(wanted)} FROM {client.make_qualified_table_name(table)} "
            f"WHERE {' OR '.join(conditions)}", *args)
        for row in rows or []:
            values = dict(zip(wanted, row, strict=True))
            own.add(str(values["id"]))
            if values.get("contact_id") is not None:
                found.contact_ids.add(str(values["contact_id"]))
            found.texts.update(str(values[c]) for c in ("email", "name") if values.get(c))


def _from_events(client: Any, found: Found, email: str) -> None:
    """People of a delivery that named the email (contacts and customers in its payload)."""
    rows = client.execute_sql(
        f"SELECT CAST(payload AS VARCHAR) FROM {client.make_qualified_table_name(EVENTS)} "
        "WHERE LOWER(CAST(payload AS VARCHAR)) LIKE %s", f"%{email.lower()}%")
    for (payload,) in rows or []:
        for resource in orjson.loads(payload) if payload else []:
            attributes = resource.get("attributes") or {}
            if str(attributes.get("email", "")).lower() != email.lower():
                continue
            kind = resource.get("type")
            if kind in ("contacts", "customers"):
                (found.contact_ids if kind == "contacts" else found.customer_ids).add(
                    str(resource["id"]))
                if attributes.get("name"):
                    found.texts.add(str(attributes["name"]))


def _named_anywhere(client: Any, found: Found) -> bool:
    """A person known by email only (a form submission, say): still theirs to erase."""
    return bool(found.texts) and bool(remaining(client, client.dataset_name, found.person))


def erase(client: Any, tables: Mapping[str, Iterable[str]], person: Person) -> dict[str, int]:
    """Erase the person from the dataset; returns values erased per table."""
    erased = erase_people(client, tables, {"contacts": person.contact_ids,
                                           "customers": person.customer_ids})
    schema = client.dataset_name
    columns = text_columns(client, schema)
    if EVENTS in columns and "payload" in columns[EVENTS]:
        _count(erased, EVENTS, _scrub_events(client, person, columns[EVENTS]["payload"]))
    if DEAD_LETTERS in columns and "body" in columns[DEAD_LETTERS]:
        _count(erased, DEAD_LETTERS, _scrub_dead_letters(client, person))
    for table, count in _sweep(client, schema, columns, person).items():
        _count(erased, table, count)
    for table, count in clear_staging(client, f"{schema}_staging").items():
        _count(erased, f"{schema}_staging.{table}", count)
    return erased


def _count(erased: dict[str, int], table: str, count: int) -> None:
    if count:
        erased[table] = erased.get(table, 0) + count


def _named_rows(client: Any, table: str, column: str, person: Person) -> list[tuple[Any, ...]]:
    """(rowid-like key, text) of the rows of `table` whose `column` may name the person."""
    needles = sorted({t.lower() for t in person.texts} |
                     {f'"{i}"' for i in person.contact_ids | person.customer_ids})
    if not needles:
        return []
    where = " OR ".join([f"LOWER(CAST({column} AS VARCHAR)) LIKE %s"] * len(needles))
    return client.execute_sql(
        f"SELECT journal_seq, CAST({column} AS VARCHAR) FROM "
        f"{client.make_qualified_table_name(table)} WHERE {where}",
        *[f"%{n}%" for n in needles]) or []


def _scrub_events(client: Any, person: Person, kind: str) -> int:
    """The deliveries that name the person, their payload without them (`kind`: the column's
    type, JSON on DuckDB, JSON or JSONB on PostgreSQL)."""
    count = 0
    q = client.make_qualified_table_name(EVENTS)
    for seq, payload in _named_rows(client, EVENTS, "payload", person):
        scrubbed = orjson.dumps(erase_in_payload(orjson.loads(payload), person)).decode()
        if orjson.loads(scrubbed) != orjson.loads(payload):
            client.execute_sql(f"UPDATE {q} SET payload = CAST(%s AS {kind}) "
                               "WHERE journal_seq = %s", scrubbed, seq)
            count += 1
    return count


def _scrub_dead_letters(client: Any, person: Person) -> int:
    count = 0
    q = client.make_qualified_table_name(DEAD_LETTERS)
    for seq, body in _named_rows(client, DEAD_LETTERS, "body", person):
        scrubbed = erase_in_body(body.encode(), person)
        if scrubbed is not None:
            client.execute_sql(f"UPDATE {q} SET body = %s WHERE journal_seq = %s",
                               scrubbed.decode(), seq)
            count += 1
    return count


def _sweep(client: Any, schema: str, columns: Mapping[str, Mapping[str, str]],
           person: Person) -> dict[str, int]:
    """The person's emails wherever they still stand in text (a billing email on an order, a
    field of a submission): an email names one person only, so erasing it anywhere is safe."""
    emails = sorted({t for t in person.texts if "@" in t})
    swept: dict[str, int] = {}
    for table, kinds in columns.items():
        if table.startswith("_dlt"):
            continue
        q = client.make_qualified_table_name(table)
        for column, kind in kinds.items():
            c = client.escape_column_name(column)
            for email in emails:
                where = f"LOWER(CAST({c} AS VARCHAR)) LIKE %s"
                n = int(client.execute_sql(f"SELECT COUNT(*) FROM {q} WHERE {where}",
                                           f"%{email.lower()}%")[0][0])
                if n:  # flags 'gi', in DuckDB and PostgreSQL alike: every match, any case
                    client.execute_sql(
                        f"UPDATE {q} SET {c} = CAST(REGEXP_REPLACE(CAST({c} AS VARCHAR), %s, %s, "
                        f"'gi') AS {kind}) WHERE {where}", re.escape(email), ERASED,
                        f"%{email.lower()}%")
                    swept[table] = swept.get(table, 0) + n
    return swept


def qualified(client: Any, table: str, schema: str | None = None) -> str:
    """`table` of `schema` (default: the client's dataset), named in full: with the catalog
    where the destination needs one (a DuckDB file named like its dataset)."""
    return ".".join(client.make_qualified_table_name_path(table, dataset_name=schema))


def clear_staging(client: Any, staging: str) -> dict[str, int]:
    """dlt's merge staging holds the last merge's rows; they are transient (replaced at every
    merge), so they are emptied rather than searched."""
    rows = client.execute_sql(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = %s "
        "AND table_type = 'BASE TABLE'", staging)
    cleared: dict[str, int] = {}
    for (table,) in rows or []:
        if table.startswith("_dlt"):
            continue
        q = qualified(client, table, staging)
        n = int(client.execute_sql(f"SELECT COUNT(*) FROM {q}")[0][0])
        if n:
            client.execute_sql(f"DELETE FROM {q}")
            cleared[table] = n
    return cleared


def remaining(client: Any, schema: str, person: Person) -> dict[str, int]:
    """Rows of `schema` whose text still names the person, per table (what erasure left: a name
    another person shares, or nothing)."""
    pattern_texts = sorted({t.lower() for t in person.texts})
    left: dict[str, int] = {}
    if not pattern_texts:
        return left
    for table, kinds in text_columns(client, schema).items():
        q = qualified(client, table, schema)
        conditions = [f"LOWER(CAST({client.escape_column_name(c)} AS VARCHAR)) LIKE %s"
                      for c in kinds for _ in pattern_texts]
        args = [f"%{t}%" for _ in kinds for t in pattern_texts]
        n = int(client.execute_sql(f"SELECT COUNT(*) FROM {q} WHERE {' OR '.join(conditions)}",
                                   *args)[0][0])
        if n:
            left[table] = n
    return left


def returning(client: Any, tables: Mapping[str, Iterable[str]], load_ids: list[str],
              erasures: Iterable[Any], salt: str) -> Person | None:
    """The people `forget` erased whom these loads brought back (the platform still lists them
    until it erases them too), recognised by the erasure log's salted hashes of their ids and
    emails; None when there are none."""
    from .erasure_log import digest

    emails: set[str] = set()
    ids: set[str] = set()
    for entry in erasures:
        emails |= entry.emails
        ids |= entry.ids
    if not (emails or ids) or not load_ids:
        return None
    found: dict[str, set[str]] = {"contacts": set(), "customers": set()}
    texts: set[str] = set()
    marks = ", ".join(["%s"] * len(load_ids))
    for table, own in found.items():
        columns = set(tables.get(table, ()))
        if not {"id", "_dlt_load_id"} <= columns:
            continue
        wanted = ["id"] + [c for c in ("contact_id", "email", "name") if c in columns]
        rows = client.execute_sql(
            f"SELECT {', '.join(wanted)} FROM {client.make_qualified_table_name(table)} "
            f"WHERE _dlt_load_id IN ({marks})", *load_ids) or []
        for row in rows:
            values = dict(zip(wanted, row, strict=True))
            email = values.get("email")
            if digest(salt, str(values["id"])) in ids or (email and digest(salt, email) in emails):
                own.add(str(values["id"]))
                if values.get("contact_id") is not None:
                    found["contacts"].add(str(values["contact_id"]))
                texts.update(str(values[c]) for c in ("email", "name") if values.get(c))
    if not (found["contacts"] or found["customers"]):
        return None
    return Person(frozenset(found["contacts"]), frozenset(found["customers"]), frozenset(texts))
