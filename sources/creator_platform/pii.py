"""What must not reach the warehouse as the API writes it (docs/sync.md, `--pii`).

PII columns (`settings.pii_columns`) are hashed or dropped; columns that carry credentials
(`REDACTED_COLUMNS`) are masked. Pure, shared by the pull sync and the webhook loader.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, Literal

from .redact import redact_target_url
from .settings import pii_columns

PiiMode = Literal["hash", "drop"] | None


def _pii_normal(column: str, value: str) -> str:
    if "phone" in column or "business_number" in column:
        return "".join(ch for ch in value if ch.isdigit() or ch == "+")
    return " ".join(value.split()).lower()


def apply_pii(row: dict[str, Any], mode: PiiMode, salt: str, table: str | None = None) -> None:
    """Hash (sha256 hex of salt + normalised value) or drop `table`'s PII columns, in place."""
    if mode is None:
        return
    for column in pii_columns(table).intersection(row):
        if mode == "drop":
            del row[column]
            continue
        value = row[column]
        if value is not None:
            digest = hashlib.sha256((salt + _pii_normal(column, str(value))).encode())
            row[column] = digest.hexdigest()

# (table, column) -> masking function: values that are credentials must not reach the warehouse
# (the `listen` receiver authenticates deliveries by the secret segment of the hook's URL)
REDACTED_COLUMNS: dict[tuple[str, str], Callable[[Any], Any]] = {
    ("hooks", "target_url"): redact_target_url,
}


_REDACTED_TABLES = frozenset(name for name, _ in REDACTED_COLUMNS)


def redact_credentials(table: str, row: dict[str, Any]) -> None:
    """Mask `table`'s credential columns in `row`, in place."""
    if table not in _REDACTED_TABLES:
        return
    for (name, column), mask in REDACTED_COLUMNS.items():
        if name == table and row.get(column) is not None:
            row[column] = mask(row[column])
