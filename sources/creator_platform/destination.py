"""The destination of the pipeline that runs the extract, as the source's resources read it:
the pipeline itself, the tables dlt drops or empties at this load (`refresh=`), the tables the
destination holds and the keys of rows the webhook loader wrote last (DECISIONS-2.md, "A source
that stands alone").

Read through the pipeline's `sql_client` (any SQL destination), never from dlt state: a table
dropped by hand, or a warehouse restored from an older copy, is not held, whatever the state
says.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import dlt

from .unchanged import key_column

log = logging.getLogger("creator_sync.destination")
# the `_dlt_load_id` of every row the webhook loader (`pipelines.pushed_writes`) writes starts so
PUSHED_LOAD_ID_PREFIX = "webhooks."


def current_pipeline() -> Any:
    """The pipeline running this extract, if it has a destination (else None)."""
    try:
        pipeline = dlt.current.pipeline()
    except Exception:
        return None
    return pipeline if getattr(pipeline, "destination", None) is not None else None


def refreshed_tables() -> set[str]:
    """Tables this load drops or empties before it loads (`refresh=` of dlt's `pipeline.run` /
    `extract`: `drop_resources` drops the tables of every selected resource, `drop_data`
    empties them). Read from the load package's state: nothing outside an extract."""
    try:
        state = dlt.current.load_package_state()["state"]
    except Exception:  # (no load package: an iteration outside an extract)
        return set()
    return {t.get("name") if isinstance(t, dict) else t
            for key in ("dropped_tables", "truncated_tables") for t in state.get(key) or ()}


@dataclass(frozen=True)
class Held:
    """What the destination holds, for the unchanged-row skip: its tables (less those this
    load drops or empties), and per table the keys of rows another writer (the webhook loader,
    `PUSHED_LOAD_ID_PREFIX`) wrote last: re-read, those are loaded even when unchanged."""

    tables: frozenset[str]
    pushed: Mapping[str, frozenset[str]] = field(default_factory=dict)


def held(pipeline: Any, lock: Callable[[], AbstractContextManager[Any]] | None = None,
         own: Iterable[str] = ()) -> Held | None:
    """What the destination's dataset holds now; None when that cannot be known (no
    pipeline, no destination, one without SQL). A dataset not created yet holds nothing.
    `lock`: the host's warehouse lock, taken for the reads (`Runtime.warehouse_lock`); `own`:
    tables no delivery writes (the run's bookkeeping): no keys are looked for there."""
    if pipeline is None:
        return None
    try:
        with (lock or nullcontext)(), pipeline.sql_client() as client:
            if not client.has_dataset():
                return Held(frozenset())
            columns = _columns(client)
            skipped = set(own)
            pushed = pushed_keys(client, {t: c for t, c in columns.items() if t not in skipped})
    except Exception as exc:  # unknown: nothing is skipped, every row read is loaded
        log.info("what the destination holds could not be read (%s): rows read unchanged "
                 "are loaded again", " ".join(str(exc).split())[:200])
        return None
    return Held(frozenset(columns) - refreshed_tables(), pushed)


def held_tables(pipeline: Any,
                lock: Callable[[], AbstractContextManager[Any]] | None = None) -> frozenset[str] | None:
    """The tables of `held` (None: unknown)."""
    found = held(pipeline, lock)
    return None if found is None else found.tables


def _columns(client: Any) -> dict[str, list[str]]:
    """Table -> its columns in order, as the dataset holds them (one query)."""
    rows = client.execute_sql(
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = %s "
        "ORDER BY table_name, ordinal_position", client.dataset_name)
    out: dict[str, list[str]] = {}
    for table, column in rows or ():
        out.setdefault(str(table), []).append(str(column))
    return out


def pushed_keys(client: Any, columns: Mapping[str, list[str]]) -> dict[str, frozenset[str]]:
    """Per data table of `columns` (table -> its columns in order), the keys
    (`unchanged.key_column`) of rows the webhook loader wrote last (their `_dlt_load_id` is
    its): one statement for every table (a statement each cost ~70 ms a run, ~40 tables)."""
    keyed: list[tuple[str, str]] = []
    for table, names in sorted(columns.items()):
        if table.startswith("_dlt") or "_dlt_load_id" not in names:
            continue
        try:
            keyed.append((table, key_column(table, dict.fromkeys(names))))
        except ValueError:  # (not a table of ours: no key to skip rows by)
            continue
    if not keyed:
        return {}
    selects = [f"SELECT {i} AS t, CAST({client.escape_column_name(key)} AS VARCHAR) FROM "
               f"{client.make_qualified_table_name(table)} WHERE _dlt_load_id LIKE %s"
               for i, (table, key) in enumerate(keyed)]
    rows = client.execute_sql(" UNION ALL ".join(selects),
                              *[f"{PUSHED_LOAD_ID_PREFIX}%"] * len(selects)) or ()
    found: dict[str, set[str]] = {}
    for i, key in rows:
        found.setdefault(keyed[i][0], set()).add(str(key))
    return {table: frozenset(keys) for table, keys in found.items()}
