"""What must not reach the warehouse as the API writes it (docs/sync.md, `--pii`).

PII columns (`settings.pii_columns`) are hashed or dropped; columns that carry credentials
(`REDACTED_COLUMNS`) are masked. Pure, shared by the pull sync and the webhook loader.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, Literal

from .endpoints import LINE_TABLES, TYPES, pii_columns
from .redact import redact_target_url

PiiMode = Literal["hash", "drop"] | None

# What a table holds about a person beyond what `--pii` covers: free text they or the business
# wrote about them. Erased with the person (pipelines/erasure.py), never hashed.
PERSONAL_EXTRA: dict[str, frozenset[str]] = {
    "contacts": frozenset({"custom_1", "custom_2", "custom_3"}),
    "customers": frozenset({"avatar", "public_bio", "public_location", "public_website",
                            "socials"}),
    "contact_notes": frozenset({"body"}),
    "purchases": frozenset({"raw_extra_contact_information"}),
    "form_submissions": frozenset({"custom_1", "custom_2", "custom_3"}),
}
# The people tables (`TypeInfo.deletable`), and how other tables' rows name one of them:
# table -> ((column, people table it holds ids of), ...). A row is a person's if it names them.
PERSON_KEYS: dict[str, tuple[tuple[str, str], ...]] = {
    "contacts": (("id", "contacts"),),
    "customers": (("id", "customers"),),
    "contact_notes": (("id", "contact_notes"), ("contact_id", "contacts")),
    "purchases": (("customer_id", "customers"),),
    "payout_lines": (("customer_id", "customers"),),
}
# tables whose rows name no person by key, only by the email they typed (form submissions):
# a row is a person's if its email is one of theirs
PERSON_EMAILS: tuple[str, ...] = ("form_submissions",)


def _columns(table: str) -> frozenset[str]:
    line = LINE_TABLES.get(table)
    if line is not None:
        return frozenset(name for name, _ in line.columns)
    info = TYPES.get(table)
    return frozenset(info.attributes) if info is not None else frozenset()


def personal_columns(table: str) -> frozenset[str]:
    """The columns of `table` that say who a person is or what was written about them: what
    `--pii` covers there, and `PERSONAL_EXTRA`. Written once, for erasure and `forget`."""
    return _columns(table) & (pii_columns(table) | PERSONAL_EXTRA.get(table, frozenset()))


def personal_held(table: str, have: set[str], escape: Callable[[str], str],
                  ) -> tuple[list[str], str] | None:
    """The personal columns of `table` among its stored columns `have`, and the SQL condition
    that a row still holds a value in one of them (`escape`: the destination's column quoting);
    None when it stores none. Shared by the source's erasure and `forget`'s."""
    targets = sorted(personal_columns(table) & have)
    if not targets:
        return None
    return targets, " OR ".join(f"{escape(c)} IS NOT NULL" for c in targets)


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
