"""The schema YAML beside the models (`sql/models/<layer>/_<layer>.yml`, dbt's format): what each
model and column means, and the generic data tests on them.

One file serves both builders: dbt reads it natively; the runner reads it here for its data tests
(the same four generic tests dbt runs, with the same names) and for the table and column comments
it writes into the warehouse (models/comments.py). A description used by several columns is
written once, as a `{% docs name %}` block of `sql/models/*.md`, and named with
`{{ doc('name') }}`: dbt resolves it natively, `load_schema` here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from creator_sync.common.duckdb_names import quote_ident
from creator_sync.models.project import MODELS_DIR, ProjectError

REF_ARGUMENT = "ref('"
# libyaml's loader when PyYAML has it (ten times faster: the YAML is read on every build)
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
DOCS_BLOCK = re.compile(r"{%-?\s*docs\s+(\w+)\s*-?%}(.*?){%-?\s*enddocs\s*-?%}", re.S)
DOC_REF = re.compile(r"""{{\s*doc\(\s*['"](\w+)['"]\s*\)\s*}}""")


@dataclass(frozen=True)
class GenericTest:
    """One generic data test of the YAML, as dbt names it (`unique_orders_order_id`)."""

    name: str
    kind: str
    model: str
    column: str | None
    args: dict[str, Any] = field(default_factory=dict)

    def sql(self, relation: Any) -> str:
        """The failing rows, `relation(model_name)` giving a model's relation."""
        rel = relation(self.model)
        col = quote_ident(self.column) if self.column else ""
        if self.kind == "unique":
            return (f"select {col}, count(*) as n from {rel} where {col} is not null "
                    f"group by {col} having count(*) > 1")
        if self.kind == "not_null":
            return f"select * from {rel} where {col} is null"
        if self.kind == "accepted_values":
            values = ", ".join("'" + str(v).replace("'", "''") + "'" for v in self.args["values"])
            return f"select {col} from {rel} where {col} not in ({values})"
        if self.kind == "relationships":
            to = _ref_name(self.args["to"], self.model)
            field_ = quote_ident(self.args["field"])
            return (f"select child.{col} from {rel} as child left join {relation(to)} as parent "
                    f"on child.{col} = parent.{field_} where child.{col} is not null "
                    f"and parent.{field_} is null")
        if self.kind == "unique_combination_of_columns":
            cols = ", ".join(quote_ident(c) for c in self.args["combination_of_columns"])
            return f"select {cols}, count(*) as n from {rel} group by {cols} having count(*) > 1"
        raise ProjectError(f"schema YAML of {self.model}: unknown data test {self.kind!r}")

    @property
    def description(self) -> str:
        if self.kind == "unique_combination_of_columns":
            return f"{self.model} has one row per ({', '.join(self.args['combination_of_columns'])})"
        if self.kind == "relationships":
            return f"every {self.model}.{self.column} is in {_ref_name(self.args['to'], self.model)}"
        return f"{self.model}.{self.column}: {self.kind.replace('_', ' ')}"


def _ref_name(text: str, model: str) -> str:
    text = text.strip()
    if not (text.startswith(REF_ARGUMENT) and text.endswith("')")):
        raise ProjectError(f"schema YAML of {model}: relationships `to` must be ref('<model>')")
    return text[len(REF_ARGUMENT):-2]


@dataclass(frozen=True)
class ModelDoc:
    name: str
    layer: str
    description: str
    columns: dict[str, str]
    tests: list[GenericTest]
    # the mart's name before it was renamed (`config.meta.former_name`): kept for one release
    # as a view of the mart, by both builders
    former_name: str | None = None


def _tests(model: str, column: str | None, declared: list[Any]) -> list[GenericTest]:
    out = []
    for item in declared or []:
        kind, args = (item, {}) if isinstance(item, str) else next(iter(item.items()))
        args = dict(args.get("arguments", args)) if args else {}
        suffix = f"{model}_{column}" if column else model
        if kind == "accepted_values":
            suffix += "__" + "__".join(str(v) for v in args["values"])
        elif kind == "relationships":
            suffix += f"__{args['field']}__{_ref_name(args['to'], model)}"
        elif kind == "unique_combination_of_columns":
            suffix += "__" + "__".join(args["combination_of_columns"])
        out.append(GenericTest(f"{kind}_{suffix}", kind, model, column, args))
    return out


def load_docs_blocks(sql_dir: Path) -> dict[str, str]:
    """The `{% docs name %}` blocks of the Markdown files under `sql_dir/models/`, by name."""
    blocks: dict[str, str] = {}
    for path in sorted((sql_dir / MODELS_DIR).rglob("*.md")):
        for name, text in DOCS_BLOCK.findall(path.read_text(encoding="utf-8")):
            if name in blocks:
                raise ProjectError(f"{path}: docs block {name} is written twice")
            blocks[name] = text.strip()
    return blocks


def _described(value: Any, blocks: dict[str, str], where: Path) -> str:
    """A description with each `{{ doc('name') }}` replaced by its block, white space folded."""
    def block(match: re.Match[str]) -> str:
        if match.group(1) not in blocks:
            raise ProjectError(f"{where}: doc('{match.group(1)}') names no docs block")
        return blocks[match.group(1)]

    return " ".join(DOC_REF.sub(block, str(value or "")).split())


def load_schema(sql_dir: Path) -> dict[str, ModelDoc]:
    """Every model documented in the YAML of `sql_dir/models/<layer>/`, by name."""
    docs: dict[str, ModelDoc] = {}
    blocks = load_docs_blocks(sql_dir)
    for path in sorted((sql_dir / MODELS_DIR).glob("*/*.yml")):
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER) or {}
        for model in data.get("models") or []:
            name = model["name"]
            if name in docs:
                raise ProjectError(f"{path}: model {name} is documented twice")
            columns: dict[str, str] = {}
            tests = _tests(name, None, model.get("data_tests"))
            for column in model.get("columns") or []:
                columns[column["name"]] = _described(column.get("description"), blocks, path)
                tests += _tests(name, column["name"], column.get("data_tests"))
            description = _described(model.get("description"), blocks, path)
            meta = (model.get("config") or {}).get("meta") or {}
            docs[name] = ModelDoc(name, path.parent.name, description, columns, tests,
                                  meta.get("former_name"))
    return docs
