"""The option tables of the README and the docs pages against the commands' `--help`: every
`sync` flag has its row in docs/sync.md, and no table gives one flag two rows (the report table
once had two `--destination` rows that contradicted each other)."""

from __future__ import annotations

import re
from pathlib import Path

from creator_sync.pipelines.sync import sync_command

ROOT = Path(__file__).resolve().parents[1]
SYNC_DOC = ROOT / "docs" / "sync.md"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FLAG = re.compile(r"(?<![\w-])(--?[a-z][a-z-]*)")


def tables(text: str) -> list[list[str]]:
    """The markdown tables of a page, each as its body rows (header and rule left out)."""
    out: list[list[str]] = []
    rows: list[str] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            rows.append(line)
        elif rows:
            out.append(rows[2:])
            rows = []
    return out


def first_cell_flags(row: str) -> list[str]:
    """The flags an option row documents: those in the code spans of its first cell."""
    return [f for span in re.findall(r"`([^`]*)`", re.split(r"(?<!\\)\|", row)[1]) for f in FLAG.findall(span)
            if span.startswith("-")]


def sync_table() -> list[str]:
    text = SYNC_DOC.read_text()
    return next(t for t in tables(text) if any(r.startswith("| `--base-url") for r in t))


def test_every_sync_flag_has_a_row_in_the_sync_reference():
    documented = {flag for row in sync_table() for flag in first_cell_flags(row)}
    flags = {opt for p in sync_command.params for opt in p.opts if opt.startswith("--")}
    flags.discard("--help")
    assert flags - documented == set(), "sync flags with no row in docs/sync.md's flag table"


def test_no_table_lists_a_flag_twice():
    for rows in (rows for page in PAGES for rows in tables(page.read_text())):
        seen: dict[str, str] = {}
        for row in rows:
            for flag in first_cell_flags(row):
                assert flag not in seen, f"{flag} has two rows:\n{seen[flag]}\n{row}"
                seen[flag] = row
