"""docs/architecture.md tells the truth about the tree (issue 16, point 6): its module table
lists every module of the shipped packages, and nothing that does not exist; its layer table
names the layers tests/test_layers.py enforces, each with the folder it is built from."""

from __future__ import annotations

import re
from pathlib import Path

from test_layers import LAYERS, folder, modules

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "architecture.md").read_text()


def _section(title: str) -> str:
    start = DOC.index(f"\n{title}\n")
    rest = DOC[start + len(title) + 2:]
    end = re.search(r"\n#{1,3} ", rest)
    return rest[: end.start()] if end else rest


def _first_cells(section: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"^\| `([^`]+)` \|", section, re.MULTILINE)]


def test_the_module_table_lists_every_module_and_only_those() -> None:
    listed = _first_cells(_section("### Modules"))
    assert len(listed) == len(set(listed)), "a module listed twice"
    on_disk = {path.relative_to(ROOT).as_posix() for path in modules().values()}
    assert on_disk, "no module found"
    assert not on_disk - set(listed), f"not in docs/architecture.md: {sorted(on_disk - set(listed))}"
    assert not set(listed) - on_disk, f"listed but not in the tree: {sorted(set(listed) - on_disk)}"


def test_the_layer_table_is_the_enforced_order() -> None:
    """Each row: rank, import package, the repository's folder it is built from."""
    rows = re.findall(r"^\| (\d+) \| `([\w.]+)` \| `([\w/]+)/` \|", _section("## Layers"),
                      re.MULTILINE)
    documented = [(int(rank), package, where) for rank, package, where in rows]
    enforced = [(rank, package, folder(package).relative_to(ROOT).as_posix())
                for rank, group in enumerate(LAYERS) for package in group]
    assert documented == enforced
