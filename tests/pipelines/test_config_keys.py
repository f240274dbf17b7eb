"""Issue 12 point 4: a configured key nothing reads gets a warning naming the nearest known key.

The known keys come from the two settings tables (the source's and the app's, side by side in
`pipelines.command_settings.SETTINGS`: the lists every reader goes through) and the resource
table, never from a second list.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from creator_sync.pipelines.command_settings import SETTINGS, known_keys, unknown_key_warnings
from creator_sync.sources.creator_platform.config import LOOKBACK_SECTION
from creator_sync.sources.creator_platform.endpoints import RESOURCES

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for var in list(__import__("os").environ):
        if var.startswith(("SOURCES__", "CREATOR_SYNC__")):
            monkeypatch.delenv(var)
    (tmp_path / ".dlt").mkdir()
    return tmp_path / ".dlt"


def _reload_dlt_config():
    """dlt reads .dlt/*.toml once per run context: make it read this test's files."""
    import dlt
    from dlt.common.configuration.container import Container
    from dlt.common.configuration.specs.pluggable_run_context import PluggableRunContext

    Container()[PluggableRunContext].reload_providers()
    return dlt


def test_toml_and_env_keys_are_checked_against_the_settings(project, monkeypatch):
    (project / "config.toml").write_text(
        "[sources.creator_platform]\nconcurrency = 2\npage_sise = 50\n"
        "[sources.creator_platform.lookback_days]\ncontacts = 3\ncontact = 3\n"
        "[creator_sync]\nduckdb = \"a.duckdb\"\nmemory_limit = \"1GB\"\n")
    (project / "secrets.toml").write_text("[sources.creator_platform]\nclient_secert = \"x\"\n")
    monkeypatch.setenv("SOURCES__CREATOR_PLATFORM__RATE_LIMT", "5")
    monkeypatch.setenv("SOURCES__CREATOR_PLATFORM__LOOKBACK_DAYS__ORDERS", "3")  # known
    monkeypatch.setenv("CREATOR_SYNC__DATASET", "raw")  # known
    _reload_dlt_config()
    try:
        warnings = unknown_key_warnings()
    finally:
        (project / "config.toml").unlink()
        (project / "secrets.toml").unlink()
        _reload_dlt_config()
    joined = "\n".join(warnings)
    assert len(warnings) == 5, joined
    assert "sources.creator_platform.page_sise" in joined and "did you mean page_size?" in joined
    assert f"{LOOKBACK_SECTION}.contact " in joined and "did you mean contacts?" in joined
    assert "creator_sync.memory_limit" in joined and "duckdb_memory_limit" in joined
    assert "client_secert" in joined and "secrets.toml" in joined
    assert "SOURCES__CREATOR_PLATFORM__RATE_LIMT" in joined and "RATE_LIMIT" in joined
    assert all(w.startswith("warning: ") and "\n" not in w for w in warnings)


def test_known_keys_are_derived_from_the_one_list():
    known = known_keys()
    assert known["sources.creator_platform"] >= {s.key for s in SETTINGS
                                                 if s.section == "sources.creator_platform"}
    assert known["creator_sync"] == {s.key for s in SETTINGS if s.section == "creator_sync"}
    assert known[LOOKBACK_SECTION] == set(RESOURCES)


PRODUCT = ("common", "pipelines", "models", "report", "creator_sync")


def _product_files() -> list[Path]:
    return [p for folder in PRODUCT for p in sorted((REPO / folder).rglob("*.py"))]


def test_every_config_read_in_the_code_names_a_known_setting():
    """No reader bypasses the list: every `app_setting("key")`, `option("key")`,
    `Settings(key=...)` and `settings["key"]` names an entry of it."""
    known = {(s.section, s.key) for s in SETTINGS}
    keys = {s.key for s in SETTINGS}
    sections = {"SOURCE_SECTION": "sources.creator_platform", "SYNC_SECTION": "creator_sync"}
    found = 0
    for path in _product_files():
        for node in ast.walk(ast.parse(path.read_text())):
            name = getattr(getattr(node, "func", None), "id", None)
            if isinstance(node, ast.Call) and name == "setting":
                args = node.args
                if len(args) >= 2 and isinstance(args[0], ast.Name) and isinstance(args[1], ast.Constant):
                    assert (sections[args[0].id], args[1].value) in known, (path, args[1].value)
                    found += 1
            elif isinstance(node, ast.Call) and name in ("option", "by_key", "app_setting") and node.args:
                if isinstance(node.args[0], ast.Constant):
                    assert node.args[0].value in keys, (path, node.args[0].value)
                    found += 1
            elif isinstance(node, ast.Call) and name == "Settings":
                for kw in node.keywords:
                    if kw.arg is not None:
                        assert kw.arg in keys, (path, kw.arg)
                        found += 1
            elif (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
                  and getattr(node.value, "id", None) in ("settings", "conf")):
                assert node.slice.value in keys, (path, node.slice.value)
                found += 1
    assert found >= 40
    # nobody reads dlt's accessors directly any more (they trace values into trace.pickle)
    for path in _product_files():
        text = path.read_text()
        if path != REPO / "common" / "settings.py":  # the one lookup, out of dlt's trace
            assert "dlt.config.get(" not in text and "dlt.secrets.get(" not in text, path
