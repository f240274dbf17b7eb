"""`_is_deleted`, and deleted people's personal fields erased, by the source itself: its
`deletions` resource, loaded in the same merge as the data (DECISIONS-2.md, "A source that
stands alone").

It waits (`RunReport.until_ended`) until every other resource of the extract has ended (but
`bookkeeping`, which waits for it), then,
only when the pipeline has a destination, reads through its `sql_client` the stored rows whose
flag the run's complete listings flip, and yields them back whole with `_is_deleted` set:

- a dimension's own complete listing (`RunReport.listed`): a row is alive iff listed;
- a complete listing of people (`RunReport.began`): alive iff written since it began (rounds or
  runs ago) or read unchanged (`seen`);
- the tables of a detail-read resource: alive iff written or read unchanged by this run.

A row the webhook receiver wrote after the extract started is spared (the listing could not
have seen it). A row this run also writes is never yielded (`written`, kept per table as the
resources hand their items on, `take`): its fresh copy holds `_is_deleted = false` already. A
dimension's row that another resource's `include` wrote (an archived tag a form still names) is
held back until the end and yielded with the flag its table's listing gives it.

With `deleted_people="erase"`, the people it flags lose their personal fields in every table
(`pii.PERSON_KEYS`, `PERSON_EMAILS`), as `pipelines.erasure.erase_people` does after a `forget`;
and a row this run writes of a person the warehouse already holds as deleted is erased as it
is handed on (`take`), so a later load never brings their fields back. A table the destination
does not hold yet flips nothing; a nothing-new run reads nothing and yields nothing.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext
from datetime import UTC, datetime
from typing import Any

import dlt
from dlt.extract.items import DataItemWithMeta, TableNameMeta

from .arrow_tables import conformed
from .destination import current_pipeline
from .endpoints import LINE_TABLES, RESOURCES, type_info
from .key_sets import GatheredIds
from .pii import PERSON_EMAILS, PERSON_KEYS, personal_columns, personal_held

log = logging.getLogger("creator_sync.deletions")
NAME = "deletions"  # the resource's name; its items name their own tables
DROPPED = ("_dlt_load_id", "_dlt_id")  # dlt writes them again at the load
IDS_PER_STATEMENT = 1000


@functools.cache
def judged_tables() -> frozenset[str]:
    """Tables a complete listing flags `_is_deleted` in."""
    return frozenset(t for r in RESOURCES.values() for t in r.complete_tables)


@functools.cache
def listed_tables() -> frozenset[str]:
    """Dimensions judged by their own listing's ids (`RunReport.listed`)."""
    return frozenset(r.table for r in RESOURCES.values()
                     if r.table in r.complete_tables and not type_info(r.jtype).deletable)


@functools.cache
def people_tables() -> tuple[str, ...]:
    return tuple(sorted({person for keys in PERSON_KEYS.values() for _, person in keys}))


@functools.cache
def named_tables() -> frozenset[str]:
    """Tables whose rows name a person by another table's key or by email (a purchase, a
    payout line, a note, a form submission): their new rows wait for the people's flags."""
    return frozenset(t for t, keys in PERSON_KEYS.items() if any(p != t for _, p in keys)
                     ) | frozenset(PERSON_EMAILS)


def _table_and_data(item: Any) -> tuple[str | None, Any]:
    if isinstance(item, DataItemWithMeta):
        meta = item.meta
        if isinstance(meta, TableNameMeta):
            return meta.table_name, item.data
        hints = getattr(meta, "hints", None)
        if isinstance(hints, dict):
            name = hints.get("table_name")
            return (name if isinstance(name, str) else None), item.data
    return None, item


def _with_data(item: Any, data: Any) -> Any:
    if isinstance(item, DataItemWithMeta):
        return DataItemWithMeta(item.meta, data)
    return data


def _keys(column: Any) -> list[str]:
    import pyarrow as pa

    if column.null_count or not pa.types.is_string(column.type):
        return [str(k) for k in column.to_pylist()]
    return column.to_pylist()


class Deletions:
    """What the `deletions` resource needs of one run: the keys its resources wrote, the rows
    held back, and the people the warehouse holds as deleted (read once, when first needed)."""

    def __init__(self, report: Any, extract_started: datetime, deleted_people: str,
                 lock: Callable[[], AbstractContextManager[Any]] | None = None) -> None:
        self.report = report
        self.extract_started = extract_started
        self.erase = deleted_people == "erase"
        self.lock = lock or nullcontext
        self.written: dict[str, GatheredIds] = {}
        self.held: list[tuple[str, Any]] = []
        # rows naming a person, held back when the warehouse holds people: erased at the end
        # if the person is deleted by then (flagged before, or by this run)
        self.held_people: list[tuple[str, Any]] = []
        self._people_stored = False
        self._flagged: dict[str, set[str]] | None = None
        self._mutex = threading.Lock()
        # the pipeline this extract runs in (dlt's current one when the source is called: the
        # resources' worker threads may not see it)
        self.pipeline = current_pipeline()

    # ---------------------------------------------------------------- as items are handed on
    def take(self, owner: str, item: Any) -> Any | None:
        """An item a resource (writing `owner`, its own table) hands on: keys noted, a
        dimension's row another resource wrote held back (None), a deleted person's row
        erased."""
        table, data = _table_and_data(item)
        if table is None or not hasattr(data, "column_names") or not data.num_rows:
            return item
        if table in judged_tables() and "id" in data.column_names:
            keys = _keys(data.column("id"))
            with self._mutex:
                self.written.setdefault(table, GatheredIds()).update(keys)
        if table in listed_tables() and table != owner:
            with self._mutex:
                self.held.append((table, item))
            return None
        if self.erase and table in named_tables():
            self._flagged_people()
            if self._people_stored:  # (a first sync holds no one to erase: nothing waits)
                with self._mutex:
                    self.held_people.append((table, item))
                return None
        return item

    def _flagged_people(self, client: Any = None) -> dict[str, set[str]]:
        """People table -> ids the warehouse holds as deleted (read once; `client`: one open
        already, under the lock)."""
        with self._mutex:
            if self._flagged is None:
                if client is not None:
                    self._flagged = self._read_flagged(client)
                elif self.pipeline is not None:
                    with self.lock(), self.pipeline.sql_client() as own:
                        self._flagged = self._read_flagged(own)
                else:
                    self._flagged = {}
            return self._flagged

    def _read_flagged(self, client: Any) -> dict[str, set[str]]:
        flagged: dict[str, set[str]] = {}
        columns = _columns(client)
        for person in people_tables():
            if "_is_deleted" in columns.get(person, ()):
                self._people_stored = True
                q = client.make_qualified_table_name(person)
                rows = client.execute_sql(f"SELECT id FROM {q} WHERE _is_deleted")
                flagged[person] = {str(r[0]) for r in rows or []}
        return flagged

    # ---------------------------------------------------------------- at the end
    def rows(self) -> Iterator[Any]:
        """The flipped and erased rows, one arrow table per table, then the held rows."""
        report = self.report
        pipeline = self.pipeline = self.pipeline or current_pipeline()
        pairs = sorted(report.complete, key=lambda p: (p[0], p[1] or ""))
        if pipeline is None or not (pairs or self.held or self.held_people):
            yield from (item for _, item in [*self.held, *self.held_people])
            return
        with self.lock(), pipeline.sql_client() as client:
            columns = _columns(client)
            flips: dict[str, list[Any]] = {}
            for table, site in pairs:
                if "_is_deleted" not in columns.get(table, ()):
                    continue  # a table the destination does not hold yet
                tbl = self._flipped(client, table, site)
                if tbl is not None and tbl.num_rows:
                    flips.setdefault(table, []).append(tbl)
            out = {table: _concat(parts) for table, parts in flips.items()}
            for table, tbl in out.items():
                now = tbl.column("_is_deleted").to_pylist()
                was = tbl.column("__was").to_pylist()
                count = sum(1 for n, w in zip(now, was, strict=True) if n and w is not True)
                if count:
                    report.deleted[table] = report.deleted.get(table, 0) + count
                out[table] = tbl.drop_columns(["__was"])
            held = self._judged_held()
            if self.erase:
                held += self._erase(client, columns, out)
        for table, tbl in out.items():
            log.info("%s: %s row(s) yielded again with `_is_deleted` or erased", table, tbl.num_rows)
            yield dlt.mark.with_table_name(conformed(table, tbl), table)
        yield from held

    def _flipped(self, client: Any, table: str, site: str | None) -> Any:
        """Stored rows of (table, site) whose `_is_deleted` this run's listing flips, with the
        new flag (and the old one in `__was`); rows this run writes left out. The keys are
        found with plain tuples first: a run that flips nothing builds no arrow data (pyarrow
        and numpy cost ~0.2 s of CPU to import, which a nothing-new run never pays)."""
        report = self.report
        q = client.make_qualified_table_name(table)
        where, site_args = ("", []) if site is None else (" AND site_id = %s", [site])
        flips: dict[str, bool] = {}
        was: dict[str, bool | None] = {}
        if (table, site) in report.listed and (table, site) not in report.began:
            listed = report.listed[(table, site)]
            rows = client.execute_sql(
                f"SELECT CAST(id AS VARCHAR), _is_deleted, _extracted_at FROM {q} WHERE 1 = 1{where}",
                *site_args) or []
            for rid, deleted, at in rows:
                if rid in listed:
                    if deleted is not False:
                        flips[rid], was[rid] = False, deleted
                elif deleted is not True and not (at is not None
                                                  and _aware(at) >= self.extract_started):
                    flips[rid], was[rid] = True, deleted  # (not pushed after the listing began)
        else:
            began = report.began.get((table, site), self.extract_started)
            gone, args = "(_extracted_at IS NULL OR _extracted_at < %s)", [began]
            seen = sorted(report.seen.get((table, site), ()))
            if seen:
                gone += f" AND CAST(id AS VARCHAR) NOT IN ({', '.join(['%s'] * len(seen))})"
                args += seen
            rows = client.execute_sql(
                f"SELECT CAST(id AS VARCHAR), _is_deleted, ({gone}) FROM {q} "
                f"WHERE _is_deleted IS DISTINCT FROM ({gone}){where}",
                *args, *args, *site_args) or []
            for rid, deleted, flag in rows:
                flips[rid], was[rid] = bool(flag), deleted
        written = self.written.get(table)
        if written:
            flips = {k: v for k, v in flips.items() if k not in written}
        if not flips:
            return None
        import pyarrow as pa

        keys = sorted(flips)
        parts = [_select(client, f"SELECT * FROM {q} WHERE CAST(id AS VARCHAR) IN "
                                 f"({_marks(chunk)}){where}", [*chunk, *site_args])
                 for chunk in _chunks(keys)]
        tbl = _concat([t for t in parts if t is not None])
        tbl = tbl.drop_columns([c for c in DROPPED if c in tbl.column_names])
        ids = _keys(tbl.column("id"))
        at = tbl.column_names.index("_is_deleted")
        tbl = tbl.set_column(at, "_is_deleted", pa.array([flips[i] for i in ids], type=pa.bool_()))
        return tbl.append_column("__was", pa.array([was[i] for i in ids], type=pa.bool_()))

    def _judged_held(self) -> list[Any]:
        """The held rows, flagged by their table's listing where it completed."""
        if not self.held:  # (no arrow work: a nothing-new run never imports pyarrow or numpy)
            return []
        import pyarrow as pa

        out = []
        for table, item in self.held:
            _, data = _table_and_data(item)
            if "_is_deleted" in data.column_names and "site_id" in data.column_names:
                flags = []
                for rid, site in zip(_keys(data.column("id")), data.column("site_id").to_pylist(),
                                     strict=True):
                    listed = self.report.listed.get((table, site))
                    flags.append(False if listed is None else rid not in listed)
                if any(flags):
                    self.report.deleted[table] = self.report.deleted.get(table, 0) + sum(flags)
                at = data.column_names.index("_is_deleted")
                data = data.set_column(at, "_is_deleted", pa.array(flags, type=pa.bool_()))
                item = _with_data(item, data)
            out.append(item)
        return out

    def _erase(self, client: Any, columns: dict[str, set[str]], out: dict[str, Any]) -> list[Any]:
        """Erase the personal fields of every person flagged now (and of those flagged before
        whose fields a row still holds) in `out`, adding the stored rows that name them; returns
        the held rows naming a person, erased where the person is deleted."""
        if not self.held_people and not any(
                t in out and any(out[t].column("_is_deleted").to_pylist()) for t in people_tables()):
            return []  # nobody flagged now, nothing naming a person written: nothing to erase
        flagged = {p: set(ids) for p, ids in self._flagged_people(client).items()}
        for person, ids in flagged.items():  # a person written now was listed: alive
            written = self.written.get(person)
            if written:
                flagged[person] = {i for i in ids if i not in written}
        new = False
        for person in people_tables():
            tbl = out.get(person)
            if tbl is None:
                continue
            for rid, deleted in zip(_keys(tbl.column("id")), tbl.column("_is_deleted").to_pylist(),
                                    strict=True):
                if deleted:
                    new = new or rid not in flagged.setdefault(person, set())
                    flagged[person].add(rid)
                else:
                    flagged.get(person, set()).discard(rid)
        if not any(flagged.values()):
            return [item for _, item in self.held_people]
        fresh_keys: dict[str, set[str]] = {}  # per table, keys of the held rows (they win)
        for table, item in self.held_people:
            _, data = _table_and_data(item)
            key = "id" if "id" in data.column_names else LINE_TABLES[table].parent_column
            fresh_keys.setdefault(table, set()).update(_keys(data.column(key)))
        # form submissions by the people's emails first, while the people's rows still hold them
        emails: set[str] = set()
        for person in ("contacts", "customers"):
            ids = sorted(flagged.get(person, ()))
            if "email" not in columns.get(person, ()):
                continue
            q = client.make_qualified_table_name(person)
            for chunk in _chunks(ids):
                rows = client.execute_sql(
                    f"SELECT LOWER(CAST(email AS VARCHAR)) FROM {q} WHERE email IS NOT NULL "
                    f"AND CAST(id AS VARCHAR) IN ({_marks(chunk)})", *chunk)
                emails.update(r[0] for r in rows or [])
        if new or self.held_people:  # (people flagged before: a row may hold their fields again)
            for table in PERSON_EMAILS:
                self._add_named(client, columns, out, table, "email", sorted(emails),
                                fresh_keys.get(table, set()), lower=True)
            for table, keys in PERSON_KEYS.items():
                for column, person in keys:
                    self._add_named(client, columns, out, table, column,
                                    sorted(flagged.get(person, ())), fresh_keys.get(table, set()))
        for table in list(out):
            if table in named_tables() or table in PERSON_KEYS:
                out[table], count = _erase_rows(table, out[table], flagged, emails=emails)
                self._count_erased(table, count)
        erased = []
        for table, item in self.held_people:
            _, data = _table_and_data(item)
            data, count = _erase_rows(table, data, flagged, fresh=True, emails=emails)
            self._count_erased(table, count)
            erased.append(_with_data(item, data))
        return erased

    def _count_erased(self, table: str, count: int) -> None:
        if count:
            self.report.erased[table] = self.report.erased.get(table, 0) + count

    def _add_named(self, client: Any, columns: dict[str, set[str]], out: dict[str, Any],
                   table: str, column: str, keys: list[str], fresh: set[str],
                   lower: bool = False) -> None:
        """Stored rows of `table` whose `column` names one of `keys` and that hold a personal
        value, added to `out` (a line table: every line of their parents, replaced as a set),
        but not those this run writes again (`fresh`: their keys, or their parents')."""
        import pyarrow as pa

        have = columns.get(table, set())
        esc = client.escape_column_name
        held = personal_held(table, have, esc)
        if not keys or held is None or column not in have:
            return
        q = client.make_qualified_table_name(table)
        held_sql = held[1]
        key = f"CAST({esc(column)} AS VARCHAR)"
        key = f"LOWER({key})" if lower else key
        line = LINE_TABLES.get(table)
        parts = []
        for chunk in _chunks(keys):
            where = f"({held_sql}) AND {key} IN ({_marks(chunk)})"
            if line is not None:
                parent = esc(line.parent_column)
                where = f"{parent} IN (SELECT {parent} FROM {q} WHERE {where})"
            tbl = _select(client, f"SELECT * FROM {q} WHERE {where}", chunk)
            if tbl is not None and tbl.num_rows:
                parts.append(tbl.drop_columns([c for c in DROPPED if c in tbl.column_names]))
        if not parts:
            return
        tbl = _concat(parts)
        known_col = "id" if "id" in tbl.column_names else line.parent_column  # type: ignore[union-attr]
        if fresh:
            tbl = tbl.filter(pa.array([k not in fresh for k in _keys(tbl.column(known_col))],
                                      type=pa.bool_()))
        present = out.get(table)
        if present is not None:
            known = set(_keys(present.column(known_col)))
            fresh = pa.array([k not in known for k in _keys(tbl.column(known_col))], type=pa.bool_())
            tbl = _concat([present, tbl.filter(fresh)])
        elif "id" in tbl.column_names:  # one row per key (several chunks may name it)
            ids = _keys(tbl.column("id"))
            first = [i == ids.index(k) for i, k in enumerate(ids)] if len(set(ids)) != len(ids) else None
            if first is not None:
                tbl = tbl.filter(pa.array(first, type=pa.bool_()))
        out[table] = tbl

    # ---------------------------------------------------------------- the resource
    def resource(self, waits_for: Callable[[], Iterable[str]]) -> Any:
        """The `deletions` resource: waits for `waits_for()` to end, then yields `rows()`."""
        def rows() -> Iterator[Any]:
            yield from self.report.after(NAME, waits_for, self.rows)

        return dlt.resource(rows, name=NAME, write_disposition="merge")


def _erase_rows(table: str, tbl: Any, flagged: dict[str, set[str]], fresh: bool = False,
                emails: set[str] | None = None) -> tuple[Any, int]:
    """`tbl` with the personal columns of the rows naming a flagged person set to null, and
    how many rows held a value there. `fresh`: rows a resource writes now, where a person's own
    row is written alive (listed again) and keeps its fields."""
    import pyarrow as pa
    import pyarrow.compute as pc

    targets = [c for c in tbl.column_names if c in personal_columns(table)]
    if not targets:
        return tbl, 0
    mask = [False] * tbl.num_rows
    for column, person in PERSON_KEYS.get(table, ()):
        ids = flagged.get(person)
        if not ids or column not in tbl.column_names or (fresh and table == person):
            continue
        for i, key in enumerate(tbl.column(column).to_pylist()):
            if key is not None and str(key) in ids:
                mask[i] = True
    if emails and table in PERSON_EMAILS and "email" in tbl.column_names:
        for i, email in enumerate(tbl.column("email").to_pylist()):
            if email is not None and str(email).lower() in emails:
                mask[i] = True
    if not any(mask):
        return tbl, 0
    hit = pa.array(mask, type=pa.bool_())
    held = [pc.is_valid(tbl.column(c)) for c in targets]
    any_held = functools.reduce(pc.or_, held)
    count = pc.sum(pc.and_(hit, any_held).cast(pa.int64())).as_py() or 0
    for c in targets:
        at = tbl.column_names.index(c)
        column = tbl.column(c)
        tbl = tbl.set_column(at, tbl.field(at), pc.if_else(hit, pa.nulls(len(column), column.type), column))
    return tbl, int(count)


def _columns(client: Any) -> dict[str, set[str]]:
    """Table -> columns of the dataset, as the destination holds them."""
    rows = client.execute_sql(
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = %s",
        client.dataset_name)
    out: dict[str, set[str]] = {}
    for table, column in rows or []:
        out.setdefault(table, set()).add(column)
    return out


def _select(client: Any, sql: str, args: list[Any]) -> Any:
    with client.execute_query(sql, *args) as cursor:
        return cursor.arrow()


def _concat(parts: list[Any]) -> Any:
    import pyarrow as pa

    return parts[0] if len(parts) == 1 else pa.concat_tables(parts, promote_options="permissive")


def _chunks(keys: list[str]) -> Iterator[list[str]]:
    for start in range(0, len(keys), IDS_PER_STATEMENT):
        yield keys[start:start + IDS_PER_STATEMENT]


def _marks(chunk: list[str]) -> str:
    return ", ".join(["%s"] * len(chunk))


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
