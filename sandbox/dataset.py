"""The generated account: tables, to-many links, the sandbox clock and a lock.

Every type's table and every to-many relationship is reachable by name so that the query
engine, the renderer and activity share one view of the data.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from creator_sync.sandbox.store import Links, Table, type_base

# Type order fixes each type's id range; append new types at the end only.
TYPES: tuple[str, ...] = (
    "sites", "contacts", "customers", "products", "offers", "courses", "modules", "lessons",
    "media", "forms", "fields", "custom_fields", "form_submissions", "purchases", "orders",
    "order_items", "transactions", "payouts", "contact_tags", "blogs",
    "blog_posts", "website_pages", "hooks", "users", "contact_notes", "landing_pages",
    "podcasts",
)

SCALES: dict[str, int] = {  # total contacts; the other collections scale from it
    "tiny": 80,
    "demo": 1_800,
    "small": 23_000,
    "medium": 250_000,
    "large": 2_500_000,
}
# per-site counts of the small dimension tables by scale:
# products, tags, forms, blog posts, website pages
DIMENSIONS: dict[str, tuple[int, int, int, int, int]] = {
    "tiny": (3, 4, 2, 3, 3),
    "demo": (8, 10, 3, 10, 6),
    "small": (15, 20, 5, 30, 12),
    "medium": (25, 30, 8, 60, 20),
    "large": (40, 40, 10, 100, 30),
}

DAY = 86_400


@dataclass
class Store:
    """All data of the emulated account. Mutations happen under `lock`."""

    seed: int
    scale: str
    now: int  # the sandbox clock, epoch seconds UTC
    settlement_delay_days: int = 2
    payout_corrections: bool = False  # --quirks: fee-correction lines on some payouts
    tables: dict[str, Table] = field(default_factory=dict)
    links: dict[str, Links] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False)
    activity_calls: int = 0
    data_version: int = 0  # bumped by every mutation; keys the response cache
    # rows deleted through the API or by activity (contacts, customers, contact_notes): rows
    # stay in place (ids are row numbers), the lists and reads no longer show them
    deleted: dict[str, set[int]] = field(default_factory=dict)
    # purchases whose offer grant was revoked: no longer behind the owner's offers (deletes.py)
    revoked: set[int] = field(default_factory=set)

    def table(self, type_name: str) -> Table:
        return self.tables[type_name]

    def new_table(self, type_name: str) -> Table:
        table = Table(type=type_name, id_base=type_base(TYPES.index(type_name)))
        self.tables[type_name] = table
        return table

    def link(self, name: str) -> Links:
        return self.links.setdefault(name, Links())

    def fk_index(self, child_type: str, column: str) -> tuple[np.ndarray, np.ndarray]:
        """(sorted parent refs, child rows in that order), cached per table version."""
        table = self.tables[child_type]

        def build() -> tuple[np.ndarray, np.ndarray]:
            keys = table.cols[column]
            order = np.argsort(keys, kind="stable")
            return keys[order], order

        return table.cached(("fk", column), build)  # type: ignore[return-value]

    def fk_children(self, child_type: str, column: str, parent_row: int) -> np.ndarray:
        """Rows of `child_type` whose `column` points at `parent_row` (ascending id)."""
        keys, order = self.fk_index(child_type, column)
        lo, hi = np.searchsorted(keys, [parent_row, parent_row + 1])
        return order[lo:hi]

    def alive(self, type_name: str) -> np.ndarray:
        """Boolean mask over a type's rows: not deleted (cached per table version)."""
        table = self.tables[type_name]
        gone = self.deleted.get(type_name)

        def build() -> np.ndarray:
            mask = np.ones(table.n, dtype=bool)
            if gone:
                mask[np.fromiter(gone, dtype=np.int64, count=len(gone))] = False
            return mask

        return table.cached(("alive", len(gone or ())), build)  # type: ignore[return-value]

    def is_deleted(self, type_name: str, row: int) -> bool:
        return row in self.deleted.get(type_name, ())

    def total_records(self) -> int:
        return sum(t.n for t in self.tables.values())
