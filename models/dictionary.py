"""The data dictionary in docs/data-dictionary/, one page per layer, generated from the schema
YAML (models/schema.py) so that it cannot drift: `python -m creator_sync.models.dictionary` rewrites it and
tests/models/test_dictionary.py fails when it is out of step."""

from __future__ import annotations

from pathlib import Path

from creator_sync.models.project import LAYERS, SQL_DIR
from creator_sync.models.schema import ModelDoc, load_schema

INTRO = {
    "marts": "The tables to query: built into the target schema (`analytics` by default).",
    "intermediate": "Building blocks of the marts, built beside them (`analytics_staging`).",
    "staging": "The raw tables cleaned and typed, one model per table, built into `analytics_staging`.",
}
SCHEMA = {"marts": "analytics", "intermediate": "analytics_staging", "staging": "analytics_staging"}


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _model(doc: ModelDoc) -> list[str]:
    grain = [t for t in doc.tests if t.kind in ("unique", "unique_combination_of_columns")]
    keys = [t.column for t in grain if t.column] + [
        c for t in grain for c in t.args.get("combination_of_columns", [])
    ]
    lines = [f"## `{doc.name}`", "", _cell(doc.description), ""]
    if keys:
        lines += ["One row per " + ", ".join(f"`{k}`" for k in keys) + ".", ""]
    lines += ["| column | description | tests |", "|---|---|---|"]
    for column, text in doc.columns.items():
        tests = sorted({t.kind.replace("_", " ") for t in doc.tests if t.column == column})
        lines.append(f"| `{column}` | {_cell(text)} | {', '.join(tests)} |")
    return [*lines, ""]


def pages(sql_dir: Path = SQL_DIR) -> dict[str, str]:
    """File name -> Markdown text, one page per layer."""
    docs = load_schema(sql_dir)
    out = {}
    for layer in reversed(LAYERS):
        lines = [
            f"# Data dictionary: {layer}",
            "",
            f"{INTRO[layer]} Generated from `sql/models/{layer}/_{layer}.yml` by "
            "`python -m creator_sync.models.dictionary`; every description is also a comment on the table or "
            "column in the warehouse.",
            "",
        ]
        for doc in sorted((d for d in docs.values() if d.layer == layer), key=lambda d: d.name):
            lines += _model(doc)
        out[f"{layer}.md"] = "\n".join(lines).rstrip() + "\n"
    return out


# in a checkout (the docs are not shipped in the wheel)
DICTIONARY_DIR = Path(__file__).resolve().parents[1] / "docs" / "data-dictionary"

if __name__ == "__main__":
    DICTIONARY_DIR.mkdir(parents=True, exist_ok=True)
    for name, text in pages().items():
        (DICTIONARY_DIR / name).write_text(text, encoding="utf-8")
        print(f"wrote {DICTIONARY_DIR / name}")
