"""Rows a re-read returned unchanged: dropped before dlt sees them (issue 15,
docs/performance.md#nothing-new).

An incremental run re-reads rows it loaded before: the newest page of each window, the tail
of a tail-first listing, every page of a small dimension. Loading them again costs a load
job and a merge per table although nothing changed. So each listing keeps, in its resource
state, a short hash of every row on the pages the next run re-reads when nothing is new: its
first `KEEP_FIRST` and last `KEEP_LAST` pages by number, and every page holding a record within
`RECENT_S` of the newest one (a newest-first window and an oldest-first listing pick different
records among equal timestamps), and for a window filtered by day (`date_range`: the next run
lists from midnight of its window's first day) the `ANCHORED` pages that hold that midnight's
first records; a dimension listed in full every run keeps all its pages.
Pages do not cover what the next run reads newest first by a field this listing is not sorted
by (a full listing by `created_at`, then `-updated_at` or a change feed's `-fulfilled_at`): for
each such field (`newest`) the rows of the `2 x page size` records newest by it are kept too,
wherever they were listed (else the first run after a full sync loads ~440 unchanged rows at
`small`, docs/performance.md#nothing-new). The next run drops a row whose key and hash match.
Bounded: at most `HASHED_PAGES_MAX` pages (tuning.py) and `2 x page size` records per field per
(resource, site), whatever the data size. A key read twice in a run keeps no hash if the reads differ, or if one of them was
let go and cannot be compared (`_RereadKeys`): which read the destination holds is not the later
one (an append keeps the first, a merge any), so the next run loads it. A listing that loads no
row keeps the hashes it was given instead (still true of the destination, and a superset of
what it would keep): its state does not move, so a nothing-new run has no state row to load.

Keys: an entity row by `id`; a link or line table (merged per parent: `merge_key` = parent,
see `hints.table_hints`) by its parent, all of that parent's rows as one group, so a
parent is either dropped whole or loaded whole (a partial group would delete the rest).

Safe by construction: the hashes travel in the resource state, which dlt commits with the
load package that carries the rows (a crash between extract and load leaves both pending; a
failed resource restores its state). A row is only dropped from a table the destination holds
already (`kept`), never under a full refresh, and the rows dropped are reported as *seen*
(`RunReport.add_seen`), so `_is_deleted` marking keeps them alive.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from .hints import link_columns
from .key_sets import RecordKeySet
from .tuning import HASHED_PAGE_ROWS_MAX, HASHED_PAGES_MAX

STATE_KEY = "row_hashes"
KEEP_FIRST = 1  # newest-first windows, and page 1 of a tail-first read
KEEP_LAST = 2  # the tail of a tail-first read, the newest rows of an oldest-first listing
RECENT_S = 3600  # pages with a record this close to the newest one are kept too
ANCHORED = 2  # pages kept from where the next run's day-filtered window starts
VOLATILE = frozenset({"_extracted_at"})  # differs on every read of the same record
Rows = dict[str, list[dict[str, Any]]]
Entries = dict[str, dict[str, str]]  # table -> key -> hash


def next_day_window(resource: Any, started: datetime) -> datetime | None:
    """Midnight (UTC) of the day the next ordinary run's `date_range` filter starts at (its
    cursor becomes `started`, see incremental.py); None for other strategies."""
    inc = resource.incremental
    if inc.strategy != "date_range":
        return None
    since = started - timedelta(seconds=inc.recent_lookback_s)
    return since.replace(hour=0, minute=0, second=0, microsecond=0)


def _digest(parts: list[str]) -> str:
    return hashlib.blake2b("\x1f".join(parts).encode(), digest_size=8).hexdigest()


def _row_text(row: Mapping[str, Any]) -> str:
    return repr(sorted((k, v) for k, v in row.items() if k not in VOLATILE))


def key_column(table: str, row: Mapping[str, Any]) -> str:
    """The column a table's rows are keyed by: an entity's `id`, a link/line table's parent."""
    return "id" if "id" in row else link_columns(table, row.keys())[0]


def row_keys(table: str, rows: list[dict[str, Any]]) -> list[str]:
    """The distinct keys of `rows` (see `keyed`), in order."""
    if not rows:
        return []
    key = key_column(table, rows[0])
    return list(dict.fromkeys([str(r[key]) for r in rows]))


def keyed(table: str, rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Rows of one table by their key: an entity's id, or a link/line table's parent."""
    if not rows:
        return {}
    key = key_column(table, rows[0])
    out: dict[str, list[dict[str, Any]]] = {}
    for r in rows:  # a key twice on one page (a record re-read, a shared include): one group
        k = str(r[key])
        group = out.get(k)  # (not `setdefault(k, [])`: a list built per row, ~30 % of the loop)
        if group is None:
            out[k] = [r]
        else:
            group.append(r)
    return out


def group_hash(rows: list[dict[str, Any]]) -> str:
    """One hash for a key's rows (order-free: a group's rows may come in any order)."""
    return _digest(sorted(_row_text(r) for r in rows))


def hashes(rows: Rows) -> Entries:
    return {table: {key: group_hash(group) for key, group in keyed(table, table_rows).items()}
            for table, table_rows in rows.items()}


class Unchanged:
    """One (resource, site) listing: drops rows the last run stored unchanged, and collects
    the hashes of its first and last pages for the next run.

    `known`: the hashes the last run kept (the resource state's `STATE_KEY`); `may_skip(table)`:
    may rows of this table be dropped (it exists in the destination, no full refresh);
    `on_seen(table, keys)`: the keys dropped, for `_is_deleted` marking; `recent`: (the primary
    table, its cursor column), whose values pick the recent pages; `keep_all`: a dimension;
    `anchor`: where the next run's window starts when the server filters by day; `webhook_written(table)`:
    keys of the table's rows another writer (the webhook loader) wrote last, never dropped (the
    stored row may not be what this run read; asked only of a table `may_skip`); `newest`: (fields of the primary table the next run
    lists newest first by, how many of the newest records by each to keep).
    """

    def __init__(
        self, known: Mapping[str, Mapping[str, str]] | None, may_skip: Callable[[str], bool],
        on_seen: Callable[[str, set[str]], None], *, recent: tuple[str, str] | None = None,
        keep_all: bool = False, anchor: datetime | None = None,
        webhook_written: Callable[[str], frozenset[str]] | None = None,
        newest: tuple[tuple[str, ...], int] = ((), 0),
    ) -> None:
        self._webhook_written = webhook_written or (lambda table: frozenset())
        self._known = known or {}
        self._may_skip = may_skip
        self._on_seen = on_seen
        self._recent = recent
        self._keep_all = keep_all
        self._anchor = anchor
        # page number -> (its newest cursor value, its rows, tables too big to remember), for
        # the pages worth keeping
        self._pages: dict[int, tuple[datetime | None, Rows, set[str]]] = {}
        self._newest: datetime | None = None
        self._newest_records = _NewestRecordRows(recent[0] if recent else "", *newest)
        self._passed = False  # a row went on to be loaded
        self._rereads = _RereadKeys()

    def filter(self, number: int, rows: Rows) -> Rows:
        """`rows` of page `number` without the groups stored unchanged."""
        self._remember(number, rows)
        out: Rows = {}
        for table, table_rows in rows.items():
            known = self._known.get(table)
            if not known or not table_rows or not self._may_skip(table):
                out[table] = table_rows
                continue
            kept: list[dict[str, Any]] = []
            dropped: set[str] = set()
            webhook_written = self._webhook_written(table)
            for key, group in keyed(table, table_rows).items():
                old = known.get(key)
                if old is not None and key not in webhook_written and old == group_hash(group):
                    dropped.add(key)
                else:
                    kept.extend(group)
            if dropped:
                self._on_seen(table, dropped)
            if kept:
                out[table] = kept
        self._passed = self._passed or any(out.values())
        return out

    def passed(self, rows: Rows) -> Rows:
        """`rows`, a piece of one parent's group that comes in several (a streamed payout's
        lines): all loaded, since a piece is not the group a hash was of, and not remembered
        (read and let go, as a table too big to hold), so the group keeps no hash."""
        for table, table_rows in rows.items():
            self._rereads.note(table, row_keys(table, table_rows), {}, self._pages.values())
            self._rereads.let_go(table, table_rows)
        self._passed = self._passed or any(rows.values())
        return rows

    def _page_newest(self, rows: Rows) -> datetime | None:
        if self._recent is None:
            return None
        table, column = self._recent
        values = [r[column] for r in rows.get(table, ()) if isinstance(r.get(column), datetime)]
        return max(values) if values else None

    def _remember(self, number: int, rows: Rows) -> None:
        """Keep the rows of the pages worth keeping (a page read twice, by a drift pass or a
        change feed, adds to its number's rows); the rest are let go as the listing goes."""
        self._newest_records.add(rows)
        newest = self._page_newest(rows)
        old_newest, page, too_big = self._pages.get(number, (None, {}, set()))
        for table, table_rows in rows.items():
            self._rereads.note(table, row_keys(table, table_rows), page, self._pages.values())
            if table in too_big:
                continue
            held = page.setdefault(table, [])
            held.extend(table_rows)
            # a table bigger than a page (detail lines) is not remembered: its rows come from
            # detail reads, which the detail gate skips for unchanged records anyway
            if len(held) > HASHED_PAGE_ROWS_MAX:  # the whole table of this page, or none of it
                too_big.add(table)
                self._rereads.let_go(table, page.pop(table))
        if old_newest is not None and (newest is None or old_newest > newest):
            newest = old_newest
        self._pages[number] = (newest, page, too_big)
        if newest is not None and (self._newest is None or newest > self._newest):
            self._newest = newest
        if self._keep_all and len(self._pages) <= HASHED_PAGES_MAX:
            return
        numbers = sorted(self._pages)
        edges = set(numbers[:KEEP_FIRST]) | set(numbers[-KEEP_LAST:])
        floor = self._newest - timedelta(seconds=RECENT_S) if self._newest is not None else None
        recent = sorted(
            (n for n in numbers if n not in edges and floor is not None
             and self._pages[n][0] is not None and self._pages[n][0] >= floor),  # type: ignore[operator]
            key=lambda n: self._pages[n][0], reverse=True)  # type: ignore[arg-type, return-value]
        keep = edges | set(recent[:max(0, HASHED_PAGES_MAX - len(edges))])
        if self._anchor is not None:  # the first pages at or after the anchor, by cursor
            after = [n for n in numbers if self._pages[n][0] is not None
                     and self._pages[n][0] >= self._anchor]  # type: ignore[operator]
            keep |= set(sorted(after, key=lambda n: self._pages[n][0])[:ANCHORED])  # type: ignore[arg-type, return-value]
        for n in numbers:
            if n not in keep:
                for table, table_rows in self._pages.pop(n)[1].items():
                    self._rereads.let_go(table, table_rows)

    def save(self, state: dict[str, Any]) -> None:
        """The hashes of the kept pages become the state the next run compares with; a listing
        that loads nothing leaves the hashes it was given (see `_keeps_known`)."""
        if self._keeps_known():
            self._pages.clear()
            self._newest_records.groups()
            self._rereads = _RereadKeys()
            return
        merged: Entries = {}
        torn: set[tuple[str, str]] = set()  # (table, key) read with different rows
        parts = [self._pages[number][1] for number in sorted(self._pages)] + self._newest_records.groups()
        for part in parts:
            for table, entries in hashes(part).items():
                have = merged.setdefault(table, {})
                for key, digest in entries.items():
                    if have.setdefault(key, digest) != digest:
                        torn.add((table, key))
        for table, entries in merged.items():  # read more than once, a read let go
            torn.update((table, key) for key in self._rereads.torn(table, list(entries)))
        for table, key in torn:
            del merged[table][key]
        merged = {table: entries for table, entries in merged.items() if entries}
        if merged:
            state[STATE_KEY] = merged
        else:
            state.pop(STATE_KEY, None)
        self._pages.clear()
        self._rereads = _RereadKeys()

    def _keeps_known(self) -> bool:
        """Every row this listing read matched a hash it was given and none is loaded: the
        destination's rows are as they were, so every hash given still describes them, and
        the ones this run would keep are among them (a row is only dropped if its hash was
        given). Keeping them leaves the resource state as it was, so dlt has no state row to
        load: the first nothing-new run after a full sync (whose hashes cover more pages)
        skips normalise and load like any later one (docs/performance.md#nothing-new)."""
        return bool(self._known) and not self._passed


class _RereadKeys:
    """Keys of one listing read more than once with a read let go (its page was not kept):
    they keep no hash, since which read the destination holds is not known to match the one
    hashed. A first load appends a key's first read (`Batches` drops the later ones) and a
    merge keeps any one of them (dlt's dedupe by primary key has no order), so keeping the hash
    of a later read alone would let the next run drop the changed record as unchanged, and the
    warehouse would keep the first read for good (docs/performance.md#nothing-new). Both reads
    held (kept pages): `save` compares them, and an identical re-read (a change feed's page and a
    window's) keeps its hash, so a run with nothing new still loads nothing.

    Every key read is held (`RecordKeySet`: a set while few, then about a bit per id in sequence, 8
    bytes at most) until `save`; re-reads are rare (a drift pass, a change feed, a record moved
    while listed), so only they cost more: `watch`, re-read keys whose reads are all held so
    far (torn if one is let go), and `lost`, the torn ones."""

    def __init__(self) -> None:
        self._read: dict[str, RecordKeySet] = {}
        self._watch: dict[str, set[str]] = {}
        self._lost: dict[str, RecordKeySet] = {}

    def note(self, table: str, keys: list[str], page: Rows, held: Iterable[tuple[Any, Rows, Any]]) -> None:
        """A read of `keys` of `table`, about to join `page` (a held page's rows; `held`: every
        held page). A first re-read is watched if its earlier read is held, else torn."""
        again = self._read.setdefault(table, RecordKeySet()).add(keys)
        if not again:
            return
        watch = self._watch.setdefault(table, set())
        lost = self._lost.setdefault(table, RecordKeySet())
        torn = set(lost.having(again))
        first = [k for k in again if k not in watch and k not in torn]
        if not first:
            return
        here = {k for rows in [page, *(p for _, p, _ in held)] for k in row_keys(table, rows.get(table, []))}
        watch.update(k for k in first if k in here)
        lost.add([k for k in first if k not in here])

    def let_go(self, table: str, rows: list[dict[str, Any]]) -> None:
        """`rows` of `table` are let go: watched keys among them are torn."""
        watch = self._watch.get(table)
        if watch:
            gone = [k for k in row_keys(table, rows) if k in watch]
            watch.difference_update(gone)
            self._lost.setdefault(table, RecordKeySet()).add(gone)

    def torn(self, table: str, keys: list[str]) -> list[str]:
        lost = self._lost.get(table)
        return lost.having(keys) if lost is not None else []


class _NewestRecordRows:
    """The rows of the `count` records newest by each of `fields` of the primary `table`, with
    their link and line rows (keyed by that record), wherever in the listing they came: what
    the next run's newest-first first page re-reads. A record read twice keeps both reads."""

    def __init__(self, table: str, fields: tuple[str, ...], count: int) -> None:
        self._table = table
        self._count = count if fields else 0
        self._values: dict[str, dict[str, datetime]] = {f: {} for f in fields}  # field -> key -> value
        self._rows: dict[str, Rows] = {}  # key -> its rows per table

    def add(self, rows: Rows) -> None:
        if not self._count or not rows.get(self._table):
            return
        fresh: set[str] = set()  # keys newly among the newest, or held already (a re-read)
        for row in rows[self._table]:
            key = str(row["id"])
            for field, values in self._values.items():
                value = row.get(field)
                if isinstance(value, datetime) and (key not in values or value > values[key]):
                    values[key] = value
                    fresh.add(key)
            if key in self._rows:
                fresh.add(key)
        if not fresh:
            return
        for table, table_rows in rows.items():  # the entity's own rows and its link groups
            if table != self._table and (not table_rows or "id" in table_rows[0]):
                continue  # an included entity: not keyed by this record
            for key, group in keyed(table, table_rows).items():
                if key in fresh:  # (`get`, not `setdefault`: no dict and list built per group)
                    held = self._rows.get(key)
                    if held is None:
                        self._rows[key] = {table: group}
                    elif table in held:
                        held[table].extend(group)
                    else:
                        held[table] = group
        if any(len(v) > 2 * self._count for v in self._values.values()):
            self._prune()

    def _prune(self) -> None:
        """Only the newest `count` per field (amortised: every `count` records or so)."""
        for field, values in self._values.items():
            top = sorted(values.items(), key=lambda kv: kv[1], reverse=True)[:self._count]
            self._values[field] = dict(top)
        held = set().union(*self._values.values())
        self._rows = {k: v for k, v in self._rows.items() if k in held}

    def groups(self) -> list[Rows]:
        self._prune()
        out = list(self._rows.values())
        self._rows.clear()
        return out
