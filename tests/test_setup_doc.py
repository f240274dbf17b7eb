"""docs/setup.md names every setting: its key, environment variable and flag come from
`common.config.SETTINGS`, so a new setting without its row fails here."""

from __future__ import annotations

from pathlib import Path

from creator_sync.common.config import SETTINGS

SETUP = Path(__file__).resolve().parents[1] / "docs" / "setup.md"


def _rows() -> dict[str, list[str]]:
    rows = {}
    for line in SETUP.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) == 4:
            rows[cells[0].strip("`")] = cells
    return rows


def test_every_setting_has_its_row_with_env_and_flag() -> None:
    rows = _rows()
    assert set(rows) == {item.key for item in SETTINGS}
    for item in SETTINGS:
        _key, env, flag, what = rows[item.key]
        assert env == f"`{item.env}`", item.key
        assert flag == (f"`{item.flag}`" if item.flag else ""), item.key
        assert what, item.key
