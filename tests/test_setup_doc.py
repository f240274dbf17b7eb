"""docs/setup.md names every setting as its table declares it: its "Every key" table is
`setup_doc_rows()`, built from the source's table (`sources.creator_platform.config.SOURCE_SETTINGS`)
and the app's (`common.settings.APP_SETTINGS`): key, environment variable, flag, default and
range, help. A setting added or changed without its row fails here."""

from __future__ import annotations

from pathlib import Path

from creator_sync.pipelines.command_settings import SETTINGS, setup_doc_rows

SETUP = Path(__file__).resolve().parents[1] / "docs" / "setup.md"


def _table() -> list[str]:
    lines = SETUP.read_text().splitlines()
    start = lines.index(setup_doc_rows()[0])
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return lines[start:end]


def test_the_every_key_table_is_the_settings_table() -> None:
    expected = setup_doc_rows()
    assert _table() == expected, "docs/setup.md's table, as it should read:\n" + "\n".join(expected)


def test_every_setting_has_its_row_with_env_and_flag() -> None:
    rows = {line.split("|")[1].strip().strip("`"): line for line in _table()[2:]}
    assert set(rows) == {item.key for item in SETTINGS}
    for item in SETTINGS:
        assert f"`{item.env}`" in rows[item.key], item.key
        assert not item.flag or f"`{item.flag}`" in rows[item.key], item.key
