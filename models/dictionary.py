"""The data dictionary in docs/data-dictionary/, one page per layer (continued on more when
long), generated from the schema
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
PAGE_LINES = 600  # the docs pages' limit (CONTRIBUTING.md)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _model(doc: ModelDoc) -> list[str]:
    grain = [t for t in doc.tests if t.kind in ("unique", "unique_combination_of_columns")]
    keys = [t.column for t in grain if t.column] + [
        c for t in grain for c in t.args.get("combination_of_columns", [])
    ]
    lines = [f"## `{doc.name}`", "", _cell(doc.description), ""]
    if doc.former_name:
        lines += [f"Formerly `{doc.former_name}`, a name it shared with a raw table; that name "
                  "stays for one release as a view of this mart.", ""]
    if keys:
        lines += ["One row per " + ", ".join(f"`{k}`" for k in keys) + ".", ""]
    lines += ["| column | description | tests |", "|---|---|---|"]
    for column, text in doc.columns.items():
        tests = sorted({t.kind.replace("_", " ") for t in doc.tests if t.column == column})
        lines.append(f"| `{column}` | {_cell(text)} | {', '.join(tests)} |")
    return [*lines, ""]


def _packed(models: list[list[str]], budget: int) -> list[list[list[str]]]:
    """The models' sections in order, on as few pages of at most `budget` lines as they fit,
    about as long as each other."""
    total = sum(map(len, models))
    count = max(1, -(-total // budget))
    while True:
        limit = min(budget, -(-total // count) + max(map(len, models), default=0) // 2)
        packed: list[list[list[str]]] = [[]]
        for section in models:
            if packed[-1] and sum(map(len, packed[-1])) + len(section) > limit:
                packed.append([])
            packed[-1].append(section)
        if len(packed) <= count or limit == budget:
            return packed
        count += 1


def _page_name(layer: str, number: int) -> str:
    return f"{layer}.md" if number == 1 else f"{layer}-{number}.md"


def pages(sql_dir: Path = SQL_DIR) -> dict[str, str]:
    """File name -> Markdown text: one page per layer, continued on `<layer>-2.md`, ... when its
    models would not fit in PAGE_LINES (docs pages stay short)."""
    docs = load_schema(sql_dir)
    out = {}
    for layer in reversed(LAYERS):
        sections = [_model(doc) for doc in sorted(
            (d for d in docs.values() if d.layer == layer), key=lambda d: d.name)]
        packed = _packed(sections, PAGE_LINES - 12)
        for number, page in enumerate(packed, start=1):
            part = f" ({number} of {len(packed)})" if len(packed) > 1 else ""
            lines = [
                f"# Data dictionary: {layer}{part}",
                "",
                f"{INTRO[layer]} Generated from `sql/models/{layer}/_{layer}.yml` by "
                "`python -m creator_sync.models.dictionary`; every description is also a comment on the table or "
                "column in the warehouse.",
                "",
            ]
            if len(packed) > 1:
                lines += ["Pages: " + ", ".join(
                    f"[{page_sections[0][0][4:-1]} to {page_sections[-1][0][4:-1]}]"
                    f"({_page_name(layer, n)})"
                    for n, page_sections in enumerate(packed, start=1)) + ".", ""]
            for section in page:
                lines += section
            out[_page_name(layer, number)] = "\n".join(lines).rstrip() + "\n"
    return out


# in a checkout (the docs are not shipped in the wheel)
DICTIONARY_DIR = Path(__file__).resolve().parents[1] / "docs" / "data-dictionary"

if __name__ == "__main__":
    DICTIONARY_DIR.mkdir(parents=True, exist_ok=True)
    generated = pages()
    for stale in DICTIONARY_DIR.glob("*.md"):
        if stale.name not in generated:
            stale.unlink()
            print(f"removed {stale}")
    for name, text in generated.items():
        (DICTIONARY_DIR / name).write_text(text, encoding="utf-8")
        print(f"wrote {DICTIONARY_DIR / name}")
