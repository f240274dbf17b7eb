"""The destination of the pipeline that runs the extract, as the source's resources read it:
the pipeline itself, the tables dlt drops or empties at this load (`refresh=`), and the data
tables the destination holds (DECISIONS-2.md, "A source that stands alone").

Read through the pipeline's `sql_client` (any SQL destination), never from dlt state: a table
dropped by hand, or a warehouse restored from an older copy, is not held, whatever the state
says.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import dlt

log = logging.getLogger("creator_sync.destination")


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


def held_tables(pipeline: Any,
                lock: Callable[[], AbstractContextManager[Any]] | None = None) -> frozenset[str] | None:
    """The tables the destination's dataset holds now and that this load does not drop or
    empty; None when that cannot be known (no pipeline, no destination, one without SQL).

    A dataset not created yet holds nothing. `lock`: the host's warehouse lock, taken for the
    read (`Runtime.warehouse_lock`)."""
    if pipeline is None:
        return None
    try:
        with (lock or nullcontext)(), pipeline.sql_client() as client:
            if not client.has_dataset():
                return frozenset()
            rows = client.execute_sql(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
                client.dataset_name)
    except Exception as exc:  # unknown: nothing is skipped, every row read is loaded
        log.info("the tables the destination holds could not be read (%s): rows read "
                 "unchanged are loaded again", " ".join(str(exc).split())[:200])
        return None
    return frozenset(str(r[0]) for r in rows or ()) - refreshed_tables()
