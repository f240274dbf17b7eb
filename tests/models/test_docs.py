"""Every model and column is described for a finance reader (the schema YAML), the data
dictionary in docs/ is generated from that YAML and in step with it, and the runner writes every
description into the warehouse as a comment."""

from __future__ import annotations

import datetime as dt

import duckdb
from known_answer_data import known_answer_rows

from creator_sync.models.dictionary import DICTIONARY_DIR, pages
from creator_sync.models.project import load_project
from creator_sync.models.runner import run_models
from creator_sync.models.schema import load_docs_blocks, load_schema

MAX_PAGE_LINES = 600


def test_the_data_dictionary_is_generated_from_the_yaml_and_short() -> None:
    expected = pages()
    on_disk = {p.name: p.read_text() for p in DICTIONARY_DIR.glob("*.md")}
    assert on_disk == expected, "docs/data-dictionary/ is stale: run `python -m creator_sync.models.dictionary`"
    for name, text in expected.items():
        assert len(text.splitlines()) < MAX_PAGE_LINES, name


def test_every_model_and_column_is_described_and_commented_in_the_warehouse(raw_db) -> None:
    path = raw_db(known_answer_rows())
    run_models(path, as_of=dt.date(2024, 3, 31))
    con = duckdb.connect(path, read_only=True)
    try:
        columns = con.execute(
            "select schema_name, table_name, column_name, comment from duckdb_columns() "
            "where schema_name in ('analytics', 'analytics_staging') and (schema_name, table_name) "
            "not in (select schema_name, view_name from duckdb_views())"  # the former names
        ).fetchall()
        tables = dict(con.execute(
            "select table_name, comment from duckdb_tables() "
            "where schema_name in ('analytics', 'analytics_staging')"
        ).fetchall())
    finally:
        con.close()
    docs = load_schema(load_project().sql_dir)
    assert set(docs) == set(load_project().models) == set(tables)
    built: dict[str, list[str]] = {}
    for _, table, column, comment in columns:
        built.setdefault(table, []).append(column)
        assert comment and comment == docs[table].columns.get(column), (table, column, comment)
    for name, doc in docs.items():
        assert list(doc.columns) == built[name], (name, set(doc.columns) ^ set(built[name]))
        assert doc.description and tables[name] == doc.description, name
        assert all(len(text) > 15 for text in doc.columns.values()), name


def test_payout_reconciliation_says_which_columns_are_the_verdict() -> None:
    doc = load_schema(load_project().sql_dir)["payout_reconciliation"]
    assert "The verdict" in doc.columns["reconciliation_status"]
    evidence = [c for c, text in doc.columns.items() if text.startswith("Evidence")]
    assert {"is_rolled_forward", "lines_count", "rule_expected_in_cents"} <= set(evidence)


def test_the_yaml_grain_is_the_sql_header_grain() -> None:
    """A model's `-- grain:` header and its YAML unique test say the same (the header stays for
    the reader of the SQL; the YAML is what dbt and the runner test)."""
    docs = load_schema(load_project().sql_dir)
    for model in load_project().models.values():
        unique = [t for t in docs[model.name].tests
                  if t.kind in ("unique", "unique_combination_of_columns")]
        columns = [c for t in unique for c in ([t.column] if t.column else
                                               t.args["combination_of_columns"])]
        assert columns == model.grain, model.name
        not_null = {t.column for t in docs[model.name].tests if t.kind == "not_null"}
        assert set(model.grain) <= not_null, model.name


def test_a_description_shared_by_more_than_two_columns_is_one_docs_block() -> None:
    """A description is written once: a text the YAML would repeat is a `{% docs %}` block of
    sql/models/docs.md, named with `{{ doc('...') }}`, which the runner resolves as dbt does."""
    import collections

    import yaml

    sql_dir = load_project().sql_dir
    literal: collections.Counter[str] = collections.Counter()
    for path in (sql_dir / "models").glob("*/*.yml"):
        for model in yaml.safe_load(path.read_text()).get("models") or []:
            for column in model.get("columns") or []:
                text = str(column.get("description", ""))
                if "doc(" not in text:
                    literal[" ".join(text.split())] += 1
    assert [t for t, n in literal.items() if n > 2] == []
    blocks = load_docs_blocks(sql_dir)
    site_id = load_schema(sql_dir)["revenue_daily"].columns["site_id"]
    assert site_id == blocks["site_id"] and "{{" not in site_id


def test_a_doc_naming_no_block_is_a_project_error(tmp_path) -> None:
    import pytest

    from creator_sync.models.project import ProjectError

    layer = tmp_path / "models" / "marts"
    layer.mkdir(parents=True)
    (tmp_path / "models" / "docs.md").write_text("{% docs known %}\nA known text.\n{% enddocs %}\n")
    (layer / "_marts.yml").write_text(
        "version: 2\nmodels:\n- name: m\n  description: \"{{ doc('known') }}\"\n"
        "  columns:\n  - name: c\n    description: \"{{ doc('unknown') }}\"\n"
    )
    with pytest.raises(ProjectError, match=r"doc\('unknown'\) names no docs block"):
        load_schema(tmp_path)
    (layer / "_marts.yml").write_text("version: 2\nmodels:\n- name: m\n  description: \"{{ doc('known') }}\"\n")
    assert load_schema(tmp_path)["m"].description == "A known text."
