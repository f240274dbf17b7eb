"""The data dictionary (docs/models.md, "Marts") lists every mart with exactly the columns the
build produces."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import duckdb
from known_answer_data import known_answer_rows

from models.project import load_project
from models.runner import run_models

DOC = Path(__file__).resolve().parents[2] / "docs" / "models.md"
SECTION = "## Marts"


def _documented() -> dict[str, set[str]]:
    marts: dict[str, set[str]] = {}
    text = DOC.read_text()
    assert SECTION in text, f"docs/models.md has no {SECTION!r} section"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not re.fullmatch(r"`[a-z0-9_]+`", cells[0]):
            continue
        name = cells[0].strip("`")
        grain = re.findall(r"`([a-z0-9_]+)`", cells[1])
        columns = re.findall(r"`([a-z0-9_]+)`", cells[2])
        marts[name] = set(grain) | set(columns)
    return marts


def test_the_data_dictionary_lists_every_mart_and_its_columns(raw_db) -> None:
    path = raw_db(known_answer_rows())
    run_models(path, as_of=dt.date(2024, 3, 31))
    con = duckdb.connect(path, read_only=True)
    built: dict[str, set[str]] = {}
    for table, column in con.execute(
        "select table_name, column_name from information_schema.columns "
        "where table_schema = 'analytics'"
    ).fetchall():
        built.setdefault(table, set()).add(column)
    con.close()
    documented = _documented()
    marts = {m.name for m in load_project().models.values() if m.layer == "marts"}
    assert set(documented) == marts == set(built)
    for mart in marts:
        assert documented[mart] == built[mart], (mart, documented[mart] ^ built[mart])
