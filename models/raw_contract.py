"""The raw tables the models read, with the columns and types they rely on, as the package's
dbt `sources:` YAML declares them (`sql/models/staging/_creator_platform__sources.yml`,
generated from the source's table types by `python -m creator_sync.pipelines.dbt_sources`).

dlt only creates a column once it has seen a non-null value, and only creates a table once it
has seen a row, so a small or young account may lack some of them. The runner reads this
contract to project every expected column, typed NULL when absent, so the SQL never breaks on a
column that simply has not appeared yet; dbt reads the same YAML (sql/macros/raw.sql).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from creator_sync.models.project import MODELS_DIR, SQL_DIR

SOURCE = "creator_platform"  # the package's source name: `source('creator_platform', table)`
SOURCES_YAML = Path("staging") / f"_{SOURCE}__sources.yml"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class SourceTable:
    """One raw table: its columns (name -> DuckDB type) and `key`, what names a record (staging
    keeps the latest extraction of each key). Any table may be absent: what the figures lack is
    said by `analytics.data_coverage`, not by a failed build."""

    name: str
    columns: dict[str, str]
    key: tuple[str, ...] = ("id",)
    # why a healthy sync may never create the table; None: its absence means data is missing
    absent_when: str | None = None


def load_contract(sql_dir: Path = SQL_DIR) -> dict[str, SourceTable]:
    """Every table of the package's `creator_platform` source, by name."""
    document = yaml.load((sql_dir / MODELS_DIR / SOURCES_YAML).read_text(encoding="utf-8"),
                         Loader=_LOADER)
    (source,) = (s for s in document["sources"] if s["name"] == SOURCE)
    tables = {}
    for table in source["tables"]:
        meta = (table.get("config") or {}).get("meta") or {}
        tables[table["name"]] = SourceTable(
            table["name"],
            {column["name"]: column["data_type"] for column in table["columns"]},
            tuple(meta.get("key") or ("id",)),
            meta.get("absent_when"),
        )
    return tables


SOURCE_TABLES: dict[str, SourceTable] = load_contract()
