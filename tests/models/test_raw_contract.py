"""The raw-table contract is written once: the package's dbt `sources:` YAML, generated from the
source's own table types (pipelines/dbt_sources.py), is what the runner reads (models/raw_contract.py)
and what dbt reads; nothing else declares a raw table's columns."""

from __future__ import annotations

from creator_sync.models.project import SQL_DIR, load_project
from creator_sync.models.raw_contract import SOURCE_TABLES, load_contract
from creator_sync.pipelines.dbt_sources import SOURCES_YAML, contract, sources_yaml
from creator_sync.sources.creator_platform import declared_columns


def test_the_sources_yaml_is_generated_from_the_source_table_types() -> None:
    assert SOURCES_YAML.read_text() == sources_yaml(), (
        "sql/models/staging/_creator_platform__sources.yml is stale: "
        "run `python -m creator_sync.pipelines.dbt_sources`")


def test_the_runner_reads_the_contract_the_yaml_declares() -> None:
    generated = contract()
    assert load_contract(SQL_DIR) == SOURCE_TABLES
    assert set(SOURCE_TABLES) == set(generated)
    for name, table in SOURCE_TABLES.items():
        assert table.columns == generated[name]["columns"], name
        assert table.key == tuple(generated[name]["key"]), name
        assert table.absent_when == generated[name]["absent_when"], name
    # a resource table has every column the source declares for it, in the models' types
    assert set(declared_columns("transactions")) <= set(SOURCE_TABLES["transactions"].columns)
    assert SOURCE_TABLES["transactions"].columns["amount_in_cents"] == "bigint"
    assert SOURCE_TABLES["payouts"].columns["amount"] == "decimal(38, 9)"
    assert SOURCE_TABLES["payouts"].columns["amount_raw"] == "text"
    assert SOURCE_TABLES["payout_lines"].key == ("payout_id", "line_number")


def test_every_raw_table_the_sql_reads_is_in_the_contract() -> None:
    project = load_project()
    read = {name for f in [*project.models.values(), *project.tests.values()]
            for kind in ("raw", "latest") for name in f.placeholders(kind)}
    assert read and read <= set(SOURCE_TABLES)
    # and the contract names nothing the SQL does not read
    assert set(SOURCE_TABLES) == read
