"""The raw-table contract of models/sources.py as a dbt macro, for the package's `raw` and
`latest` macros (sql/macros/raw.sql) when dbt builds it.

The contract is written once, in models/sources.py; `sql/macros/raw_contract.sql` is generated
from it (`python -m creator_sync.models.contract_macro`), and tests/models/test_dbt_project.py keeps the two
in step.
"""

from __future__ import annotations

import json

from creator_sync.models.project import SQL_DIR
from creator_sync.models.sources import SOURCE_TABLES

CONTRACT_MACRO = SQL_DIR / "macros" / "raw_contract.sql"


def contract_macro() -> str:
    """`creator_platform_contract()`: table -> {columns: [[name, duckdb type]...], key: [...]}."""
    lines = [
        "{#- Generated from models/sources.py by `python -m creator_sync.models.contract_macro`: do not edit.",
        "    Every raw table the models read, its columns in their DuckDB types, and its key. -#}",
        "{% macro creator_platform_contract() -%}",
        "{{ return({",
    ]
    for name, table in SOURCE_TABLES.items():
        entry = {"columns": [[c, t] for c, t in table.columns.items()], "key": list(table.key)}
        lines.append(f"    {json.dumps(name)}: {json.dumps(entry)},")
    lines += ["}) }}", "{%- endmacro %}", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    CONTRACT_MACRO.write_text(contract_macro(), encoding="utf-8")
    print(f"wrote {CONTRACT_MACRO}")
