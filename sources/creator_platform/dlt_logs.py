"""Keep dlt from warning about the source's own column hints, in any pipeline that runs it.

Columns hinted `json` (`socials`, `categories`, ...) travel as arrow strings holding JSON text:
dlt has no arrow type that maps to `json` other than nested ones (struct/list), and those would
change what lands in the warehouse. So dlt warns, per resource and batch, that the declared
hint wins over arrow's `text`; that is the intent. The filter drops only that warning, and only
for this source's resources: another source's hint clashes still show.
"""

from __future__ import annotations

import logging

from .bookkeeping import NAME as BOOKKEEPING
from .deletions import NAME as DELETIONS
from .endpoints import RESOURCES
from .refresh import REFRESH

_MARK = ", when merging arrow schema with dlt schema"
# the collections, and the resources that write into their tables (tombstones, re-read customers)
_OURS = tuple(f"In resource: {name}{_MARK}" for name in (*RESOURCES, DELETIONS, REFRESH, BOOKKEEPING))


class HintMergeFilter(logging.Filter):
    """Drops dlt's "arrow hints differ" warning for this source's resources."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(_OURS)


def quiet_hint_merge_warnings() -> None:
    """Install the filter on dlt's logger once (creator_platform_source and the CLI call it)."""
    dlt_logger = logging.getLogger("dlt")
    if not any(isinstance(f, HintMergeFilter) for f in dlt_logger.filters):
        dlt_logger.addFilter(HintMergeFilter())
